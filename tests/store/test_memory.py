"""The in-memory index answers the store questions as the stores do (batch-mates and the
Elasticsearch refresh gap both use it)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import numpy as np

from indexer.store import BandQuery, KnnQuery, TimeWindow, TitleQuery
from indexer.store.memory import MemoryIndex

from .test_contract import T0, art, unit


def test_lookups_by_key_url_band_and_vector_with_window_bound_and_exclusion():
    m = MemoryIndex()
    near = unit(1)
    far = -near
    m.add([
        art("a", key="K", simhash=0b1011, vector=near, url="https://x/a"),
        art("b", key="K", simhash=0b1011 ^ (0b111 << 40), vector=near * 0.5, when=T0 + timedelta(days=30)),
        art("c", simhash=(1 << 64) - 1, vector=far),
        art("z", simhash=(1 << 64) - 1, vector=np.zeros(8, np.float32)),
    ])
    m.add([art("a", key="other")])  # first write wins
    assert [a.id for a in m.with_key(["K"])] == ["a", "b"] and len(m) == 4
    assert [a.id for a in m.with_url(["https://x/a", ""])] == ["a"]
    week = TimeWindow(T0 - timedelta(days=7), T0 + timedelta(days=7))
    bands = art("q", simhash=0b1011).bands
    assert [a.id for a in m.bands(BandQuery(bands))] == ["a", "b"]
    assert [a.id for a in m.bands(BandQuery(bands, week))] == ["a"]
    assert [a.id for a in m.bands(BandQuery(bands, exclude_id="a", simhash=0b1011, max_distance=2))] == []  # b is 3 bits off
    hits = m.knn(KnnQuery(near, k=5, min_score=0.5))
    assert [(a.id, round(s, 4)) for a, s in hits] == [("a", 1.0), ("b", 1.0)]  # cosine, whatever the norm
    assert [a.id for a, _ in m.knn(KnnQuery(near, k=1, min_score=0.5))] == ["a"]
    assert [a.id for a, _ in m.knn(KnnQuery(near, k=5, min_score=0.5, window=week, exclude_id="a"))] == []
    assert all(a.id != "z" for a, _ in m.knn(KnnQuery(unit(3), k=10, min_score=-1.0)))  # zero vectors never
    m.add([dataclasses.replace(art(i, when=T0 + timedelta(days=d)), title_md5="H") for i, d in (("h1", 0), ("h2", 30), ("h3", 1), ("h4", 2))])
    assert [a.id for a in m.same_title(TitleQuery("H", 10, week, exclude_id="h3"))] == ["h1", "h4"]
    assert [a.id for a in m.same_title(TitleQuery("H", 2))] == ["h3", "h4"]  # the newest two
    assert m.same_title(TitleQuery("H", 0)) == [] and m.same_title(TitleQuery("X", 5)) == []
    m.clear()
    assert len(m) == 0 and m.knn(KnnQuery(near, 5, 0.0)) == []


def test_vectors_grow_past_the_first_block():
    m = MemoryIndex()
    m.add(art(f"a{i}", vector=unit(i)) for i in range(200))
    hits = m.knn(KnnQuery(unit(150), k=3, min_score=0.0))
    assert hits[0][0].id == "a150" and abs(hits[0][1] - 1.0) < 1e-6
