"""Incremental crawl state on disk, so a daily re-run fetches only what is new.

SQLite (one file, ``crawl-state.sqlite3`` in the state directory) rather than a JSON file: every
mark is a small transaction, so a crash or Ctrl-C in the middle of a crawl loses nothing already
delivered, and two runs never leave a half-written file behind.

* ``seen``: canonical URLs of articles already delivered to the output, or dropped by the
  pipeline, so their detail pages are not fetched again: never, for a delivery and for a drop that
  re-fetching cannot change (a duplicate URL, a headline too long); after a day, for a drop that
  it can (too short, no headline, mojibake: a challenge page served with 200, or a charset the
  sources file now names).
* ``validators``: ETag / Last-Modified of list pages, feeds and sitemaps, for conditional GETs.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from indexer.urls import canonical_url

STATE_FILE = "crawl-state.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS seen (
    url TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    outcome TEXT NOT NULL,
    seen_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS validators (
    url TEXT PRIMARY KEY,
    etag TEXT,
    last_modified TEXT,
    checked_at REAL NOT NULL
);
"""


# Pipeline drops (crawlers.pipelines) that depend on what one fetch returned, not on the URL.
RETRIED_DROPS = frozenset({"dropped:too_short", "dropped:no_title", "dropped:mojibake"})
RETRY_DROPPED_AFTER = 86400.0


class CrawlState:
    """Seen URLs and HTTP validators. ``CrawlState.memory()`` keeps nothing between runs.
    Sources crawl concurrently and share one state: one connection, one lock."""

    def __init__(self, path: str | os.PathLike | None):
        target = ":memory:"
        if path is not None:
            Path(path).mkdir(parents=True, exist_ok=True)
            target = str(Path(path) / STATE_FILE)
        self._db = sqlite3.connect(target, check_same_thread=False)
        self._lock = threading.Lock()
        self._db.executescript(_SCHEMA)
        self._db.commit()

    @classmethod
    def memory(cls) -> "CrawlState":
        return cls(None)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "CrawlState":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- seen articles -------------------------------------------------------------------

    def is_seen(self, url: str) -> bool:
        """Delivered, or dropped for good. A page dropped for what a later fetch may not show (a
        challenge page served with 200, a charset fixed in the sources file since) counts as seen
        for ``RETRY_DROPPED_AFTER`` seconds, then is fetched again."""
        with self._lock:
            row = self._db.execute("SELECT outcome, seen_at FROM seen WHERE url = ?", (canonical_url(url),)).fetchone()
        if row is None:
            return False
        outcome, seen_at = row
        return not (outcome in RETRIED_DROPS and time.time() - seen_at >= RETRY_DROPPED_AFTER)

    def mark_seen(self, urls: list[tuple[str, str, str]]) -> None:
        """``(url, source, outcome)`` triples, committed together (one delivered batch)."""
        now = time.time()
        with self._lock, self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO seen (url, source, outcome, seen_at) VALUES (?, ?, ?, ?)",
                [(canonical_url(u), s, o, now) for u, s, o in urls],
            )

    def seen_count(self, source: str | None = None) -> int:
        with self._lock:
            if source is None:
                return self._db.execute("SELECT COUNT(*) FROM seen").fetchone()[0]
            return self._db.execute("SELECT COUNT(*) FROM seen WHERE source = ?", (source,)).fetchone()[0]

    # -- HTTP validators -----------------------------------------------------------------

    def validators(self, url: str) -> tuple[str | None, str | None]:
        with self._lock:
            row = self._db.execute("SELECT etag, last_modified FROM validators WHERE url = ?", (url,)).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def forget_validators(self, url: str) -> None:
        """A listing whose crawl was not complete (or that keeps none: a sitemap index) is fetched
        whole next time: validators kept from an earlier run would get a 304 and skip it."""
        with self._lock, self._db:
            self._db.execute("DELETE FROM validators WHERE url = ?", (url,))

    def save_validators(self, url: str, etag: str | None, last_modified: str | None) -> None:
        if not etag and not last_modified:
            return
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO validators (url, etag, last_modified, checked_at) VALUES (?, ?, ?, ?)",
                (url, etag, last_modified, time.time()),
            )
