"""Exact kNN inside a time window, from vectors grouped by publish day.

The indexer asks for neighbours within ±N days of an article's publish time. An HNSW graph over
the whole store serves that badly: at 1M articles over a year a two-week window keeps ~4% of the
graph, so the search either widens until it is slow or misses neighbours (measured: bench/lookup.py).
Elasticsearch meets the same problem by switching to exact search when a filter is restrictive;
this does the same for the embedded store: vectors of one UTC day sit in one contiguous array, and
a windowed query is one matrix product over the days it spans, so its cost follows the articles in
the window, not the store, and its recall is exact.

Days are loaded from SQLite (the source of truth) when first asked for and kept in an LRU bounded
by ``max_vectors``; rows written later are appended to loaded days. Rows without a publish time
pass every window (no time: no window), so they form one more bucket that every query scans.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Callable, Sequence

import numpy as np

DAY_SECONDS = 86400.0
UNDATED = None  # the bucket key of rows without a publish time

# A loader returns (row ids, publish timestamps, vectors) for one day, or for UNDATED.
Loader = Callable[[int | None], tuple[np.ndarray, np.ndarray, np.ndarray]]


def day_of(ts: float) -> int:
    return math.floor(ts / DAY_SECONDS)


class _Bucket:
    """One day's vectors: a consolidated array plus rows appended since (merged on next read)."""

    __slots__ = ("rids", "ts", "vecs", "pending")

    def __init__(self, rids: np.ndarray, ts: np.ndarray, vecs: np.ndarray):
        self.rids, self.ts, self.vecs = rids, ts, vecs
        self.pending: list[tuple[int, float, np.ndarray]] = []

    def __len__(self) -> int:
        return len(self.rids) + len(self.pending)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.pending:
            rids, ts, vecs = zip(*self.pending)
            self.rids = np.concatenate([self.rids, np.asarray(rids, dtype=np.int64)])
            self.ts = np.concatenate([self.ts, np.asarray(ts, dtype=np.float64)])
            self.vecs = np.vstack([self.vecs, np.vstack(vecs).astype(np.float32, copy=False)])
            self.pending = []
        return self.rids, self.ts, self.vecs


class DayVectors:
    """LRU of per-day vector buckets answering windowed top-k by exact inner product."""

    def __init__(self, loader: Loader, dims: int, max_vectors: int = 1_000_000):
        self._load = loader
        self._dims = dims
        self._max_vectors = max_vectors
        self._buckets: OrderedDict[int | None, _Bucket] = OrderedDict()
        self._held = 0

    def add(self, rid: int, ts: float | None, vector: np.ndarray) -> None:
        """A newly written row: appended if its day is loaded (otherwise the loader will see it)."""
        key = UNDATED if ts is None else day_of(ts)
        bucket = self._buckets.get(key)
        if bucket is not None:
            bucket.pending.append((rid, 0.0 if ts is None else ts, vector))
            self._held += 1

    def _bucket(self, key: int | None) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            rids, ts, vecs = self._load(key)
            # copy=False: the loader's arrays usually have these types already; a day can be MBs.
            bucket = _Bucket(rids.astype(np.int64, copy=False), ts.astype(np.float64, copy=False),
                             vecs.reshape(-1, self._dims).astype(np.float32, copy=False))
            self._buckets[key] = bucket
            self._held += len(bucket)
        self._buckets.move_to_end(key)
        return bucket

    def _evict(self, keep: set) -> None:
        for key in list(self._buckets):
            if self._held <= self._max_vectors:
                return
            if key not in keep:
                self._held -= len(self._buckets.pop(key))

    def search(self, vector: np.ndarray, k: int, min_score: float, start: float, end: float) -> list[tuple[int, float]]:
        """(row id, inner product) of the best ``k`` rows published in [start, end] or undated."""
        keys: list[int | None] = [UNDATED, *range(day_of(start), day_of(end) + 1)]
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        found: list[tuple[float, int]] = []
        for key in keys:
            rids, ts, vecs = self._bucket(key).arrays()
            if not len(rids):
                continue
            scores = vecs @ query
            ok = scores >= min_score
            if key is not UNDATED:
                ok &= (ts >= start) & (ts <= end)
            idx = np.flatnonzero(ok)
            if len(idx) > k + 8:
                idx = idx[np.argpartition(-scores[idx], k + 8)[: k + 8]]
            found.extend((float(scores[i]), int(rids[i])) for i in idx)
        self._evict(set(keys))
        found.sort(key=lambda pair: -pair[0])
        return [(rid, score) for score, rid in found[:k]]


def stack(rows: Sequence[tuple[int, float | None, bytes]], dims: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rid, publish_ts, vector bytes) rows as the three arrays a bucket holds."""
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros((0, dims), np.float32)
    rids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    ts = np.fromiter((0.0 if r[1] is None else r[1] for r in rows), dtype=np.float64, count=len(rows))
    vecs = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dims)
    return rids, ts, vecs
