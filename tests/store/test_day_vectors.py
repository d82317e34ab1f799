"""Exact windowed kNN from per-day vector buckets (the embedded store's answer to time windows)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from indexer.store import KnnQuery, TimeWindow, day_vectors
from indexer.store.day_vectors import DAY_SECONDS, UNDATED, DayVectors, day_of, quantise

from .test_contract import art, unit
from .test_sqlite import open_store


def test_windowed_search_equals_brute_force_over_the_window():
    rng = np.random.default_rng(3)
    n, dims = 3000, 16
    vecs = rng.normal(size=(n, dims)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ts = rng.uniform(0, 60 * DAY_SECONDS, size=n)
    ts[:100] = np.nan  # undated rows pass every window
    loads = []

    def loader(day):
        loads.append(day)
        pick = np.isnan(ts) if day is UNDATED else (~np.isnan(ts)) & (np.floor(ts / DAY_SECONDS) == day)
        return np.flatnonzero(pick), np.nan_to_num(ts[pick]), vecs[pick]

    days = DayVectors(loader, dims)
    q = vecs[1234]
    start, end = ts[1234] - 7 * DAY_SECONDS, ts[1234] + 7 * DAY_SECONDS
    got = days.search(q, 10, 0.1, start, end)
    scores = vecs @ q
    ok = (np.isnan(ts) | ((ts >= start) & (ts <= end))) & (scores >= 0.1)
    want = sorted(np.flatnonzero(ok), key=lambda i: -scores[i])[:10]
    assert [rid for rid, _ in got] == [int(i) for i in want]
    assert got[0][0] == 1234 and abs(got[0][1] - 1.0) < 1e-5
    assert UNDATED in loads and len(loads) == 1 + (day_of(end) - day_of(start) + 1)


def test_loaded_days_see_later_writes_and_memory_stays_bounded():
    dims = 4
    store = {}

    def loader(day):
        rows = store.get(day, [])
        return (np.array([r for r, _, _ in rows], np.int64), np.array([t for _, t, _ in rows], np.float64),
                np.array([v for _, _, v in rows], np.float32).reshape(-1, dims))

    days = DayVectors(loader, dims, max_vectors=5)
    v = np.array([1, 0, 0, 0], np.float32)
    store[10] = [(1, 10 * DAY_SECONDS + 5, v)]
    assert [r for r, _ in days.search(v, 5, 0.5, 10 * DAY_SECONDS, 11 * DAY_SECONDS - 1)] == [1]
    days.add(2, 10 * DAY_SECONDS + 9, v)  # day 10 is loaded: appended in memory
    assert sorted(r for r, _ in days.search(v, 5, 0.5, 10 * DAY_SECONDS, 11 * DAY_SECONDS - 1)) == [1, 2]
    for day in range(20, 30):
        store[day] = [(100 + day, day * DAY_SECONDS, v)]
        days.search(v, 5, 0.5, day * DAY_SECONDS, (day + 1) * DAY_SECONDS - 1)
    assert days._held <= 5


def test_store_knn_inside_a_window_is_exact_and_sees_new_writes(tmp_path):
    t0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
    with open_store(tmp_path) as s:
        s.write([art(f"a{i}", vector=unit(i, 8), when=t0 + timedelta(hours=7 * i)) for i in range(200)])
        window = TimeWindow(t0 + timedelta(days=10), t0 + timedelta(days=20))
        [hits] = s.knn([KnnQuery(unit(50, 8), k=3, min_score=-1.0, window=window)])
        assert hits[0][0].id == "a50" and all(window.contains(a.publish_time) for a, _ in hits)
        s.write([art("late", vector=unit(50, 8), when=t0 + timedelta(days=15))])
        [hits] = s.knn([KnnQuery(unit(50, 8), k=2, min_score=0.99, window=window, exclude_id="a50")])
        assert [a.id for a, _ in hits] == ["late"]


class _Rows:
    """Rows as SQLite would hold them: the loader reads what is written; a loaded day also hears of
    each write through ``add``, as SqliteStore does."""

    def __init__(self, dims: int):
        self.dims = dims
        self.vecs = np.zeros((0, dims), np.float32)
        self.ts = np.zeros(0)  # nan: undated
        self.days = DayVectors(self.load, dims)
        self.loaded: list[int | None] = []  # the days the loader was asked for, in order

    def load(self, day):
        self.loaded.append(day)
        pick = np.isnan(self.ts) if day is UNDATED else np.floor(self.ts / DAY_SECONDS) == day
        return np.flatnonzero(pick), np.nan_to_num(self.ts[pick]), self.vecs[pick]

    def write(self, vecs: np.ndarray, ts: np.ndarray) -> None:
        first = len(self.vecs)
        self.vecs = np.vstack([self.vecs, vecs.astype(np.float32)])
        self.ts = np.concatenate([self.ts, ts])
        for rid in range(first, len(self.vecs)):
            self.days.add(rid, None if np.isnan(self.ts[rid]) else float(self.ts[rid]), self.vecs[rid])

    def check(self, q: np.ndarray, k: int, min_score: float, start: float, end: float) -> list[tuple[int, float]]:
        """The search, checked against brute force over every row."""
        got = self.days.search(q, k, min_score, start, end)
        exact = self.vecs.astype(np.float64) @ q.astype(np.float64)
        ok = (np.isnan(self.ts) | ((self.ts >= start) & (self.ts <= end))) & (exact >= min_score)
        want = sorted(np.flatnonzero(ok), key=lambda i: (-exact[i], i))[:k]
        assert len(got) == len(want)
        assert len({rid for rid, _ in got}) == len(got) and all(ok[rid] for rid, _ in got)
        for (rid, score), w in zip(got, want):
            assert abs(score - exact[rid]) < 1e-5
            assert rid == w or abs(exact[rid] - exact[w]) < 1e-6  # the same row, or a tie within float32 rounding
        return got


def _anisotropic(rng, n: int, dims: int, mean: np.ndarray, spread: float) -> np.ndarray:
    vecs = mean + spread * rng.normal(size=(n, dims))
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def _dated(rng, n: int, days: int, undated: float) -> np.ndarray:
    ts = rng.uniform(0, days * DAY_SECONDS, size=n)
    ts[rng.random(n) < undated] = np.nan
    return ts


@pytest.mark.parametrize("seed", range(5))
def test_int8_scan_returns_the_exact_float_top_k(seed):
    # Embeddings share a direction (cosines of 0.2-0.5 between unrelated rows), so many rows sit
    # near the cosine floor and near each other: what the int8 error bounds have to get right.
    rng = np.random.default_rng(seed)
    dims = 64
    mean = rng.normal(size=dims)
    mean *= 0.6 / np.linalg.norm(mean)
    rows = _Rows(dims)
    rows.write(_anisotropic(rng, 3000, dims, mean, 0.8 / np.sqrt(dims)), _dated(rng, 3000, 20, 0.03))
    rows.write(np.zeros((1, dims)), np.array([5.5 * DAY_SECONDS]))  # a zero vector scores 0 against anything

    def ask(count: int) -> None:
        for _ in range(count):
            q = rows.vecs[rng.integers(len(rows.vecs))] + rng.normal(size=dims) * 0.05
            q = (q / np.linalg.norm(q)).astype(np.float32)
            start = rng.uniform(-DAY_SECONDS, 18 * DAY_SECONDS)  # windows cut their first and last days
            end = start + rng.uniform(0.2, 6) * DAY_SECONDS
            for k, min_score in [(1, 0.3), (20, 0.3), (20, -1.0), (10, 0.6), (5000, 0.5), (3, 0.99)]:
                rows.check(q, k, min_score, start, end)

    ask(15)
    # Later writes: appended to loaded days (merged and quantised on the next search), read by the
    # loader for the others, near copies of stored rows so they compete for the top places.
    copies = rows.vecs[rng.integers(len(rows.vecs), size=400)] + rng.normal(size=(400, dims)) * 0.01
    rows.write(copies / np.linalg.norm(copies, axis=1, keepdims=True), _dated(rng, 400, 20, 0.05))
    ask(15)


def test_without_simsimd_numpy_computes_the_same_products(monkeypatch):
    monkeypatch.setattr(day_vectors, "simsimd", None)
    test_int8_scan_returns_the_exact_float_top_k(0)


def test_near_ties_are_ranked_by_the_exact_scores():
    # 500 rows within 1% of one vector: their scores spread over ~0.002, less than the int8 error
    # bound (~0.0125), so every row is rescored, and the approximate scores alone rank them wrongly.
    rng = np.random.default_rng(7)
    dims = 128
    base = rng.normal(size=dims) / np.sqrt(dims)
    vecs = base + rng.normal(size=(500, dims)) * 0.01 / np.sqrt(dims)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = _Rows(dims)
    rows.write(vecs, rng.uniform(0, 3 * DAY_SECONDS, size=500))
    q = base + 0.3 * rng.normal(size=dims) / np.sqrt(dims)
    q = (q / np.linalg.norm(q)).astype(np.float32)

    codes, scale, *_ = quantise(rows.vecs)
    approx = (codes.astype(np.float64) @ quantise(q[None, :])[0][0].astype(np.float64)) * scale
    exact = rows.vecs @ q
    assert list(np.argsort(-approx, kind="stable")[:10]) != list(np.argsort(-exact, kind="stable")[:10])

    for k in (1, 10, 100):
        got = rows.check(q, k, 0.5, 0, 3 * DAY_SECONDS)
        assert len(got) == k
        # The same ties through the float32 product of a batch: its bound is ~0.0001, so fewer
        # rows are rescored, and still each in the exact order.
        assert rows.days.search_many([day_vectors.WindowSearch(q, k, 0.5, 0, 3 * DAY_SECONDS)] * 40)[7] == got


def test_a_query_along_a_rows_rounding_error_still_finds_it():
    # The worst case of the error bound: the query points along a row's int8 rounding residual, so
    # the approximate score misses that row's score by the whole residual. Loosen the bound and the
    # row falls under the floor set just below its score.
    rng = np.random.default_rng(11)
    dims = 64
    rows = _Rows(dims)
    rows.write(_anisotropic(rng, 200, dims, np.zeros(dims), 1.0), rng.uniform(0, DAY_SECONDS, size=200))
    codes, scale, *_ = quantise(rows.vecs)
    for rid in range(20):
        residual = rows.vecs[rid] - scale[rid] * codes[rid].astype(np.float32)
        q = (residual / np.linalg.norm(residual)).astype(np.float32)
        score = float(rows.vecs[rid] @ q)
        assert rid in [r for r, _ in rows.check(q, 200, score - 1e-6, 0, DAY_SECONDS)]


@pytest.mark.parametrize("scan", ["int8", "float32", "mixed"])
@pytest.mark.parametrize("seed", range(3))
def test_a_batch_of_searches_answers_like_each_search_alone(seed, scan, monkeypatch):
    """One scan of each day for a batch of queries with their own windows, k and floors gives each
    query exactly (row ids and float scores) what its own search gives, whichever product scans
    the days (the int8 kernel, a float32 matrix product for days many queries ask, or some days
    each way)."""
    monkeypatch.setattr(day_vectors, "FLOAT_SCAN_QUERIES", {"int8": 10**9, "float32": 1, "mixed": 8}[scan])
    rng = np.random.default_rng(seed)
    dims = 32
    mean = rng.normal(size=dims)
    mean *= 0.6 / np.linalg.norm(mean)
    rows = _Rows(dims)
    rows.write(_anisotropic(rng, 2500, dims, mean, 0.8 / np.sqrt(dims)), _dated(rng, 2500, 12, 0.03))
    # Far-apart windows too (an article dated years off in a batch of today's): rows there, and
    # days between that no window reaches, which must never be read.
    far = np.array([-9000.0, -8999.5, 4000.2, 4000.7]) * DAY_SECONDS
    rows.write(_anisotropic(rng, len(far), dims, mean, 0.8 / np.sqrt(dims)), far)
    searches = []
    for at in range(40):
        q = rows.vecs[rng.integers(len(rows.vecs))] + rng.normal(size=dims) * 0.05
        start = rng.uniform(-DAY_SECONDS, 10 * DAY_SECONDS)
        if at % 10 == 0:  # every tenth asks for one far row, in a window around it
            q, start = rows.vecs[2500 + at // 10], far[at // 10] - rng.uniform(0, 0.15) * DAY_SECONDS
        k, floor = [(1, 0.3), (20, 0.3), (20, -1.0), (7, 0.6), (3000, 0.5)][rng.integers(5)]
        searches.append(day_vectors.WindowSearch((q / np.linalg.norm(q)).astype(np.float32), k, floor,
                                                 start, start + rng.uniform(0.2, 6) * DAY_SECONDS))
    batch = rows.days.search_many(searches)
    assert any(batch) and len(batch) == len(searches)
    asked = [(day_of(s.start), day_of(s.end)) for s in searches]
    read = rows.loaded.copy()
    assert len(read) == len(set(read)) and UNDATED in read
    assert all(any(first <= day <= last for first, last in asked) for day in read if day is not UNDATED)
    assert {day_of(t) for t in far} <= set(read)
    assert all(batch[at][0][0] == 2500 + at // 10 for at in range(0, 40, 10))  # the far windows found their rows
    for s, got in zip(searches, batch):
        assert got == rows.days.search(s.vector, s.k, s.min_score, s.start, s.end)
        assert got == rows.check(s.vector, s.k, s.min_score, s.start, s.end)


def test_days_no_search_reaches_any_more_are_dropped():
    """A stream in publishing order never asks for its old days again: they leave memory after
    IDLE_SEARCHES searches that did not reach them, however far below max_vectors the days held are,
    and a later search that reaches one reads it again."""
    dims = 4
    v = np.array([1, 0, 0, 0], np.float32)
    rows = {day: [(day, day * DAY_SECONDS + 1, v)] for day in range(200)}
    loads = []

    def loader(day):
        loads.append(day)
        got = rows.get(day, [])
        return (np.array([r for r, _, _ in got], np.int64), np.array([t for _, t, _ in got], np.float64),
                np.array([x for _, _, x in got], np.float32).reshape(-1, dims))

    days = DayVectors(loader, dims)
    for day in range(150):  # a one-day window moving forward a day per search
        assert [r for r, _ in days.search(v, 5, 0.5, day * DAY_SECONDS, (day + 1) * DAY_SECONDS - 1)] == [day]
    held = {key for key in days._buckets if key is not UNDATED}
    assert held == set(range(150 - day_vectors.IDLE_SEARCHES - 1, 150))
    assert days._held == len(held)
    loads.clear()
    assert [r for r, _ in days.search(v, 5, 0.5, 3 * DAY_SECONDS, 4 * DAY_SECONDS - 1)] == [3]
    assert 3 in loads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_selection_equals_numpy(dtype):
    """The k-th best lower bound of each query over its days, and the scores in reach of a floor,
    as numpy computes them (−inf scores never count; a query with fewer than k scores has none)."""
    from indexer.store.day_vectors import _floors_in, _keep_best_lower_bounds, _rows_in_reach

    rng = np.random.default_rng(5)
    ks = np.array([3, 0, 40, 1], dtype=np.int64)
    heaps, filled = np.full((4, 40), -np.inf), np.zeros(4, dtype=np.int64)
    days, seen = [], [[] for _ in ks]
    for _ in range(3):
        asked = np.sort(rng.choice(4, size=3, replace=False))
        approx = rng.normal(size=(3, 9)).astype(dtype)
        approx[rng.random(approx.shape) < 0.3] = -np.inf
        approx[0, 0] = np.nan  # a broken vector's score never counts either
        offset = rng.random(3) * 1e-3
        _keep_best_lower_bounds(approx, asked, offset, ks, heaps, filled)
        for r, q in enumerate(asked):
            row = approx[r][approx[r] > -np.inf]
            seen[q].append(row.astype(np.float64) - offset[r])
        days.append((asked, approx))
    for q, k in enumerate(ks):
        values = np.sort(np.concatenate(seen[q]))[::-1]
        expected = values[k - 1] if 0 < k <= len(values) else -np.inf
        got = heaps[q, 0] if 0 < k and filled[q] == k else -np.inf
        assert got == expected
    for asked, approx in days:
        floors = _floors_in(approx.dtype, rng.normal(size=len(asked)) * 0.5)
        rows, cols = _rows_in_reach(approx, floors)
        want_rows, want_cols = np.nonzero((approx >= floors[:, None]) & (approx > -np.inf))
        assert rows.tolist() == want_rows.tolist() and cols.tolist() == want_cols.tolist()
