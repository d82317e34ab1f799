"""Embedded-store specifics: persistence, crash recovery of the vector index, schema checks."""

from __future__ import annotations

import json
from datetime import timedelta
import threading
from dataclasses import replace

import numpy as np
import pytest

from indexer.errors import StoreSchemaError
from indexer.features.simhash import FINGERPRINT_LAYOUT
from indexer.store import KnnQuery
from indexer.store import sqlite as sqlite_store

# What schema 4 added (the change log's lead column), taken out again to make an older store.
UNDO_SCHEMA_4 = "DROP INDEX cluster_changes_lead; ALTER TABLE cluster_changes DROP COLUMN lead_id;"
NEWER = str(int(sqlite_store.SCHEMA_VERSION) + 1)
from indexer.store.sqlite import SqliteStore

from .test_contract import art, unit


def open_store(path, dims=8, model="m"):
    return SqliteStore(path, vector_dims=dims, embedding_model=model, fingerprint_layout=FINGERPRINT_LAYOUT, bands=4)


def test_reopen_keeps_articles_and_vectors(tmp_path):
    with open_store(tmp_path) as s:
        s.write([art(f"a{i}", vector=unit(i)) for i in range(20)])
    with open_store(tmp_path) as s:
        assert s.stats().articles == 20
        [hits] = s.knn([KnnQuery(unit(3), k=1, min_score=0.99)])
        assert [a.id for a, _ in hits] == ["a3"]


def test_a_write_the_database_stays_locked_for_is_a_store_error_to_retry(tmp_path):
    """Not a raw sqlite3 error: the daemon retries StoreErrors, and takes any other error for a
    poison article, which it would move to the dead-letter table."""
    import sqlite3

    from indexer.errors import StoreUnavailable

    with open_store(tmp_path) as s:
        s._db.execute("PRAGMA busy_timeout=50")
        other = sqlite3.connect(tmp_path / "articles.sqlite3")
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreUnavailable, match="locked"):
                s.write([art("a")])
        finally:
            other.rollback()
            other.close()
        s.write([art("a")])
        assert s.stats().articles == 1


def test_reads_that_fail_in_sqlite_are_store_errors_naming_the_store(tmp_path):
    """A database another process broke: reads raise store errors (which the daemon retries),
    the generator of every article too, not raw sqlite3 errors (which it takes for poison)."""
    import sqlite3

    from indexer.errors import StoreError, StoreUnavailable
    from indexer.store import BandQuery

    with open_store(tmp_path) as s:
        s.write([art("a")])
        other = sqlite3.connect(tmp_path / "articles.sqlite3")
        other.executescript("DROP TABLE bands; ALTER TABLE articles RENAME TO gone;")
        other.close()
        s._row_cache.clear()
        with pytest.raises(StoreUnavailable, match=f"find_band_candidates on the embedded store at {tmp_path}"):
            s.find_band_candidates([BandQuery(bands=(1, 2), simhash=0, max_distance=3)])
        for read in (lambda: s.get_many(["a"]), s.stats, lambda: list(s.iter_articles()), lambda: s.cluster_members("a")):
            with pytest.raises(StoreError, match="no such table"):
                read()


def test_a_read_that_fails_while_opening_is_a_store_error_and_leaves_nothing_open(tmp_path, monkeypatch):
    """The daemon retries an unavailable store at start; a raw sqlite3 error ended its worker."""
    import sqlite3

    from indexer.errors import StoreUnavailable

    with open_store(tmp_path) as s:
        s.write([art("a", vector=unit(1))])
    connections = []
    real_connect = sqlite3.connect
    monkeypatch.setattr(sqlite_store.sqlite3, "connect", lambda *a, **k: connections.append(real_connect(*a, **k)) or connections[-1])

    def sick(self):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(SqliteStore, "_open_ann", sick)
    with pytest.raises(StoreUnavailable, match="disk I/O error"):
        open_store(tmp_path)
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        connections[-1].execute("SELECT 1")


def test_vector_index_catches_up_after_a_crash(tmp_path):
    s = open_store(tmp_path)
    s.write([art("a0", vector=unit(0))])
    s._save_ann()
    s.write([art(f"a{i}", vector=unit(i)) for i in range(1, 30)])
    # Simulate kill -9: the SQLite commit happened, the index file was never saved again.
    s._db.close()
    with open_store(tmp_path) as s2:
        for i in (0, 17, 29):
            [hits] = s2.knn([KnnQuery(unit(i), k=1, min_score=0.99)])
            assert [a.id for a, _ in hits] == [f"a{i}"]


def test_unreadable_vector_index_is_rebuilt_from_sqlite(tmp_path):
    with open_store(tmp_path) as s:
        s.write([art(f"a{i}", vector=unit(i)) for i in range(5)])
    (tmp_path / sqlite_store.SEGMENT_FILE.format(0)).write_bytes(b"garbage")
    with open_store(tmp_path) as s:
        [hits] = s.knn([KnnQuery(unit(4), k=1, min_score=0.99)])
        assert [a.id for a, _ in hits] == ["a4"]


def _follow(store) -> None:
    """A windowless question (an undated article): from now on writes feed the graphs."""
    store.knn([KnnQuery(unit(0), k=1, min_score=1.5)])


def _windowless_top(store, vector, k=5):
    [hits] = store.knn([KnnQuery(vector, k=k, min_score=-1.0)])  # no window: the graphs answer
    return [a.id for a, _ in hits]


def _brute_top(vectors: dict, vector, k=5):
    return sorted(vectors, key=lambda aid: (-float(np.dot(vectors[aid], vector)), aid))[:k]


def test_one_input_builds_one_graph(tmp_path):
    """Rows are linked into the graph in their order, not in whichever order threads reach them:
    the saved graphs of two stores fed the same undated rows are the same bytes (several threads
    built another graph on every run, so an undated article's approximate neighbours varied)."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((1500, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    saved = []
    for run in range(3):
        with open_store(tmp_path / str(run), dims=32) as s:
            _follow(s)
            for at in range(0, len(vectors), 500):
                s.write([art(f"a{i}", vector=vectors[i]) for i in range(at, at + 500)])
            s._ann_wait()
            s._save_ann()
        saved.append(sorted(p.read_bytes() for p in (tmp_path / str(run)).rglob("*") if p.suffix == ".hnsw"))
    assert saved[0] and saved[0] == saved[1] == saved[2]


def test_a_dated_stream_builds_no_graph_until_a_windowless_question_needs_it(tmp_path, monkeypatch):
    """Dated questions are answered from the day vectors, so a dated stream pays nothing for the
    graph; the first windowless question catches it up from SQLite, across segments, and from
    then on writes feed it. After a reopen it waits again for a question that needs it."""
    from datetime import timedelta

    from indexer.store import TimeWindow

    from .test_contract import T0

    monkeypatch.setattr(sqlite_store, "SEGMENT_ROWS", 10)
    window = TimeWindow(T0 - timedelta(days=1), T0 + timedelta(days=1))
    vectors = {f"a{i}": unit(700 + i) for i in range(30)}
    ids = list(vectors)
    with open_store(tmp_path) as s:
        for at in range(0, 25, 5):
            s.write([art(aid, vector=vectors[aid]) for aid in ids[at : at + 5]])
        [hits] = s.knn([KnnQuery(vectors["a7"], k=1, min_score=0.99, window=window)])
        assert [a.id for a, _ in hits] == ["a7"]
        assert s._ann.get_current_count() == 0 and s._segment == 0  # nothing added, nothing rotated
        assert _windowless_top(s, vectors["a3"]) == _brute_top({k: vectors[k] for k in ids[:25]}, vectors["a3"])
        assert s._segment == 2 and s._ann.get_current_count() == 5  # caught up: segments 0 and 1 saved
        assert all((tmp_path / sqlite_store.SEGMENT_FILE.format(k)).exists() for k in range(2))
        s.write([art(aid, vector=vectors[aid]) for aid in ids[25:28]])
        s._ann_wait()
        assert s._ann.get_current_count() == 8  # fed by the write
    with open_store(tmp_path) as s:
        s.write([art(aid, vector=vectors[aid]) for aid in ids[28:]])
        s._ann_wait()
        assert s._ann.get_current_count() == 8  # a new process: not fed until a question needs it
        for aid in ("a0", "a15", "a27", "a29"):
            assert _windowless_top(s, vectors[aid]) == _brute_top(vectors, vectors[aid])
        assert s._ann.get_current_count() == 10


def test_graph_segments_hold_every_row_and_older_ones_stay_on_disk(tmp_path, monkeypatch):
    """Each SEGMENT_ROWS rows have a graph of their own; only the newest is held in memory, the
    others are read back when a windowless search needs them, and every row is found."""
    monkeypatch.setattr(sqlite_store, "SEGMENT_ROWS", 10)
    vectors = {f"a{i}": unit(100 + i) for i in range(35)}
    ids = list(vectors)
    with open_store(tmp_path) as s:
        _follow(s)
        for at in range(0, 35, 7):  # batches that straddle the segments' bounds
            s.write([art(aid, vector=vectors[aid]) for aid in ids[at : at + 7]])
        s._ann_wait()
        assert s._segment == 3 and s._ann.get_current_count() == 5 and s._closed == {}
        assert all((tmp_path / sqlite_store.SEGMENT_FILE.format(k)).exists() for k in range(3))
        for aid in ("a0", "a9", "a10", "a27", "a34"):
            assert _windowless_top(s, vectors[aid]) == _brute_top(vectors, vectors[aid])
        assert sorted(s._closed) == [0, 1, 2]
    with open_store(tmp_path) as s:  # reopened: the newest segment from its file, the rest when searched
        assert s._segment == 3 and s._ann.get_current_count() == 5 and s._closed == {}
        assert _windowless_top(s, vectors["a3"]) == _brute_top(vectors, vectors["a3"])
    (tmp_path / sqlite_store.SEGMENT_FILE.format(1)).unlink()
    (tmp_path / sqlite_store.SEGMENT_FILE.format(2)).write_bytes(b"garbage")
    with open_store(tmp_path) as s:  # a lost or broken older segment is rebuilt from SQLite
        for aid in ("a12", "a25"):
            assert _windowless_top(s, vectors[aid]) == _brute_top(vectors, vectors[aid])
    assert (tmp_path / sqlite_store.SEGMENT_FILE.format(1)).exists()


def test_graph_segments_catch_up_after_a_crash_across_a_segment_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_store, "SEGMENT_ROWS", 10)
    vectors = {f"a{i}": unit(200 + i) for i in range(28)}
    ids = list(vectors)
    s = open_store(tmp_path)
    _follow(s)
    s.write([art(aid, vector=vectors[aid]) for aid in ids[:8]])
    s._save_ann()
    s.write([art(aid, vector=vectors[aid]) for aid in ids[8:28]])
    s._ann_wait()
    s._db.close()  # kill -9: the meta file names segment 1 (saved when 2 opened); 2 was never saved
    assert json.loads((tmp_path / sqlite_store.ANN_META_FILE).read_text())["segment"] == 1
    (tmp_path / sqlite_store.SEGMENT_FILE.format(0)).unlink()  # and an older one is lost
    with open_store(tmp_path) as s2:
        assert s2._segment == 1  # as saved: the rows after it wait for a search that needs them
        for aid in ("a0", "a7", "a8", "a15", "a27"):
            assert _windowless_top(s2, vectors[aid]) == _brute_top(vectors, vectors[aid])
        assert s2._segment == 2 and s2._ann.get_current_count() == 8  # caught up into the next segment


def test_rows_another_writer_added_across_a_segment_bound_are_caught_up(tmp_path, monkeypatch):
    """A daemon that stood by while an ingest wrote past the next segment's first row catches up
    (its rotation saves without waiting for the catch-up that is running it) and writes on."""
    monkeypatch.setattr(sqlite_store, "SEGMENT_ROWS", 10)
    vectors = {f"a{i}": unit(400 + i) for i in range(17)}
    ids = list(vectors)
    daemon = open_store(tmp_path)
    _follow(daemon)
    daemon.write([art(aid, vector=vectors[aid]) for aid in ids[:5]])
    with open_store(tmp_path) as ingest:
        ingest.write([art(aid, vector=vectors[aid]) for aid in ids[5:15]])
    try:
        daemon.write([art(aid, vector=vectors[aid]) for aid in ids[15:]])
        assert daemon._segment == 1
        for aid in ("a2", "a9", "a12", "a16"):
            assert _windowless_top(daemon, vectors[aid]) == _brute_top(vectors, vectors[aid])
    finally:
        daemon.close()


def test_rows_another_writer_commits_during_a_catch_up_are_not_skipped(tmp_path):
    """A reader (the browser view explaining an undated article) catches its graph up while the
    daemon writes: rows committed after the catch-up's last read are left for the next one, not
    passed over, and the graph it saves names only rows it holds."""
    vectors = {f"a{i}": unit(900 + i) for i in range(20)}
    ids = list(vectors)
    reader, writer = open_store(tmp_path), open_store(tmp_path)
    writer.write([art(aid, vector=vectors[aid]) for aid in ids[:10]])

    class CommitAfterTheLastBatch:  # the writer commits right after the reader's catch-up read its last batch
        def __init__(self, db):
            self._db, self.fired = db, False

        def execute(self, sql, *args):
            cursor = self._db.execute(sql, *args)
            if not sql.startswith("SELECT rid, vector FROM articles") or self.fired:
                return cursor
            rows = cursor.fetchall()
            if not rows:
                self.fired = True
                writer.write([art(aid, vector=vectors[aid]) for aid in ids[10:15]])
            return type("Rows", (), {"fetchall": lambda _: rows})()

        def __getattr__(self, name):
            return getattr(self._db, name)

    sick = CommitAfterTheLastBatch(reader._db)
    reader._db = sick
    try:
        assert _windowless_top(reader, vectors["a3"], k=1) == ["a3"]
        assert sick.fired
        assert _windowless_top(reader, vectors["a12"], k=1) == ["a12"]
    finally:
        reader._db = sick._db
        reader.close()
        writer.close()
    with open_store(tmp_path) as again:
        assert _windowless_top(again, vectors["a12"], k=1) == ["a12"]


def test_rows_another_writer_commits_just_before_a_write_reach_the_graph(tmp_path):
    s = open_store(tmp_path)
    _follow(s)
    s.write([art("a0", vector=unit(600))])
    begin = s._transaction

    def another_commit_first(what):  # between this store's look at other writers and its BEGIN
        with open_store(tmp_path) as other:
            other.write([art("b0", vector=unit(601))])
        s._transaction = begin
        return begin(what)

    s._transaction = another_commit_first
    try:
        s.write([art("a1", vector=unit(602))])
        for aid, seed in [("a0", 600), ("b0", 601), ("a1", 602)]:
            [hits] = s.knn([KnnQuery(unit(seed), k=1, min_score=0.99)])  # no window: the graph
            assert [a.id for a, _ in hits] == [aid]
    finally:
        s.close()


def test_a_failed_addition_across_a_segment_bound_is_redone(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_store, "SEGMENT_ROWS", 10)
    vectors = {f"a{i}": unit(500 + i) for i in range(16)}
    ids = list(vectors)
    with open_store(tmp_path) as s:
        _follow(s)
        s.write([art(aid, vector=vectors[aid]) for aid in ids[:8]])
        s._ann_wait()
        s._ann = _FailingGraph(s._ann, failures=1)
        s.write([art(aid, vector=vectors[aid]) for aid in ids[8:13]])  # segment 0's part fails
        s.write([art(aid, vector=vectors[aid]) for aid in ids[13:]])
        for aid in ("a0", "a8", "a9", "a10", "a15"):
            assert _windowless_top(s, vectors[aid]) == _brute_top(vectors, vectors[aid])


def test_a_store_with_one_graph_for_all_rows_opens_with_segments(tmp_path, monkeypatch):
    """Stores written before segments have one graph file; it is replaced, not trusted."""
    monkeypatch.setattr(sqlite_store, "SEGMENT_ROWS", 10)
    vectors = {f"a{i}": unit(300 + i) for i in range(24)}
    with open_store(tmp_path) as s:
        s.write([art(aid, vector=v) for aid, v in vectors.items()])
    (tmp_path / sqlite_store.ANN_META_FILE).write_text('{"max_rid": 24, "capacity": 1024}')
    (tmp_path / sqlite_store.LEGACY_ANN_FILE).write_bytes(b"an old graph")
    with open_store(tmp_path) as s:
        assert s._segment == 2
        for aid in ("a1", "a13", "a23"):
            assert _windowless_top(s, vectors[aid]) == _brute_top(vectors, vectors[aid])
    assert not (tmp_path / sqlite_store.LEGACY_ANN_FILE).exists()


def test_merged_hits_leave_out_what_a_graph_asked_for_too_few_may_outrank():
    from indexer.store.sqlite import merged_hits

    whole = (3, 3, np.array([1, 2, 3]), np.array([0.9, 0.5, 0.2], np.float32))  # all it holds
    cut = (2, 10, np.array([7, 8]), np.array([0.8, 0.6], np.float32))  # it holds 8 more, each <= 0.6
    hits, exhausted = merged_hits([whole, cut], min_score=0.3)
    assert [rid for rid, _ in hits] == [1, 7, 8] and not exhausted  # 0.5 may be outranked
    hits, exhausted = merged_hits([whole, (2, 10, np.array([7, 8]), np.array([0.8, 0.25], np.float32))], 0.3)
    assert [rid for rid, _ in hits] == [1, 7, 2] and exhausted  # the cut graph's rest is below the floor


def test_index_grows_past_its_initial_capacity(tmp_path):
    with open_store(tmp_path, dims=4) as s:
        vecs = np.random.default_rng(0).normal(size=(1500, 4)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        s.write([art(f"a{i}", vector=vecs[i]) for i in range(1500)])
        [hits] = s.knn([KnnQuery(vecs[1234], k=1, min_score=0.999)])
        assert hits[0][0].id == "a1234"


def test_other_vector_dims_or_model_are_refused(tmp_path):
    open_store(tmp_path, dims=8).close()
    with pytest.raises(StoreSchemaError, match="vector_dims"):
        open_store(tmp_path, dims=16)
    with pytest.raises(StoreSchemaError, match="embedding_model"):
        open_store(tmp_path, dims=8, model="other")


def test_a_schema_1_store_is_upgraded_in_place(tmp_path):
    """Stores made before band rows carried fingerprints open, keep their articles and still find them."""
    from datetime import timedelta

    from indexer.features.simhash import band_keys
    from indexer.store import BandQuery, TimeWindow

    from .test_contract import T0

    base = 0x0123_4567_89AB_CDEF
    with open_store(tmp_path) as s:
        s.write([art("a1", simhash=base ^ 0b1), art("a2", simhash=base ^ 0b1111)])
        # Turn it back into what schema 1 wrote: band rows with only (band, rid).
        s._db.executescript(
            "CREATE TABLE old_bands (band INTEGER NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (band, rid)) WITHOUT ROWID;"
            "INSERT INTO old_bands SELECT band, rid FROM bands; DROP TABLE bands; ALTER TABLE old_bands RENAME TO bands;"
            "ALTER TABLE articles DROP COLUMN token_count;" + UNDO_SCHEMA_4 +
            "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
        )
    with open_store(tmp_path) as s:
        version = s._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        window = TimeWindow(T0 - timedelta(days=1), T0 + timedelta(days=1))
        [found] = s.find_band_candidates([BandQuery(band_keys(base, 4), window, simhash=base, max_distance=3)])
        assert version == sqlite_store.SCHEMA_VERSION and [a.id for a in found] == ["a1"]


def test_a_schema_2_store_is_upgraded_in_place_and_its_rows_are_featurised_anew(tmp_path):
    """Stores made before rows kept their token count open, keep their articles, and read them
    back without one (the indexer then tokenises them, as it did before); new rows keep theirs."""
    with open_store(tmp_path) as s:
        s.write([art("a1")])
        s._db.executescript(
            "ALTER TABLE articles DROP COLUMN token_count;" + UNDO_SCHEMA_4 +
            "UPDATE meta SET value = '2' WHERE key = 'schema_version';"
        )
    with open_store(tmp_path) as s:
        version = s._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        s.write([replace(art("a2"), token_count=17)])
        got = s.get_many(["a1", "a2"])
        assert version == sqlite_store.SCHEMA_VERSION
        assert got["a1"].token_count is None and got["a2"].token_count == 17


def test_a_schema_3_store_keeps_its_change_log_and_logs_new_leads_after_the_upgrade(tmp_path):
    """Stores made before splits recorded who leads the rest open with their log as it was
    (entries without a lead), and the splits made after the upgrade record one."""
    from indexer.store import ClusterChange

    from .test_contract import T0

    with open_store(tmp_path) as s:
        s.write([art("a1", when=T0), art("a2", when=T0 + timedelta(hours=1)), art("a3", when=T0 + timedelta(hours=2))])
        s.merge_clusters([ClusterChange("merge", into="a1", source="a2", reason="same story", by="editor")])
        s._db.executescript(UNDO_SCHEMA_4 + "UPDATE meta SET value = '3' WHERE key = 'schema_version';")
    with open_store(tmp_path) as s:
        assert [(c.kind, c.lead) for c in s.cluster_changes()] == [("merge", None)]
        s.merge_clusters([ClusterChange("merge", into="a1", source="a3", reason="same story", by="editor")])
        assert s.split_article(ClusterChange("split", into="a1", source="a1", article_id="a1", by="editor")) == "a2"
        assert [(c.kind, c.lead) for c in s.cluster_changes("a2")] == [("merge", None), ("split", "a2")]
    assert _schema_of(tmp_path)[0] == sqlite_store.SCHEMA_VERSION


def test_row_cache_is_bounded_and_answers_like_the_table(tmp_path, monkeypatch):
    """Candidates (kNN, bands) and canonicals (get_many) come partly from the cache, as they are in
    the table."""
    from datetime import timedelta

    from indexer.store import BandQuery, TimeWindow

    from .test_contract import T0

    monkeypatch.setattr(sqlite_store, "CANDIDATE_ROWS_CACHED", 5)
    window = TimeWindow(T0 - timedelta(days=3), T0 + timedelta(days=3))
    asked = [KnnQuery(unit(i), k=4, min_score=-1.0, window=window) for i in range(6)]
    bands = [BandQuery(art("q", simhash=i).bands, window, None, i, 3) for i in (1, 2, 3)]
    def seen(store):
        def row(a):
            return (a.export_record(), a.vector.tobytes(), a.clean_body, a.simhash, a.bands, a.content_key)

        return ([[(row(a), round(score, 6)) for a, score in hits] for hits in store.knn(asked)],
                [[row(a) for a in found] for found in store.find_band_candidates(bands)],
                {i: row(a) for i, a in store.get_many(["a1", "a7", "a3", "a7", "none"]).items()})

    with open_store(tmp_path) as s:
        s.write([art(f"a{i}", vector=unit(i), simhash=i % 4) for i in range(12)])
        first = seen(s)
        again = seen(s)  # now partly from the cache
        assert len(s._row_cache) == 5
    with open_store(tmp_path) as fresh:
        fresh._row_cache = sqlite_store._RowCache(0)  # keeps nothing: every row from the table
        expected = seen(fresh)
    assert expected[0][0] and expected[1][0] and sorted(expected[2]) == ["a1", "a3", "a7"]
    assert first == expected and again == expected


def test_rows_cached_for_candidates_follow_a_change_made_by_another_connection(tmp_path):
    """A person's merge from another process (newsdedup ui) changes clusters behind a running
    writer's back: its cached candidate rows must not keep the old cluster ids."""
    from indexer.store import BandQuery, ClusterChange

    from .test_contract import art

    make = lambda: SqliteStore(tmp_path / "s", vector_dims=8, embedding_model="m", fingerprint_layout=FINGERPRINT_LAYOUT, bands=4)  # noqa: E731
    writer, other = make(), make()
    writer.write([art("a", simhash=0b1011), art("b", simhash=(1 << 64) - 1)])
    query = BandQuery(art("q", simhash=0b1011).bands)
    assert [a.cluster_id for a in writer.find_band_candidates([query])[0]] == ["a"]  # now cached
    other.merge_clusters([ClusterChange("merge", into="b", source="a", reason="same story", by="editor")])
    assert [a.cluster_id for a in writer.find_band_candidates([query])[0]] == ["b"]
    writer.close()
    other.close()


def test_vectors_still_being_added_to_the_graph_are_found_by_the_next_search(tmp_path):
    """The graph takes new vectors on its own thread while the next batch is decided; a search
    of it (a window too long for the day vectors) waits until it holds every written row."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    with open_store(tmp_path) as s:
        _follow(s)
        s.write([art("a0", vector=unit(0))])
        s._ann_wait()
        s._ann_stage = ThreadPoolExecutor(max_workers=1)
        release = threading.Event()
        s._ann_stage.submit(release.wait)  # the next addition queues behind this
        s.write([art("a1", vector=unit(1))])
        assert s._ann.get_current_count() == 1  # not added yet
        threading.Timer(0.2, release.set).start()
        [hits] = s.knn([KnnQuery(unit(1), k=1, min_score=0.99)])  # no window: the graph answers
        assert [a.id for a, _ in hits] == ["a1"]


class _FailingGraph:
    """An HNSW graph whose next ``failures`` additions fail, the last of them halfway through
    (hnswlib adds rows on several threads: a failed call may leave some of its rows added). With
    ``hold``, the first addition waits for it first (still running when the next write commits)."""

    def __init__(self, graph, failures: int, hold=None):
        self._graph, self.failures, self.calls, self.hold = graph, failures, 0, hold

    def add_items(self, vectors, labels, num_threads=-1):
        self.calls += 1
        if self.hold is not None and self.calls == 1:
            self.hold.wait(10)
        if self.failures:
            if self.failures == self.calls:  # the last failure (the first when only one)
                self._graph.add_items(vectors[: len(labels) // 2], labels[: len(labels) // 2], num_threads=num_threads)
            self.failures -= 1
            raise RuntimeError("simulated failure while adding to the graph")
        self._graph.add_items(vectors, labels, num_threads=num_threads)

    def __getattr__(self, name):
        return getattr(self._graph, name)


def _graph_rids(store) -> set[int]:
    store._ann_wait()
    return set(store._ann.get_ids_list())


def _stored_rids(store) -> set[int]:
    return {rid for (rid,) in store._db.execute("SELECT rid FROM articles WHERE vector IS NOT NULL")}


def test_a_failed_graph_addition_is_redone_from_sqlite_and_loses_nothing(tmp_path):
    """The graph takes new vectors on its own thread; when that fails, the next write (or search)
    must add them again, not skip past them, and the writes themselves succeed."""
    from datetime import timedelta

    from indexer.store import TimeWindow

    from .test_contract import T0

    window = TimeWindow(T0 - timedelta(days=1), T0 + timedelta(days=1))
    with open_store(tmp_path) as s:
        _follow(s)
        s.write([art(f"a{i}", vector=unit(i)) for i in range(4)])
        s.knn([KnnQuery(unit(0), k=1, min_score=0.99, window=window)])  # the day is loaded now
        s._ann_wait()
        s._ann = _FailingGraph(s._ann, failures=1)
        s.write([art(f"b{i}", vector=unit(i + 8)) for i in range(6)])  # its addition fails
        s.write([art(f"c{i}", vector=unit(i + 16)) for i in range(3)])  # sees the failure
        s.write([art(f"d{i}", vector=unit(i + 24)) for i in range(2)])
        assert _graph_rids(s) == _stored_rids(s) and len(_stored_rids(s)) == 15  # (waits for the graph)
        assert s._ann.calls >= 3 and s._ann.failures == 0
        for name, i in [("b0", 8), ("b5", 13), ("c2", 18), ("d1", 25)]:
            [from_graph] = s.knn([KnnQuery(unit(i), k=1, min_score=0.99)])  # no window: the graph
            [from_days] = s.knn([KnnQuery(unit(i), k=1, min_score=0.99, window=window)])
            assert [a.id for a, _ in from_graph] == [a.id for a, _ in from_days] == [name]
    with open_store(tmp_path) as s:  # the saved graph names only rows it holds
        assert _graph_rids(s) == _stored_rids(s)


def test_a_graph_that_keeps_failing_raises_store_errors_and_catches_up_once_it_works(tmp_path):
    """While adding to the graph keeps failing, writes raise StoreError (the daemon retries the
    batch); a write that raised has either committed its rows or none, and once the graph takes
    vectors again every stored row is in it. The first failure is seen only after the next write
    committed (its addition still ran then): that write's rows are in the day cache all the same."""
    import threading
    from datetime import timedelta

    from indexer.errors import StoreError
    from indexer.store import TimeWindow

    from .test_contract import T0

    window = TimeWindow(T0 - timedelta(days=1), T0 + timedelta(days=1))
    with open_store(tmp_path) as s:
        _follow(s)
        s.write([art(f"a{i}", vector=unit(i)) for i in range(4)])
        s.knn([KnnQuery(unit(0), k=1, min_score=0.99, window=window)])  # the day is loaded now
        s._ann_wait()
        release = threading.Event()
        s._ann = graph = _FailingGraph(s._ann, failures=4, hold=release)
        threading.Timer(0.3, release.set).start()
        batches = [[art(f"b{n}-{i}", vector=unit(8 + 4 * n + i)) for i in range(3)] for n in range(4)]
        raised = 0
        for batch in batches:
            while True:  # as the daemon does: the same batch again after a StoreError
                try:
                    s.write(batch)
                    break
                except StoreError:
                    raised += 1
                    assert raised < 10
        assert raised and graph.failures == 0
        assert len(s.get_many([a.id for batch in batches for a in batch])) == 12
        assert _graph_rids(s) == _stored_rids(s) and len(_stored_rids(s)) == 16
        for n, batch in enumerate(batches):
            for i, a in enumerate(batch):
                [from_graph] = s.knn([KnnQuery(unit(8 + 4 * n + i), k=1, min_score=0.99)])
                [from_days] = s.knn([KnnQuery(unit(8 + 4 * n + i), k=1, min_score=0.99, window=window)])
                assert [b.id for b, _ in from_graph] == [b.id for b, _ in from_days] == [a.id]


def _make_schema_2(path) -> None:
    """A store as schema 2 wrote it: articles without a token count."""
    with open_store(path) as s:
        s.write([art("a1", vector=unit(1))])
        s._db.executescript(
            "ALTER TABLE articles DROP COLUMN token_count;" + UNDO_SCHEMA_4 +
            "UPDATE meta SET value = '2' WHERE key = 'schema_version';"
        )


def _schema_of(path) -> tuple[str, list[str]]:
    import sqlite3

    db = sqlite3.connect(path / sqlite_store.DB_FILE)
    try:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        return version, [row[1] for row in db.execute("PRAGMA table_info(articles)")]
    finally:
        db.close()


class _Rows:
    """Rows already read from a cursor, answered as the cursor would."""

    def __init__(self, rows):
        self.rows = rows

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def fetchall(self):
        return self.rows


class _RacedConnection:
    """A connection on which, right after its first read of the meta table, another process opens
    the same store: that one runs to its end (upgrading the store) unless this connection holds
    the write lock by then, in which case it waits for it (given a second, then this one goes on)."""

    def __init__(self, db, other_open):
        self._db, self._other_open, self.other = db, other_open, None

    def execute(self, sql, *args):
        cursor = self._db.execute(sql, *args)
        if self.other is None and sql.lstrip().upper().startswith("SELECT") and "FROM META" in sql.upper():
            rows = cursor.fetchall()
            self.other = threading.Thread(target=self._other_open)
            self.other.start()
            self.other.join(1.0)
            return _Rows(rows)
        return cursor

    def __getattr__(self, name):
        return getattr(self._db, name)


def test_two_processes_opening_a_schema_2_store_together_upgrade_it_once(tmp_path, monkeypatch):
    """The schema version is read and the store upgraded in one write transaction: another opener
    can neither upgrade it between the read and the upgrade (the second ALTER TABLE would fail with
    "duplicate column name") nor after it."""
    import sqlite3

    _make_schema_2(tmp_path)
    connect, raced, others = sqlite3.connect, [], []

    def other_open():
        try:
            open_store(tmp_path).close()
            others.append("opened")
        except Exception as exc:  # noqa: BLE001 - recorded for the assertion below
            others.append(exc)

    def connect_once_raced(*args, **kwargs):
        db = connect(*args, **kwargs)
        if raced:
            return db
        raced.append(_RacedConnection(db, other_open))
        return raced[0]

    monkeypatch.setattr(sqlite_store.sqlite3, "connect", connect_once_raced)
    with open_store(tmp_path) as s:
        assert raced[0].other is not None  # the other opener did run in between
        raced[0].other.join(30)
        assert others == ["opened"]
        assert [a.id for a, _ in s.knn([KnnQuery(unit(1), k=1, min_score=0.99)])[0]] == ["a1"]
    version, columns = _schema_of(tmp_path)
    assert version == sqlite_store.SCHEMA_VERSION and columns.count("token_count") == 1


def test_an_old_store_made_with_other_settings_is_refused_before_it_is_upgraded(tmp_path):
    _make_schema_2(tmp_path)
    with pytest.raises(StoreSchemaError, match="embedding_model"):
        open_store(tmp_path, model="other")
    with pytest.raises(StoreSchemaError, match="vector_dims"):
        open_store(tmp_path, dims=16)
    version, columns = _schema_of(tmp_path)
    assert version == "2" and "token_count" not in columns
    with open_store(tmp_path) as s:  # the settings it was made with still open (and upgrade) it
        assert s.get_many(["a1"])["a1"].token_count is None
    assert _schema_of(tmp_path)[0] == sqlite_store.SCHEMA_VERSION


def test_a_store_of_a_newer_schema_is_refused_and_left_alone(tmp_path):
    with open_store(tmp_path) as s:
        s._db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (NEWER,))
    with pytest.raises(StoreSchemaError, match="schema_version"):
        open_store(tmp_path)
    assert _schema_of(tmp_path)[0] == NEWER


def test_rows_another_writer_added_are_found_and_kept_in_the_graph(tmp_path):
    """A daemon opens its store, then stands by while an ingest (another connection) writes; once
    it writes again, its searches find the ingest's rows (its loaded days are read anew) and its
    graph holds them too: a save after its own rows must not record them as held when they are not."""
    from datetime import datetime, timezone

    import numpy as np

    from indexer.store.base import KnnQuery, StoredArticle, TimeWindow
    from indexer.store.sqlite import SqliteStore

    kw = dict(vector_dims=4, embedding_model="m", fingerprint_layout="f", bands=4)

    def art(i):
        v = np.random.default_rng(i).normal(size=4).astype(np.float32)
        return StoredArticle(
            id=f"a{i}", url=f"u{i}", canonical_url=f"u{i}", source="s", title="t", content="c",
            publish_time=datetime(2020, 1, 1, i, tzinfo=timezone.utc), clean_title="t", clean_body="c",
            title_md5=f"{i}", body_md5=f"{i}", content_key=f"k{i}", simhash=i, bands=(1, 2, 3, 4),
            vector=v / np.linalg.norm(v), cluster_id=f"a{i}", is_canonical=True)

    daemon = SqliteStore(tmp_path, **kw)
    daemon.write([art(0)])
    window = TimeWindow(datetime(2019, 12, 25, tzinfo=timezone.utc), datetime(2020, 1, 8, tzinfo=timezone.utc))
    assert len(daemon.knn([KnnQuery(art(0).vector, 10, -1.0, window)])[0]) == 1  # its day is loaded now
    ingest = SqliteStore(tmp_path, **kw)
    ingest.write([art(i) for i in range(1, 6)])
    ingest.close()
    found = daemon.knn([KnnQuery(art(3).vector, 10, -1.0, window), KnnQuery(art(3).vector, 10, -1.0, TimeWindow())])
    assert [a.id for a, _ in found[0]][0] == "a3" and len(found[0]) == 6  # the day read anew
    assert len(found[1]) == 6  # the graph (no window) holds them too
    daemon.write([art(i) for i in range(6, 9)])
    daemon.close()
    again = SqliteStore(tmp_path, **kw)
    try:
        assert again.stats().articles == 9 and again._ann.get_current_count() == 9
    finally:
        again.close()
