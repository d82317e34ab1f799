"""The Elasticsearch store's cluster change log: crash safety, the refresh gap, a missing log index.

The contract suite (tests/store) checks what merges and splits do; these tests check what only the
remote store can get wrong: a change recorded but not applied when the process dies, a store that
opens while another applies, the merges of one write applied together, members a search does not
see yet, the indexer's merges end to end, and a deployment without the log index.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from indexer.errors import StoreError
from indexer.store import MERGED, ClusterChange
from indexer.store.es_changes import APPLIED, CHANGES_MAPPING, changes_index

from ..store.test_contract import T0, art

pytestmark = pytest.mark.es

MERGE_B_INTO_A = ClusterChange("merge", into="a", source="b", article_id="x", reason="bridge near to both", by="indexer")


@pytest.fixture
def log_store(es_store):
    """``es_store`` with automatic refresh off, so only the store's own refreshes make writes
    searchable (the gap is real). Its cleanup (``es_schema.drop``) deletes the change log too."""

    def make(**kwargs):
        kwargs.setdefault("refresh_interval", "-1")
        return es_store(**kwargs)

    return make


def _two_clusters() -> list:
    return [art("a", when=T0), art("a2", cluster="a", dup_of="a", reason="near", when=T0 + timedelta(hours=1)),
            art("b", when=T0 + timedelta(hours=2)), art("b2", cluster="b", dup_of="b", reason="near", when=T0 + timedelta(hours=3))]


def _bridge():
    return art("x", cluster="a", dup_of="a2", reason="near", when=T0 + timedelta(hours=4))


def _crash(monkeypatch, store, method: str, *, when=lambda *args, **kwargs: True) -> None:
    """Make ``store.<method>`` die (as the process would) whenever ``when`` holds for its arguments."""
    real = getattr(store, method)

    def dying(*args, **kwargs):
        if when(*args, **kwargs):
            raise RuntimeError(f"simulated crash in {method}")
        return real(*args, **kwargs)

    monkeypatch.setattr(store, method, dying)


def _log_states(store) -> list[str]:
    store.client.indices.refresh(index=changes_index(store.alias))
    hits = store.client.search(index=changes_index(store.alias), query={"match_all": {}}, sort=[{"seq": "asc"}])["hits"]["hits"]
    return [h["_source"]["state"] for h in hits]


def _merged(store) -> None:
    """Every article is present and every one of them is in cluster a, b demoted by the merge."""
    got = store.get_many(["a", "a2", "b", "b2", "x"])
    assert set(got) == {"a", "a2", "b", "b2", "x"}
    assert {i: (a.cluster_id, a.is_canonical) for i, a in got.items()} == {
        "a": ("a", True), "a2": ("a", False), "b": ("a", False), "b2": ("a", False), "x": ("a", False)}
    assert (got["b"].dup_of, got["b"].dup_reason) == ("x", MERGED)
    assert [(c.into, c.source, c.article_id) for c in store.cluster_changes("a")] == [("a", "b", "x")]


# ---- crash safety -----------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["es", "es-refresh"])
def test_a_merge_recorded_but_not_applied_is_applied_when_the_store_opens_again(log_store, monkeypatch, kind):
    extra = {"inflight_max": 0, "write_refresh": "true"} if kind == "es-refresh" else {}
    store = log_store(**extra)
    store.write(_two_clusters())
    _crash(monkeypatch, store, "_move_clusters")  # dies after the merge is recorded and the articles written
    with pytest.raises(RuntimeError, match="simulated crash"):
        store.write([_bridge()], [MERGE_B_INTO_A])
    assert store.get_many(["x"]).keys() == {"x"}  # the articles were kept ...
    assert store.get_many(["b"])["b"].cluster_id == "b"  # ... and the merge not applied yet
    assert _log_states(store) == ["applying"]
    reopened = log_store(index=store.alias, **extra)  # the restarted process
    _merged(reopened)
    assert _log_states(reopened) == [APPLIED]
    assert reopened.stats().clusters == 1


def _merge_left_pending(log_store, monkeypatch):
    """A store whose write of the bridge and its merge died before the merge's resolution was
    recorded (still pending); the cause is gone, the same store writes on."""
    store = log_store()
    store.write(_two_clusters())
    _crash(monkeypatch, store._changes, "mark", when=lambda entry, state, **_: state in ("applying", "skipped"))
    with pytest.raises(RuntimeError):
        store.write([_bridge()], [MERGE_B_INTO_A])
    assert _log_states(store) == ["pending"]
    monkeypatch.undo()
    return store


def test_a_merge_left_pending_is_applied_by_the_next_write(log_store, monkeypatch):
    store = _merge_left_pending(log_store, monkeypatch)
    store.write([art("c", when=T0 + timedelta(hours=5))])
    _merged(store)
    assert store.get_many(["c"])["c"].cluster_id == "c"


def test_a_merge_that_died_after_moving_members_is_finished_not_skipped(log_store, monkeypatch):
    """The members were moved but the change was never marked applied: resolving it again would
    find both ends in one cluster and drop it from the log; it is finished from its record."""
    store = log_store()
    store.write(_two_clusters())
    _crash(monkeypatch, store._changes, "mark_applied")
    with pytest.raises(RuntimeError):
        store.write([_bridge()], [MERGE_B_INTO_A])
    assert store.get_many(["b2"])["b2"].cluster_id == "a"  # the member updates were done
    assert _log_states(store) == ["applying"]
    _merged(log_store(index=store.alias))


def test_a_batch_retried_with_nothing_new_finishes_its_merge_before_the_next_decision(log_store, monkeypatch):
    """The articles were written, the merge's apply failed (a 429): the retried batch writes no
    article, and still the merge is finished before anything is decided against the store."""
    from indexer.errors import StoreUnavailable

    store = log_store()
    store.write(_two_clusters())
    monkeypatch.setattr(store, "_move_clusters", _raising_once(store._move_clusters, StoreUnavailable("answered 429")))
    with pytest.raises(StoreUnavailable):
        store.write([_bridge()], [MERGE_B_INTO_A])
    monkeypatch.undo()
    store.write([], [])  # the retry: every article of the batch is stored already
    assert _log_states(store) == [APPLIED]
    _merged(store)


def test_articles_decided_into_a_cluster_whose_merge_was_unfinished_join_it_when_it_is_finished(log_store, monkeypatch):
    store = _merge_left_pending(log_store, monkeypatch)
    # decided while the merge was still pending: a copy of b joins cluster b
    store.write([art("b3", cluster="b", dup_of="b", reason="exact", when=T0 + timedelta(hours=5))])
    _merged(store)
    assert store.get_many(["b3"])["b3"].cluster_id == "a"
    assert [m.id for m in store.cluster_members("b")] == []


def test_a_split_made_while_another_stores_merge_sat_unfinished_is_not_undone_later(log_store, monkeypatch):
    """The daemon's merge died before it was marked applied; a person, in a process opened before,
    then split an article out. The split goes after the merge in the log and in the clusters, as
    in the embedded store: finishing the merge later does not undo it."""
    daemon = log_store()
    browser = log_store(index=daemon.alias)  # open already: it did not see the merge at its start
    daemon.write(_two_clusters())
    _crash(monkeypatch, daemon._changes, "mark_applied")
    with pytest.raises(RuntimeError):
        daemon.write([_bridge()], [MERGE_B_INTO_A])
    browser.split_article(ClusterChange("split", into="b", source="a", article_id="b", by="person"))
    restarted = log_store(index=daemon.alias)
    got = restarted.get_many(["a", "b", "b2", "x"])
    assert {i: (a.cluster_id, a.is_canonical) for i, a in got.items()} == {
        "a": ("a", True), "b": ("b", True), "b2": ("a", False), "x": ("a", False)}
    assert [(c.kind, c.into, c.source, c.article_id) for c in restarted.cluster_changes()] == [
        ("merge", "a", "b", "x"), ("split", "b", "a", "b")]


def _raising_once(real, error):
    calls = []

    def once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise error
        return real(*args, **kwargs)

    return once


def test_a_split_that_died_half_way_is_finished_with_the_canonical_it_elected(log_store, monkeypatch):
    store = log_store()
    store.write([art("c", when=T0 + timedelta(hours=1)),
                 art("c3", cluster="c", dup_of="c", reason="near", when=T0 + timedelta(hours=3)),
                 art("c2", cluster="c", dup_of="c", reason="near", when=T0 + timedelta(hours=2))])
    _crash(monkeypatch, store._changes, "mark_applied")
    with pytest.raises(RuntimeError):
        store.split_article(ClusterChange("split", into="c", source="c", article_id="c", by="tester"))
    reopened = log_store(index=store.alias)
    got = reopened.get_many(["c", "c2", "c3"])
    assert {i: (a.cluster_id, a.is_canonical) for i, a in got.items()} == {
        "c": ("c", True), "c2": ("c2", True), "c3": ("c2", False)}
    assert [(c.kind, c.into, c.source) for c in reopened.cluster_changes("c")] == [("split", "c", "c")]


def test_a_store_opening_while_another_writes_its_merge_leaves_one_applied_change(log_store, monkeypatch):
    """A store that opens between another store's recording of a merge and its apply finishes the
    merge first; the writer then neither logs it again nor marks it skipped, and its own articles
    (written into the merged-away cluster) still join."""
    writer = log_store()
    writer.write(_two_clusters())
    opened = []
    real_create = writer._create

    def create_with_a_store_opening(articles):
        opened.append(log_store(index=writer.alias))  # finishes the pending merge on open
        real_create(articles)

    monkeypatch.setattr(writer, "_create", create_with_a_store_opening)
    late = art("b3", cluster="b", dup_of="b", reason="exact", when=T0 + timedelta(hours=5))
    writer.write([_bridge(), late], [MERGE_B_INTO_A])
    assert len(opened) == 1
    assert _log_states(writer) == [APPLIED]
    _merged(writer)
    assert writer.get_many(["b3"])["b3"].cluster_id == "a"


def test_merges_of_one_write_follow_each_other_as_the_embedded_store_does(log_store, tmp_path):
    """One write, several merges that chain (into a cluster merged a moment before, a cluster
    merged onwards, a repeat): the ES store applies them together; the result and the log are the
    embedded store's, which applies them one after the other."""
    from indexer.features.simhash import FINGERPRINT_LAYOUT
    from indexer.store.sqlite import SqliteStore

    articles = _two_clusters() + [art("c", when=T0 + timedelta(hours=5)), art("z", when=T0 - timedelta(hours=1)),
                                  art("c2", cluster="c", dup_of="c", reason="near", when=T0 + timedelta(hours=6))]
    merges = [ClusterChange("merge", into="a", source="b", article_id="x", by="indexer"),
              ClusterChange("merge", into="b", source="c", by="indexer"),  # b went to a: c joins a
              ClusterChange("merge", into="z", source="a2", by="indexer"),  # a2's cluster (a, with b and c) joins z
              ClusterChange("merge", into="a", source="b", article_id="x", by="indexer")]  # already one cluster

    def run(store):
        store.write(articles)
        store.write([_bridge()], merges)
        rows = {a.id: (a.cluster_id, a.is_canonical, a.dup_of, a.dup_reason) for a in store.iter_articles()}
        return rows, [(c.into, c.source, c.article_id) for c in store.cluster_changes()]

    sqlite = SqliteStore(tmp_path / "sqlite", vector_dims=8, embedding_model="test-model",
                         fingerprint_layout=FINGERPRINT_LAYOUT, bands=4)
    try:
        expected = run(sqlite)
    finally:
        sqlite.close()
    assert {cluster for cluster, *_ in expected[0].values()} == {"z"}
    assert expected[1] == [("a", "b", "x"), ("a", "c", None), ("z", "a", None)]
    assert run(log_store()) == expected


# ---- the refresh gap ----------------------------------------------------------------------------------
@pytest.mark.parametrize("inflight_max", [10_000, 0])
def test_members_written_a_moment_ago_are_moved_and_lookups_answer_with_the_new_cluster(log_store, inflight_max):
    store = log_store(inflight_max=inflight_max)
    store.write(_two_clusters())
    store.write([art("b3", cluster="b", dup_of="b", reason="exact", when=T0 + timedelta(hours=5))])  # not refreshed
    store.merge_clusters([ClusterChange("merge", into="a", source="b", by="tester")])
    # no report in between (reports refresh): the lookups answer as they would during an ingest
    assert [a.cluster_id for a in store.find_exact(["kb3"])["kb3"]] == ["a"]
    assert [a.cluster_id for a in store.find_exact(["kb2"])["kb2"]] == ["a"]
    assert store.get_many(["b3"])["b3"].cluster_id == "a"


# ---- through the indexer ---------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_size", [1, 3])
def test_every_arrival_order_gives_the_embedded_stores_clusters(log_store, tmp_path, batch_size):
    """The indexer's merges (tests/test_clusters.py) through this store: same outcomes and same
    clusters as the embedded store for shuffled arrival orders, with no automatic refresh."""
    from indexer.features import Featurizer
    from indexer.features.simhash import FINGERPRINT_LAYOUT
    from indexer.pipeline import Indexer
    from indexer.settings import Settings
    from indexer.store.sqlite import SqliteStore
    from tests.conftest import TableEmbedder
    from tests.test_clusters import EMBEDDER, STORIES

    settings = Settings().replace(**{"input.batch_size": batch_size})
    embedder = TableEmbedder(EMBEDDER)

    def run(store, order):
        outcomes = Indexer(settings, store, Featurizer(settings, embedder)).index_many(order)
        stored = {a.id: (a.cluster_id, a.is_canonical, a.dup_of, a.dup_reason) for a in store.iter_articles()}
        decided = [(o.article_id, o.decision, o.cluster_id, o.dup_of, o.reason, o.merged) for o in outcomes]
        return decided, stored, [(c.into, c.source, c.article_id) for c in store.cluster_changes()]

    rng = random.Random(batch_size)
    # first the copies that start two clusters per story (head and tail), then shuffled orders
    bridged = sorted(STORIES, key=lambda r: not r["id"].endswith(("-head", "-tail")))
    merged_somewhere = False
    for trial in range(3):
        order = bridged if trial == 0 else rng.sample(STORIES, len(STORIES))
        sqlite = SqliteStore(tmp_path / f"sqlite{trial}", vector_dims=embedder.dims, embedding_model=embedder.name,
                             fingerprint_layout=FINGERPRINT_LAYOUT, bands=settings.simhash.bands)
        try:
            expected = run(sqlite, order)
        finally:
            sqlite.close()
        merged_somewhere |= bool(expected[2])
        es = log_store(dims=embedder.dims, model=embedder.name, bands=settings.simhash.bands)
        assert run(es, order) == expected, [r["id"] for r in order]
        assert len({cluster for cluster, *_ in expected[1].values()}) == 2  # the two stories
    assert merged_somewhere  # the orders exercise merges


# ---- the log index ----------------------------------------------------------------------------------
def test_the_log_has_its_own_strict_index_outside_the_article_template(log_store):
    store = log_store()
    mapping = next(iter(store.client.indices.get_mapping(index=changes_index(store.alias)).values()))["mappings"]
    assert mapping["properties"].keys() == CHANGES_MAPPING["properties"].keys()
    assert "content_key" not in mapping["properties"]
    assert changes_index(store.alias) not in store.client.indices.get_alias(name=store.alias)


def test_without_auto_create_a_missing_log_refuses_changes_and_writes_nothing(log_store):
    first = log_store()  # makes the article index
    first.client.indices.delete(index=changes_index(first.alias))
    store = log_store(index=first.alias, auto_create=False)
    store.write(_two_clusters())  # plain writes need no log
    assert store.cluster_changes() == []
    with pytest.raises(StoreError, match="change log index"):
        store.write([_bridge()], [MERGE_B_INTO_A])
    assert store.get_many(["x"]) == {}  # refused before anything was written
    with pytest.raises(StoreError, match="change log index"):
        store.split_article(ClusterChange("split", into="a2", source="a", article_id="a2"))
    assert store.get_many(["a2"])["a2"].cluster_id == "a"
    assert not store.client.indices.exists(index=changes_index(first.alias))
