"""Exceptions raised by newsdedup.

    NewsdedupError
    ├── ConfigError (also ValueError)      a setting is missing, malformed or unknown; names the key
    ├── InvalidArticle (also ValueError)   a record cannot become an article; names the record
    ├── FeatureError                       a feature backend (tokeniser, embedding model) failed
    └── StoreError                         the store refused or failed an operation
        ├── StoreUnavailable               the store cannot be reached right now (safe to retry)
        ├── StoreSchemaError               the store holds data made with other settings (e.g. vector dims)
        ├── WriterBusy                     another writer (a daemon, an ingest) holds the store's writer lease
        └── BulkWriteError                 some articles of a batch were not written; ``.errors`` keeps them

Dependency errors are translated at the edge (``raise StoreError(...) from exc``) so callers
never need to catch sqlite3, hnswlib or elasticsearch exception types.
"""

from __future__ import annotations

from typing import Sequence


class NewsdedupError(Exception):
    """Root of every error newsdedup raises on purpose."""


class ConfigError(NewsdedupError, ValueError):
    """A setting is invalid. ``key`` names it (dotted, as in the TOML file)."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(f"setting {key!r}: {message}")


class InvalidArticle(NewsdedupError, ValueError):
    """A record cannot be turned into an article. ``where`` is e.g. ``news.jsonl:17``."""

    def __init__(self, reason: str, where: str | None = None):
        self.reason = reason
        self.where = where
        super().__init__(f"{where}: {reason}" if where else reason)


class FeatureError(NewsdedupError):
    """A feature could not be computed (model failed to load, tokeniser error)."""


class StoreError(NewsdedupError):
    """The store failed an operation."""


class StoreUnavailable(StoreError):
    """The store cannot be reached right now; retrying later is safe."""


class StoreSchemaError(StoreError):
    """The store was made with incompatible settings (vector dimensions, fingerprint layout)."""


class WriterBusy(StoreError):
    """Another writer holds the store's writer lease (daemon/lease.py); the message names it."""


class BulkWriteError(StoreError):
    """Some articles of a batch were not written. ``errors`` is a list of ``(article_id, reason)``;
    ``refused`` names those the store answered it will never take (a mapping error, a value over
    one of its limits), not those it could not take in time, which a later try may write."""

    def __init__(self, message: str, errors: list[tuple[str, str]], refused: Sequence[str] = ()):
        super().__init__(message)
        self.errors = errors
        self.refused = list(refused)

    def __reduce__(self):
        return (type(self), (self.args[0], self.errors, self.refused))
