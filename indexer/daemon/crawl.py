"""Scheduled crawling in the daemon (``daemon.crawl_sources``).

The scheduler drives the crawler, so it belongs to the crawlers package (``crawlers.scheduled``),
which builds on the indexer. The daemon takes it by the entry point ``crawl_scheduler`` of the
group ``newsdedup.daemon`` (``indexer.plugins``): no module of ``indexer`` imports ``crawlers``.

``CrawlScheduler`` (a thread: ``start``, ``stop``, ``join``) is looked up when first named here.
"""

from __future__ import annotations

from typing import Any

from ..plugins import DAEMON, load


def __getattr__(name: str) -> Any:
    if name == "CrawlScheduler":
        return load(DAEMON, "crawl_scheduler", "daemon.crawl_sources")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
