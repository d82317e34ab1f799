"""Exact windowed kNN from per-day vector buckets (the embedded store's answer to time windows)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from indexer.store import KnnQuery, TimeWindow
from indexer.store.day_vectors import DAY_SECONDS, UNDATED, DayVectors, day_of

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
