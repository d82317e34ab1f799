"""Writes: 409 idempotency, the refresh gap, bulk partial failure, retry and dead letter."""

from __future__ import annotations

import json

import elastic_transport
import pytest
from elasticsearch import Elasticsearch
from elastic_transport import ObjectApiResponse

from indexer.errors import BulkWriteError
from indexer.features.simhash import band_keys
from indexer.store import BandQuery, KnnQuery

from ..store.test_contract import art, unit

pytestmark = pytest.mark.es


def _raw_hits(store, query) -> list[str]:
    """What a plain search sees right now (no refresh)."""
    return [h["_id"] for h in store.client.search(index=store.alias, query=query)["hits"]["hits"]]


# ---- idempotency ----------------------------------------------------------------------------------
def test_create_conflict_is_not_an_error_and_first_write_wins(es_store):
    one = es_store()
    two = es_store(index=one.alias)  # a concurrent writer on the same alias
    one.write([art("a1", cluster="a1")])
    two.write([art("a1", cluster="other", reason="near"), art("a2")])
    one.write([art("a1", cluster="third")])  # a retried batch
    for store in (one, two):
        assert store.get_many(["a1"])["a1"].cluster_id == "a1"
    # the writer that lost the race still finds the stored version before any refresh
    assert [a.cluster_id for a in two.find_exact(["ka1"])["ka1"]] == ["a1"]
    assert one.stats().articles == 2


# ---- near-real-time gap ----------------------------------------------------------------------------
def test_unrefreshed_writes_are_found_through_the_inflight_buffer(es_store):
    store = es_store(refresh_interval="-1")
    settings = store.client.indices.get_settings(index=store.alias)
    assert next(iter(settings.values()))["settings"]["index"]["refresh_interval"] == "-1"
    sh = 0x1234_5678_9ABC_DEF0
    store.write([art("fresh", key="KF", simhash=sh, vector=unit(3), url="https://n.example/fresh")])
    assert _raw_hits(store, {"term": {"content_key": "KF"}}) == []  # the gap is real
    assert [a.id for a in store.find_exact(["KF"])["KF"]] == ["fresh"]
    assert [a.id for a in store.find_band_candidates([BandQuery(band_keys(sh, 4))])[0]] == ["fresh"]
    [[(hit, cosine)]] = store.knn([KnnQuery(unit(3), k=3, min_score=0.9)])
    assert hit.id == "fresh" and cosine == pytest.approx(1.0, abs=1e-5)
    assert store.find_by_canonical_url(["https://n.example/fresh"])["https://n.example/fresh"].id == "fresh"
    assert store.get_many(["fresh"]).keys() == {"fresh"}  # real-time GET


def test_without_the_buffer_the_same_lookups_miss(es_store):
    store = es_store(refresh_interval="-1", inflight_max=0, write_refresh="false")
    store.write([art("fresh", key="KF", vector=unit(3))])
    assert store.find_exact(["KF"]) == {}
    assert store.knn([KnnQuery(unit(3), k=3, min_score=0.9)]) == [[]]


def test_a_full_buffer_is_flushed_by_an_explicit_refresh(es_store):
    store = es_store(refresh_interval="-1", inflight_max=3)
    store.write([art("a1", key="K"), art("a2", key="K")])
    assert _raw_hits(store, {"term": {"content_key": "K"}}) == []
    store.write([art("a3", key="K")])
    assert len(store._inflight) == 0
    assert sorted(_raw_hits(store, {"term": {"content_key": "K"}})) == ["a1", "a2", "a3"]
    assert [a.id for a in store.find_exact(["K"])["K"]] == ["a1", "a2", "a3"]


def test_refresh_wait_for_makes_writes_searchable_without_a_buffer(es_store):
    store = es_store(inflight_max=0, write_refresh="wait_for")
    store.write([art("w1", key="KW")])
    assert _raw_hits(store, {"term": {"content_key": "KW"}}) == ["w1"]


# ---- bulk failures -----------------------------------------------------------------------------------
class FlakyBulk:
    """Wraps ``Elasticsearch.bulk``: for the calls in ``plan`` it fails some items as the server would
    (the item is not written and answers ``status``), or raises a connection error for the request."""

    def __init__(self, monkeypatch, plan):
        self.plan, self.calls = plan, 0
        real = Elasticsearch.bulk

        def bulk(client, *args, operations, **kwargs):
            self.calls += 1
            rule = self.plan(self.calls)
            if rule == "connection":
                raise elastic_transport.ConnectionError("simulated connection reset")
            ops = list(operations)
            pairs = [(ops[i], ops[i + 1]) for i in range(0, len(ops), 2)]
            ids = [json.loads(a)["create"]["_id"] for a, _ in pairs]
            failing = rule or {}
            kept = [p for p, i in zip(pairs, ids) if i not in failing]
            items = real(client, *args, operations=[x for p in kept for x in p], **kwargs).body["items"] if kept else []
            it = iter(items)
            merged = []
            for i in ids:
                if i in failing:
                    merged.append({"create": {"_index": "x", "_id": i, "status": failing[i],
                                              "error": {"type": "simulated", "reason": f"status {failing[i]}"}}})
                else:
                    merged.append(next(it))
            return ObjectApiResponse(body={"errors": bool(failing), "took": 1, "items": merged}, meta=None)

        monkeypatch.setattr(Elasticsearch, "bulk", bulk)


def test_retryable_item_failures_and_connection_errors_are_retried(es_store, monkeypatch):
    store = es_store(max_retries=3, bulk_chunk_docs=2)
    flaky = FlakyBulk(monkeypatch, lambda n: {1: {"b1": 503, "b2": 429}, 2: "connection"}.get(n))
    store.write([art("b1"), art("b2"), art("b3"), art("b4")])
    assert flaky.calls >= 4
    assert store.get_many(["b1", "b2", "b3", "b4"]).keys() == {"b1", "b2", "b3", "b4"}
    assert store.stats().articles == 4


def test_permanent_failures_are_dead_lettered_and_raised_the_rest_written(es_store, monkeypatch, tmp_path):
    store = es_store(max_retries=2)
    FlakyBulk(monkeypatch, lambda n: {"bad": 400})
    with pytest.raises(BulkWriteError) as info:
        store.write([art("ok1"), art("bad"), art("ok2")])
    assert info.value.errors == [("bad", "simulated: status 400")]
    assert info.value.refused == ["bad"]  # refused for good: the daemon dead-letters it, not retries the batch
    assert store.get_many(["ok1", "bad", "ok2"]).keys() == {"ok1", "ok2"}
    [letter] = list((tmp_path / "deadletter").glob("es-deadletter-*.jsonl"))
    [record] = [json.loads(line) for line in letter.read_text().splitlines()]
    assert record["_id"] == "bad" and record["_source"]["title"] == "标题 bad" and "400" in record["_error"]
    assert str(letter) in str(info.value)


def test_retries_exhausted_raise_with_every_failed_article(es_store, monkeypatch, tmp_path):
    store = es_store(max_retries=2)
    flaky = FlakyBulk(monkeypatch, lambda n: {"x1": 503, "x2": 503})
    with pytest.raises(BulkWriteError) as info:
        store.write([art("x1"), art("x2"), art("x3")])
    assert sorted(i for i, _ in info.value.errors) == ["x1", "x2"]
    assert info.value.refused == []  # not answered in time: a later try may write them
    assert flaky.calls == 3  # first try + 2 retries
    assert len(list((tmp_path / "deadletter").glob("*.jsonl"))) == 1
    assert [a.id for a in store.find_exact(["kx3"])["kx3"]] == ["x3"]


def test_a_refresh_between_the_search_and_the_buffer_loses_no_recent_article(es_store):
    """Another thread's refresh (a report, a correction) empties the in-flight buffer; when it
    lands after the search and before the buffer is read, the article was in neither answer."""
    from indexer.store import BandQuery, KnnQuery

    from ..store.test_contract import art, unit

    store = es_store(refresh_interval="-1")
    store.write([art("x", key="K", simhash=0b1011, vector=unit(1))])
    real = store._msearch

    def search_then_refresh(bodies, what):
        hits = real(bodies, what)  # searched before the refresh: x is not visible yet
        store.refresh()  # ... and now the buffer is emptied
        return hits

    store._msearch = search_then_refresh
    assert [a.id for a in store.find_exact(["K"]).get("K", [])] == ["x"]
    store.write([art("y", key="L", simhash=0b1011, vector=unit(1))])
    assert "y" in [a.id for a in store.find_band_candidates([BandQuery(art("q", simhash=0b1011).bands)])[0]]
    store.write([art("z", key="M", simhash=(1 << 64) - 1, vector=unit(2))])
    assert "z" in [a.id for a, _ in store.knn([KnnQuery(unit(2), k=5, min_score=0.9)])[0]]


def test_articles_refused_for_good_are_named_even_when_the_merge_after_them_fails(es_store, monkeypatch, tmp_path):
    """The caller sets aside the articles a store refused for good (BulkWriteError.refused); a
    failure of the batch's merge after them must not hide them. The merge is finished later."""
    from indexer.errors import StoreUnavailable
    from indexer.store import ClusterChange

    store = es_store(max_retries=0)
    store.write([art("a"), art("b")])
    real_create, real_move = store._create, store._move_clusters

    def create_refusing_bad(articles):
        real_create([a for a in articles if a.id != "bad"])
        raise BulkWriteError("1 of 2 articles were not written (first: bad: status 400)", [("bad", "status 400")], ["bad"])

    monkeypatch.setattr(store, "_create", create_refusing_bad)
    monkeypatch.setattr(store, "_move_clusters", lambda plans: (_ for _ in ()).throw(StoreUnavailable("answered 429")))
    merge = ClusterChange("merge", into="a", source="b", by="indexer")
    with pytest.raises(BulkWriteError) as info:
        store.write([art("ok"), art("bad")], [merge])
    assert info.value.refused == ["bad"]
    monkeypatch.setattr(store, "_move_clusters", real_move)
    monkeypatch.setattr(store, "_create", real_create)
    store.write([art("later")])
    assert store.get_many(["b"])["b"].cluster_id == "a"
