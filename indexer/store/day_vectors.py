"""Exact kNN inside a time window, from vectors grouped by publish day.

The indexer asks for neighbours within ±N days of an article's publish time. An HNSW graph over
the whole store serves that badly: at 1M articles over a year a two-week window keeps ~4% of the
graph, so the search either widens until it is slow or misses neighbours (measured: bench/lookup.py).
Elasticsearch meets the same problem by switching to exact search when a filter is restrictive;
this does the same for the embedded store: vectors of one UTC day sit in one contiguous array, and
a windowed query scans the days it spans, so its cost follows the articles in the window, not the
store, and its recall is exact.

The scan is bound by memory bandwidth (a two-week window at 1M articles is ~40k vectors, 84 MB of
float32), so each day also keeps an int8 copy of its vectors, a quarter of the bytes. The int8 dot
products rank approximately, with a proven bound on each one's error (Cauchy–Schwarz over the two
rounding residuals, plus an allowance for float32 rounding); only the rows whose bound still lets
them reach the top k are scored again in float32, so the answer is the exact float32 top k. Near
ties only make that second set larger, never the answer different.

Days are loaded from SQLite (the source of truth) when first asked for and kept in an LRU bounded
by ``max_vectors``; rows written later are appended to loaded days. Rows without a publish time
pass every window (no time: no window), so they form one more bucket that every query scans.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import numpy as np

try:
    import simsimd
except ImportError:  # numpy computes the same integer products, only more slowly
    simsimd = None

DAY_SECONDS = 86400.0
UNDATED = None  # the bucket key of rows without a publish time

# A loader returns (row ids, publish timestamps, vectors) for one day, or for UNDATED.
Loader = Callable[[int | None], tuple[np.ndarray, np.ndarray, np.ndarray]]

# A float32 dot product of n terms is within n·2⁻²⁴·|q|·|v| of the real one; the bounds allow twice
# that, which also covers the rounding of the bounds themselves.
F32_ALLOWANCE = 2 * 2.0**-24
QUANTISE_CHUNK = 4096  # rows quantised at once: bounds the float64 temporaries for a big bucket

# One helper thread scans days alongside the caller (the int8 kernel releases the GIL). Not simsimd's
# own OpenMP threads: their spin-waiting after each call collides with the thread pools of OpenBLAS
# and torch on a small machine (measured on 2 cores: a float32 scan run after an OpenMP one took 40x
# longer, and interleaved with OpenBLAS work the OpenMP scan's p99 was 100 ms against 9 ms).
_helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="day-vectors")


def day_of(ts: float) -> int:
    return math.floor(ts / DAY_SECONDS)


def quantise(vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Rows v as int8 codes c with a scale s each, v ≈ s·c, and the two lengths the error bound of
    a product needs: the largest |v − s·c| (plus the float32 allowance) and the largest |s·c|."""
    codes, scale, err, norm = np.zeros(vecs.shape, np.int8), np.zeros(len(vecs)), 0.0, 0.0
    for i in range(0, len(vecs), QUANTISE_CHUNK):
        v = vecs[i:i + QUANTISE_CHUNK].astype(np.float64)
        s = np.abs(v).max(axis=1) / 127
        s[s == 0] = 1  # a zero vector: codes 0, residual 0
        c = np.clip(np.rint(v / s[:, None]), -127, 127)
        decoded = c * s[:, None]
        residual = np.linalg.norm(v - decoded, axis=1) + F32_ALLOWANCE * v.shape[1] * np.linalg.norm(v, axis=1)
        codes[i:i + QUANTISE_CHUNK], scale[i:i + QUANTISE_CHUNK] = c, s
        err, norm = max(err, residual.max()), max(norm, np.linalg.norm(decoded, axis=1).max())
    return codes, scale, float(err), float(norm)


def shifted(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes c as c + 128 in uint8, and lift(c) = 128·(Σc + 64·dims) per row, so that
    (c + 128)·(q + 128) = c·q + lift(c) + lift(q): simsimd's unsigned kernel is faster than its
    signed one on AVX2 (1.6x on a 2,760×512 day), and the shift is undone exactly."""
    lift = 128.0 * (codes.sum(axis=1, dtype=np.int64) + 64 * codes.shape[1])
    return (codes.astype(np.int16) + 128).astype(np.uint8), lift


def _int_dots(query: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Exact products of a uint8 query with uint8 rows, as float64."""
    if simsimd is not None:
        return np.asarray(simsimd.cdist(query[None, :], codes, metric="dot"))[0]
    return codes.astype(np.float64) @ query.astype(np.float64)  # exact: integers far below 2⁵³


class _Bucket:
    """One day's vectors: a consolidated array plus rows appended since (merged on next read)."""

    __slots__ = ("rids", "ts", "vecs", "codes", "lift", "scale", "err", "norm", "pending")

    def __init__(self, rids: np.ndarray, ts: np.ndarray, vecs: np.ndarray):
        self.rids, self.ts, self.vecs = rids, ts, vecs
        # One error bound for the whole day, not one per row: per-row bounds rescore fewer rows (106
        # instead of 160 a query on bench data) but cost more numpy calls per day than that saves.
        codes, self.scale, self.err, self.norm = quantise(vecs)
        self.codes, self.lift = shifted(codes)
        self.pending: list[tuple[int, float, np.ndarray]] = []

    def __len__(self) -> int:
        return len(self.rids) + len(self.pending)

    def merge(self) -> _Bucket:
        if self.pending:
            rids, ts, vecs = zip(*self.pending)
            vecs = np.vstack(vecs).astype(np.float32, copy=False)
            codes, scale, err, norm = quantise(vecs)
            codes, lift = shifted(codes)
            self.rids = np.concatenate([self.rids, np.asarray(rids, dtype=np.int64)])
            self.ts = np.concatenate([self.ts, np.asarray(ts, dtype=np.float64)])
            self.vecs = np.vstack([self.vecs, vecs])
            self.codes = np.vstack([self.codes, codes])
            self.lift = np.concatenate([self.lift, lift])
            self.scale = np.concatenate([self.scale, scale])
            self.err, self.norm = max(self.err, err), max(self.norm, norm)
            self.pending = []
        return self


class _Query:
    """A query vector, quantised like the rows, with what the error bound needs of it."""

    def __init__(self, vector: np.ndarray, min_score: float, start: float, end: float):
        self.vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        # As quantise and shifted do for rows, in fewer numpy calls (this runs on every search); the
        # float32 allowance is already in the rows' bound.
        q = self.vector.astype(np.float64)
        self.scale = float(np.abs(q).max()) / 127 or 1.0
        codes = np.rint(q / self.scale)
        self.err = float(np.linalg.norm(q - self.scale * codes))
        self.length = float(np.linalg.norm(q))
        self.codes = (codes + 128).astype(np.uint8)
        self.lift = 128.0 * (codes.sum() + 64 * len(codes))
        self.min_score, self.start, self.end = min_score, start, end

    def scan(self, key: int | None, bucket: _Bucket) -> tuple[np.ndarray, np.ndarray, float]:
        """(rows, approximate scores, error bound) of a day's rows that may score at least min_score.

        With v = s·c + e and q = s_q·c_q + e_q: q·v − s_q·s·(c_q·c) = q·e + e_q·(s·c), so the error
        is at most |q|·|e| + |e_q|·|s·c|."""
        bound = self.length * bucket.err + self.err * bucket.norm
        approx = _int_dots(self.codes, bucket.codes)
        approx -= bucket.lift
        approx -= self.lift
        approx *= bucket.scale  # s_q is applied to the few rows kept, and to the floor instead
        rows = np.flatnonzero(approx >= (self.min_score - bound) / self.scale)
        # Only a day that reaches past the window needs its times compared.
        if key is not UNDATED and not (self.start <= key * DAY_SECONDS and (key + 1) * DAY_SECONDS <= self.end):
            ts = bucket.ts[rows]
            rows = rows[(ts >= self.start) & (ts <= self.end)]
        return rows, approx[rows] * self.scale, bound


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
        buckets = [(key, self._bucket(key).merge()) for key in keys]
        self._evict(set(keys))
        query = _Query(vector, min_score, start, end)

        # Both threads take days from one iterator, so a helper that is slow to start (the other core
        # busy) leaves the work to this thread instead of delaying it; one that never started is
        # cancelled.
        todo = iter([(key, bucket) for key, bucket in buckets if len(bucket)])

        def scan_some() -> list:
            return [(bucket, *query.scan(key, bucket)) for key, bucket in todo]

        helper = _helper.submit(scan_some)
        scanned = scan_some()
        scanned += [] if helper.cancel() else helper.result()

        # k rows score at least the k-th best lower bound, so a row whose upper bound falls below it
        # cannot be in the top k.
        lower = np.concatenate([approx - bound for _, _, approx, bound in scanned] or [np.zeros(0)])
        threshold = np.partition(lower, len(lower) - k)[len(lower) - k] if 0 < k <= len(lower) else -np.inf
        rids, scores = [np.zeros(0, np.int64)], [np.zeros(0, np.float32)]
        for bucket, rows, approx, bound in scanned:
            picked = rows[approx >= threshold - bound]
            if len(picked):
                rids.append(bucket.rids[picked])
                scores.append(bucket.vecs[picked] @ query.vector)
        rids, scores = np.concatenate(rids), np.concatenate(scores)
        keep = scores >= min_score
        rids, scores = rids[keep], scores[keep]
        best = np.lexsort((rids, -scores))[:k]
        return [(int(rids[i]), float(scores[i])) for i in best]


def stack(rows: Sequence[tuple[int, float | None, bytes]], dims: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rid, publish_ts, vector bytes) rows as the three arrays a bucket holds."""
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros((0, dims), np.float32)
    rids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    ts = np.fromiter((0.0 if r[1] is None else r[1] for r in rows), dtype=np.float64, count=len(rows))
    vecs = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dims)
    return rids, ts, vecs
