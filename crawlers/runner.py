"""One crawl run: the sources crawled concurrently, articles through the pipeline, batches to
the sink, state updated only after the sink accepted a batch.

Each source runs in its own thread with its own politeness (User-Agent, delay, robots.txt,
retries), so one slow or hostile site no longer holds the others back. What they share is
per host, not per source: the pacing of each host (two sources on one host still take turns)
and the back-off budget (how long retries may wait per host and per run). Deliveries to the sink
take turns too, one batch at a time, so a sink need not be thread-safe. When one source fails
(a sink refusing a batch), the others stop at their next article and the error is raised.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

import requests

from .base import BaseNewsCrawler, Checkpoint, crawler_class
from .deadline import mount_deadlines
from .errors import DropArticle
from .fetch import BackoffBudget, Fetcher, HostRateLimiter
from .pipelines import CrawledArticle, Pipeline, default_pipeline
from .sinks import Sink
from .sources import SourceConfig, SourcesFile
from .state import CrawlState
from .stats import CrawlStats

log = logging.getLogger(__name__)

# progress(source_name, event, detail): events "source_start", "article", "dropped", "batch", "source_done"
Progress = Callable[[str, str, str], None]

# The indexer's decisions; any other status (accepted, written) counts as output/<status>.
_DELIVERY_KEYS = {"new": "index/new", "duplicate": "index/duplicate", "already_indexed": "index/already_indexed", "rejected": "index/rejected"}


@dataclass
class RunOptions:
    batch_size: int = 50
    now: datetime | None = None  # anchor for relative dates
    sleep: Callable[[float], None] | None = None  # injected into fetchers (tests)
    parallel_sources: int = 4  # sources crawled at once
    max_backoff_per_host: float = 600.0  # seconds retries may wait, in total, on one host
    max_backoff_per_run: float = 1800.0  # ... and on all hosts together


class _Stopped(Exception):
    """Another source failed: this one stops at its next article."""


class _Batcher:
    """Pending articles of one source; flushing sends them and marks their URLs seen."""

    def __init__(self, source: SourceConfig, sink: Sink, state: CrawlState, stats: CrawlStats, progress: Progress, size: int, delivery: threading.Lock):
        self.source, self.sink, self.state, self.stats, self.progress, self.size = source, sink, state, stats, progress, size
        self.delivery = delivery  # one batch at a time into the sink, whichever source sends it
        self.pending: list[CrawledArticle] = []

    def add(self, article: CrawledArticle) -> None:
        self.pending.append(article)
        if len(self.pending) >= self.size:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        with self.delivery:
            deliveries = self.sink.send([a.to_record() for a in batch])  # SinkError propagates: stop the run
            # Marked seen before another source may deliver: it is then skipped there, not sent twice.
            self.state.mark_seen([(a.url, self.source.name, d.status) for a, d in zip(batch, deliveries)])
        name = self.source.name
        for article, delivery in zip(batch, deliveries):
            self.stats.inc(name, _DELIVERY_KEYS.get(delivery.status, f"output/{delivery.status}"))
            if delivery.status == "rejected":
                log.warning("[%s] indexer rejected %s: %s", name, article.url, delivery.error)
            self.progress(name, "article", f"{delivery.status}: {article.title[:40]}")
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
    mount_deadlines(session)  # once, before the source threads share it
    sleep_kwargs = {"sleep": options.sleep} if options.sleep else {}
    limiter = HostRateLimiter(**sleep_kwargs)
    backoff = BackoffBudget(options.max_backoff_per_host, options.max_backoff_per_run)
    delivery = threading.Lock()
    stop = threading.Event()
    for source in sources.sources:
        stats.add_source(source.name)  # the report lists sources in file order

    def crawl_source(source: SourceConfig) -> None:
        fetcher = Fetcher(source.fetch_policy(), session=session, limiter=limiter, backoff=backoff, **sleep_kwargs)
        crawler = crawler_class(source)(source, fetcher, state, stats, now=options.now)
        pipeline = pipeline_factory(source) if pipeline_factory else default_pipeline(source.min_content_chars)
        progress(source.name, "source_start", ", ".join(source.start_urls))
        try:
            _run_source(crawler, pipeline, _Batcher(source, sink, state, stats, progress, options.batch_size, delivery), progress, stop)
        except _Stopped:
            log.warning("[%s] stopped: another source failed", source.name)
            return
        except BaseException:
            stop.set()
            raise
        progress(source.name, "source_done", "")

    try:
        with ThreadPoolExecutor(max(1, min(options.parallel_sources, len(sources.sources))), thread_name_prefix="crawl") as pool:
            futures = [pool.submit(crawl_source, source) for source in sources.sources]
            try:
                wait(futures)
            except BaseException:  # Ctrl-C: the sources stop at their next article
                stop.set()
                raise
        for future in futures:
            future.result()  # the first failure, in file order, is raised
    finally:
        session.close()
    return stats


def _run_source(crawler: BaseNewsCrawler, pipeline: Pipeline, batcher: _Batcher, progress: Progress, stop: threading.Event) -> None:
    name = crawler.source.name
    stats, state = crawler.stats, crawler.state
    for item in crawler.crawl():
        if stop.is_set():
            raise _Stopped(name)
        if isinstance(item, Checkpoint):
            batcher.flush()
            if item.complete:
                state.save_validators(item.url, item.etag, item.last_modified)
            else:
                state.forget_validators(item.url)
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
