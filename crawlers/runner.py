"""One crawl run: every source in turn, articles through the pipeline, batches to the sink,
state updated only after the sink accepted a batch.

Sources run one after another; pacing is per host, so running them in parallel would only help
when they are on different hosts, and sequential runs keep logs and stats easy to follow.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

import requests

from .base import BaseNewsCrawler, Checkpoint, crawler_class
from .errors import DropArticle
from .fetch import Fetcher, HostRateLimiter
from .pipelines import CrawledArticle, Pipeline, default_pipeline
from .sinks import Sink
from .sources import SourceConfig, SourcesFile
from .state import CrawlState
from .stats import CrawlStats

log = logging.getLogger(__name__)

# progress(source_name, event, detail): events "source_start", "article", "dropped", "batch", "source_done"
Progress = Callable[[str, str, str], None]

_DELIVERY_KEYS = {"new": "index/new", "duplicate": "index/duplicate", "already_indexed": "index/already_indexed", "rejected": "index/rejected", "accepted": "output/accepted", "written": "output/written"}


@dataclass
class RunOptions:
    batch_size: int = 50
    now: datetime | None = None  # anchor for relative dates
    sleep: Callable[[float], None] | None = None  # injected into fetchers (tests)


class _Batcher:
    """Pending articles of one source; flushing sends them and marks their URLs seen."""

    def __init__(self, source: SourceConfig, sink: Sink, state: CrawlState, stats: CrawlStats, progress: Progress, size: int):
        self.source, self.sink, self.state, self.stats, self.progress, self.size = source, sink, state, stats, progress, size
        self.pending: list[CrawledArticle] = []

    def add(self, article: CrawledArticle) -> None:
        self.pending.append(article)
        if len(self.pending) >= self.size:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        deliveries = self.sink.send([a.to_record() for a in batch])  # SinkError propagates: stop the run
        name = self.source.name
        for article, delivery in zip(batch, deliveries):
            self.stats.inc(name, _DELIVERY_KEYS.get(delivery.status, f"output/{delivery.status}"))
            if delivery.status == "rejected":
                log.warning("[%s] indexer rejected %s: %s", name, article.url, delivery.error)
            self.progress(name, "article", f"{delivery.status}: {article.title[:40]}")
        self.state.mark_seen([(a.url, name, d.status) for a, d in zip(batch, deliveries)])
        self.progress(name, "batch", f"{len(batch)} articles delivered")


def run_crawl(
    sources: SourcesFile,
    sink: Sink,
    state: CrawlState,
    *,
    options: RunOptions | None = None,
    progress: Progress | None = None,
    pipeline_factory: Callable[[SourceConfig], Pipeline] | None = None,
    stats: CrawlStats | None = None,
) -> CrawlStats:
    """Crawl every source into ``sink``; returns the stats (per source). Pass ``stats`` to keep
    them when a SinkError ends the run early."""
    options = options or RunOptions()
    progress = progress or (lambda source, event, detail: None)
    stats = stats if stats is not None else CrawlStats()
    session = requests.Session()
    limiter_kwargs = {"sleep": options.sleep} if options.sleep else {}
    limiter = HostRateLimiter(**limiter_kwargs)
    try:
        for source in sources.sources:
            fetcher = Fetcher(source.fetch_policy(), session=session, limiter=limiter, **limiter_kwargs)
            crawler = crawler_class(source)(source, fetcher, state, stats, now=options.now)
            pipeline = pipeline_factory(source) if pipeline_factory else default_pipeline(source.min_content_chars)
            progress(source.name, "source_start", ", ".join(source.start_urls))
            _run_source(crawler, pipeline, _Batcher(source, sink, state, stats, progress, options.batch_size), progress)
            progress(source.name, "source_done", "")
    finally:
        session.close()
    return stats


def _run_source(crawler: BaseNewsCrawler, pipeline: Pipeline, batcher: _Batcher, progress: Progress) -> None:
    name = crawler.source.name
    stats, state = crawler.stats, crawler.state
    for item in crawler.crawl():
        if isinstance(item, Checkpoint):
            batcher.flush()
            if item.complete:
                state.save_validators(item.url, item.etag, item.last_modified)
            continue
        try:
            article = pipeline.process(item)
        except DropArticle as exc:
            stats.inc(name, "pipeline/dropped")
            stats.inc(name, f"pipeline/dropped/{exc.reason}")
            log.info("[%s] dropped %s", name, exc)
            progress(name, "dropped", str(exc))
            state.mark_seen([(item.url, name, f"dropped:{exc.reason}")])
            continue
        batcher.add(article)
    batcher.flush()
