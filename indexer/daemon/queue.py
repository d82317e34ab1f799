"""The durable ingest queue: one SQLite file in WAL mode with ``synchronous=FULL``.

* ``put_many`` commits every item of a request in one transaction before it returns, so an
  article the API answered "accepted" for survives ``kill -9`` and a power cut.
* The worker ``take``s the oldest items (in memory it remembers which it has in hand, the rows
  stay) and ``ack``s them only after their batch was written to the store. After a crash every
  unacknowledged row is simply taken again; the indexer is idempotent by article id, so an article
  written just before the crash comes back ALREADY_INDEXED and is indexed exactly once.
* The queue is bounded: ``put_many`` raises ``QueueFull`` rather than grow past ``max_items``.
* What a producer parsed a record into (the API's validated ``Article``) may come with it
  (``put_many(parsed=...)``): kept in memory only, within ``PARSED_BUDGET_BYTES``, and handed to
  the consumer of this process in place of the record, so the worker does not decode and
  validate it a second time. After a restart, past the budget, and for items another process
  queued (dead letters requeued), the consumer gets the stored record and parses it itself.
* Items that fail for reasons other than the store (a bug, a model error) move to ``dead`` after
  being retried one by one, so one poison article cannot block the queue. ``requeue`` moves them
  back (``newsdedup dead-letters requeue``), also while a daemon runs on the queue.
* An article that kills the process (out of memory, a crash in native code) raises nothing to
  catch. So ``take`` counts, durably, each time an item is handed out; ``ack``, ``bury``,
  ``release`` and ``close`` settle it, and ``waiting`` holds it back while the worker only waits
  (for the store), ``working`` again after. An item still counted when the queue opens was being
  worked on when a process died: a *suspect*. Suspects are handed out alone, with nothing else in
  hand, so the next such death can only be theirs; one counted ``MAX_ATTEMPTS`` times moves to
  ``dead``.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

log = logging.getLogger(__name__)

QUEUE_FILE = "queue.sqlite3"
# Records (as queued JSON) whose parsed form waits in memory for the worker: about what the API
# holds in bodies at once (daemon.max_inflight_body_bytes' default), so a deep queue costs no more.
PARSED_BUDGET_BYTES = 64 * 1024 * 1024
# Process stops (crash, kill, power cut) an item may be in hand for before it is set aside. Three:
# one stop is as likely an operator's kill -9 as the article, the third alone with it is not.
MAX_ATTEMPTS = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    article_id TEXT NOT NULL,
    record TEXT NOT NULL,
    origin TEXT NOT NULL,
    enqueued_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS items_article ON items(article_id);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dead (
    seq INTEGER PRIMARY KEY,
    article_id TEXT NOT NULL,
    record TEXT NOT NULL,
    origin TEXT NOT NULL,
    enqueued_at REAL NOT NULL,
    failed_at REAL NOT NULL,
    error TEXT NOT NULL
);
"""


def _chunks(seqs: Sequence[int], size: int = 500):
    """``seqs`` in chunks small enough for one IN (...) list, each with its placeholders."""
    for start in range(0, len(seqs), size):
        chunk = list(seqs[start : start + size])
        yield chunk, ",".join("?" * len(chunk))


class QueueFull(Exception):
    """The queue holds ``max_items``; the caller should come back later."""


@dataclass(frozen=True)
class DeadLetter:
    seq: int
    article_id: str
    record: str  # as queued (JSON text): it may be the very thing that cannot be parsed
    origin: str
    enqueued_at: float
    failed_at: float
    error: str


@dataclass(frozen=True)
class QueueItem:
    seq: int
    article_id: str
    record: Any  # the queued record (decoded JSON), or what this process's producer parsed it into
    origin: str
    enqueued_at: float


class DurableQueue:
    """Thread-safe; one consumer (the worker), any number of producers."""

    def __init__(self, directory: str | os.PathLike, max_items: int, owner: str | None = None,
                 parsed_budget_bytes: int = PARSED_BUDGET_BYTES):
        """``owner``: the store this queue feeds (``queue_home.store_identity``); recorded on
        first use, and a queue recorded for another store is refused (QueueOfAnotherStore)."""
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / QUEUE_FILE
        self.max_items = max_items
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.executescript(_SCHEMA)
        if "attempts" not in {row[1] for row in self._db.execute("PRAGMA table_info(items)")}:
            self._db.execute("ALTER TABLE items ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0")  # a queue of 0.x
        if owner is not None:
            self._claim(owner)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._in_hand: set[int] = set()
        self._counted: set[int] = set()  # items in hand whose count stands (not waiting)
        self._suspect_in_hand = False
        self._parsed: dict[int, tuple[Any, int]] = {}  # seq -> (parsed record, its queued JSON size)
        self._parsed_bytes = 0
        self._parsed_budget = parsed_budget_bytes
        self._depth = self._db.execute("SELECT COUNT(*) FROM items").fetchone()[0]
        self._data_version = self._db.execute("PRAGMA data_version").fetchone()[0]
        self._closed = False
        if self._depth:
            log.info("queue %s holds %d unfinished items from an earlier run; they are processed again", self.path, self._depth)
            suspects = self._db.execute("SELECT COUNT(*) FROM items WHERE attempts > 0").fetchone()[0]
            if suspects:
                log.warning("%d of them were in hand when a process stopped without finishing them; "
                            "they are taken one at a time", suspects)

    def _claim(self, owner: str) -> None:
        from .queue_home import QueueOfAnotherStore

        row = self._db.execute("SELECT value FROM meta WHERE key = 'store'").fetchone()
        if row is None:
            self._db.execute("INSERT INTO meta (key, value) VALUES ('store', ?)", (owner,))
        elif row[0] != owner:
            self._db.close()
            raise QueueOfAnotherStore(f"the queue in {self.directory} belongs to store {row[0]}, not {owner}: "
                                      "its accepted articles must go to that store (set daemon.queue_dir to another directory)")

    # ---- producers -----------------------------------------------------------------------------
    def put_many(self, items: Sequence[tuple[str, dict[str, Any]]], origin: str,
                 parsed: Sequence[Any] | None = None) -> list[int]:
        """Persist ``(article_id, record)`` pairs atomically; all or none. Raises QueueFull.
        ``parsed``: each record's parsed form, handed to this process's consumer instead of the
        record while the in-memory budget allows (the stored record stays the durable copy)."""
        if parsed is not None and len(parsed) != len(items):
            raise ValueError(f"{len(items)} records but {len(parsed)} parsed forms")
        if not items:
            return []
        now = time.time()
        rows = [(aid, json.dumps(rec, ensure_ascii=False, separators=(",", ":")), origin, now) for aid, rec in items]
        with self._cond:
            if self._closed:
                raise QueueFull("queue closed")
            self._sync_depth()
            if self._depth + len(rows) > self.max_items:
                raise QueueFull(f"queue holds {self._depth} of {self.max_items} items")
            seqs = []
            with self._transaction():  # on disk when put_many returns
                for row in rows:
                    seqs.append(self._db.execute(
                        "INSERT INTO items (article_id, record, origin, enqueued_at) VALUES (?, ?, ?, ?)", row).lastrowid)
            self._depth += len(rows)
            if parsed is not None:
                self._keep_parsed(seqs, [len(row[1]) for row in rows], parsed)
            self._cond.notify_all()
            return seqs

    def _keep_parsed(self, seqs: Sequence[int], sizes: Sequence[int], parsed: Sequence[Any]) -> None:
        """Keep parsed forms in order until the budget is spent: the consumer takes the oldest
        items first, so the later ones are those it would reach last. Lock held."""
        for seq, size, value in zip(seqs, sizes, parsed):
            if self._parsed_bytes + size > self._parsed_budget:
                return
            self._parsed[seq] = (value, size)
            self._parsed_bytes += size

    def _forget_parsed(self, seqs: Sequence[int]) -> None:
        for seq in seqs:
            kept = self._parsed.pop(seq, None)
            if kept is not None:
                self._parsed_bytes -= kept[1]

    # ---- the consumer ----------------------------------------------------------------------------
    def take(self, n: int, wait: float, stop: threading.Event | None = None, fill: bool = True) -> list[QueueItem]:
        """Up to ``n`` of the oldest items not in hand. Blocks until ``n`` are available or the
        oldest available one has waited ``wait`` seconds (``fill=False``: return at once). Nothing
        while a suspect is in hand; a suspect alone, and only when nothing else is in hand."""
        with self._cond:
            if self._suspect_in_hand:
                return []
            while True:
                self._sync_depth()
                available = self._depth - len(self._in_hand)
                if available >= n or (available > 0 and not fill):
                    break
                if available > 0:
                    oldest = self._oldest_free()
                    remaining = (oldest + wait - time.time()) if oldest is not None else 0
                    if remaining <= 0:
                        break
                else:
                    remaining = 0.2
                if stop is not None and stop.is_set():
                    break
                if not fill:
                    return []
                self._cond.wait(min(remaining, 0.2))
            rows = self._db.execute(
                "SELECT seq, article_id, record, origin, enqueued_at, attempts FROM items ORDER BY seq LIMIT ?",
                (n + len(self._in_hand),),
            ).fetchall()
            out: list[QueueItem] = []
            took_suspect = False
            for seq, aid, rec, origin, at, attempts in rows:
                if seq in self._in_hand:
                    continue
                if attempts >= MAX_ATTEMPTS:
                    log.error("queued article %s was in hand in %d processes that stopped without finishing it; "
                              "moved to the dead-letter table", aid, attempts)
                    self._bury_locked(seq, f"in hand when the process stopped {attempts} times (a crash, "
                                           "an out-of-memory kill or kill -9): set aside so that it cannot stop the next")
                    continue
                if attempts and (out or self._in_hand):
                    break  # a suspect waits until it can be alone in hand
                kept = self._parsed.get(seq)  # kept until acknowledged: a released item keeps it too
                if kept is not None:
                    record = kept[0]
                else:
                    try:
                        record = json.loads(rec)
                    except (ValueError, RecursionError) as exc:  # queued before the edge bounded records
                        log.error("queued article %s cannot be parsed; moved to the dead-letter table", aid)
                        self._bury_locked(seq, f"record cannot be parsed: {type(exc).__name__}: {exc}")
                        continue
                out.append(QueueItem(seq, aid, record, origin, at))
                if attempts:
                    took_suspect = True
                    break
                if len(out) >= n:
                    break
            if not self._try_count([i.seq for i in out], +1, "handed out; taking them later", sqlite3.OperationalError):
                return []
            self._in_hand.update(i.seq for i in out)
            self._counted.update(i.seq for i in out)
            self._suspect_in_hand = took_suspect
            return out

    def working(self, seqs: Sequence[int]) -> None:
        """Items in hand are worked on again (``take`` counts them already): a stop from now on
        counts against them."""
        with self._cond:
            idle = [s for s in seqs if s in self._in_hand and s not in self._counted]
            if self._try_count(idle, +1, "worked on again; a death meanwhile goes uncounted"):
                self._counted.update(idle)

    def waiting(self, seqs: Sequence[int]) -> None:
        """Items stay in hand but nothing is done with them (the worker waits for the store): a
        stop meanwhile is not theirs. ``working`` before they are worked on again."""
        with self._cond:
            counted = [s for s in seqs if s in self._counted]
            if self._try_count(counted, -1, "waiting; they stay counted"):
                self._counted.difference_update(counted)

    def _try_count(self, seqs: Sequence[int], step: int, what: str,
                   tolerated: type[sqlite3.Error] = sqlite3.Error) -> bool:
        """Move the items' counts by ``step``, durably (a process that dies holding them leaves
        the count); False, logged, when SQLite cannot write it (a ``tolerated`` error: locked past
        the busy timeout, I/O): the count is a safeguard, not a reason to stop the worker. Lock held."""
        if not seqs or self._closed:
            return True
        try:
            with self._transaction():
                for chunk, marks in _chunks(seqs):
                    self._db.execute(f"UPDATE items SET attempts = MAX(0, attempts + ?) WHERE seq IN ({marks})", (step, *chunk))
        except tolerated as exc:
            log.warning("queue %s: cannot count %d items %s (%s)", self.path, len(seqs), what, exc)
            return False
        return True

    def _oldest_free(self) -> float | None:
        if len(self._in_hand) >= 900:  # more than SQLite's parameters allow: those after the newest in hand
            row = self._db.execute("SELECT enqueued_at FROM items WHERE seq > ? ORDER BY seq LIMIT 1",
                                   (max(self._in_hand),)).fetchone()
        else:
            marks = ",".join("?" * len(self._in_hand))
            row = self._db.execute(f"SELECT enqueued_at FROM items WHERE seq NOT IN ({marks}) ORDER BY seq LIMIT 1",
                                   tuple(self._in_hand)).fetchone()
        return row[0] if row else None

    def ack(self, seqs: Sequence[int]) -> None:
        """The items' batch is in the store: forget them (durably)."""
        if not seqs:
            return
        with self._cond:
            deleted = 0
            with self._transaction():
                for chunk, marks in _chunks(seqs):
                    deleted += self._db.execute(f"DELETE FROM items WHERE seq IN ({marks})", chunk).rowcount
            self._depth -= deleted
            self._let_go(seqs)
            self._forget_parsed(seqs)
            self._cond.notify_all()

    def release(self, seqs: Sequence[int]) -> None:
        """Give items back unprocessed (they will be taken again; this hand does not count)."""
        with self._cond:
            # should the count fail, they count once more: at worst taken alone after a restart
            self._try_count([s for s in seqs if s in self._counted], -1, "given back")
            self._let_go(seqs)
            self._cond.notify_all()

    def _let_go(self, seqs: Sequence[int]) -> None:
        self._in_hand.difference_update(seqs)
        self._counted.difference_update(seqs)
        if not self._in_hand:
            self._suspect_in_hand = False

    def bury(self, item: QueueItem, error: str) -> None:
        """Move a poison item to the dead table."""
        with self._cond:
            self._bury_locked(item.seq, error)

    def _bury_locked(self, seq: int, error: str) -> None:
        # the row moves as stored: serialising the record again could fail on the very input
        # that made it poison
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO dead (seq, article_id, record, origin, enqueued_at, failed_at, error) "
                "SELECT seq, article_id, record, origin, enqueued_at, ?, ? FROM items WHERE seq = ?",
                (time.time(), error[:2000], seq),
            )
            deleted = self._db.execute("DELETE FROM items WHERE seq = ?", (seq,)).rowcount
        self._depth -= deleted
        self._let_go([seq])
        self._forget_parsed([seq])
        self._cond.notify_all()

    # ---- dead letters ----------------------------------------------------------------------------
    def dead_letters(self) -> list[DeadLetter]:
        """The dead table, oldest failure first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, article_id, record, origin, enqueued_at, failed_at, error FROM dead ORDER BY failed_at, seq").fetchall()
        return [DeadLetter(*row) for row in rows]

    def dead_since(self, since: float) -> int:
        """Dead letters that failed at or after ``since`` (a Unix time) and are still dead."""
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM dead WHERE failed_at >= ?", (since,)).fetchone()[0]

    def requeue(self, article_ids: Sequence[str] | None = None) -> int:
        """Move dead letters (all, or those of these article ids) back to the end of the queue, as
        stored; returns how many. Safe while a daemon runs on this queue: it notices the other
        writer (``_sync_depth``). All or none; raises QueueFull rather than exceed ``max_items``."""
        if article_ids is not None and not article_ids:
            return 0
        ids = tuple(dict.fromkeys(article_ids or ()))
        where = f" WHERE article_id IN ({','.join('?' * len(ids))})" if article_ids is not None else ""
        with self._cond:
            with self._transaction():
                depth = self._db.execute("SELECT COUNT(*) FROM items").fetchone()[0]
                moving = self._db.execute(f"SELECT COUNT(*) FROM dead{where}", ids).fetchone()[0]
                if depth + moving > self.max_items:
                    raise QueueFull(f"queue holds {depth} of {self.max_items} items; {moving} dead letters do not fit")
                self._db.execute(
                    "INSERT INTO items (article_id, record, origin, enqueued_at) "
                    f"SELECT article_id, record, origin, ? FROM dead{where} ORDER BY failed_at, seq", (time.time(), *ids))
                self._db.execute(f"DELETE FROM dead{where}", ids)
            self._depth = depth + moving
            self._cond.notify_all()
            return moving

    @contextmanager
    def _transaction(self):
        """One write transaction, taken at once (``BEGIN IMMEDIATE``); rolled back on any error.
        ``synchronous=FULL``: what it wrote is on disk when the block ends."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def _sync_depth(self) -> None:
        """Another process (``newsdedup dead-letters requeue``) may have added rows: SQLite's
        ``data_version`` changes when another connection commits; then count again. Lock held."""
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            self._data_version = version
            self._depth = self._db.execute("SELECT COUNT(*) FROM items").fetchone()[0]

    # ---- inspection ------------------------------------------------------------------------------
    def depth(self) -> int:
        return self._depth

    def free(self) -> int:
        return max(0, self.max_items - self._depth)

    def dead_count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM dead").fetchone()[0]

    def contains(self, article_id: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM items WHERE article_id = ? LIMIT 1", (article_id,)).fetchone() is not None

    def close(self) -> None:
        """Items still in hand are given back uncounted: a clean stop is not theirs (the worker may
        still be inside a store call when the daemon stops waiting for it)."""
        with self._cond:
            if not self._closed:
                self._try_count(sorted(self._counted), -1, "in hand at close")
                self._let_go(list(self._in_hand))
                self._closed = True
                self._db.close()
                self._cond.notify_all()
