"""The worker: takes batches from the durable queue, featurises ahead, decides and writes through
one writer, acknowledges only what the store holds.

While batch *n* is decided and written (store round trips), batch *n+1* is featurised: its
text features (cleaning, SimHash) on a thread pool, its embeddings on a stage thread, part by part
as the texts are ready (the model runs outside the GIL). Deciding and writing happen on this one
thread only, under the writer lease, so two near-duplicates in flight are always decided in order,
the second seeing the first.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..article import article_from_record
from ..errors import InvalidArticle, StoreError
from ..features import Featurizer, TextFeatures
from ..pipeline import Decision, Indexer
from ..settings import DaemonSettings, Settings
from .lease import Lease, make_lease
from .metrics import DaemonMetrics
from .queue import DurableQueue, QueueItem

log = logging.getLogger(__name__)

_MISSING = object()
# Articles per prefetched part: the model starts on a part as soon as its text features are
# ready; a part of 32 news texts is six micro-batches of the model, enough for both cores.
PREFETCH_PART = 32


class PrefetchingFeaturizer:
    """Wraps the indexer's ``Featurizer``: features computed ahead by ``submit`` are handed out
    by ``text``/``embed`` when the indexer asks for them; anything not prefetched is computed as
    usual. Thread-safe."""

    def __init__(self, inner: Featurizer, workers: int):
        self.inner = inner
        self.settings = inner.settings
        self.embedder = inner.embedder
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="featurize")
        self._stage = ThreadPoolExecutor(max_workers=1, thread_name_prefix="featurize-stage")
        self._lock = threading.Lock()
        self._embed_lock = threading.Lock()
        self._texts: dict[tuple, TextFeatures] = {}
        self._vectors: dict[int, tuple[TextFeatures, Any]] = {}

    @staticmethod
    def _key(article) -> tuple:
        return (article.id, len(article.title), len(article.content), hash(article.title), hash(article.content))

    # ---- the Featurizer interface the indexer uses -----------------------------------------------
    def text(self, article) -> TextFeatures:
        with self._lock:
            tf = self._texts.get(self._key(article))
        return tf if tf is not None else self.inner.text(article)

    def embed(self, features: Sequence[TextFeatures]) -> list:
        out: list = []
        missing: list[int] = []
        with self._lock:
            for i, f in enumerate(features):
                entry = self._vectors.get(id(f))
                if entry is not None and entry[0] is f:
                    out.append(entry[1])
                else:
                    out.append(_MISSING)
                    missing.append(i)
        if missing:
            with self._embed_lock:
                computed = self.inner.embed([features[i] for i in missing])
            for i, v in zip(missing, computed):
                out[i] = v
        return out

    # ---- ahead of time ------------------------------------------------------------------------------
    def submit(self, records: Sequence[Any]) -> Future:
        """Start featurising ``records`` (raw dicts); the future gives the cache keys to ``forget``.

        Text features (Python) go to the pool at once, in parts; the model embeds the parts on the
        stage thread, in order, as their texts are ready. Batches submitted one after another
        thus overlap: the next batch's text features are computed while the model (outside the
        GIL) embeds this one."""
        articles = []
        for r in records:
            try:
                articles.append(article_from_record(r, None, self.settings.default_tz))
            except InvalidArticle:
                continue
        parts = [articles[i : i + PREFETCH_PART] for i in range(0, len(articles), PREFETCH_PART)]
        texts = [self._pool.submit(self._texts_of, part) for part in parts]
        return self._stage.submit(self._embed_parts, parts, texts)

    def _embed_parts(self, parts: list[list], texts: list[Future]) -> list[tuple]:
        keys: list[tuple] = []
        for part, done in zip(parts, texts):
            keys.extend(self._embed_part(part, done.result()))
        return keys

    def _texts_of(self, articles: list) -> list[TextFeatures]:
        return [self.inner.text(a) for a in articles]

    def _embed_part(self, articles: list, tfs: list[TextFeatures]) -> list[tuple]:
        with self._embed_lock:
            vectors = self.inner.embed(tfs)
        keys = [self._key(a) for a in articles]
        with self._lock:
            if len(self._texts) > 200_000:  # forgotten entries after errors; never grow without bound
                self._texts.clear()
                self._vectors.clear()
            for k, tf, v in zip(keys, tfs, vectors):
                self._texts[k] = tf
                self._vectors[id(tf)] = (tf, v)
        return keys

    def forget(self, keys: Sequence[tuple]) -> None:
        with self._lock:
            for k in keys:
                tf = self._texts.pop(k, None)
                if tf is not None:
                    self._vectors.pop(id(tf), None)

    def close(self) -> None:
        self._stage.shutdown(wait=False, cancel_futures=True)
        self._pool.shutdown(wait=False, cancel_futures=True)


@dataclass
class _Batch:
    items: list[QueueItem]
    prefetched: Future | None = None
    keys: list = field(default_factory=list)


class Backoff:
    def __init__(self, initial: float, maximum: float):
        self.initial, self.maximum = initial, max(initial, maximum)
        self.next = initial

    def step(self) -> float:
        delay, self.next = self.next, min(self.next * 2, self.maximum)
        return delay

    def reset(self) -> None:
        self.next = self.initial


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
                 indexer_factory: Callable[[Settings], Indexer] | None = None, lease_factory: Callable[[Any], Lease] | None = None):
        super().__init__(name="ingest-worker", daemon=True)
        self.settings = settings
        self.d = dsettings
        self.queue = queue
        self.metrics = metrics
        self._indexer_factory = indexer_factory or (lambda s: open_indexer(s))
        self._lease_factory = lease_factory or (lambda store: make_lease(
            self.d.lease, store, self.settings, self.d.lease_name, self.d.lease_ttl_seconds))
        self.indexer: Indexer | None = None
        self.featurizer: PrefetchingFeaturizer | None = None
        self.lease: Lease | None = None
        self.problem: str | None = "starting: opening the store"
        self.standby = False  # another daemon holds the writer lease
        self.store_down = False
        self._backoff = Backoff(dsettings.store_retry_initial_seconds, dsettings.store_retry_max_seconds)
        self._stopping = threading.Event()
        self._deadline: float | None = None
        self._lookahead: _Batch | None = None
        self._closed = threading.Event()
        self.finished = threading.Event()

    # ---- control ---------------------------------------------------------------------------------------
    def stop(self, grace: float) -> None:
        """Drain: keep processing until the queue is empty or ``grace`` seconds passed."""
        self._deadline = time.monotonic() + grace
        self._stopping.set()

    @property
    def ready(self) -> bool:
        return self.problem is None

    def _time_left(self) -> float:
        return float("inf") if self._deadline is None else self._deadline - time.monotonic()

    def _should_exit(self) -> bool:
        if not self._stopping.is_set():
            return False
        if self.queue.depth() == 0:
            return True
        return self._time_left() <= 0

    def _sleep(self, seconds: float) -> None:
        """Interruptible by stop; during a drain never past the deadline."""
        end = time.monotonic() + min(seconds, max(0.0, self._time_left()))
        while (left := end - time.monotonic()) > 0:
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
        finally:
            if self._lookahead is not None:
                self.queue.release([i.seq for i in self._lookahead.items])
            self._closed.set()
            self._shutdown()
            self.finished.set()

    def _shutdown(self) -> None:
        if self.featurizer is not None:
            self.featurizer.close()
        if self.lease is not None:
            try:
                self.lease.release()
            except Exception as exc:  # noqa: BLE001
                log.warning("releasing the lease failed: %s", exc)
        if self.indexer is not None:
            try:
                self.indexer.close()
            except Exception as exc:  # noqa: BLE001
                log.warning("closing the store failed: %s", exc)

    def _renew_loop(self) -> None:
        interval = max(0.02, self.d.lease_ttl_seconds / 3)
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
            self.metrics.store_errors.inc()
            self.store_down = True
            self.problem = f"store unavailable: {exc}"
            delay = self._backoff.step()
            log.warning("cannot open the store (%s); retrying in %.1fs", exc, delay)
            self._sleep(delay)
            return False
        _warm_up(indexer.featurizer)
        self.featurizer = PrefetchingFeaturizer(indexer.featurizer, self.d.featurize_workers)
        indexer.featurizer = self.featurizer  # type: ignore[assignment]
        self.indexer = indexer
        self.store_down = False
        self._backoff.reset()
        self.problem = "starting: taking the writer lease"
        return True

    def _ensure_lease(self) -> bool:
        if self.lease is None:
            self.lease = self._lease_factory(self.indexer.store)
        if self.lease.valid():
            self.standby = False
            return True
        try:
            got = self.lease.acquire()
        except Exception as exc:  # noqa: BLE001 - the store is down: same as any store error
            self.metrics.store_errors.inc()
            self.store_down = True
            self.problem = f"store unavailable (lease): {exc}"
            self._sleep(self._backoff.step())
            return False
        if got:
            if hasattr(self.indexer.store, "refresh"):
                # perhaps taking over from another writer: make its last writes searchable, so
                # nothing it just decided is missed (Elasticsearch refreshes only every second)
                try:
                    self.indexer.store.refresh()
                except Exception as exc:  # noqa: BLE001
                    log.warning("refresh after taking the lease failed: %s", exc)
            self.standby = False
            if self.problem and not self.store_down:
                self.problem = None
            return True
        self.standby = True
        self.problem = f"standby: the writer lease is held by {self.lease.holder() or 'another daemon'}"
        log.info("%s; retrying in %.1fs", self.problem, self.d.lease_retry_seconds)
        self._sleep(self.d.lease_retry_seconds)
        return False

    def _take(self, fill: bool) -> _Batch | None:
        items = self.queue.take(self.d.batch_size, self.d.batch_wait_seconds, self._stopping, fill=fill)
        if not items:
            return None
        batch = _Batch(items)
        if self.featurizer is not None:
            batch.prefetched = self.featurizer.submit([i.record for i in items])
        return batch

    def _process(self, batch: _Batch) -> None:
        if batch.prefetched is not None:
            try:
                batch.keys = batch.prefetched.result()
            except Exception as exc:  # noqa: BLE001 - the indexer featurises again and reports it
                log.debug("prefetch failed: %s", exc)
        seqs = [i.seq for i in batch.items]
        try:
            while True:
                if not self.lease.valid() and not self._ensure_lease():
                    self.queue.release(seqs)
                    return
                started = time.perf_counter()
                try:
                    outcomes = self.indexer.index_many([i.record for i in batch.items], [f"queue#{i.seq}" for i in batch.items])
                except StoreError as exc:
                    self.metrics.store_errors.inc()
                    self.store_down = True
                    self.problem = f"store unavailable: {exc}"
                    delay = self._backoff.step()
                    log.warning("batch of %d failed on the store (%s); kept in the queue, retrying in %.1fs", len(seqs), exc, delay)
                    if self._stopping.is_set() and self._time_left() <= 0:
                        self.queue.release(seqs)
                        return
                    self._sleep(delay)
                    if self._stopping.is_set() and self._time_left() <= 0:
                        self.queue.release(seqs)
                        return
                    continue
                except Exception as exc:  # noqa: BLE001 - not the store: find the poison article
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
        finally:
            if self.featurizer is not None and batch.keys:
                self.featurizer.forget(batch.keys)

    def _one_by_one(self, items: list[QueueItem]) -> None:
        for n, item in enumerate(items):
            try:
                outcomes = self.indexer.index_many([item.record], [f"queue#{item.seq}"])
            except StoreError:
                self.queue.release([i.seq for i in items[n:]])
                return
            except Exception as exc:  # noqa: BLE001
                log.error("article %s moved to the dead-letter table: %s", item.article_id, exc)
                self.queue.bury(item, f"{type(exc).__name__}: {exc}")
                self.metrics.dead.inc()
                continue
            self.queue.ack([item.seq])
            self._count(outcomes)

    def _count(self, outcomes) -> None:
        for o in outcomes:
            self.metrics.processed.labels(o.decision.value).inc()
            if o.decision is Decision.DUPLICATE and o.reason:
                self.metrics.duplicates.labels(o.reason).inc()
            if o.decision is Decision.REJECTED:
                log.warning("indexer rejected %s: %s", o.article_id, o.error)


__all__ = ["Worker", "PrefetchingFeaturizer", "Backoff", "open_indexer"]
