"""The writer lease: at most one daemon decides and writes into one store at a time.

Deciding "new or duplicate" reads the store and then writes; two writers interleaving those steps
could both make near-duplicates canonical of their own clusters. So the worker writes only while it
holds the lease for its store:

* ``NoopLease``        always held (one process, or tests);
* ``FileLease``        ``flock`` on a file beside an embedded store: the kernel drops it when the
                       process dies, even on ``kill -9``;
* ``ElasticsearchLease`` a document ``<index>_daemon_lease/_doc/<name>`` holding ``holder`` and
                       ``expires_at``; taken with ``op_type=create`` when absent and with a
                       compare-and-set (``if_seq_no`` + ``if_primary_term``) when expired or ours,
                       renewed the same way. A conflict (HTTP 409) means another daemon won.

Every lease has ``valid()``: held and, for the timed lease, with its expiry (measured on this
process's monotonic clock from the moment the request was sent) still ``safety`` seconds away.
The worker checks it before every batch.

``make_lease`` picks and builds the lease from the settings (``store.path``, ``[es]``), not from
the open store object: the lease needs where the store lives, not how the store is implemented.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

log = logging.getLogger(__name__)


def default_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Lease(Protocol):
    owner: str

    def acquire(self) -> bool: ...

    def renew(self) -> bool: ...

    def valid(self) -> bool: ...

    def holder(self) -> str | None: ...

    def release(self) -> None: ...


class NoopLease:
    """For a single process on a store nobody else writes."""

    def __init__(self, owner: str | None = None):
        self.owner = owner or default_owner()
        self._held = False

    def acquire(self) -> bool:
        self._held = True
        return True

    def renew(self) -> bool:
        return self._held

    def valid(self) -> bool:
        return self._held

    def holder(self) -> str | None:
        return self.owner if self._held else None

    def release(self) -> None:
        self._held = False


class FileLease:
    """An exclusive ``flock`` on ``path``; other processes (and other ``FileLease`` objects, as
    each opens its own file description) cannot take it until it is released or the holder dies."""

    def __init__(self, path: str | os.PathLike, owner: str | None = None):
        self.path = Path(path)
        self.owner = owner or default_owner()
        self._fd: int | None = None

    def acquire(self) -> bool:
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, self.owner.encode())
        os.fsync(fd)
        self._fd = fd
        return True

    def renew(self) -> bool:
        return self._fd is not None

    def valid(self) -> bool:
        return self._fd is not None

    def holder(self) -> str | None:
        if self._fd is not None:
            return self.owner
        try:
            return self.path.read_text(errors="replace").strip() or None
        except OSError:
            return None

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


class LeaseConflict(Exception):
    """The compare-and-set lost: another writer changed the document (HTTP 409)."""


class LeaseBackend(Protocol):
    """The three document operations the Elasticsearch lease needs (a fake in tests)."""

    def get(self, doc_id: str) -> tuple[dict, int, int] | None: ...  # (source, seq_no, primary_term)

    def create(self, doc_id: str, source: dict) -> tuple[int, int]: ...  # raises LeaseConflict

    def cas(self, doc_id: str, source: dict, seq_no: int, primary_term: int) -> tuple[int, int]: ...  # raises LeaseConflict

    def delete(self, doc_id: str, seq_no: int, primary_term: int) -> None: ...  # raises LeaseConflict


class EsLeaseBackend:
    """``LeaseBackend`` over an ``elasticsearch.Elasticsearch`` client and one small index."""

    def __init__(self, client: Any, index: str):
        self.client = client
        self.index = index
        self._ensured = False

    def _ensure_index(self) -> None:
        if self._ensured:
            return
        from elasticsearch import BadRequestError

        try:
            if not self.client.indices.exists(index=self.index):
                self.client.indices.create(index=self.index, settings={"number_of_shards": 1, "auto_expand_replicas": "0-1"},
                                           mappings={"dynamic": "strict", "properties": {
                                               "holder": {"type": "keyword"}, "expires_at": {"type": "double"},
                                               "acquired_at": {"type": "double"}}})
        except BadRequestError as exc:  # created meanwhile by another daemon
            if "resource_already_exists" not in str(exc):
                raise
        self._ensured = True

    def get(self, doc_id: str):
        from elasticsearch import NotFoundError

        self._ensure_index()
        try:
            resp = self.client.get(index=self.index, id=doc_id)
        except NotFoundError:
            return None
        return dict(resp["_source"]), int(resp["_seq_no"]), int(resp["_primary_term"])

    def create(self, doc_id: str, source: dict):
        self._ensure_index()
        return self._write(doc_id, source, op_type="create")

    def cas(self, doc_id: str, source: dict, seq_no: int, primary_term: int):
        return self._write(doc_id, source, if_seq_no=seq_no, if_primary_term=primary_term)

    def _write(self, doc_id: str, source: dict, **condition: Any) -> tuple[int, int]:
        from elasticsearch import ConflictError

        try:
            resp = self.client.index(index=self.index, id=doc_id, document=source, refresh=True, **condition)
        except ConflictError as exc:
            raise LeaseConflict(str(exc)) from exc
        return int(resp["_seq_no"]), int(resp["_primary_term"])

    def delete(self, doc_id: str, seq_no: int, primary_term: int) -> None:
        from elasticsearch import ConflictError, NotFoundError

        try:
            self.client.delete(index=self.index, id=doc_id, if_seq_no=seq_no, if_primary_term=primary_term, refresh=True)
        except ConflictError as exc:
            raise LeaseConflict(str(exc)) from exc
        except NotFoundError:
            pass


class ElasticsearchLease:
    """A time-limited lease kept in one document; see the module docstring.

    Expiry in the document is wall-clock (``time.time`` of the writer), so daemons must keep their
    clocks within a small fraction of ``ttl`` (NTP). The holder itself trusts only its monotonic
    clock: the lease is valid until ``sent + ttl - safety``, where ``sent`` is when the acquiring
    or renewing request was sent."""

    def __init__(self, backend: LeaseBackend, name: str, ttl: float, owner: str | None = None,
                 safety: float | None = None, clock: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic, on_acquire: Callable[[], None] | None = None):
        self.backend = backend
        # Run once the lease is taken (not on renewals): make_lease refreshes the guarded index
        # there, so a writer taking over sees what the previous one wrote within its last second.
        self._on_acquire = on_acquire
        self.name = name
        self.ttl = ttl
        self.owner = owner or default_owner()
        self.safety = ttl / 5 if safety is None else safety
        self._clock = clock
        self._mono = monotonic
        self._version: tuple[int, int] | None = None  # (seq_no, primary_term) of our last write
        self._valid_until = 0.0
        self._last_holder: str | None = None
        self._lock = threading.Lock()

    def _doc(self, now: float) -> dict:
        return {"holder": self.owner, "expires_at": now + self.ttl, "acquired_at": now}

    def acquire(self) -> bool:
        with self._lock:
            if self._version is not None:
                return self._renew_locked()
            sent = self._mono()
            now = self._clock()
            current = self.backend.get(self.name)
            try:
                if current is None:
                    self._version = self.backend.create(self.name, self._doc(now))
                else:
                    source, seq_no, term = current
                    holder = self._last_holder = source.get("holder")
                    if holder != self.owner:
                        if float(source.get("expires_at", 0)) > now:
                            return False  # someone else holds it
                        log.warning("taking over the writer lease %r from %s (expired)", self.name, holder)
                    self._version = self.backend.cas(self.name, self._doc(now), seq_no, term)
            except LeaseConflict:
                self._version = None
                return False
            self._valid_until = sent + self.ttl - self.safety
            self._last_holder = self.owner
            log.info("writer lease %r acquired by %s", self.name, self.owner)
        if self._on_acquire is not None:
            try:
                self._on_acquire()
            except Exception as exc:  # noqa: BLE001 - the index refreshes on its own within its interval
                log.warning("after taking the writer lease %r: %s", self.name, exc)
        return True

    def renew(self) -> bool:
        with self._lock:
            return self._renew_locked()

    def _renew_locked(self) -> bool:
        if self._version is None:
            return False
        sent = self._mono()
        now = self._clock()
        try:
            self._version = self.backend.cas(self.name, self._doc(now), *self._version)
        except LeaseConflict:
            log.warning("writer lease %r lost: another daemon took it over", self.name)
            self._version = None
            self._valid_until = 0.0
            return False
        self._valid_until = sent + self.ttl - self.safety
        return True

    def valid(self) -> bool:
        return self._version is not None and self._mono() < self._valid_until

    def holder(self) -> str | None:
        return self.owner if self.valid() else self._last_holder

    def release(self) -> None:
        with self._lock:
            if self._version is None:
                return
            try:
                self.backend.delete(self.name, *self._version)
            except LeaseConflict:
                pass
            except Exception as exc:  # noqa: BLE001 - it expires on its own
                log.warning("could not release the writer lease %r: %s", self.name, exc)
            self._version = None
            self._valid_until = 0.0


def lease_index_name(alias: str) -> str:
    """Outside the ``<alias>-*`` pattern of the article templates."""
    return f"{alias}_daemon_lease"


def make_lease(kind: str, settings: Any, name: str, ttl: float, owner: str | None = None) -> Lease:
    """The lease for the store at ``settings.store.path`` (``kind``: auto, none, file, elasticsearch):
    a document in Elasticsearch beside an Elasticsearch store, a file lock beside an embedded one."""
    from ..store import is_remote

    remote = is_remote(settings.store.path)
    if kind == "auto":
        kind = "elasticsearch" if remote else "file"
    if kind == "none":
        return NoopLease(owner)
    if kind == "elasticsearch":
        if not remote:
            from ..errors import ConfigError

            raise ConfigError("daemon.lease", "elasticsearch lease needs an Elasticsearch store (store.path = http(s)://...)")
        from ..store.es_config import client_from_settings

        client, cfg, _ = client_from_settings(settings)  # its own client: held for the daemon's life
        alias = cfg.index

        def refresh_guarded() -> None:
            client.indices.refresh(index=alias, ignore_unavailable=True)  # none yet: a first ingest makes it

        return ElasticsearchLease(EsLeaseBackend(client, lease_index_name(alias)), name, ttl, owner, on_acquire=refresh_guarded)
    return FileLease(Path(settings.store.path) / f"daemon-{name}.lock", owner)


def renew_interval(ttl_seconds: float) -> float:
    """How often a held lease is renewed: three times a TTL, so one failed renewal does not lose it."""
    return max(0.02, ttl_seconds / 3)


class WriterLease:
    """The store's writer lease for a writer that is not the daemon: ``newsdedup ingest`` holds it
    for its whole run, ``newsdedup ui`` for each correction. A daemon writing into the same store
    holds the same lease, so the two never decide and write at once (the daemon waits in standby
    meanwhile; an ingest or a correction started while a daemon writes is refused with its holder's
    name). A timed lease (Elasticsearch) is renewed every third of its TTL while held."""

    def __init__(self, settings: Any, owner: str | None = None):
        d = settings.daemon
        self.store_path = settings.store.path
        self._interval = renew_interval(d.lease_ttl_seconds)
        self._lease = make_lease(d.lease, settings, d.lease_name, d.lease_ttl_seconds, owner)
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        # One holder at a time in this process: the view's corrections run on a thread pool, and
        # the lease itself says yes again to the process that holds it.
        self._holder = threading.Lock()

    def acquire(self) -> None:
        """Take the lease and keep it renewed, waiting for another holder in this process;
        ``WriterBusy`` when another writer holds it, ``StoreUnavailable`` when the lease cannot be
        read (Elasticsearch down, the store directory not writable)."""
        from ..errors import NewsdedupError, StoreUnavailable, WriterBusy

        self._holder.acquire()
        try:
            if not self._lease.acquire():
                raise WriterBusy(f"the store at {self.store_path} is being written by {self._lease.holder() or 'another writer'} "
                                 "(a daemon or another ingest): one writer at a time; use that daemon's API, or wait for it to stop")
        except NewsdedupError:
            self._holder.release()
            raise
        except Exception as exc:  # noqa: BLE001 - the lease's own I/O (a file lock, Elasticsearch requests)
            self._holder.release()
            raise StoreUnavailable(f"taking the writer lease of the store at {self.store_path}: {type(exc).__name__}: {exc}") from exc
        self._stop = threading.Event()
        self._renewer = threading.Thread(target=self._renew, args=(self._stop,), name="lease-renew", daemon=True)
        self._renewer.start()

    def _renew(self, stop: threading.Event) -> None:
        while not stop.wait(self._interval):
            try:
                self._lease.renew()
            except Exception as exc:  # noqa: BLE001 - store down: the lease runs out on its own, valid() says so
                log.warning("renewing the writer lease failed: %s", exc)

    def valid(self) -> bool:
        """Held, and (a timed lease) not about to run out: write only while this holds."""
        return self._lease.valid()

    def release(self) -> None:
        if self._renewer is None:
            return  # not held
        self._stop.set()
        self._renewer.join()
        self._renewer = None
        try:
            self._lease.release()
        except Exception as exc:  # noqa: BLE001 - a timed lease runs out on its own; a file lock goes with the process
            log.warning("giving back the writer lease failed: %s", exc)
        finally:
            self._holder.release()

    @contextmanager
    def held(self) -> Iterator["WriterLease"]:
        """The lease held for the ``with`` block (``acquire``, then ``release``)."""
        self.acquire()
        try:
            yield self
        finally:
            self.release()
