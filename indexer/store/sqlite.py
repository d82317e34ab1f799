"""The embedded store: a directory with SQLite (WAL) for articles, hashes and band keys, and an
HNSW index (hnswlib) for embeddings beside it.

SQLite is the source of truth, vectors included. The HNSW graphs are a cache, one per segment of
``SEGMENT_ROWS`` rows: the newest is saved atomically on close, every ``ANN_SAVE_EVERY`` additions
and when the next segment opens, and the meta file records the highest row it holds; the rows
written after that (a crash between a commit and a save) are added again from SQLite before the
graph is searched, and an older segment whose file is missing or unreadable is rebuilt from SQLite
when a search first needs it. So a crash never loses an article and never leaves a search short.

The graphs answer only questions without a window of at most ``EXACT_WINDOW_MAX_DAYS`` (undated
articles); dated ones are answered exactly from the day vectors. Adding a vector to a graph costs
0.2-0.9 ms of CPU (more as the segment fills), a quarter of a dated stream's ingest on two cores,
for a graph nothing reads. So writes feed the graphs only once a search has needed them in this
process: until then the graph falls behind, and the first such search catches it up from SQLite.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import os
import sqlite3
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, NoReturn, Sequence

import numpy as np

from ..errors import StoreError, StoreSchemaError, StoreUnavailable
from ..features.simhash import from_signed, to_signed
from .base import (INDEXER, MANUAL, MERGED, UNREADABLE_EXTRA_KEY, BandQuery, ClusterChange, KnnQuery, StoredArticle, StoreMixin, StoreStats,
                   TimeWindow, TitleQuery, moved_article, oldest_other_member)
from .day_vectors import DAY_SECONDS, UNDATED, DayVectors, WindowSearch, runs, stack

log = logging.getLogger(__name__)

DB_FILE = "articles.sqlite3"
LEGACY_ANN_FILE = "vectors.hnsw"  # one graph for every row, before segments
SEGMENT_FILE = "vectors-{}.hnsw"
ANN_META_FILE = "vectors.json"
ANN_SAVE_EVERY = 50_000
# Rows 1-50,000 are segment 0, and so on: each segment has a graph of its own. Adding to an HNSW
# graph costs more as it grows, and saving one writes it whole, so one graph for the store made
# both grow with it (a 1M-article graph: about 1 ms an addition and 2.2 GB a save). Only the
# newest segment is held in memory; the others are read when a search needs them (articles
# without a publish time, windows longer than EXACT_WINDOW_MAX_DAYS), which a stream of dated
# articles never does.
SEGMENT_ROWS = 50_000
SCHEMA_VERSION = "4"
_UNREADABLE_EXTRA_LOGGED: set[str] = set()  # article ids already warned about (once per process)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS articles (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    url TEXT NOT NULL, canonical_url TEXT NOT NULL, source TEXT NOT NULL,
    title TEXT NOT NULL, content TEXT NOT NULL,
    publish_ts REAL,
    clean_title TEXT NOT NULL, clean_body TEXT NOT NULL,
    title_md5 TEXT NOT NULL, body_md5 TEXT NOT NULL, content_key TEXT NOT NULL,
    simhash INTEGER NOT NULL, bands TEXT NOT NULL,
    vector BLOB,
    cluster_id TEXT NOT NULL, is_canonical INTEGER NOT NULL,
    dup_of TEXT, dup_reason TEXT, score REAL,
    indexed_at TEXT NOT NULL, extra TEXT NOT NULL,
    token_count INTEGER
);
CREATE INDEX IF NOT EXISTS articles_content_key ON articles(content_key);
CREATE INDEX IF NOT EXISTS articles_canonical_url ON articles(canonical_url) WHERE canonical_url != '';
CREATE INDEX IF NOT EXISTS articles_cluster ON articles(cluster_id);
CREATE INDEX IF NOT EXISTS articles_publish_ts ON articles(publish_ts);
CREATE INDEX IF NOT EXISTS articles_title_md5 ON articles(title_md5);
CREATE TABLE IF NOT EXISTS cluster_changes (
    seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, into_id TEXT NOT NULL, source_id TEXT NOT NULL,
    article_id TEXT, reason TEXT NOT NULL, by_whom TEXT NOT NULL, at TEXT NOT NULL, lead_id TEXT
);
CREATE INDEX IF NOT EXISTS cluster_changes_into ON cluster_changes(into_id);
CREATE INDEX IF NOT EXISTS cluster_changes_source ON cluster_changes(source_id);
CREATE TABLE IF NOT EXISTS bands (
    band INTEGER NOT NULL, rid INTEGER NOT NULL, simhash INTEGER, publish_ts REAL,
    PRIMARY KEY (band, rid)
) WITHOUT ROWID;
"""
# Each band row carries its article's fingerprint and time, so a band lookup reads a few index
# pages, drops collisions (Hamming) and out-of-window rows there, and reads whole articles only for
# the survivors. At 1M articles the articles table no longer fits the page cache for random reads.
_MIGRATE_1_TO_2 = (
    "ALTER TABLE bands ADD COLUMN simhash INTEGER",
    "ALTER TABLE bands ADD COLUMN publish_ts REAL",
    ("UPDATE bands SET simhash = (SELECT simhash FROM articles a WHERE a.rid = bands.rid), "
     "publish_ts = (SELECT publish_ts FROM articles a WHERE a.rid = bands.rid)"),
)
# Schema 3 keeps each article's token count, the one text feature a stored candidate's comparison
# needs that its row did not hold (it was tokenised again for it). Rows written before have NULL
# and are tokenised when compared, as before.
_MIGRATE_2_TO_3 = ("ALTER TABLE articles ADD COLUMN token_count INTEGER",)
# Schema 4 records, on the split that takes a cluster's canonical out, the member that leads the
# rest (ClusterChange.lead), so that the rest's history goes back past the split.
_MIGRATE_3_TO_4 = ("ALTER TABLE cluster_changes ADD COLUMN lead_id TEXT",)
# Each older schema version: the version its upgrade makes, the statements, and what it brings.
_UPGRADES = {
    "1": ("2", _MIGRATE_1_TO_2, "fingerprints in band rows"),
    "2": ("3", _MIGRATE_2_TO_3, "token counts kept"),
    "3": ("4", _MIGRATE_3_TO_4, "new leads of split clusters logged"),
}
# Made once the schema is current (the column is missing from an older store until its upgrade).
_CURRENT_SCHEMA_INDEXES = "CREATE INDEX IF NOT EXISTS cluster_changes_lead ON cluster_changes(lead_id) WHERE lead_id IS NOT NULL"
_COLUMNS = (
    "rid, id, url, canonical_url, source, title, content, publish_ts, clean_title, clean_body, title_md5, "
    "body_md5, content_key, simhash, bands, vector, cluster_id, is_canonical, dup_of, dup_reason, score, "
    "indexed_at, extra, token_count"
)
_SQL_VARS = 900  # stay under SQLite's bound-parameter limit in IN (...) lists
# Windows up to this long are answered exactly from per-day vectors (day_vectors.py); longer or
# open-ended ones by the HNSW graph with the window applied after the search.
EXACT_WINDOW_MAX_DAYS = 62
# Articles read for band and kNN candidates and for their canonicals, kept (_RowCache): the same
# window neighbours are asked for article after article.
CANDIDATE_ROWS_CACHED = 4096


def _sqlite_errors(method):
    """A Store method's SQLite errors raised as store errors naming the store. Without it a read
    that fails (a disk I/O error, a database another process broke) reached the daemon's worker
    as an ordinary exception, which takes it for the articles' fault and buries them; a store
    error holds them in the queue and retries. An operational error (locked, I/O, unopenable)
    is a store that is unavailable for now; any other SQLite error a broken store."""

    def translated(self, exc: sqlite3.Error) -> StoreError:
        kind = StoreUnavailable if isinstance(exc, sqlite3.OperationalError) else StoreError
        return kind(f"{method.__name__} on the embedded store at {self.directory} failed: {exc}")

    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def generate(self, *args, **kwargs):
            try:
                yield from method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                raise translated(self, exc) from exc
        return generate

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise translated(self, exc) from exc
    return call


def _ts(when: datetime | None) -> float | None:
    return when.timestamp() if when is not None else None


def _exact_window(window: TimeWindow) -> bool:
    """Whether a window is answered exactly from the day vectors (else by the HNSW graph)."""
    start, end = window.start, window.end
    return start is not None and end is not None and (end - start).days < EXACT_WINDOW_MAX_DAYS


def _window_sql(window: TimeWindow) -> tuple[str, list]:
    """Rows without a publish time always pass (no time: no window)."""
    clauses, args = [], []
    if window.start is not None:
        clauses.append("(publish_ts IS NULL OR publish_ts >= ?)")
        args.append(window.start.timestamp())
    if window.end is not None:
        clauses.append("(publish_ts IS NULL OR publish_ts <= ?)")
        args.append(window.end.timestamp())
    return (" AND " + " AND ".join(clauses)) if clauses else "", args


def _add_to_graph(ann, vectors: np.ndarray, labels: np.ndarray) -> None:
    """Add rows to an HNSW graph, growing it first when they would not fit. One thread: rows
    added by several are linked in whichever order the threads reach them, so one input built
    another graph on every run (and the approximate neighbours of an undated article, hence its
    candidates, varied with the machine's load). The addition runs beside the decisions anyway."""
    needed = ann.get_current_count() + len(labels)
    capacity = ann.get_max_elements()
    if needed > capacity:
        ann.resize_index(max(needed, capacity * 2))
    ann.add_items(vectors, labels, num_threads=1)


def _segment_of(rid: int) -> int:
    return (rid - 1) // SEGMENT_ROWS


def _by_segment(rids: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Ascending row ids split by segment: (segment, positions in ``rids``) in order."""
    return runs((rids - 1) // SEGMENT_ROWS)


def _vector_rows(rows: Sequence[tuple[int, bytes]]) -> tuple[np.ndarray, np.ndarray]:
    """(row id, vector bytes) rows as row ids and a vector matrix."""
    return np.asarray([r[0] for r in rows], dtype=np.int64), np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])


def _save_graph(graph, path: Path) -> None:
    """Write a graph's file atomically: a reader sees the old file or the new one, never a part."""
    tmp = path.with_name(path.name + ".tmp")
    graph.save_index(str(tmp))
    os.replace(tmp, path)


def merged_hits(found: Sequence[tuple[int, int, np.ndarray, np.ndarray]], min_score: float) -> tuple[list[tuple[int, float]], bool]:
    """One answer from several graphs' answers: ``found`` holds, for each graph searched, how many
    hits were asked of it, how many vectors it has, and the labels and scores it gave (best
    first). Returns (row id, score) best first, and whether no graph holds more at or above
    ``min_score``. A graph asked for fewer hits than it could give may hold more scoring at most
    its last one; hits below the highest such score are left out, since a hit that graph did
    not give might rank above them (the caller asks again, for more)."""
    hits: list[tuple[int, float]] = []
    bound, exhausted = -np.inf, True
    for asked, count, labels, scores in found:
        above = scores >= min_score
        hits += [(int(rid), float(score)) for rid, score in zip(labels[above], scores[above])]
        if asked < count and above.all():  # it may hold more at or above the floor
            exhausted = False
            bound = max(bound, float(scores[-1]))
    hits.sort(key=lambda hit: (-hit[1], hit[0]))
    return [hit for hit in hits if hit[1] >= bound], exhausted


class _RowCache:
    """Whole rows read for candidates and canonicals, by row id and by article id, least recently
    used first out. Only merges and splits change a written row (rows are inserted once, never
    replaced), and they empty it; so does another connection's commit."""

    def __init__(self, size: int):
        self._size = size
        self._rows: OrderedDict[int, StoredArticle] = OrderedDict()
        self._rid_of: dict[str, int] = {}

    def by_rid(self, rids: Sequence[int]) -> dict[int, StoredArticle]:
        found = {rid: self._rows[rid] for rid in rids if rid in self._rows}
        for rid in found:
            self._rows.move_to_end(rid)
        return found

    def by_id(self, ids: Sequence[str]) -> dict[str, StoredArticle]:
        return {a.id: a for a in self.by_rid([self._rid_of[i] for i in ids if i in self._rid_of]).values()}

    def put(self, rows: Sequence[tuple[int, StoredArticle]]) -> None:
        for rid, article in rows:
            self._rows[rid] = article
            self._rid_of[article.id] = rid
        while len(self._rows) > self._size:
            del self._rid_of[self._rows.popitem(last=False)[1].id]

    def clear(self) -> None:
        self._rows.clear()
        self._rid_of.clear()

    def __len__(self) -> int:
        return len(self._rows)


class SqliteStore(StoreMixin):
    """Embedded store in ``directory``. One process writes at a time; reads are thread-safe."""

    def __init__(
        self,
        directory: str | os.PathLike,
        *,
        vector_dims: int | None,
        embedding_model: str,
        fingerprint_layout: str,
        bands: int,
        ef_search: int = 256,
        m: int = 16,
        ef_construction: int = 100,
        window_cache_vectors: int = 1_000_000,
    ):
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.directory / DB_FILE, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA busy_timeout=30000")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the embedded store at {self.directory}: {exc}") from exc
        self._lock = threading.RLock()
        self.vector_dims = vector_dims
        self._ef_search, self._m, self._ef_construction = ef_search, m, ef_construction
        try:
            self._settle_schema(
                {
                    "schema_version": SCHEMA_VERSION,
                    "vector_dims": str(vector_dims or 0),
                    "embedding_model": embedding_model,
                    "fingerprint_layout": fingerprint_layout,
                    "simhash_bands": str(bands),
                }
            )
        except StoreError:
            self._db.close()  # refused or failed: nothing of it stays open
            raise
        self._row_cache = _RowCache(CANDIDATE_ROWS_CACHED)
        self._ann = None  # the newest segment's graph, the one rows are added to
        self._segment = 0  # its number
        self._closed: dict[int, object] = {}  # older segments' graphs read for searches
        self._closed_count = 0  # vectors in the older segments
        self._ann_max_rid = 0  # the highest row given to the graph (the job adding it may still run)
        self._ann_held_rid = 0  # the highest row the graph surely holds (every addition up to it finished)
        self._ann_behind = False  # rows past _ann_max_rid are not in the graph: added from SQLite before a search
        self._ann_following = False  # writes feed the graph: a search needed it in this process
        self._ann_count = 0  # vectors the index holds, with those being added
        self._unsaved = 0
        # New rows' vectors are added to the HNSW graph on this thread while the next batch is
        # decided (the graph serves only windows longer than EXACT_WINDOW_MAX_DAYS; adding to it
        # costs more as it grows). Anything that reads or saves the graph waits for it first.
        self._ann_stage: ThreadPoolExecutor | None = None
        self._ann_job: Future | None = None
        self._days = DayVectors(self._load_day, vector_dims, window_cache_vectors) if vector_dims else None
        try:
            if vector_dims:
                self._open_ann()
            # PRAGMA data_version when the caches (rows, days, graph) were last known current
            self._data_version = self._db.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error as exc:  # reading the newest graph's bounds: a store error, nothing left open
            self._db.close()
            raise StoreUnavailable(f"cannot open the embedded store at {self.directory}: {exc}") from exc

    # ---- schema and ANN lifecycle -------------------------------------------------------------
    def _settle_schema(self, wanted: dict[str, str]) -> None:
        """Record the settings a new store is made with, refuse a store made with other ones, and
        upgrade an older schema, all in one write transaction that reads the meta table itself:
        two processes opening a store together can neither both upgrade it (ALTER TABLE fails the
        second time) nor both record its settings, and a store that is refused is left as it was."""
        with self._lock, self._transaction(f"opening the embedded store at {self.directory}"):
            stored = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
            if not stored:  # a new store: recorded, then settled like any other
                self._db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", wanted.items())
                stored = dict(wanted)
            for key, value in wanted.items():
                if key != "schema_version" and stored.get(key) != value:
                    self._refuse(key, stored.get(key), value)
            version = stored.get("schema_version")
            while version in _UPGRADES:
                version, statements, what = _UPGRADES[version]
                log.info("upgrading the embedded store at %s to schema %s (%s)", self.directory, version, what)
                for statement in statements:
                    self._db.execute(statement)
                self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
            if version != wanted["schema_version"]:
                self._refuse("schema_version", version, wanted["schema_version"])
            self._db.execute(_CURRENT_SCHEMA_INDEXES)

    def _refuse(self, key: str, stored: str | None, wanted: str) -> NoReturn:
        raise StoreSchemaError(
            f"the store at {self.directory} was made with {key}={stored!r} but the settings "
            f"give {wanted!r}; use another store directory or the settings it was made with"
        )

    def _open_ann(self) -> None:
        """Open the graph of the newest segment; older segments stay on disk until a search needs
        them. A meta file of another layout (one graph for the whole store, before segments), or a
        segment file that cannot be read, is rebuilt from SQLite: the newest segment now, an older
        one when first searched."""
        meta_path = self.directory / ANN_META_FILE
        meta: dict = {}
        if meta_path.exists():
            try:
                meta = json.loads(meta_path.read_text())
            except (OSError, ValueError) as exc:
                log.warning("vector index meta file %s unreadable (%s); rebuilding the newest segment from SQLite", meta_path, exc)
        index = None
        if meta.get("segment_rows") == SEGMENT_ROWS:
            try:
                self._segment = int(meta["segment"])
                index = self._graph(int(meta["capacity"]), self._segment_path(self._segment))
                self._ann_max_rid = self._ann_held_rid = int(meta["max_rid"])
                self._closed_count = int(meta["closed_vectors"])
            except (OSError, ValueError, KeyError, RuntimeError) as exc:
                log.warning("vector index segment unreadable (%s); rebuilding it from SQLite", exc)
                index = None
        if index is None:
            top = self._db.execute("SELECT COALESCE(MAX(rid), 0) FROM articles").fetchone()[0]
            self._segment = _segment_of(top) if top else 0
            first = self._segment * SEGMENT_ROWS  # the rows before it: older segments, built when searched
            self._ann_max_rid = self._ann_held_rid = first
            self._closed_count = self._db.execute(
                "SELECT COUNT(*) FROM articles WHERE rid <= ? AND vector IS NOT NULL", (first,)).fetchone()[0]
            index = self._graph()
        self._ann = index
        self._ann_count = self._closed_count + index.get_current_count()
        self._ann_behind = True  # rows written after its last save, if any: added when a search needs it

    def _graph(self, capacity: int = 1024, path: Path | None = None):
        """An empty graph for ``capacity`` vectors, or with ``path`` the graph saved there."""
        import hnswlib

        index = hnswlib.Index(space="ip", dim=self.vector_dims)
        if path is None:
            index.init_index(max_elements=capacity, M=self._m, ef_construction=self._ef_construction, allow_replace_deleted=False)
        else:
            index.load_index(str(path), max_elements=max(capacity, 1024))
        index.set_ef(self._ef_search)
        return index

    def _segment_path(self, segment: int) -> Path:
        return self.directory / SEGMENT_FILE.format(segment)

    def _catch_up_ann(self) -> None:
        """Add every stored vector the graphs do not hold yet (rows past ``_ann_max_rid``), on
        this thread, each to its segment."""
        added = 0
        # The highest row first: a row another connection commits while this runs lies above it
        # and is left for the next catch-up (read after the loop, it would be skipped for good).
        top = self._db.execute("SELECT COALESCE(MAX(rid), 0) FROM articles").fetchone()[0]
        while True:
            rows = self._db.execute(
                "SELECT rid, vector FROM articles WHERE rid > ? AND rid <= ? AND vector IS NOT NULL ORDER BY rid LIMIT 10000",
                (self._ann_max_rid, top),
            ).fetchall()
            if not rows:
                break
            rids, vectors = _vector_rows(rows)
            for segment, at in _by_segment(rids):
                if segment > self._segment:
                    self._rotate(segment)
                _add_to_graph(self._ann, vectors[at], rids[at])
                self._ann_max_rid = self._ann_held_rid = int(rids[at][-1])
                self._ann_count = self._closed_count + self._ann.get_current_count()
                self._unsaved += len(at)
            added += len(rows)
        self._ann_max_rid = self._ann_held_rid = max(self._ann_max_rid, top)
        self._ann_behind = False
        if added:
            log.info("vector index caught up with %d stored vectors", added)
            self._save_ann()

    def _rotate(self, segment: int) -> None:
        """Close the open segment (saved whole, then dropped from memory: a search that needs it
        reads it back) and open an empty one for ``segment``. Every addition to it has finished."""
        self._write_graph()
        self._closed_count += self._ann.get_current_count()
        self._ann = self._graph()
        self._segment = segment
        self._ann_max_rid = self._ann_held_rid = max(self._ann_max_rid, segment * SEGMENT_ROWS)

    def _ann_add(self, rids: list[int], vectors: np.ndarray) -> None:
        """Start adding rows to the graph (one addition at a time, in order); a batch that reaches
        the next segment's rows closes the open one first."""
        self._ann_wait()
        # Rows a recovery in that wait already read back from SQLite are not given twice.
        fresh = np.asarray(rids, dtype=np.int64) > self._ann_max_rid
        if not fresh.any():
            return
        labels, vectors = np.asarray(rids, dtype=np.int64)[fresh], vectors[fresh]
        for segment, at in _by_segment(labels):
            if segment > self._segment:
                self._ann_wait()
                if segment > self._segment:  # (unless a recovery in that wait moved on)
                    self._rotate(segment)
                at = at[labels[at] > self._ann_max_rid]
                if not len(at):
                    continue
            if self._ann_stage is None:
                self._ann_stage = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-index")
            self._ann_job = self._ann_stage.submit(_add_to_graph, self._ann, vectors[at], labels[at])
            # The previous addition finished (waited for above): the graph surely holds its rows.
            self._ann_held_rid = self._ann_max_rid
            self._ann_max_rid = max(self._ann_max_rid, int(labels[at].max()))
            self._ann_count += len(at)
            self._unsaved += len(at)

    def _ann_wait(self) -> None:
        """Until the graph holds every row given to it. Rows whose addition failed are committed
        in SQLite: they are added again from there, and only if that fails too is the failure
        raised, as a StoreError (the daemon retries those), with the graph's marks left where it
        surely holds every row, so that a later call tries again and no row is skipped for good."""
        job, self._ann_job = self._ann_job, None
        if job is not None:
            try:
                job.result()
            except Exception as exc:  # noqa: BLE001 - whatever the graph raised, the rows are in SQLite
                # The graph holds every row up to _ann_held_rid, and none, some or all of the
                # failed addition's rows (adding a row it holds again only replaces its vector).
                self._ann_max_rid = self._ann_held_rid
                self._ann_count = self._closed_count + self._ann.get_current_count()
                self._ann_behind = True
                log.warning("adding vectors to the graph failed (%s: %s); adding the rows after row %d again from SQLite",
                            type(exc).__name__, exc, self._ann_held_rid)
        if self._ann_behind and self._ann_following:
            try:
                self._catch_up_ann()
            except Exception as exc:
                raise StoreError(f"adding stored vectors to the vector index at {self.directory} failed: {exc}") from exc

    def _load_day(self, day: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if day is UNDATED:
            when, args = "publish_ts IS NULL", ()
        else:
            when, args = "publish_ts >= ? AND publish_ts < ?", (day * DAY_SECONDS, (day + 1) * DAY_SECONDS)
        rows = self._db.execute(f"SELECT rid, publish_ts, vector FROM articles WHERE {when} AND vector IS NOT NULL", args).fetchall()
        return stack(rows, self.vector_dims)

    def _save_ann(self) -> None:
        if self._ann is None:
            return
        self._ann_wait()  # the meta file names the rows the saved graph holds
        self._write_graph()

    def _write_graph(self) -> None:
        """Save the newest segment's graph and the meta file naming it; every addition to it has
        finished (a rotation inside a catch-up must not wait: the wait would start the catch-up again)."""
        # The meta file names the rows the graph holds, so it must never be newer than the graph.
        _save_graph(self._ann, self._segment_path(self._segment))
        meta_path = self.directory / ANN_META_FILE
        tmp_meta = meta_path.with_name(ANN_META_FILE + ".tmp")
        tmp_meta.write_text(json.dumps({
            "segment_rows": SEGMENT_ROWS, "segment": self._segment, "max_rid": self._ann_max_rid,
            "capacity": self._ann.get_max_elements(), "closed_vectors": self._closed_count,
        }))
        os.replace(tmp_meta, meta_path)
        self._unsaved = 0
        (self.directory / LEGACY_ANN_FILE).unlink(missing_ok=True)  # one graph for all, before segments

    # ---- row mapping -----------------------------------------------------------------------------
    @staticmethod
    def _extra_of(article_id: str, raw: str) -> dict:
        """The stored extra fields. Text that cannot be parsed back (written before the edge bounded
        them: nested deeper than the parser's recursion allows, or not JSON) is kept verbatim under
        UNREADABLE_EXTRA_KEY, so one article's extra fields can never break reading it or its
        neighbours (every candidate lookup reads whole rows)."""
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            if article_id not in _UNREADABLE_EXTRA_LOGGED:
                _UNREADABLE_EXTRA_LOGGED.add(article_id)
                log.warning("article %s: stored extra fields cannot be parsed (%s); kept as text under %r",
                            article_id, type(exc).__name__, UNREADABLE_EXTRA_KEY)
            return {UNREADABLE_EXTRA_KEY: raw}
        return value if isinstance(value, dict) else {UNREADABLE_EXTRA_KEY: raw}

    def _row_to_article(self, row) -> StoredArticle:
        (rid, aid, url, curl, source, title, content, pts, ctitle, cbody, tmd5, bmd5, ckey, sh, bands, vec,
         cid, canon, dup_of, reason, score, indexed_at, extra, token_count) = row
        return StoredArticle(
            id=aid, url=url, canonical_url=curl, source=source, title=title, content=content,
            publish_time=datetime.fromtimestamp(pts, tz=timezone.utc) if pts is not None else None,
            clean_title=ctitle, clean_body=cbody, title_md5=tmd5, body_md5=bmd5, content_key=ckey,
            simhash=from_signed(sh), bands=tuple(int(b) for b in bands.split(",") if b),
            vector=np.frombuffer(vec, dtype=np.float32) if vec is not None else None,
            cluster_id=cid, is_canonical=bool(canon), dup_of=dup_of, dup_reason=reason, score=score,
            indexed_at=datetime.fromisoformat(indexed_at), extra=self._extra_of(aid, extra), token_count=token_count,
        )

    def _select_pairs(self, where: str, args: Sequence) -> list[tuple[int, StoredArticle]]:
        """(row id, article) for each matching row."""
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM articles WHERE {where}", list(args)).fetchall()
        return [(r[0], self._row_to_article(r)) for r in rows]

    def _select_in(self, column: str, values: Sequence) -> list[tuple[int, StoredArticle]]:
        out: list[tuple[int, StoredArticle]] = []
        values = list(dict.fromkeys(values))
        for i in range(0, len(values), _SQL_VARS):
            chunk = values[i : i + _SQL_VARS]
            out.extend(self._select_pairs(f"{column} IN ({','.join('?' * len(chunk))})", chunk))
        return out

    def _by_rid(self, rids: Sequence[int]) -> dict[int, StoredArticle]:
        """Articles by row id, from the row cache where it has them."""
        return self._read_through("rid", rids, self._row_cache.by_rid, lambda rid, _: rid)

    def _read_through(self, column: str, keys: Sequence, cached, key_of) -> dict:
        """Rows by ``column``: those ``cached`` has, the others read from the table and cached;
        keyed by ``key_of(rid, article)``."""
        with self._lock:
            self._follow_other_writers()
            found = cached(keys)
            missing = [k for k in keys if k not in found]
            if missing:
                read = self._select_in(column, missing)
                self._row_cache.put(read)
                found.update((key_of(rid, a), a) for rid, a in read)
        return found

    def _follow_other_writers(self) -> None:
        """Another connection committed since this one last looked (SQLite's data_version moves only
        for other connections' commits): a person's correction from `newsdedup ui`, or an ingest
        that held the writer lease while this daemon stood by. The cached rows may be stale and the
        rows written there are in no cache here: the candidate rows and the loaded days are dropped
        (read again when asked), and the graph adds the rows past the last one it was given before
        this connection adds its own (else a save would record them as held). The caller holds the lock."""
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version == self._data_version:
            return
        self._data_version = version
        self._row_cache.clear()
        if self._days is not None:
            self._days.clear()
        if self._ann is not None:
            self._ann_behind = True

    # ---- the Store protocol ------------------------------------------------------------------------
    @_sqlite_errors
    def get_many(self, ids: Sequence[str]) -> dict[str, StoredArticle]:
        # cached too: a batch's candidates' canonicals are asked for batch after batch
        return self._read_through("id", ids, self._row_cache.by_id, lambda _, a: a.id)

    @_sqlite_errors
    def find_by_canonical_url(self, urls: Sequence[str]) -> dict[str, StoredArticle]:
        found: dict[str, StoredArticle] = {}
        for _, a in sorted(self._select_in("canonical_url", [u for u in urls if u]), key=lambda p: p[0]):
            found.setdefault(a.canonical_url, a)
        return found

    @_sqlite_errors
    def find_exact(self, keys: Sequence[str]) -> dict[str, list[StoredArticle]]:
        found: dict[str, list[StoredArticle]] = {}
        for _, a in sorted(self._select_in("content_key", keys), key=lambda p: p[0]):
            found.setdefault(a.content_key, []).append(a)
        return found

    @_sqlite_errors
    def find_band_candidates(self, queries: Sequence[BandQuery]) -> list[list[StoredArticle]]:
        results = []
        for q in queries:
            if not q.bands:
                results.append([])
                continue
            window_sql, window_args = _window_sql(q.window)
            placeholders = ",".join("?" * len(q.bands))
            with self._lock:
                keys = self._db.execute(
                    f"SELECT DISTINCT rid, simhash FROM bands WHERE band IN ({placeholders}){window_sql}",
                    [*q.bands, *window_args],
                ).fetchall()
            admitted = [rid for rid, simhash in keys if q.admits(from_signed(simhash))]
            results.append(self._in_row_order(admitted, q.exclude_id))
        return results

    @_sqlite_errors
    def find_same_title(self, queries: Sequence[TitleQuery]) -> list[list[StoredArticle]]:
        results = []
        for q in queries:
            window_sql, window_args = _window_sql(q.window)
            with self._lock:
                rids = [rid for (rid,) in self._db.execute(
                    f"SELECT rid FROM articles WHERE title_md5 = ?{window_sql} ORDER BY rid DESC LIMIT ?",
                    [q.title_md5, *window_args, q.limit + 1],
                ).fetchall()]
            results.append(self._in_row_order(rids, q.exclude_id)[-q.limit:] if q.limit > 0 else [])
        return results

    def _in_row_order(self, rids: list[int], exclude_id: str | None) -> list[StoredArticle]:
        """The articles of ``rids`` in write order, but ``exclude_id``."""
        return [a for _, a in sorted(self._by_rid(rids).items()) if a.id != exclude_id] if rids else []

    @_sqlite_errors
    def knn(self, queries: Sequence[KnnQuery]) -> list[list[tuple[StoredArticle, float]]]:
        results: list[list[tuple[StoredArticle, float]]] = [[] for _ in queries]
        with self._lock:
            self._follow_other_writers()  # (the graph, should a question need it, catches up in _knn_ann)
            if self._ann is None:
                return results
            # Windows short enough are answered exactly from the day vectors, the batch's together
            # (each day scanned once for every query that reaches it), their rows read at once.
            windowed = [i for i, q in enumerate(queries) if _exact_window(q.window)]
            hits = self._days.search_many([
                WindowSearch(queries[i].vector, queries[i].k + (queries[i].exclude_id is not None), queries[i].min_score,
                             queries[i].window.start.timestamp(), queries[i].window.end.timestamp())
                for i in windowed
            ])
            rows = self._by_rid([rid for found in hits for rid, _ in found])
            for i, found in zip(windowed, hits):
                results[i] = self._rows_for_hits(found, queries[i], rows)
            for i, q in enumerate(queries):
                if not _exact_window(q.window):
                    results[i] = self._knn_ann(q)
        for result, q in zip(results, queries):
            result.sort(key=lambda pair: -pair[1])
            del result[q.k:]
        return results

    def _rows_for_hits(self, hits: list[tuple[int, float]], q: KnnQuery,
                       rows: dict[int, StoredArticle] | None = None) -> list[tuple[StoredArticle, float]]:
        by_rid = rows if rows is not None else (self._by_rid([rid for rid, _ in hits]) if hits else {})
        return [
            (by_rid[rid], score) for rid, score in hits
            if rid in by_rid and by_rid[rid].id != q.exclude_id and q.window.contains(by_rid[rid].publish_time)
        ]

    def _knn_ann(self, q: KnnQuery) -> list[tuple[StoredArticle, float]]:
        self._ann_following = True
        self._ann_wait()
        if self._ann_count == 0:
            return []
        graphs = [self._closed_segment(k) for k in range(self._segment)] + [self._ann]
        counts = [g.get_current_count() for g in graphs]
        vector = np.asarray(q.vector, dtype=np.float32).reshape(1, -1)
        fetch = min(max(counts), max(q.k * 4, 32))
        while True:
            found = []
            for graph, count in zip(graphs, counts):
                take = min(count, fetch)
                if take:
                    graph.set_ef(max(self._ef_search, take))
                    labels, distances = graph.knn_query(vector, k=take)
                    graph.set_ef(self._ef_search)
                    found.append((take, count, labels[0], 1.0 - distances[0]))  # hnswlib 'ip' distance is 1 - dot
            hits, exhausted = merged_hits(found, q.min_score)
            # Best first: read whole rows a few more than k at a time, not every hit at once.
            result = []
            step = q.k + 8
            for at in range(0, len(hits), step):
                result += self._rows_for_hits(hits[at : at + step], q)
                if len(result) >= q.k:
                    break
            # Filtering happens after the search: widen it while the floor was not yet reached
            # and the window or exclusion may have removed neighbours we still need.
            if len(result) >= q.k or exhausted:
                return result
            fetch = min(max(counts), fetch * 4)

    def _closed_segment(self, segment: int):
        """The graph of an older segment: read from its file when first searched, or built from
        SQLite when that is missing, unreadable or does not hold the segment's rows (then saved)."""
        graph = self._closed.get(segment)
        if graph is not None:
            return graph
        first, last = segment * SEGMENT_ROWS + 1, (segment + 1) * SEGMENT_ROWS
        stored = self._db.execute(
            "SELECT COUNT(*) FROM articles WHERE rid BETWEEN ? AND ? AND vector IS NOT NULL", (first, last)).fetchone()[0]
        path = self._segment_path(segment)
        try:
            graph = self._graph(stored, path)
            if graph.get_current_count() != stored:
                raise ValueError(f"it holds {graph.get_current_count()} vectors, SQLite {stored}")
        except (OSError, ValueError, RuntimeError) as exc:
            if path.exists():
                log.warning("vector index segment %s unreadable (%s); rebuilding it from SQLite", path, exc)
            else:
                log.info("building vector index segment %d (rows %d-%d) from SQLite", segment, first, last)
            graph = self._graph(max(stored, 1))
            rows = self._db.execute(
                "SELECT rid, vector FROM articles WHERE rid BETWEEN ? AND ? AND vector IS NOT NULL", (first, last)).fetchall()
            if rows:
                rids, vectors = _vector_rows(rows)
                _add_to_graph(graph, vectors, rids)
            _save_graph(graph, path)
        self._closed[segment] = graph
        return graph

    @_sqlite_errors
    def write(self, articles: Sequence[StoredArticle], merges: Sequence[ClusterChange] = ()) -> None:
        if not articles and not merges:
            return
        now = datetime.now(timezone.utc).isoformat()
        new_rows: list[tuple[int, float | None, np.ndarray]] = []
        with self._lock:
            self._follow_other_writers()
            if self._ann is not None and (self._ann_behind or (self._ann_job is not None and self._ann_job.done())):
                # A graph addition already known to have failed is redone (or raised) before this
                # write commits anything. One still running is waited for after the commit (the
                # commit overlaps it); should it fail and its redoing fail too, the StoreError then
                # follows committed rows, which the day cache holds and the graph is marked behind on.
                self._ann_wait()
            with self._transaction(f"writing {len(articles)} articles"):
                for a in articles:
                    vec = None
                    if a.vector is not None:
                        if self.vector_dims and a.vector.shape[-1] != self.vector_dims:
                            raise StoreSchemaError(f"article {a.id}: vector has {a.vector.shape[-1]} dims, store has {self.vector_dims}")
                        vec = np.asarray(a.vector, dtype=np.float32).tobytes()
                    cur = self._db.execute(
                        "INSERT OR IGNORE INTO articles (id, url, canonical_url, source, title, content, publish_ts, "
                        "clean_title, clean_body, title_md5, body_md5, content_key, simhash, bands, vector, cluster_id, "
                        "is_canonical, dup_of, dup_reason, score, indexed_at, extra, token_count) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (a.id, a.url, a.canonical_url, a.source, a.title, a.content, _ts(a.publish_time),
                         a.clean_title, a.clean_body, a.title_md5, a.body_md5, a.content_key, to_signed(a.simhash),
                         ",".join(map(str, a.bands)), vec, a.cluster_id, int(a.is_canonical), a.dup_of, a.dup_reason,
                         a.score, (a.indexed_at.isoformat() if a.indexed_at else now),
                         json.dumps(a.extra, ensure_ascii=False, default=str), a.token_count),
                    )
                    if cur.rowcount:
                        rid = cur.lastrowid
                        self._db.executemany(
                            "INSERT OR IGNORE INTO bands(band, rid, simhash, publish_ts) VALUES (?, ?, ?, ?)",
                            [(b, rid, to_signed(a.simhash), _ts(a.publish_time)) for b in a.bands],
                        )
                        if vec is not None:
                            new_rows.append((rid, _ts(a.publish_time), a.vector))
                for change in merges:  # one transaction with the articles whose decisions made them
                    self._merge(change)
            # Another connection may have committed after the look above and before this
            # transaction began: its rows lie below these, and the graph must not skip them.
            self._follow_other_writers()
            if merges:
                self._row_cache.clear()  # rows of merged clusters changed
            if new_rows and self._ann is not None:
                # The day cache first: it cannot fail, and the rows are committed whatever the graph does.
                for rid, ts, vector in new_rows:
                    self._days.add(rid, ts, np.asarray(vector, dtype=np.float32))
                if self._ann_following:
                    self._ann_add([r for r, _, _ in new_rows], np.vstack([v for _, _, v in new_rows]).astype(np.float32))
                    if self._unsaved >= ANN_SAVE_EVERY:
                        self._save_ann()
                else:
                    self._ann_behind = True  # nothing searched the graph yet: it catches up when something does

    @contextmanager
    def _transaction(self, what: str) -> Iterator[None]:
        """One write transaction (the caller holds the lock): committed when the block ends,
        rolled back on any error, SQLite errors raised as StoreError naming ``what``."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:  # another process held the write lock past busy_timeout
            raise StoreUnavailable(f"{what}: the database stayed locked by another writer ({exc})") from exc
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"{what} failed: {exc}") from exc
            raise

    # ---- merges and splits -----------------------------------------------------------------------
    def _current_cluster(self, article_id: str) -> str | None:
        row = self._db.execute("SELECT cluster_id FROM articles WHERE id = ?", (article_id,)).fetchone()
        return row[0] if row else None

    def _log(self, change: ClusterChange, into: str, source: str, lead: str | None = None) -> None:
        at = (change.at or datetime.now(timezone.utc)).isoformat()
        self._db.execute(
            "INSERT INTO cluster_changes (kind, into_id, source_id, article_id, reason, by_whom, at, lead_id) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (change.kind, into, source, change.article_id, change.reason, change.by, at, lead),
        )

    def _merge(self, change: ClusterChange) -> None:
        """Inside a transaction. Both ends are read through their canonical articles' current
        clusters, so a merge into a cluster that was itself merged away lands where it went."""
        into, source = self._current_cluster(change.into), self._current_cluster(change.source)
        if into is None or source is None or into == source:
            return
        self._db.execute(
            "UPDATE articles SET dup_of = ?, dup_reason = ?, score = NULL WHERE id = ? AND dup_of IS NULL",
            (change.article_id or into, MERGED, source),
        )
        self._db.execute("UPDATE articles SET cluster_id = ?, is_canonical = 0 WHERE cluster_id = ?", (into, source))
        self._log(change, into, source)

    @_sqlite_errors
    def split_article(self, change: ClusterChange) -> str | None:
        aid = moved_article(change)
        with self._lock:
            with self._transaction(f"splitting {aid} out of its cluster"):
                source = self._current_cluster(aid)
                if source is None:
                    raise KeyError(aid)
                into = aid if change.into == aid else self._current_cluster(change.into)
                if into is None:
                    raise KeyError(change.into)
                if into == source and change.into != aid:
                    return None  # into the cluster it is in: nothing to move (nor to log, as a label)
                lead = "UPDATE articles SET cluster_id = ?, is_canonical = 1, dup_of = NULL, dup_reason = NULL, score = NULL WHERE id = ?"
                new_canonical = None
                if source == aid:  # the canonical leaves: the oldest other member leads the rest
                    rows = self._db.execute("SELECT id, publish_ts FROM articles WHERE cluster_id = ?", (aid,))
                    new_canonical = oldest_other_member(
                        ((member, datetime.fromtimestamp(ts, tz=timezone.utc) if ts is not None else None) for member, ts in rows), aid)
                    if new_canonical is not None:
                        self._db.execute("UPDATE articles SET cluster_id = ? WHERE cluster_id = ? AND id != ?", (new_canonical, aid, aid))
                        self._db.execute(lead, (new_canonical, new_canonical))
                if into == aid:
                    self._db.execute(lead, (aid, aid))
                elif into != source or source == aid:
                    self._db.execute(
                        "UPDATE articles SET cluster_id = ?, is_canonical = 0, dup_of = ?, dup_reason = ?, score = NULL WHERE id = ?",
                        (into, into, MANUAL, aid),
                    )
                self._log(change, into, source, lead=new_canonical)
            self._row_cache.clear()
        return new_canonical

    @_sqlite_errors
    def cluster_changes(self, cluster_id: str | None = None, *, corrections_only: bool = False) -> list[ClusterChange]:
        query = "SELECT kind, into_id, source_id, article_id, reason, by_whom, at, lead_id FROM cluster_changes WHERE 1"
        args: list = []
        if cluster_id is not None:
            query += " AND (into_id = ? OR source_id = ? OR lead_id = ?)"
            args = [cluster_id, cluster_id, cluster_id]
        if corrections_only:
            query += " AND by_whom != ?"
            args.append(INDEXER)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY seq", args).fetchall()
        return [ClusterChange(kind, into, source, aid, reason, by, datetime.fromisoformat(at), lead)
                for kind, into, source, aid, reason, by, at, lead in rows]

    @_sqlite_errors
    def cluster_members(self, cluster_id: str) -> list[StoredArticle]:
        return [a for _, a in self._select_pairs("cluster_id = ? ORDER BY rid", [cluster_id])]

    @_sqlite_errors
    def top_clusters(self, n: int) -> list[tuple[str, int]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT cluster_id, COUNT(*) AS c FROM articles GROUP BY cluster_id ORDER BY c DESC, MIN(rid) LIMIT ?", (n,)
            ).fetchall()
        return [(r[0], r[1]) for r in rows]

    @_sqlite_errors
    def iter_articles(self) -> Iterator[StoredArticle]:
        last = 0
        while True:
            batch = self._select_pairs("rid > ? ORDER BY rid LIMIT 1000", [last])
            if not batch:
                return
            last = batch[-1][0]
            yield from (a for _, a in batch)

    @_sqlite_errors
    def stats(self) -> StoreStats:
        with self._lock:
            articles, clusters, dups = self._db.execute(
                "SELECT COUNT(*), COUNT(DISTINCT cluster_id), SUM(CASE WHEN is_canonical THEN 0 ELSE 1 END) FROM articles"
            ).fetchone()
            reasons = dict(self._db.execute(
                "SELECT dup_reason, COUNT(*) FROM articles WHERE dup_reason IS NOT NULL GROUP BY dup_reason"
            ).fetchall())
        return StoreStats(articles=articles, clusters=clusters, duplicates=dups or 0, by_reason=reasons)

    def close(self) -> None:
        with self._lock:
            try:
                if self._ann is not None and self._unsaved:
                    self._save_ann()
            finally:
                if self._ann_stage is not None:
                    self._ann_stage.shutdown(wait=True)
                self._ann = None
                self._db.close()
