"""The Store contract: every implementation must pass this suite unchanged."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from indexer.features.simhash import band_keys
from indexer.store import BandQuery, KnnQuery, StoredArticle, TimeWindow, TitleQuery

from .conftest import DIMS

T0 = datetime(2024, 3, 1, 8, 0, tzinfo=timezone.utc)


def unit(seed: int, dims: int = DIMS) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=dims).astype(np.float32)
    return v / np.linalg.norm(v)


def art(aid: str, *, key: str | None = None, simhash: int = 0, vector=None, when=T0, cluster=None, url="",
        dup_of=None, reason=None, score=None) -> StoredArticle:
    return StoredArticle(
        id=aid, url=url, canonical_url=url, source="src", title=f"标题 {aid}", content=f"<p>正文 {aid}</p>",
        publish_time=when, clean_title=f"标题 {aid}", clean_body=f"正文 {aid}", title_md5="t" + aid,
        body_md5="b" + aid, content_key=key or ("k" + aid), simhash=simhash, bands=band_keys(simhash, 4),
        vector=vector, cluster_id=cluster or aid, is_canonical=(cluster is None or cluster == aid),
        dup_of=dup_of, dup_reason=reason, score=score, extra={"lang": "zh"},
    )


def test_write_then_get_round_trips_every_field(store_factory):
    store = store_factory()
    a = art("a1", simhash=(1 << 64) - 5, vector=unit(1), url="https://news.example/a1")
    store.write([a])
    got = store.get_many(["a1", "missing"])
    assert list(got) == ["a1"]
    g = got["a1"]
    assert (g.title, g.content, g.source, g.url, g.canonical_url) == (a.title, a.content, a.source, a.url, a.url)
    assert g.simhash == a.simhash and g.bands == a.bands
    assert g.publish_time == T0 and g.publish_time.tzinfo is not None
    assert np.allclose(g.vector, a.vector)
    assert (g.cluster_id, g.is_canonical, g.extra) == ("a1", True, {"lang": "zh"})


def test_write_is_idempotent_first_write_wins(store_factory):
    store = store_factory()
    store.write([art("a1", cluster="a1")])
    store.write([art("a1", cluster="other", reason="near")])
    got = store.get_many(["a1"])["a1"]
    assert got.cluster_id == "a1" and got.dup_reason is None
    assert store.stats().articles == 1


def test_find_exact_returns_every_article_with_the_key(store_factory):
    store = store_factory()
    store.write([art("a1", key="K"), art("a2", key="K", cluster="a1", dup_of="a1", reason="exact", score=1.0), art("a3", key="Z")])
    found = store.find_exact(["K", "nothing"])
    assert sorted(a.id for a in found["K"]) == ["a1", "a2"]
    assert "nothing" not in found


def test_find_by_canonical_url(store_factory):
    store = store_factory()
    store.write([art("a1", url="https://n.example/x"), art("a2", url="")])
    found = store.find_by_canonical_url(["https://n.example/x", "https://n.example/y"])
    assert list(found) == ["https://n.example/x"] and found["https://n.example/x"].id == "a1"


def test_band_candidates_share_a_band_respect_window_and_exclusion(store_factory):
    store = store_factory()
    base = 0x0123_4567_89AB_CDEF
    near = base ^ 0b101  # differs in the lowest band only
    far = ~base & ((1 << 64) - 1)  # shares no band
    store.write([
        art("same-band", simhash=near),
        art("no-band", simhash=far),
        art("old", simhash=base, when=T0 - timedelta(days=30)),
        art("no-time", simhash=base, when=None),
        art("self", simhash=base),
    ])
    window = TimeWindow(T0 - timedelta(days=7), T0 + timedelta(days=7))
    [found] = store.find_band_candidates([BandQuery(band_keys(base, 4), window, exclude_id="self")])
    assert sorted(a.id for a in found) == ["no-time", "same-band"]
    assert store.find_band_candidates([BandQuery((), window)]) == [[]]


def test_same_title_answers_the_newest_in_the_window_oldest_first(store_factory):
    store = store_factory()
    titled = lambda a, md5: dataclasses.replace(a, title_md5=md5)  # noqa: E731
    store.write([titled(art(f"t{i}", when=T0 + timedelta(hours=i)), "H") for i in range(5)])
    store.write([titled(art("old", when=T0 - timedelta(days=30)), "H"), titled(art("no-time", when=None), "H"),
                 titled(art("other"), "X")])
    window = TimeWindow(T0 - timedelta(days=7), T0 + timedelta(days=7))
    [three, every, none] = store.find_same_title([
        TitleQuery("H", 3, window, exclude_id="t4"), TitleQuery("H", 10, window), TitleQuery("nothing", 10, window)])
    assert [a.id for a in three] == ["t2", "t3", "no-time"]  # the newest three written, t4 excluded
    assert sorted(a.id for a in every) == ["no-time", "t0", "t1", "t2", "t3", "t4"]
    assert none == [] and store.find_same_title([TitleQuery("H", 0, window)]) == [[]]


def test_band_candidates_beyond_the_distance_bound_are_dropped(store_factory):
    store = store_factory()
    base = 0x0FED_CBA9_8765_4321
    store.write([
        art("two-bits", simhash=base ^ 0b11),
        art("five-bits", simhash=base ^ 0b11111),  # same three upper bands, Hamming 5
        art("exact", simhash=base),
    ])
    [bounded, unbounded] = store.find_band_candidates([
        BandQuery(band_keys(base, 4), simhash=base, max_distance=3),
        BandQuery(band_keys(base, 4)),
    ])
    assert sorted(a.id for a in bounded) == ["exact", "two-bits"]
    assert sorted(a.id for a in unbounded) == ["exact", "five-bits", "two-bits"]


def test_a_query_vector_without_direction_is_near_nothing(store_factory):
    """An all-zero vector (an embedder's answer for an empty text) has no cosine with anything:
    no neighbours, in every store (Elasticsearch refuses such a query for cosine, every time)."""
    store = store_factory()
    store.write([art("a", vector=unit(1)), art("zero", vector=np.zeros(8, dtype=np.float32))])
    zero, window = np.zeros(8, dtype=np.float32), TimeWindow(T0 - timedelta(days=1), T0 + timedelta(days=1))
    found = store.knn([KnnQuery(zero, k=3, min_score=0.3), KnnQuery(zero, k=3, min_score=0.3, window=window),
                       KnnQuery(unit(1), k=3, min_score=0.5)])
    assert [[(a.id, round(score, 3)) for a, score in hits] for hits in found] == [[], [], [("a", 1.0)]]


def test_knn_orders_by_cosine_with_floor_window_and_exclusion(store_factory):
    store = store_factory()
    q = unit(7)
    close = q + 0.05 * unit(8)
    close /= np.linalg.norm(close)
    store.write([
        art("close", vector=close),
        art("exact", vector=q.copy()),
        art("old", vector=q.copy(), when=T0 - timedelta(days=40)),
        art("far", vector=-q),
        art("novec", vector=None),
    ] + [art(f"noise{i}", vector=unit(100 + i)) for i in range(40)])
    window = TimeWindow(T0 - timedelta(days=7), T0 + timedelta(days=7))
    [hits] = store.knn([KnnQuery(q, k=2, min_score=0.9, window=window)])
    assert [a.id for a, _ in hits] == ["exact", "close"]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-4) and hits[0][1] >= hits[1][1] >= 0.9
    [hits] = store.knn([KnnQuery(q, k=5, min_score=0.9, window=window, exclude_id="exact")])
    assert [a.id for a, _ in hits] == ["close"]
    [hits] = store.knn([KnnQuery(q, k=5, min_score=0.9)])
    assert {a.id for a, _ in hits} == {"exact", "close", "old"}


def test_clusters_stats_and_iteration(store_factory):
    store = store_factory()
    store.write([
        art("c1"), art("m1", cluster="c1", dup_of="c1", reason="near", score=0.95),
        art("m2", cluster="c1", dup_of="c1", reason="exact", score=1.0), art("c2"),
    ])
    assert [a.id for a in store.cluster_members("c1")] == ["c1", "m1", "m2"]
    assert store.top_clusters(1) == [("c1", 3)]
    s = store.stats()
    assert (s.articles, s.clusters, s.duplicates) == (4, 2, 2)
    assert s.by_reason == {"near": 1, "exact": 1}
    assert [a.id for a in store.iter_articles()] == ["c1", "m1", "m2", "c2"]


# ---- cluster changes: merge and split ------------------------------------------------------------
from indexer.store import MANUAL, MERGED, ClusterChange  # noqa: E402


def _clusters(store) -> dict[str, tuple[str, bool]]:
    return {a.id: (a.cluster_id, a.is_canonical) for a in store.iter_articles()}


def _two_clusters(store):
    store.write([
        art("a", when=T0), art("a2", cluster="a", dup_of="a", reason="near", score=0.9, when=T0 + timedelta(hours=1)),
        art("b", when=T0 + timedelta(hours=2)), art("b2", cluster="b", dup_of="b", reason="near", score=0.9, when=T0 + timedelta(hours=3)),
    ])


def test_merge_moves_every_member_and_demotes_the_merged_canonical(store_factory):
    store = store_factory()
    _two_clusters(store)
    store.merge_clusters([ClusterChange("merge", into="a", source="b", article_id="a2", reason="bridge near to both", by="indexer")])
    assert _clusters(store) == {"a": ("a", True), "a2": ("a", False), "b": ("a", False), "b2": ("a", False)}
    b = store.get_many(["b"])["b"]
    assert (b.dup_of, b.dup_reason) == ("a2", MERGED)
    assert store.get_many(["b2"])["b2"].dup_of == "b"  # members keep the match they were decided on
    assert sorted(m.id for m in store.cluster_members("a")) == ["a", "a2", "b", "b2"]
    assert store.cluster_members("b") == []
    assert store.top_clusters(5) == [("a", 4)]
    assert store.stats().clusters == 1
    log = store.cluster_changes("a")
    assert [(c.kind, c.into, c.source, c.article_id, c.by) for c in log] == [("merge", "a", "b", "a2", "indexer")]
    assert log[0].at is not None


def test_merge_is_idempotent_and_follows_earlier_merges(store_factory):
    store = store_factory()
    _two_clusters(store)
    store.write([art("c", when=T0 + timedelta(hours=4))])
    merge_b = ClusterChange("merge", into="a", source="b", article_id=None, reason="same story", by="tester")
    store.merge_clusters([merge_b])
    store.merge_clusters([merge_b])  # again: nothing changes
    # "b" is no cluster any more: a merge of c into b lands in a, where b went
    store.merge_clusters([ClusterChange("merge", into="b", source="c", reason="same story", by="tester")])
    assert {cid for cid, _ in _clusters(store).values()} == {"a"}
    assert store.get_many(["b"])["b"].dup_of == "a"  # no bridging article: the merged canonical points at the survivor
    assert len(store.cluster_changes()) == 2


def test_merges_written_with_articles_apply_to_them_too(store_factory):
    store = store_factory()
    _two_clusters(store)
    # A bridging article decided into "a", written together with the merge its decision made.
    bridge = art("x", cluster="a", dup_of="a2", reason="near", score=0.95, when=T0 + timedelta(hours=5))
    late = art("b3", cluster="b", dup_of="b", reason="exact", score=1.0, when=T0 + timedelta(hours=5))
    assert {a.cluster_id for a in store.get_many(["b", "b2"]).values()} == {"b"}  # read before: a cache must follow
    store.write([bridge, late], [ClusterChange("merge", into="a", source="b", article_id="x", reason="bridge", by="indexer")])
    assert {a: c for a, (c, _) in _clusters(store).items()} == dict.fromkeys(["a", "a2", "b", "b2", "x", "b3"], "a")
    # lookups answer with the merged cluster
    assert {a.cluster_id for a in store.find_exact(["kb3"])["kb3"]} == {"a"}
    assert {a.cluster_id for a in store.get_many(["b", "b2"]).values()} == {"a"}


def test_split_moves_one_article_out_alone_or_into_a_named_cluster(store_factory):
    store = store_factory()
    _two_clusters(store)
    assert store.get_many(["a2"])["a2"].cluster_id == "a"  # read before: a cache must follow
    assert store.split_article(ClusterChange("split", into="a2", source="a", article_id="a2", reason="not the same story", by="tester")) is None
    assert _clusters(store)["a2"] == ("a2", True)
    a2 = store.get_many(["a2"])["a2"]
    assert (a2.dup_of, a2.dup_reason) == (None, None)
    assert store.split_article(ClusterChange("split", into="b", source="a2", article_id="a2", by="tester")) is None
    a2 = store.get_many(["a2"])["a2"]
    assert (a2.cluster_id, a2.is_canonical, a2.dup_of, a2.dup_reason) == ("b", False, "b", MANUAL)
    assert [c.kind for c in store.cluster_changes("b")] == ["split"]


def test_a_split_into_the_cluster_the_article_is_in_changes_and_logs_nothing(store_factory):
    """Logged, such a split would read as the contradictory labels "different" and "same"."""
    store = store_factory()
    _two_clusters(store)
    before = _clusters(store)
    assert store.split_article(ClusterChange("split", into="a", source="a", article_id="a2", by="tester")) is None
    assert store.split_article(ClusterChange("split", into="a2", source="a", article_id="a", by="tester")) is None  # a canonical into its own member
    assert _clusters(store) == before
    assert store.cluster_changes() == []


def test_splitting_a_canonical_out_makes_the_oldest_other_member_canonical(store_factory):
    store = store_factory()
    store.write([
        art("c", when=T0 + timedelta(hours=1)),
        art("c3", cluster="c", dup_of="c", reason="near", when=T0 + timedelta(hours=3)),
        art("c2", cluster="c", dup_of="c", reason="near", when=T0 + timedelta(hours=2)),
    ])
    assert store.split_article(ClusterChange("split", into="c", source="c", article_id="c", by="tester")) == "c2"
    assert _clusters(store) == {"c": ("c", True), "c2": ("c2", True), "c3": ("c2", False)}
    c2 = store.get_many(["c2"])["c2"]
    assert (c2.dup_of, c2.dup_reason) == (None, None)
    with pytest.raises(KeyError):
        store.split_article(ClusterChange("split", into="nope", source="nope", article_id="nope"))


def test_the_oldest_other_member_ties_by_id_and_undated_members_come_last(store_factory):
    """One rule (``oldest_other_member``) in every store: publish time, then id, not write order."""
    store = store_factory()
    store.write([
        art("t", when=T0),
        art("t9", cluster="t", dup_of="t", reason="near", when=T0 + timedelta(hours=2)),
        art("t5", cluster="t", dup_of="t", reason="near", when=T0 + timedelta(hours=2)),
        art("t0", cluster="t", dup_of="t", reason="near", when=None),
    ])
    assert store.split_article(ClusterChange("split", into="t", source="t", article_id="t", by="tester")) == "t5"
    assert {a: c for a, (c, _) in _clusters(store).items()} == {"t": "t", "t5": "t5", "t9": "t5", "t0": "t5"}
    assert store.split_article(ClusterChange("split", into="t5", source="t5", article_id="t5", by="tester")) == "t9"
    assert _clusters(store)["t0"] == ("t9", False)


def test_oldest_other_member_rule():
    from indexer.store.base import oldest_other_member

    later = T0 + timedelta(minutes=1)
    assert oldest_other_member([("b", later), ("a", later), ("c", T0)], "c") == "a"
    assert oldest_other_member([("z", T0), ("a", None)], "y") == "z"
    assert oldest_other_member([("a", None), ("b", None)], "x") == "a"
    assert oldest_other_member([("only", T0)], "only") is None


def test_a_clusters_history_holds_the_clusters_merged_into_it_up_to_their_merge(store_factory):
    """A store's change log answers one cluster's own entries; ``cluster_history`` (what explain
    and the cluster page show) follows merges down: a into b, then b into c, is c's history."""
    from indexer.store.base import cluster_history

    store = store_factory()
    store.write([art(x, when=T0 + timedelta(hours=i)) for i, x in enumerate("abcd")])
    day = timedelta(days=1)
    store.merge_clusters([ClusterChange("merge", into="b", source="a", reason="same story", by="tester", at=T0 + day)])
    store.merge_clusters([ClusterChange("merge", into="c", source="b", reason="same story", by="tester", at=T0 + 2 * day)])
    assert [(c.into, c.source) for c in store.cluster_changes("c")] == [("c", "b")]
    assert [(c.into, c.source) for c in cluster_history(store, "c")] == [("b", "a"), ("c", "b")]
    # A person splits b out: b leads a cluster of its own again, and what joins it later is b's
    # history, not c's.
    store.split_article(ClusterChange("split", into="b", source="c", article_id="b", by="editor", at=T0 + 3 * day))
    store.merge_clusters([ClusterChange("merge", into="b", source="d", reason="same story", by="editor", at=T0 + 4 * day)])
    assert [(c.kind, c.into, c.source) for c in cluster_history(store, "c")] == [
        ("merge", "b", "a"), ("merge", "c", "b"), ("split", "b", "c")]
    assert [(c.kind, c.into, c.source) for c in cluster_history(store, "b")] == [
        ("merge", "b", "a"), ("merge", "c", "b"), ("split", "b", "c"), ("merge", "b", "d")]


def test_when_a_split_takes_the_canonical_out_the_rest_keeps_its_history_under_the_new_lead(store_factory):
    """The rest of a cluster whose canonical a person split out goes on under its oldest other
    member: the split's entry names that lead, and the lead's history is the cluster's, up to the
    split, then what happens to it after."""
    from indexer.store.base import cluster_history

    store = store_factory()
    store.write([art(x, when=T0 + timedelta(hours=i)) for i, x in enumerate("abcd")])
    day = timedelta(days=1)
    store.merge_clusters([ClusterChange("merge", into="a", source="b", reason="same story", by="tester", at=T0 + day)])
    store.merge_clusters([ClusterChange("merge", into="a", source="c", reason="same story", by="tester", at=T0 + 2 * day)])
    assert store.split_article(ClusterChange("split", into="a", source="a", article_id="a", by="editor", at=T0 + 3 * day)) == "b"
    [split] = [c for c in store.cluster_changes("b") if c.kind == "split"]
    assert (split.source, split.into, split.article_id, split.lead) == ("a", "a", "a", "b")
    assert split.record()["lead"] == "b"
    store.merge_clusters([ClusterChange("merge", into="b", source="d", reason="same story", by="editor", at=T0 + 4 * day)])
    assert [(c.kind, c.into, c.source) for c in cluster_history(store, "b")] == [
        ("merge", "a", "b"), ("merge", "a", "c"), ("split", "a", "a"), ("merge", "b", "d")]
    # a, alone again, keeps its own past; what joins b later is not a's
    assert [(c.kind, c.into, c.source) for c in cluster_history(store, "a")] == [
        ("merge", "a", "b"), ("merge", "a", "c"), ("split", "a", "a")]
    # a merged back and split out again: b continues a twice, and each time a's entries till then count
    store.merge_clusters([ClusterChange("merge", into="a", source="b", reason="same story", by="editor", at=T0 + 5 * day)])
    store.write([art("x", when=T0 + timedelta(hours=9))])
    store.merge_clusters([ClusterChange("merge", into="a", source="x", reason="same story", by="editor", at=T0 + 6 * day)])
    assert store.split_article(ClusterChange("split", into="a", source="a", article_id="a", by="editor", at=T0 + 7 * day)) == "b"
    assert [(c.kind, c.into, c.source) for c in cluster_history(store, "b")][-4:] == [
        ("merge", "b", "d"), ("merge", "a", "b"), ("merge", "a", "x"), ("split", "a", "a")]
    # a split of a member that is not the canonical names no lead
    store.split_article(ClusterChange("split", into="d", source="b", article_id="d", by="editor", at=T0 + 8 * day))
    assert [c.lead for c in store.cluster_changes("d") if c.kind == "split"] == [None]


def test_the_change_log_tells_corrections_from_the_indexers_merges(store_factory):
    store = store_factory()
    _two_clusters(store)
    store.write([art("c", when=T0 + timedelta(hours=4))])
    store.merge_clusters([ClusterChange("merge", into="a", source="b", article_id="a2", reason="bridge", by="indexer")])
    store.split_article(ClusterChange("split", into="a2", source="a", article_id="a2", reason="not the same story", by="editor"))
    store.merge_clusters([ClusterChange("merge", into="a", source="c", reason="same story", by="editor")])
    assert [(c.kind, c.by) for c in store.cluster_changes()] == [("merge", "indexer"), ("split", "editor"), ("merge", "editor")]
    assert [(c.kind, c.by) for c in store.cluster_changes(corrections_only=True)] == [("split", "editor"), ("merge", "editor")]
    assert [c.kind for c in store.cluster_changes("c", corrections_only=True)] == ["merge"]
