"""Lookups answered by the server (no in-flight buffer): kNN with filter and similarity, bands with
window, and the batching of each protocol call into ``_msearch`` requests."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from indexer.features.simhash import band_keys
from indexer.store import BandQuery, KnnQuery, TimeWindow
from indexer.store.elasticsearch import score_to_cosine

from ..store.test_contract import T0, art, unit

pytestmark = pytest.mark.es
WEEK = TimeWindow(T0 - timedelta(days=7), T0 + timedelta(days=7))


@pytest.fixture
def served(es_store):
    """A store whose every lookup goes to the server: no buffer, refresh on write."""
    return es_store(inflight_max=0, write_refresh="true")


def _tilted(q: np.ndarray, cosine: float, seed: int) -> np.ndarray:
    """A unit vector at exactly ``cosine`` to unit ``q``."""
    r = unit(seed, q.shape[0])
    r = r - np.dot(r, q) * q
    r /= np.linalg.norm(r)
    v = cosine * q + np.sqrt(1 - cosine**2) * r
    return (v / np.linalg.norm(v)).astype(np.float32)


def test_knn_returns_cosines_not_scores_and_similarity_is_a_cosine_floor(served):
    q = unit(1)
    served.write([art("c99", vector=_tilted(q, 0.99, 2)), art("c95", vector=_tilted(q, 0.95, 3)),
                  art("c80", vector=_tilted(q, 0.80, 4)), art("c50", vector=_tilted(q, 0.50, 5))])
    [hits] = served.knn([KnnQuery(q, k=10, min_score=0.9)])
    assert [a.id for a, _ in hits] == ["c99", "c95"]
    assert [s for _, s in hits] == pytest.approx([0.99, 0.95], abs=1e-4)
    # ES's _score for c80 would be (1 + 0.8) / 2 = 0.9: a floor applied to scores would let it in
    [hits] = served.knn([KnnQuery(q, k=10, min_score=0.85)])
    assert "c80" not in [a.id for a, _ in hits]
    assert score_to_cosine(0.9) == pytest.approx(0.8)


def test_knn_filter_applies_window_exclusion_and_lets_undated_articles_pass(served):
    q = unit(1)
    served.write([
        art("in", vector=_tilted(q, 0.97, 2)),
        art("undated", vector=_tilted(q, 0.96, 3), when=None),
        art("late", vector=q.copy(), when=T0 + timedelta(days=30)),
        art("self", vector=q.copy()),
    ] + [art(f"noise{i}", vector=unit(50 + i)) for i in range(20)])
    [hits] = served.knn([KnnQuery(q, k=3, min_score=0.9, window=WEEK, exclude_id="self")])
    assert [a.id for a, _ in hits] == ["in", "undated"]
    assert hits[0][0].vector is not None and np.allclose(hits[0][0].vector, _tilted(q, 0.97, 2), atol=1e-6)


def test_band_lookup_is_a_terms_filter_with_window(served):
    base = 0x0F0F_0000_FFFF_1234
    served.write([art("share", simhash=base ^ 1), art("late", simhash=base, when=T0 + timedelta(days=9)),
                  art("undated", simhash=base, when=None), art("none", simhash=~base & ((1 << 64) - 1))])
    [found, empty] = served.find_band_candidates([BandQuery(band_keys(base, 4), WEEK), BandQuery((), WEEK)])
    assert sorted(a.id for a in found) == ["share", "undated"] and empty == []


def test_each_protocol_call_is_batched_into_msearch_requests(es_store, monkeypatch):
    store = es_store(inflight_max=0, write_refresh="true", msearch_max=2)
    store.write([art(f"a{i}", key=f"K{i}", vector=unit(i), url=f"https://n.example/{i}") for i in range(5)])
    calls = []
    real = store.client.msearch

    def counting(**kwargs):
        calls.append(len(kwargs["searches"]) // 2)
        return real(**kwargs)

    monkeypatch.setattr(store.client, "msearch", counting)
    found = store.find_exact([f"K{i}" for i in range(5)])
    assert calls == [2, 2, 1]
    assert {k: [a.id for a in v] for k, v in found.items()} == {f"K{i}": [f"a{i}"] for i in range(5)}
    calls.clear()
    results = store.knn([KnnQuery(unit(i), k=1, min_score=0.99) for i in range(3)])
    assert calls == [2, 1] and [[a.id for a, _ in r] for r in results] == [["a0"], ["a1"], ["a2"]]
    calls.clear()
    urls = store.find_by_canonical_url(["https://n.example/4", "https://n.example/none"])
    assert calls == [2] and {u: a.id for u, a in urls.items()} == {"https://n.example/4": "a4"}


def test_multi_index_alias_after_rollover_keeps_ids_unique(es_store):
    store = es_store(inflight_max=0, write_refresh="true")
    store.write([art("a1", cluster="a1")])
    store.client.indices.rollover(alias=store.alias)
    reopened = es_store(index=store.alias, inflight_max=0, write_refresh="true")
    assert reopened.multi_index
    reopened.write([art("a1", cluster="other"), art("a2")])
    assert reopened.get_many(["a1"])["a1"].cluster_id == "a1"
    assert reopened.client.count(index=store.alias)["count"] == 2


def test_band_lookup_pages_past_candidates_max_to_every_match_within_the_bound(es_store, monkeypatch):
    """More articles share a band than es.candidates_max: the lookup still finds every one within
    the Hamming bound, as the embedded store does (it reads every band match's fingerprint)."""
    from indexer.store import elasticsearch

    monkeypatch.setattr(elasticsearch, "SCAN_PAGE", 2)  # the rest in several pages
    served = es_store(inflight_max=0, write_refresh="true", candidates_max=2)
    base = 0x0123_4567_89AB_CDEF
    # Written first: six articles sharing the three upper bands, each 5 bits from base.
    far = [art(f"far{i}", simhash=base ^ (0b11111 << (i * 2))) for i in range(6)]
    served.write(far + [art("near1", simhash=base ^ 0b1), art("near3", simhash=base ^ 0b111)])
    [bounded, unbounded] = served.find_band_candidates([
        BandQuery(band_keys(base, 4), WEEK, simhash=base, max_distance=3),
        BandQuery(band_keys(base, 4), WEEK),
    ])
    assert [a.id for a in bounded] == ["near1", "near3"]
    assert [a.id for a in unbounded] == [a.id for a in far] + ["near1", "near3"]  # write order
    assert bounded[0].title and bounded[0].simhash == base ^ 0b1  # whole articles, not fingerprints


def test_a_url_stored_twice_is_found_without_a_warning_about_dropped_matches(es_store, caplog):
    """The URL lookup asks for one hit (the first stored) on purpose: more copies under the URL
    are no matches dropped by es.candidates_max."""
    import dataclasses

    store = es_store()
    url = "https://n.example/a"
    store.write([dataclasses.replace(art(f"u{i}", when=T0 + timedelta(hours=i)), url=url, canonical_url=url) for i in range(3)])
    store.refresh()
    with caplog.at_level("WARNING"):
        assert store.find_by_canonical_url([url])[url].id == "u0"
    assert not [r for r in caplog.records if "only the first" in r.getMessage()]
