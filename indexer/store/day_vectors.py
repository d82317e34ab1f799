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

A batch's queries are answered together (``search_many``): each day is scanned once for all the
queries whose windows reach it, and each query's answer is bit for bit what a search of it alone
returns. A day that many queries ask is scanned with one float32 matrix product instead of the int8
kernel: with many queries per row read, BLAS is bound by arithmetic, not memory, and is faster
than the int8 kernel, which multiplies one pair of rows at a time (1.9x for a batch of 256 over a
week of 2,700 articles a day), and its error bound is ~100 times tighter, so fewer rows are
rescored.

Days are loaded from SQLite (the source of truth) when first asked for and kept in an LRU bounded
by ``max_vectors``, and dropped when no search has reached them for ``IDLE_SEARCHES`` batches (a
stream in publishing order never returns to its old days); rows written later are appended to
loaded days. Rows without a publish time pass every window (no time: no window), so they form one
more bucket that every query scans.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

import numpy as np

from ..compiled import compiled

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
# A loaded day that this many batch searches in a row did not reach is dropped (read again from
# the store if a later search reaches it).
IDLE_SEARCHES = 64
QUANTISE_CHUNK = 4096  # rows quantised at once: bounds the float64 temporaries for a big bucket
# A day asked by at least this many queries of a batch is scanned with a float32 matrix product
# (BLAS) instead of the int8 kernel; its error bound is FLOAT_SCAN_ALLOWANCE·dims·|q|·|v|: the
# product's and the rescoring's n·2⁻²⁴ each, doubled for the rounding of the bounds themselves.
FLOAT_SCAN_QUERIES = 32
FLOAT_SCAN_ALLOWANCE = 4 * 2.0**-24

# One helper thread scans days alongside the caller (the int8 kernel releases the GIL). Not simsimd's
# own OpenMP threads: their spin-waiting after each call collides with the thread pools of OpenBLAS
# and torch on a small machine (measured on 2 cores: a float32 scan run after an OpenMP one took 40x
# longer, and interleaved with OpenBLAS work the OpenMP scan's p99 was 100 ms against 9 ms).
_helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="day-vectors")


def day_of(ts: float) -> int:
    return math.floor(ts / DAY_SECONDS)


def quantise(vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """Rows v as int8 codes c with a scale s each, v ≈ s·c, and the lengths the error bounds of a
    product need: the largest |v − s·c| (plus the float32 allowance) and the largest |s·c| for an
    int8 product, the largest |v| for a float32 one."""
    codes, scale, err, norm, longest = np.zeros(vecs.shape, np.int8), np.zeros(len(vecs)), 0.0, 0.0, 0.0
    for i in range(0, len(vecs), QUANTISE_CHUNK):
        v = vecs[i:i + QUANTISE_CHUNK].astype(np.float64)
        s = np.abs(v).max(axis=1) / 127
        s[s == 0] = 1  # a zero vector: codes 0, residual 0
        c = np.clip(np.rint(v / s[:, None]), -127, 127)
        decoded = c * s[:, None]
        lengths = np.linalg.norm(v, axis=1)
        residual = np.linalg.norm(v - decoded, axis=1) + F32_ALLOWANCE * v.shape[1] * lengths
        codes[i:i + QUANTISE_CHUNK], scale[i:i + QUANTISE_CHUNK] = c, s
        err, norm = max(err, residual.max()), max(norm, np.linalg.norm(decoded, axis=1).max())
        longest = max(longest, lengths.max())
    return codes, scale, float(err), float(norm), float(longest)


def shifted(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes c as c + 128 in uint8, and lift(c) = 128·(Σc + 64·dims) per row, so that
    (c + 128)·(q + 128) = c·q + lift(c) + lift(q): simsimd's unsigned kernel is faster than its
    signed one on AVX2 (1.6x on a 2,760×512 day), and the shift is undone exactly."""
    lift = 128.0 * (codes.sum(axis=1, dtype=np.int64) + 64 * codes.shape[1])
    return (codes.astype(np.int16) + 128).astype(np.uint8), lift


def _int_dots(queries: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Exact products of uint8 queries (one a row) with uint8 rows, as a float64 matrix."""
    if simsimd is not None:
        return np.asarray(simsimd.cdist(queries, codes, metric="dot"), dtype=np.float64).reshape(len(queries), len(codes))
    return queries.astype(np.float64) @ codes.astype(np.float64).T  # exact: integers far below 2⁵³


class _Bucket:
    """One day's vectors: a consolidated array plus rows appended since (merged on next read)."""

    __slots__ = ("rids", "ts", "vecs", "codes", "lift", "scale", "err", "norm", "longest", "pending")

    def __init__(self, rids: np.ndarray, ts: np.ndarray, vecs: np.ndarray):
        self.rids, self.ts, self.vecs = rids, ts, vecs
        # One error bound for the whole day, not one per row: per-row bounds rescore fewer rows (106
        # instead of 160 a query on bench data) but cost more numpy calls per day than that saves.
        codes, self.scale, self.err, self.norm, self.longest = quantise(vecs)
        self.codes, self.lift = shifted(codes)
        self.pending: list[tuple[int, float, np.ndarray]] = []

    def __len__(self) -> int:
        return len(self.rids) + len(self.pending)

    def merge(self) -> _Bucket:
        if self.pending:
            rids, ts, vecs = zip(*self.pending)
            vecs = np.vstack(vecs).astype(np.float32, copy=False)
            codes, scale, err, norm, longest = quantise(vecs)
            codes, lift = shifted(codes)
            self.rids = np.concatenate([self.rids, np.asarray(rids, dtype=np.int64)])
            self.ts = np.concatenate([self.ts, np.asarray(ts, dtype=np.float64)])
            self.vecs = np.vstack([self.vecs, vecs])
            self.codes = np.vstack([self.codes, codes])
            self.lift = np.concatenate([self.lift, lift])
            self.scale = np.concatenate([self.scale, scale])
            self.err, self.norm = max(self.err, err), max(self.norm, norm)
            self.longest = max(self.longest, longest)
            self.pending = []
        return self


@dataclass(frozen=True)
class WindowSearch:
    """One windowed top-k question: the best ``k`` rows scoring at least ``min_score`` against
    ``vector``, published in [start, end] (timestamps) or undated."""

    vector: np.ndarray
    k: int
    min_score: float
    start: float
    end: float


class _Queries:
    """A batch of query vectors, quantised like the rows, with what the error bound needs of each."""

    def __init__(self, searches: Sequence[WindowSearch], dims: int):
        self.searches = searches
        self.vectors = np.vstack([np.asarray(s.vector, dtype=np.float32).reshape(-1) for s in searches]).reshape(-1, dims)
        # As quantise and shifted do for rows (the float32 allowance is already in the rows' bound).
        q = self.vectors.astype(np.float64)
        self.scale = np.abs(q).max(axis=1) / 127
        self.scale[self.scale == 0] = 1.0
        codes = np.rint(q / self.scale[:, None])
        # One vector at a time: a norm over an axis sums in another order than a vector's norm,
        # and the bounds (so which rows are rescored) would differ from a search of one query.
        self.err = np.array([np.linalg.norm(r) for r in q - self.scale[:, None] * codes])
        self.length = np.array([np.linalg.norm(r) for r in q])
        self.codes = (codes + 128).astype(np.uint8)
        self.lift = 128.0 * (codes.sum(axis=1) + 64 * dims)
        self.min_score = np.array([s.min_score for s in searches], dtype=np.float64)
        self.start = np.array([s.start for s in searches], dtype=np.float64)
        self.end = np.array([s.end for s in searches], dtype=np.float64)
        self.first_day = np.array([day_of(s.start) for s in searches])
        self.last_day = np.array([day_of(s.end) for s in searches])

    def asking(self, key: int | None) -> np.ndarray:
        """The queries whose window includes day ``key`` (every query includes the undated rows)."""
        if key is UNDATED:
            return np.arange(len(self.searches))
        return np.flatnonzero((self.first_day <= key) & (key <= self.last_day))

    def scan(self, key: int | None, bucket: _Bucket, asked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For the ``asked`` queries and a day's rows: the approximate scores, one matrix row per
        query, −inf where a row cannot score min_score or lies outside the query's window; and the
        error bound of each query's scores.

        With v = s·c + e and q = s_q·c_q + e_q: q·v − s_q·s·(c_q·c) = q·e + e_q·(s·c), so the error
        is at most |q|·|e| + |e_q|·|s·c|."""
        if len(asked) >= FLOAT_SCAN_QUERIES:
            # Many queries: a float32 matrix product, compute-bound in BLAS, is faster than the
            # int8 kernel (one row pair at a time), and its error is far smaller: this product
            # and the rescoring are each within n·2⁻²⁴·|q|·|v| of the real one.
            # Rows below min_score are left as they are: the threshold of search_many leaves them out.
            bound = FLOAT_SCAN_ALLOWANCE * self.vectors.shape[1] * self.length[asked] * bucket.longest
            approx = self.vectors[asked] @ bucket.vecs.T
            if key is not UNDATED:
                self._outside_window(key, bucket, asked, approx)
            return approx, bound
        bound = self.length[asked] * bucket.err + self.err[asked] * bucket.norm
        approx = _int_dots(self.codes[asked], bucket.codes)
        approx -= bucket.lift
        approx -= self.lift[asked][:, None]
        approx *= bucket.scale  # s_q is applied below, and to the floor instead
        approx[approx < ((self.min_score[asked] - bound) / self.scale[asked])[:, None]] = -np.inf
        if key is not UNDATED:
            self._outside_window(key, bucket, asked, approx)
        approx *= self.scale[asked][:, None]
        return approx, bound

    def _outside_window(self, key: int, bucket: _Bucket, asked: np.ndarray, approx: np.ndarray) -> None:
        """Scores of rows outside a query's window set to −inf. Only a day that reaches past a
        window needs its times compared."""
        start, end = self.start[asked], self.end[asked]
        for at in np.flatnonzero(~((start <= key * DAY_SECONDS) & ((key + 1) * DAY_SECONDS <= end))):
            approx[at, (bucket.ts < start[at]) | (bucket.ts > end[at])] = -np.inf


class DayVectors:
    """LRU of per-day vector buckets answering windowed top-k by exact inner product."""

    def __init__(self, loader: Loader, dims: int, max_vectors: int = 1_000_000):
        self._load = loader
        self._dims = dims
        self._max_vectors = max_vectors
        self._buckets: OrderedDict[int | None, _Bucket] = OrderedDict()
        self._held = 0
        self._searches = 0  # batches searched so far
        self._last_search: dict[int | None, int] = {}  # the batch that last reached each loaded day

    def clear(self) -> None:
        """Forget every loaded day: another writer added rows that only the loader will read."""
        self._buckets.clear()
        self._held = 0
        self._last_search.clear()

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
        """Drop days, least recently searched first, while more than ``max_vectors`` are held, and
        days no search has reached in the last ``IDLE_SEARCHES`` (a stream in publishing order
        never asks for its old days again: held, they would grow memory with the store)."""
        self._searches += 1
        for key in keep:
            self._last_search[key] = self._searches
        for key in list(self._buckets):  # least recently searched first
            idle = self._last_search.get(key, 0) < self._searches - IDLE_SEARCHES
            if self._held <= self._max_vectors and not idle:
                return
            if key not in keep:
                self._held -= len(self._buckets.pop(key))
                self._last_search.pop(key, None)

    def search(self, vector: np.ndarray, k: int, min_score: float, start: float, end: float) -> list[tuple[int, float]]:
        """(row id, inner product) of the best ``k`` rows published in [start, end] or undated."""
        return self.search_many([WindowSearch(vector, k, min_score, start, end)])[0]

    def search_many(self, searches: Sequence[WindowSearch]) -> list[list[tuple[int, float]]]:
        """``search`` for each of a batch of questions. Each day the batch's windows include is
        scanned once for all the queries that include it (one matrix product instead of one pass
        over the day per query); the answers equal separate searches'."""
        if not searches:
            return []
        queries = _Queries(searches, self._dims)
        keys: list[int | None] = [UNDATED, *_days_in_windows(queries.first_day, queries.last_day)]
        buckets = [(key, self._bucket(key).merge()) for key in keys]
        self._evict(set(keys))
        work = [(key, bucket, asked) for key, bucket in buckets if len(bucket)
                for asked in [queries.asking(key)] if len(asked)]

        # Both threads take days from one iterator, so a helper that is slow to start (the other core
        # busy) leaves the work to this thread instead of delaying it; one that never started is
        # cancelled.
        todo = iter(work)

        def scan_some() -> list:
            return [(bucket, asked, *queries.scan(key, bucket, asked)) for key, bucket, asked in todo]

        helper = _helper.submit(scan_some)
        scanned = scan_some()
        scanned += [] if helper.cancel() else helper.result()

        # k rows score at least the k-th best lower bound (approx − bound), so a row whose upper
        # bound falls below it cannot be in the top k. Each query's k best lower bounds are kept
        # in a heap over all its days, in one compiled pass over each day's scores.
        ks = np.array([s.k for s in searches], dtype=np.int64)
        heaps = np.full((len(searches), max(int(ks.max()), 1)), -np.inf)
        filled = np.zeros(len(searches), dtype=np.int64)
        for _, asked, approx, bound in scanned:
            _keep_best_lower_bounds(approx, asked, bound, ks, heaps, filled)
        threshold = np.where((ks > 0) & (filled == ks), heaps[:, 0], -np.inf)

        # Rescored in float32 a query and a day at a time, as a search of one query does. A row in
        # the answer scores at least the threshold and min_score, so its upper bound does too. Rows
        # at −inf (below the floor, outside the window) never pass, whatever the threshold.
        rids: list[list[np.ndarray]] = [[np.zeros(0, np.int64)] for _ in searches]
        scores: list[list[np.ndarray]] = [[np.zeros(0, np.float32)] for _ in searches]
        for bucket, asked, approx, bound in scanned:
            floors = _floors_in(approx.dtype, np.maximum(threshold[asked], queries.min_score[asked]) - bound)
            at_rows, at_cols = _rows_in_reach(approx, floors)
            for r, part in runs(at_rows):
                qi, rows = asked[r], at_cols[part]
                rids[qi].append(bucket.rids[rows])
                # Each row's product summed on its own (numpy's pairwise sum along a row), not by
                # BLAS, whose order of summing varies with the number of rows: a row scores the
                # same to the last bit however many others were rescored with it.
                scores[qi].append((bucket.vecs[rows] * queries.vectors[qi]).sum(axis=1))
        out = []
        for qi, search in enumerate(searches):
            found, score = np.concatenate(rids[qi]), np.concatenate(scores[qi])
            keep = score >= search.min_score
            found, score = found[keep], score[keep]
            best = np.lexsort((found, -score))[: search.k]
            out.append([(int(found[i]), float(score[i])) for i in best])
        return out


def _days_in_windows(first_days: np.ndarray, last_days: np.ndarray) -> list[int]:
    """The days inside at least one query's window, in order, each once: the union of the windows'
    day ranges. Not the span from the earliest first day to the latest last day: one article with a
    stray old date in a batch would load (and hold, past the cache bound) every day in between."""
    days: list[int] = []
    reached: int | None = None  # the last day listed so far
    for first, last in sorted(zip(first_days.tolist(), last_days.tolist())):
        if reached is not None:
            first = max(first, reached + 1)
        days.extend(range(first, last + 1))
        reached = last if reached is None else max(reached, last)
    return days


def runs(keys: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Each run of equal values in ``keys`` (sorted), in order: (the value, its positions)."""
    if not len(keys):
        return []
    starts = np.flatnonzero(np.diff(keys)) + 1
    return [(int(keys[part[0]]), part) for part in np.split(np.arange(len(keys)), starts)]


def _floors_in(dtype: np.dtype, floors: np.ndarray) -> np.ndarray:
    """Float64 floors in a score matrix's type (float32 or float64), rounded down, so never above
    the real ones; at least the lowest finite value, so −inf never reaches one."""
    lowest = np.finfo(dtype).min
    floors = np.maximum(floors, lowest)
    typed = floors.astype(dtype)
    with np.errstate(over="ignore"):  # the step below the lowest value, never taken
        return np.where(typed > floors, np.nextafter(typed, dtype.type(-np.inf)), typed)


@compiled()
def _keep_best_lower_bounds(approx, asked, offset, ks, heaps, filled):  # pragma: no cover - compiled
    """For each row r of a day's scores (query asked[r]), push approx − offset[r] of each finite
    score into that query's min-heap of its ks[q] best (heaps[q, :filled[q]]): heaps[q, 0] is
    then the k-th best lower bound seen so far."""
    for r in range(approx.shape[0]):
        q = asked[r]
        k = ks[q]
        if k <= 0:
            continue
        heap = heaps[q]
        size = filled[q]
        for j in range(approx.shape[1]):
            a = approx[r, j]
            if not a > -np.inf:  # outside the window or below the floor (or not a number)
                continue
            v = np.float64(a) - offset[r]
            if size < k:  # not full: add, sift up
                i = size
                heap[i] = v
                size += 1
                while i > 0:
                    parent = (i - 1) // 2
                    if heap[parent] <= heap[i]:
                        break
                    heap[parent], heap[i] = heap[i], heap[parent]
                    i = parent
            elif v > heap[0]:  # better than the k-th best: replace it, sift down
                heap[0] = v
                i = 0
                while True:
                    child = 2 * i + 1
                    if child >= k:
                        break
                    if child + 1 < k and heap[child + 1] < heap[child]:
                        child += 1
                    if heap[i] <= heap[child]:
                        break
                    heap[i], heap[child] = heap[child], heap[i]
                    i = child
        filled[q] = size


@compiled()
def _rows_in_reach(approx, floors):  # pragma: no cover - compiled
    """(row, column) of every finite score at or above its row's floor, in row then column order.
    Two passes, counting then filling: few scores pass, and a loop that only counts is compiled
    to far faster code than one that also grows its output (measured: 15x)."""
    found = np.zeros(approx.shape[0], dtype=np.int64)
    for r in range(approx.shape[0]):
        floor = floors[r]
        n = 0
        for j in range(approx.shape[1]):
            a = approx[r, j]
            n += (a >= floor) & (a != -np.inf)
        found[r] = n
    rows = np.empty(found.sum(), dtype=np.int64)
    cols = np.empty(found.sum(), dtype=np.int64)
    at = 0
    for r in range(approx.shape[0]):
        if found[r] == 0:
            continue
        floor = floors[r]
        for j in range(approx.shape[1]):
            a = approx[r, j]
            if a >= floor and a != -np.inf:
                rows[at] = r
                cols[at] = j
                at += 1
    return rows, cols


def stack(rows: Sequence[tuple[int, float | None, bytes]], dims: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rid, publish_ts, vector bytes) rows as the three arrays a bucket holds."""
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros((0, dims), np.float32)
    rids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    ts = np.fromiter((0.0 if r[1] is None else r[1] for r in rows), dtype=np.float64, count=len(rows))
    vecs = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dims)
    return rids, ts, vecs
