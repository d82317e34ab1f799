"""newsdedup crawlers: polite multi-source news crawling that feeds the indexer.

Layout: ``fetch`` (HTTP), ``hosts`` (which URLs may be requested), ``deadline`` (wall time per
response), ``middlewares.robots``, ``encoding``, ``sources`` (config), ``feeds``,
``extract``, ``base`` (BaseNewsCrawler), ``pipelines``, ``sinks``, ``state``, ``runner`` and
``cli`` (the ``crawl`` command).
"""

from .base import BaseNewsCrawler, ListPage, Page
from .pipelines import CrawledArticle

__all__ = ["BaseNewsCrawler", "CrawledArticle", "ListPage", "Page"]
