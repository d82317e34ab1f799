"""BaseNewsCrawler: one source, list pages / feeds / sitemaps to detail pages to articles.

The flow is fixed (start URLs -> links -> articles, with state, robots, pacing and stats handled
here); what varies per site are small hooks a subclass may override for odd sites:

* ``list_page_urls()``      which list pages to start from (default: start_urls + page template)
* ``parse_list_page(page)`` links and the next list page (default: the configured selectors)
* ``parse_article(page, hint)`` the article of a detail page (default: selectors or generic)

Name the subclass in the sources file (``crawler = "pkg.module:Class"``).

``crawl()`` yields ``CrawledArticle`` items and ``Checkpoint`` markers. A checkpoint says "every
link of this list page/feed was handled": the runner first delivers the pending articles, then
stores the page's ETag/Last-Modified, so a later 304 never hides an article that was not
delivered.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Iterator, Union

from bs4 import BeautifulSoup

from indexer.dates import find_time
from indexer.urls import canonical_url

from .errors import FetchError, SourceConfigError, URLRejected
from .extract import extract_article, extract_links, extract_next_page, element_text, parse_html
from .encoding import decode_body
from .feeds import FeedEntry, gunzipped, parse_feed, parse_sitemap
from .fetch import Fetcher, FetchResult
from .hosts import check_target
from .pipelines import CrawledArticle
from .sources import SourceConfig
from .state import CrawlState
from .stats import CrawlStats

log = logging.getLogger(__name__)


@dataclass
class Page:
    """A fetched, decoded page."""

    url: str
    final_url: str
    text: str
    encoding: str
    result: FetchResult

    @cached_property
    def soup(self) -> BeautifulSoup:
        return parse_html(self.text)


@dataclass(frozen=True)
class ListPage:
    links: list[str]
    next_url: str | None = None


@dataclass(frozen=True)
class Checkpoint:
    url: str
    etag: str | None
    last_modified: str | None
    complete: bool  # False: some links failed, keep no validators so the page is read again


CrawlItem = Union[CrawledArticle, Checkpoint]


class BaseNewsCrawler:
    def __init__(self, source: SourceConfig, fetcher: Fetcher, state: CrawlState, stats: CrawlStats, now: datetime | None = None):
        self.source = source
        self.fetcher = fetcher
        self.state = state
        self.stats = stats
        self.now = now  # anchor for relative dates ("3小时前"); None: the wall clock
        self._parsed = 0
        self._visited: set[str] = set()

    # -- stats ---------------------------------------------------------------------------

    def inc(self, key: str, n: int = 1) -> None:
        self.stats.inc(self.source.name, key, n)

    # -- fetching ------------------------------------------------------------------------

    def fetch_page(self, url: str, conditional: bool = False) -> Page | None:
        """Fetch and decode ``url``; None (counted by cause) when it failed or was not modified."""
        etag, last_modified = self.state.validators(url) if conditional else (None, None)
        try:
            result = self.fetcher.fetch(url, allowed_hosts=self.source.hosts, etag=etag, last_modified=last_modified, count=self.inc)
        except URLRejected as exc:
            self.inc(f"fetch/rejected/{exc.cause}")
            log.info("[%s] not fetching %s: %s", self.source.name, url, exc)
            return None
        except FetchError as exc:
            self.inc("fetch/failures")
            self.inc(f"fetch/failures/{exc.cause}")
            log.warning("[%s] fetch failed (%s): %s", self.source.name, exc.cause, exc)
            raise
        if result.not_modified:
            self.inc("fetch/not_modified")
            return None
        self.inc("fetch/pages")
        self.inc("fetch/bytes", len(result.body))
        decoded = result.decode(self.source.encoding or None)
        return Page(url, result.final_url, decoded.text, decoded.encoding, result)

    # -- hooks ---------------------------------------------------------------------------

    def list_page_urls(self) -> list[str]:
        urls = list(self.source.start_urls)
        tpl = self.source.page_url_template
        if tpl:
            first = self.source.first_page
            urls += [tpl.format(page=n) for n in range(first, first + self.source.max_pages - len(urls))]
        return urls

    def parse_list_page(self, page: Page) -> ListPage:
        links = extract_links(page.soup, page.final_url, self.source.link_selector, self.source.link_pattern)
        return ListPage(links, extract_next_page(page.soup, page.final_url, self.source.next_page_selector))

    def parse_article(self, page: Page, hint: FeedEntry | None = None) -> CrawledArticle | None:
        s = self.source
        found = extract_article(page.text, page.final_url, title_selector=s.title_selector, body_selector=s.body_selector, time_selector=s.time_selector, remove_selectors=s.remove_selectors)
        # A feed's or sitemap's machine-readable date beats the page's "3小时前"; a sitemap's
        # <lastmod> (when the page last changed) serves only a page without a time of its own.
        published = (hint.published if hint is not None else None) or find_time(found.time_text, now=self.now) \
            or (hint.modified if hint is not None else None)
        title = found.title or (hint.title if hint else "")
        self.inc(f"extract/{found.method}")
        return CrawledArticle(url=page.url, title=title, content=found.content, source=s.name, publish_time=published)

    # -- flow ----------------------------------------------------------------------------

    def crawl(self) -> Iterator[CrawlItem]:
        by_type = {"feed": self._crawl_feeds, "sitemap": self._crawl_sitemaps}
        yield from by_type.get(self.source.type, self._crawl_lists)()

    def _budget_left(self) -> bool:
        return self._parsed < self.source.max_articles

    def _fetch_listing(self, url: str, conditional: bool = True):
        """A list page, feed or sitemap, or None when it failed (counted by the fetcher) or is
        unchanged since the last crawl (304)."""
        try:
            return self.fetch_page(url, conditional=conditional)
        except FetchError:
            return None

    def _crawl_lists(self) -> Iterator[CrawlItem]:
        queue = self.list_page_urls()
        pages = 0
        while queue and pages < self.source.max_pages and self._budget_left():
            url = queue.pop(0)
            if url in self._visited:
                continue
            self._visited.add(url)
            pages += 1
            page = self._fetch_listing(url)
            if page is None:
                continue
            self.inc("lists/pages")
            listing = self.parse_list_page(page)
            self.inc("lists/links", len(listing.links))
            complete = yield from self._crawl_links([(link, None) for link in listing.links])
            yield Checkpoint(url, page.result.etag, page.result.last_modified, complete)
            if listing.next_url and listing.next_url not in self._visited:
                queue.insert(0, listing.next_url)

    def _crawl_feeds(self) -> Iterator[CrawlItem]:
        for url in self.source.start_urls:
            page = self._fetch_listing(url)
            if page is None:
                continue
            entries = parse_feed(page.text, page.final_url)
            self.inc("feeds/entries", len(entries))
            if not entries:
                self.inc("feeds/empty")
            if self.source.follow_links:
                complete = yield from self._crawl_links([(e.url, e) for e in entries])
            else:
                complete = yield from self._articles_from_entries(entries)
            yield Checkpoint(url, page.result.etag, page.result.last_modified, complete)

    def _crawl_sitemaps(self) -> Iterator[CrawlItem]:
        queue = list(self.source.start_urls)
        documents = 0
        while queue and documents < self.source.max_pages and self._budget_left():
            url = queue.pop(0)
            documents += 1
            # The sitemaps the source names are fetched whole: one is usually an index, whose 304
            # would hide the children it names (a daily news sitemap changes under the same name
            # while its index does not). The children are fetched conditionally.
            page = self._fetch_listing(url, conditional=url not in self.source.start_urls)
            if page is None:
                continue
            unpacked = gunzipped(page.result.body, self.fetcher.policy.max_bytes)
            text = page.text if unpacked is None else decode_body(unpacked, None, self.source.encoding or None).text
            sitemap = parse_sitemap(text, page.final_url)
            queue.extend(sitemap.children)
            self.inc("sitemaps/entries", len(sitemap.entries))
            complete = yield from self._crawl_links([(e.url, e) for e in sitemap.entries])
            yield Checkpoint(url, page.result.etag, page.result.last_modified, complete and not sitemap.children)

    def _articles_from_entries(self, entries: list[FeedEntry]) -> Iterator[CrawlItem]:
        """A feed's entries as articles, unfetched: held to the rules a followed link is (the
        source's hosts, so a feed cannot file articles under another site's URLs), each once."""
        for entry in entries:
            if not self._budget_left():
                break
            url = self._unseen(entry.url)
            if url is None:
                continue
            text = element_text(parse_html(entry.content)) if entry.content else ""
            self._parsed += 1
            self.inc("articles/parsed")
            yield CrawledArticle(url=url, title=entry.title, content=text, source=self.source.name, publish_time=entry.published)
        return True

    def _unseen(self, link: str) -> str | None:
        """``link``'s canonical URL when it is new to this run and to the state, else None.
        Refuses (and counts) a link to a host the source does not admit, and a link with
        userinfo: checked as written, before canonicalisation would drop the ``user:pass@`` and
        hide that the site sent it."""
        try:
            check_target(link, self.source.hosts)
        except URLRejected as exc:
            self.inc(f"fetch/rejected/{exc.cause}")
            log.info("[%s] not fetching %s: %s", self.source.name, link, exc)
            return None
        url = canonical_url(link)
        if url in self._visited:  # listed twice (say, with and without a tracking parameter)
            return None
        self._visited.add(url)
        if self.state.is_seen(url):
            self.inc("articles/skipped_seen")
            return None
        return url

    def _crawl_links(self, links: list[tuple[str, FeedEntry | None]]) -> Iterator[CrawlItem]:
        """Fetch and parse each unseen link. Returns True when no fetch failed (so the list
        page's validators may be kept)."""
        complete = True
        for link, hint in links:
            if not self._budget_left():
                self.inc("articles/over_budget")
                complete = False
                break
            url = self._unseen(link)
            if url is None:
                continue
            try:
                page = self.fetch_page(url)
            except FetchError:
                complete = False
                continue
            if page is None:
                continue
            try:
                article = self.parse_article(page, hint)
            except Exception as exc:  # a subclass hook or a parser bug must not end the crawl
                log.exception("[%s] parsing %s failed", self.source.name, url)
                self.inc("articles/parse_errors")
                self.inc(f"articles/parse_errors/{type(exc).__name__}")
                continue
            if article is None:
                self.inc("articles/skipped_by_parser")
                continue
            self._parsed += 1
            self.inc("articles/parsed")
            yield article
        return complete


def crawler_class(source: SourceConfig) -> type[BaseNewsCrawler]:
    """The class named by ``crawler = "pkg.module:Class"``, else BaseNewsCrawler."""
    if not source.crawler:
        return BaseNewsCrawler
    module_name, _, class_name = source.crawler.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise SourceConfigError(f"cannot load {source.crawler!r}: {exc}", source.name, "crawler") from exc
    if not (isinstance(cls, type) and issubclass(cls, BaseNewsCrawler)):
        raise SourceConfigError(f"{source.crawler!r} is not a BaseNewsCrawler subclass", source.name, "crawler")
    return cls
