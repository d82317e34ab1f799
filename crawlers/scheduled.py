"""Scheduled crawling for the ingest daemon: the crawler runner with a sink that enqueues into the
daemon's durable queue.

Each source runs every ``extra.interval_seconds`` (a per-source key in the sources TOML, under
``[sources.extra]``) or ``daemon.crawl_interval_seconds``. Sources run one at a time on one thread;
the crawl state (seen URLs, HTTP validators) lives in ``daemon.crawl_state_dir``, and URLs are
marked seen only once their batch is in the queue, so a crash never skips an article.

It lives here, not in ``indexer.daemon``, because it drives the crawler: the daemon finds it by the
entry point ``crawl_scheduler`` (group ``newsdedup.daemon``, see ``indexer.plugins``), so
dependencies point from crawlers to indexer only.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from indexer.article import article_from_record
from indexer.daemon.queue import DurableQueue, QueueFull
from indexer.errors import InvalidArticle

from .errors import CrawlError, SinkError
from .runner import RunOptions, run_crawl
from .sinks import Delivery
from .sources import load_sources
from .state import CrawlState

log = logging.getLogger(__name__)


class QueueSink:
    """A ``crawlers.sinks.Sink``: validates and enqueues; waits (politely) while the queue is full."""

    def __init__(self, queue: DurableQueue, settings: Any, metrics: Any, stop: threading.Event, poll: float = 0.5):
        self.queue, self.settings, self.metrics, self.stop, self.poll = queue, settings, metrics, stop, poll

    def send(self, records: Sequence[Mapping[str, Any]]):
        deliveries: list[Delivery] = []
        valid: list[tuple[str, dict]] = []
        articles = []
        for i, r in enumerate(records):
            try:
                article = article_from_record(dict(r), f"crawl item {i}", self.settings.default_tz,
                                              self.settings.input.max_body_bytes)
            except InvalidArticle as exc:
                deliveries.append(Delivery(r.get("url", ""), "rejected", None, exc.reason))
                continue
            valid.append((article.id, dict(r)))
            articles.append(article)
            deliveries.append(Delivery(r.get("url", ""), "accepted"))
        while True:
            try:
                self.queue.put_many(valid, origin="crawl", parsed=articles)  # parsed once
                break
            except QueueFull:
                if self.stop.wait(self.poll):
                    raise SinkError("daemon stopping while the queue is full") from None
        self.metrics.accepted.labels("crawl").inc(len(valid))
        return deliveries

    def close(self) -> None:
        pass


class CrawlScheduler(threading.Thread):
    def __init__(self, sources_path: str, state_dir: str | Path, queue: DurableQueue, settings: Any, metrics: Any,
                 default_interval: float, batch_size: int):
        super().__init__(name="crawl-scheduler", daemon=True)
        self.sources = load_sources(sources_path)  # SourceConfigError at start-up, not later
        self.state_dir = Path(state_dir)
        self.queue, self.settings, self.metrics = queue, settings, metrics
        self.default_interval = default_interval
        self.batch_size = batch_size
        self.stop_event = threading.Event()
        self.next_due = {s.name: 0.0 for s in self.sources.sources}

    def interval(self, source) -> float:
        raw = (source.extra or {}).get("interval_seconds")
        try:
            value = float(raw) if raw is not None else self.default_interval
        except (TypeError, ValueError):
            log.warning("[%s] extra.interval_seconds %r is not a number; using %.0fs", source.name, raw, self.default_interval)
            value = self.default_interval
        return max(0.1, value)

    def stop(self) -> None:
        self.stop_event.set()

    def run(self) -> None:
        state = CrawlState(self.state_dir)  # sqlite connection: made and used on this thread
        sink = QueueSink(self.queue, self.settings, self.metrics, self.stop_event)
        try:
            while not self.stop_event.is_set():
                now = time.monotonic()
                due = [s for s in self.sources.sources if self.next_due[s.name] <= now]
                for source in due:
                    if self.stop_event.is_set():
                        break
                    log.info("[%s] scheduled crawl", source.name)
                    try:
                        run_crawl(self.sources.select([source.name]), sink, state, options=RunOptions(batch_size=self.batch_size))
                        self.metrics.crawl_runs.labels("ok").inc()
                    except CrawlError as exc:
                        self.metrics.crawl_runs.labels("failed").inc()
                        log.warning("[%s] crawl stopped: %s", source.name, exc)
                    except Exception:  # noqa: BLE001 - one broken source must not stop the schedule
                        self.metrics.crawl_runs.labels("failed").inc()
                        log.exception("[%s] crawl failed", source.name)
                    self.next_due[source.name] = time.monotonic() + self.interval(source)
                wake = min(self.next_due.values(), default=now + 60) - time.monotonic()
                self.stop_event.wait(max(0.05, wake))
        finally:
            state.close()
