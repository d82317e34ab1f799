"""The worker: takes batches from the durable queue, decides and writes them through one writer,
acknowledges only what the store holds.

Batches are staged the way ``Indexer.index_stream`` stages a file: batch *n+1* is prepared
(``Indexer.prepare``: each record parsed once, or not at all when the queue hands over the
article the API already validated; its text features and embeddings started on the
indexer's own stages) before batch *n* is decided and written (store round trips). Deciding and
writing happen on this one thread only, under the writer lease, so two near-duplicates in flight
are always decided in order, the second seeing the first.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable

from ..errors import BulkWriteError, StoreError
from ..features import Featurizer
from ..pipeline import Decision, Indexer, PreparedBatch
from ..retry import Backoff
from ..settings import DaemonSettings, Settings
from .lease import Lease, make_lease, renew_interval
from .metrics import DaemonMetrics
from .queue import DurableQueue, QueueItem

log = logging.getLogger(__name__)


@dataclass
class _Batch:
    items: list[QueueItem]
    prepared: PreparedBatch | None = None  # None: prepared when it is processed

    @property
    def records(self) -> list:
        """Queued records, or the articles the API parsed them into (``DurableQueue.put_many``)."""
        return [i.record for i in self.items]

    @property
    def places(self) -> list[str]:
        return [f"queue#{i.seq}" for i in self.items]


def open_indexer(settings: Settings) -> Indexer:
    """Seam for tests (a wrapper store that fails on demand)."""
    return Indexer.open(settings)


def _warm_up(featurizer: Featurizer) -> None:
    """Load the tokeniser dictionaries and the embedding model before reporting ready (the first
    article would otherwise pay seconds for it)."""
    from ..article import Article

    try:
        featurizer.embed([featurizer.text(Article(id="warm-up", title="预热", content="新闻去重服务启动预热。"))])
    except Exception as exc:  # noqa: BLE001 - the first real batch reports it properly
        log.warning("warm-up failed: %s", exc)


class Worker(threading.Thread):
    def __init__(self, settings: Settings, dsettings: DaemonSettings, queue: DurableQueue, metrics: DaemonMetrics,
                 indexer_factory: Callable[[Settings], Indexer] | None = None, lease_factory: Callable[[], Lease] | None = None,
                 close_store_on_exit: bool = True):
        """``close_store_on_exit=False``: the owner closes the store (``close_store``) once nothing
        else reads it (the daemon: after its HTTP server stopped, so no answer meets a closed store)."""
        super().__init__(name="ingest-worker", daemon=True)
        self._close_store_on_exit = close_store_on_exit
        self.settings = settings
        self.d = dsettings
        self.queue = queue
        self.metrics = metrics
        self._indexer_factory = indexer_factory or (lambda s: open_indexer(s))
        self._lease_factory = lease_factory or (lambda: make_lease(
            self.d.lease, self.settings, self.d.lease_name, self.d.lease_ttl_seconds))
        self.indexer: Indexer | None = None
        self.lease: Lease | None = None
        self.problem: str | None = "starting: opening the store"
        self.standby = False  # another daemon holds the writer lease
        self.store_down = False
        self.crashed = False  # run() ended on an exception
        self._backoff = Backoff(dsettings.store_retry_initial_seconds, dsettings.store_retry_max_seconds)
        self._stopping = threading.Event()
        self._deadline: float | None = None
        self._lookahead: _Batch | None = None
        self._closed = threading.Event()
        self._store_closed = threading.Event()  # close_store was called: later failures are not the articles'

    # ---- control ---------------------------------------------------------------------------------------
    def stop(self, grace: float) -> None:
        """Drain: keep processing until the queue is empty or ``grace`` seconds passed. A later call
        never extends an earlier deadline: a second signal's ``stop(0)`` stands even when the drain's
        own ``stop(grace)`` comes after it."""
        deadline = time.monotonic() + grace
        self._deadline = deadline if self._deadline is None else min(self._deadline, deadline)
        self._stopping.set()

    @property
    def ready(self) -> bool:
        return self.problem is None

    def _time_left(self) -> float:
        return float("inf") if self._deadline is None else self._deadline - time.monotonic()

    def _drain_over(self) -> bool:
        return self._stopping.is_set() and self._time_left() <= 0

    def _should_exit(self) -> bool:
        return self._drain_over() or (self._stopping.is_set() and self.queue.depth() == 0)

    def _sleep(self, seconds: float) -> None:
        """During a drain never past the deadline, which is read on every wake: a second signal
        (``stop(0)``) ends a backoff of minutes at once."""
        end = time.monotonic() + seconds
        while (left := min(end - time.monotonic(), self._time_left())) > 0:
            time.sleep(min(0.05, left))

    # ---- main loop ---------------------------------------------------------------------------------------
    def run(self) -> None:
        renewer = threading.Thread(target=self._renew_loop, name="lease-renew", daemon=True)
        renewer.start()
        try:
            while not self._should_exit():
                if not self._ensure_indexer() or not self._ensure_lease():
                    continue
                batch = self._lookahead or self._take(fill=not self._stopping.is_set())
                self._lookahead = None
                if batch is None:
                    continue
                self._lookahead = self._take(fill=False)  # featurised while `batch` is written
                self._process(batch)
        except Exception:  # noqa: BLE001 - the worker must not die silently
            log.exception("ingest worker crashed; unfinished items stay queued")
            self.problem = "worker crashed (see the log)"
            self.crashed = True
        finally:
            if self._lookahead is not None:
                self.queue.release([i.seq for i in self._lookahead.items])
            self._closed.set()
            if self.lease is not None:
                try:
                    self.lease.release()
                except Exception as exc:  # noqa: BLE001
                    log.warning("releasing the lease failed: %s", exc)
            if self._close_store_on_exit:
                self.close_store()

    def close_store(self) -> None:
        self._store_closed.set()
        indexer, self.indexer = self.indexer, None
        if indexer is not None:
            try:
                indexer.close()
            except Exception as exc:  # noqa: BLE001
                log.warning("closing the store failed: %s", exc)

    def _renew_loop(self) -> None:
        interval = renew_interval(self.d.lease_ttl_seconds)
        while not self._closed.wait(interval):
            lease = self.lease
            if lease is None or not lease.valid():
                continue
            try:
                if not lease.renew():
                    self.standby = True
            except Exception as exc:  # noqa: BLE001 - store down: the lease runs out on its own
                log.warning("renewing the writer lease failed: %s", exc)

    def _ensure_indexer(self) -> bool:
        if self.indexer is not None:
            return True
        try:
            indexer = self._indexer_factory(self.settings)
        except StoreError as exc:
            delay = self._store_failed(f"store unavailable: {exc}")
            log.warning("cannot open the store (%s); retrying in %.1fs", exc, delay)
            self._sleep(delay)
            return False
        _warm_up(indexer.featurizer)
        self.indexer = indexer
        self.store_down = False
        self._backoff.reset()
        self.problem = "starting: taking the writer lease"
        return True

    def _ensure_lease(self) -> bool:
        if self.lease is None:
            self.lease = self._lease_factory()
        if self.lease.valid():
            self.standby = False
            return True
        try:
            got = self.lease.acquire()
        except Exception as exc:  # noqa: BLE001 - the store is down: same as any store error
            self._sleep(self._store_failed(f"store unavailable (lease): {exc}"))
            return False
        if got:
            # The store answered: a failure recorded by an earlier try (of the lease or a batch) is
            # over, and an idle daemon must not report "not ready" until its next batch.
            self.standby = self.store_down = False
            self._backoff.reset()
            self.problem = None
            return True
        self.standby = True
        self.problem = f"standby: the writer lease is held by {self.lease.holder() or 'another daemon'}"
        log.info("%s; retrying in %.1fs", self.problem, self.d.lease_retry_seconds)
        self._sleep(self.d.lease_retry_seconds)
        return False

    def _store_failed(self, problem: str) -> float:
        """Record a store failure; the seconds to wait before the next try."""
        self.metrics.store_errors.inc()
        self.store_down = True
        self.problem = problem
        return self._backoff.step()

    def _take(self, fill: bool) -> _Batch | None:
        items = self.queue.take(self.d.batch_size, self.d.batch_wait_seconds, self._stopping, fill=fill)
        if not items:
            return None
        batch = _Batch(items)
        try:
            batch.prepared = self.indexer.prepare(batch.records, batch.places)
        except Exception as exc:  # noqa: BLE001 - prepared again when processed, where it is reported
            log.debug("preparing a batch ahead failed: %s", exc)
        return batch

    def _process(self, batch: _Batch) -> None:
        seqs = [i.seq for i in batch.items]
        waited = False
        while True:
            if not self.lease.valid() and not self._ensure_lease():
                self.queue.release(seqs)
                return
            if waited:
                self.queue.working(seqs)
                waited = False
            started = time.perf_counter()
            try:
                if batch.prepared is None:
                    batch.prepared = self.indexer.prepare(batch.records, batch.places)
                # Its features stay valid if the store fails: a retry decides the same prepared batch.
                outcomes = self.indexer.index_prepared(batch.prepared)
            except StoreError as exc:
                if refused_articles(exc):  # retrying the batch would fail the same way, forever
                    log.error("the store refused articles of a batch for good (%s); writing them one by one", exc)
                    self._one_by_one(batch.items)
                    return
                delay = self._store_failed(f"store unavailable: {exc}")
                log.warning("batch of %d failed on the store (%s); kept in the queue, retrying in %.1fs", len(seqs), exc, delay)
                self.queue.waiting(seqs)  # a process stop while the store is down is not the articles'
                waited = True
                if not self._drain_over():
                    self._sleep(delay)
                if self._drain_over():
                    self.queue.release(seqs)
                    return
                continue
            except Exception as exc:  # noqa: BLE001 - not the store: find the poison article
                if self._store_closed.is_set():  # closed under the worker at the end of a drain
                    self.queue.release(seqs)
                    return
                log.exception("batch failed (%s); retrying its articles one by one", exc)
                self._one_by_one(batch.items)
                return
            self.metrics.batch_seconds.observe(time.perf_counter() - started)
            self.metrics.batch_size.observe(len(seqs))
            self.queue.ack(seqs)
            self._count(outcomes)
            if self.store_down or self.problem:
                log.info("store writes succeed again")
            self.store_down = False
            self.problem = None
            self._backoff.reset()
            return

    def _one_by_one(self, items: list[QueueItem]) -> None:
        """Each article alone: one that fails by itself is moved to the dead-letter table, with
        the reason; the rest are written. A drain that runs out, a store that fails, or a store
        closed under the worker stops it: the articles left stay queued (a closed store fails
        every article, through no fault of theirs)."""
        for n, item in enumerate(items):
            if self._drain_over() or self._store_closed.is_set() or not self._write_alone(item):
                self.queue.release([i.seq for i in items[n:]])
                return

    def _write_alone(self, item: QueueItem) -> bool:
        """Write one article, or bury it when it fails by itself; False when the store failed
        (or was closed) instead, and the article stays queued."""
        try:
            outcomes = self.indexer.index_many([item.record], [f"queue#{item.seq}"])
        except StoreError as exc:
            refused = refused_articles(exc)
            if not refused:
                return False
            reasons = "; ".join(why for aid, why in exc.errors if aid in refused)
            self._bury(item, f"refused by the store for good: {reasons or exc}")
            return True
        except Exception as exc:  # noqa: BLE001
            if self._store_closed.is_set():
                return False
            self._bury(item, f"{type(exc).__name__}: {exc}")
            return True
        self.queue.ack([item.seq])
        self._count(outcomes)
        return True

    def _bury(self, item: QueueItem, reason: str) -> None:
        log.error("article %s moved to the dead-letter table: %s", item.article_id, reason)
        self.queue.bury(item, reason)
        self.metrics.dead.inc()

    def _count(self, outcomes) -> None:
        for o in outcomes:
            self.metrics.processed.labels(o.decision.value).inc()
            if o.merged:
                self.metrics.merges.inc(len(o.merged))
            if o.decision is Decision.DUPLICATE and o.reason:
                self.metrics.duplicates.labels(o.reason).inc()
            if o.decision is Decision.REJECTED:
                log.warning("indexer rejected %s: %s", o.article_id, o.error)


def refused_articles(exc: StoreError) -> list[str]:
    """The articles a store error says the store will never take (``BulkWriteError.refused``)."""
    return exc.refused if isinstance(exc, BulkWriteError) else []


__all__ = ["Worker", "open_indexer"]
