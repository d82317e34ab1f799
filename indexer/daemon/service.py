"""The daemon: HTTP API + durable queue + worker (+ crawl scheduler), and its shutdown.

SIGTERM/SIGINT: stop accepting (POST answers 503), stop the crawler, let the worker drain the
queue for up to ``daemon.shutdown_grace_seconds``, close the store (flush), release the lease, exit
0. Whatever is still queued after the grace period stays on disk and is processed on the next
start. A second signal ends the drain at once.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Any, Callable

from ..plugins import DAEMON, load
from ..settings import DaemonSettings, Settings
from .api import ServiceContext
from .http_server import HttpServer
from .metrics import DaemonMetrics
from .queue import DurableQueue
from .queue_home import queue_dir_for, store_identity
from .worker import Worker

log = logging.getLogger(__name__)


class Daemon:
    def __init__(self, settings: Settings, dsettings: DaemonSettings, indexer_factory: Callable | None = None):
        self.settings = settings
        self.d = dsettings
        self.queue_dir = queue_dir_for(settings)
        self.queue = DurableQueue(self.queue_dir, dsettings.queue_max, owner=store_identity(settings))
        self.accepting = True
        self.started_at = time.time()
        self.metrics = DaemonMetrics(self.queue.depth, lambda: 0.0 if self.not_ready_reasons() else 1.0,
                                     lambda: 1.0 if self.lease_held() else 0.0, self.queue.dead_count)
        self.worker = Worker(settings, dsettings, self.queue, self.metrics, indexer_factory=indexer_factory,
                             close_store_on_exit=False)  # closed below, after the HTTP server stopped
        self.crawler: Any = None  # a thread: start, stop, join
        if dsettings.crawl_sources:
            # The scheduler drives the crawler, so it is the crawlers package's (crawlers.scheduled); it is
            # looked up by entry point (indexer.plugins) only here: no module of indexer imports crawlers.
            scheduler = load(DAEMON, "crawl_scheduler", "daemon.crawl_sources")
            state_dir = dsettings.crawl_state_dir or str(self.queue_dir / "crawl-state")
            self.crawler = scheduler(dsettings.crawl_sources, state_dir, self.queue, settings, self.metrics,
                                     dsettings.crawl_interval_seconds, dsettings.crawl_batch_size)
        ctx = ServiceContext(settings, dsettings, self.metrics, lambda: self.worker.indexer, daemon=self)
        self.httpd = HttpServer(ctx)  # binds now: a port in use fails the start, not a thread
        self.stop_requested = threading.Event()
        self._signals = 0
        self.crashed = False

    def lease_held(self) -> bool:
        lease = self.worker.lease
        return bool(lease is not None and lease.valid())

    def not_ready_reasons(self) -> list[str]:
        reasons = []
        if not self.accepting:
            reasons.append("shutting down")
        if self.worker.problem:
            reasons.append(self.worker.problem)
        if self.queue.free() == 0:
            reasons.append("queue full")
        if not self.worker.is_alive() and self.accepting:
            reasons.append("worker stopped")
        if self.d.dead_letters_not_ready and (dead := self.queue.dead_since(self.started_at)) >= self.d.dead_letters_not_ready:
            # articles were accepted and then could not be indexed: someone must look
            # (`newsdedup dead-letters list`); requeueing them clears this once they succeed
            reasons.append(f"dead letters: {dead} articles moved to the dead-letter table since start")
        return reasons

    def start(self) -> None:
        self.worker.start()
        if self.crawler is not None:
            self.crawler.start()
        self.httpd.start()
        host, port = self.httpd.address
        log.info("newsdedup daemon listening on http://%s:%d (store %s, queue %s, auth %s)", host, port,
                 _redact(self.settings.store.path), self.queue_dir, "on" if self.d.auth_token else "off")

    def request_stop(self, signum: int | None = None, frame=None) -> None:
        self._signals += 1
        self.accepting = False  # at once: POST answers 503 from here on
        if self._signals > 1:
            log.warning("second signal: ending the drain now; unfinished articles stay queued")
            self.worker.stop(0)
        else:
            log.info("signal %s: draining (up to %.0fs)", signum, self.d.shutdown_grace_seconds)
        self.stop_requested.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.request_stop)
        signal.signal(signal.SIGINT, self.request_stop)

    def wait(self) -> None:
        while not self.stop_requested.wait(0.5):
            if not self.worker.is_alive():
                log.error("the ingest worker stopped unexpectedly; shutting down (queued articles are kept)")
                self.crashed = True
                break
            if not self.httpd.alive():  # no request can reach the daemon: a supervisor should restart it
                log.error("the HTTP server stopped unexpectedly; shutting down (queued articles are kept)")
                self.crashed = True
                break

    def run(self) -> int:
        """Serve until a signal or a crash, then drain; the exit code."""
        self.install_signal_handlers()
        self.start()
        self.wait()
        return self.shutdown()

    def shutdown(self) -> int:
        self.accepting = False
        if self.crawler is not None:
            self.crawler.stop()
        if self._signals <= 1:
            self.worker.stop(self.d.shutdown_grace_seconds)
        # In short joins: a signal may be delivered to another thread, and Python runs its handler
        # on the main thread only between such waits. One long join kept a second signal waiting
        # for the whole drain (tests/daemon/test_durability.py, 1 run in 5).
        joined_by = time.monotonic() + self.d.shutdown_grace_seconds + 10
        while self.worker.is_alive() and time.monotonic() < joined_by:
            self.worker.join(0.2)
        # A worker still inside one store or model call is left behind: what it holds goes back to
        # the queue uncounted (a stop, not a failure: exit 0), and a writer lease runs out on its own.
        stuck = self.worker.is_alive()
        if stuck:
            log.warning("the ingest worker did not stop within %.0fs; its batch stays queued",
                        self.d.shutdown_grace_seconds + 10)
        self.crashed = self.crashed or self.worker.crashed
        if self.crawler is not None:
            self.crawler.join(5)
        left = self.queue.depth()
        self.httpd.stop()
        self.worker.close_store()  # only now: until the server stopped, answers read the store
        self.queue.close()
        if left:
            log.warning("stopped with %d articles still queued; they are processed on the next start", left)
        elif not (self.crashed or stuck):
            log.info("drained; stopped cleanly")
        return 1 if self.crashed else 0


def _redact(location: str) -> str:
    try:
        from ..store.es_config import redact_url

        return redact_url(location)
    except Exception:  # noqa: BLE001
        return location
