"""The writer lease: compare-and-set logic on a fake document store, the real thing on the test
Elasticsearch (noida-db) when available, and the file lock."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from indexer.daemon.lease import ElasticsearchLease, EsLeaseBackend, FileLease, LeaseConflict, NoopLease


class FakeDocs:
    """In-memory documents with Elasticsearch's optimistic concurrency semantics."""

    def __init__(self):
        self.docs: dict[str, tuple[dict, int, int]] = {}
        self.seq = 0
        self.down = False

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def _check(self):
        if self.down:
            raise ConnectionError("store down")

    def get(self, doc_id):
        self._check()
        return self.docs.get(doc_id)

    def create(self, doc_id, source):
        self._check()
        if doc_id in self.docs:
            raise LeaseConflict("version conflict, document already exists")
        self.docs[doc_id] = (dict(source), self._next(), 1)
        return self.docs[doc_id][1:]

    def cas(self, doc_id, source, seq_no, primary_term):
        self._check()
        cur = self.docs.get(doc_id)
        if cur is None or cur[1:] != (seq_no, primary_term):
            raise LeaseConflict("version conflict")
        self.docs[doc_id] = (dict(source), self._next(), 1)
        return self.docs[doc_id][1:]

    def delete(self, doc_id, seq_no, primary_term):
        cur = self.docs.get(doc_id)
        if cur is None or cur[1:] != (seq_no, primary_term):
            raise LeaseConflict("version conflict")
        del self.docs[doc_id]


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def _pair(backend, clock, ttl=10.0):
    a = ElasticsearchLease(backend, "writer", ttl, owner="a", clock=clock, monotonic=clock)
    b = ElasticsearchLease(backend, "writer", ttl, owner="b", clock=clock, monotonic=clock)
    return a, b


def test_only_one_holder_and_takeover_after_expiry():
    docs, clock = FakeDocs(), Clock()
    a, b = _pair(docs, clock)
    assert a.acquire() and a.valid()
    assert not b.acquire() and not b.valid()
    assert b.holder() == "a"
    clock.t += 5
    assert a.renew() and a.valid()
    clock.t += 9  # renewed at +5: still held by a at +14
    assert not b.acquire()
    clock.t += 1.5  # a stops renewing: its own view expires before the document does (safety margin)
    assert not a.valid()
    clock.t += 1
    assert b.acquire() and b.valid()
    assert not a.renew() and not a.valid()  # a's compare-and-set loses: it knows it lost the lease
    assert not a.acquire()
    b.release()
    assert "writer" not in docs.docs
    assert a.acquire()


def test_racing_creates_and_cas_have_one_winner():
    docs, clock = FakeDocs(), Clock()
    a, b = _pair(docs, clock)
    # both read "absent"; the second create conflicts
    real_get = docs.get
    docs.get = lambda doc_id: None
    assert a.acquire()
    assert not b.acquire()
    docs.get = real_get
    # both see an expired lease and both try the same compare-and-set: one wins
    clock.t += 100
    c = ElasticsearchLease(docs, "writer", 10.0, owner="c", clock=clock, monotonic=clock)
    snapshot = docs.get("writer")
    docs.get = lambda doc_id: snapshot
    assert b.acquire()
    assert not c.acquire()
    docs.get = real_get
    assert not a.renew()


def test_store_errors_surface_and_expire_the_lease():
    docs, clock = FakeDocs(), Clock()
    a, _ = _pair(docs, clock)
    assert a.acquire()
    docs.down = True
    with pytest.raises(ConnectionError):
        a.renew()
    clock.t += 8.5
    assert not a.valid()  # cannot renew: stops writing before anyone may take over
    docs.down = False
    assert a.acquire()  # still its own document: re-acquired


def test_the_lease_is_made_from_the_settings_and_a_taken_lease_refreshes_what_it_guards(tmp_path):
    """make_lease reads where the store lives (store.path, es.index), not the store object; the
    timed lease runs its hook (make_lease: refresh the guarded index) when taken, not on renewals,
    and a failing hook does not cost the lease."""
    from indexer.daemon.lease import make_lease
    from indexer.errors import ConfigError
    from indexer.settings import Settings

    local = Settings().replace(**{"store.path": str(tmp_path / "store")})
    lease = make_lease("auto", local, "w", 5.0, owner="a")
    assert isinstance(lease, FileLease) and lease.path == tmp_path / "store" / "daemon-w.lock"
    assert isinstance(make_lease("none", local, "w", 5.0), NoopLease)
    with pytest.raises(ConfigError, match="daemon.lease"):
        make_lease("elasticsearch", local, "w", 5.0)
    remote = Settings().replace(**{"store.path": "http://127.0.0.1:9", "es.index": "news"})
    es_lease = make_lease("auto", remote, "w", 5.0)
    assert isinstance(es_lease, ElasticsearchLease) and es_lease.backend.index == "news_daemon_lease"

    hooks = []
    docs, clock = FakeDocs(), Clock()
    a = ElasticsearchLease(docs, "writer", 10.0, owner="a", clock=clock, monotonic=clock, on_acquire=lambda: hooks.append("a"))
    assert a.acquire() and hooks == ["a"]
    assert a.renew() and a.acquire() and hooks == ["a"]  # renewals are not takeovers

    def broken():
        raise ConnectionError("refresh failed")

    clock.t += 30
    b = ElasticsearchLease(docs, "writer", 10.0, owner="b", clock=clock, monotonic=clock, on_acquire=broken)
    assert b.acquire() and b.valid()


def test_file_lease_excludes_other_holders(tmp_path):
    path = tmp_path / "daemon-writer.lock"
    a, b = FileLease(path, "a"), FileLease(path, "b")
    assert a.acquire() and not b.acquire()
    assert b.holder() == "a"
    code = f"from indexer.daemon.lease import FileLease; print(FileLease({str(path)!r}, 'c').acquire())"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"
    a.release()
    assert b.acquire() and b.valid()
    b.release()
    n = NoopLease("x")
    assert n.acquire() and n.valid() and n.holder() == "x"


@pytest.mark.es
def test_elasticsearch_lease_on_a_real_server():
    from tests.es.server import require_server

    server = require_server()
    client = server.client()
    index = f"ndtest-{uuid.uuid4().hex[:8]}_daemon_lease"
    try:
        backend = EsLeaseBackend(client, index)
        clock = Clock()
        a = ElasticsearchLease(backend, "writer", 10.0, owner="a", clock=clock, monotonic=clock)
        b = ElasticsearchLease(EsLeaseBackend(client, index), "writer", 10.0, owner="b", clock=clock, monotonic=clock)
        assert a.acquire()
        assert not b.acquire()
        with pytest.raises(LeaseConflict):  # op_type=create on an existing document
            backend.create("writer", {"holder": "z", "expires_at": 0.0, "acquired_at": 0.0})
        assert a.renew()
        clock.t += 30
        assert b.acquire()
        assert not a.renew()  # stale seq_no/primary_term
        b.release()
        assert backend.get("writer") is None
    finally:
        try:
            client.indices.delete(index=index, ignore_unavailable=True)
        finally:
            client.close()


def test_a_correction_from_the_view_takes_the_writer_lease_and_a_standby_daemon_refuses_one(make_indexer):
    """``newsdedup ui`` corrects a store under its writer lease, one correction at a time: while a
    daemon (or an ingest) holds it, a correction answers 409 naming the holder and changes nothing;
    once it is free the correction is made and the lease given back. A daemon on standby (another
    daemon holds the lease) refuses corrections with 503: it would write beside the holder."""
    from types import SimpleNamespace

    from indexer.daemon.api import ApiError, ServiceContext, apply_merge, apply_split
    from indexer.daemon.lease import WriterLease
    from indexer.daemon.metrics import DaemonMetrics
    from tests.test_pipeline import CPI, QUAKE, rec

    ix = make_indexer()
    ix.index_many([rec("a", "10月CPI同比上涨2.1%", CPI), rec("b", "【快讯】10月CPI同比上涨2.1%", CPI), rec("c", "泸定5.1级地震", QUAKE)])
    settings = ix.settings
    metrics = DaemonMetrics(lambda: 0.0, lambda: 1.0, lambda: 0.0)
    ctx = ServiceContext(settings, settings.daemon, metrics, lambda: ix, writer=WriterLease(settings))
    daemon = FileLease(Path(settings.store.path) / "daemon-writer.lock", owner="host-a:4242:daemon")
    assert daemon.acquire()
    with pytest.raises(ApiError) as refused:
        apply_split(ctx, "a", "b", None, "editor")
    assert refused.value.code == 409 and "host-a:4242:daemon" in refused.value.body["error"]
    assert ix.store.get_many(["b"])["b"].cluster_id == "a"  # unchanged
    daemon.release()
    assert apply_split(ctx, "a", "b", None, "editor").cluster_id == "b"
    assert daemon.acquire()  # the view gave it back
    daemon.release()

    standby = ServiceContext(settings, settings.daemon, metrics, lambda: ix,
                             daemon=SimpleNamespace(lease_held=lambda: False))
    with pytest.raises(ApiError) as refused:
        apply_merge(standby, "a", "b", "editor")
    assert refused.value.code == 503
    assert ix.store.get_many(["b"])["b"].cluster_id == "b"


def test_one_writer_lease_object_has_one_holder_at_a_time_in_its_process(tmp_path):
    """The view's corrections run on a thread pool and share one WriterLease: a second correction
    waits for the first to give the lease back (the file lock alone says yes again to its own
    process), and while either holds it no other writer gets it."""
    import threading

    from indexer.daemon.lease import WriterLease
    from indexer.settings import Settings

    settings = Settings().replace(**{"store.path": str(tmp_path / "store")})
    view = WriterLease(settings)
    daemon = FileLease(tmp_path / "store" / "daemon-writer.lock", owner="daemon")
    view.acquire()
    second_holds, second_done = threading.Event(), threading.Event()

    def second() -> None:
        with view.held():
            second_holds.set()
            assert not daemon.acquire()
        second_done.set()

    t = threading.Thread(target=second)
    t.start()
    assert not second_holds.wait(0.3)  # waits while the first holds
    assert not daemon.acquire()
    view.release()
    assert second_done.wait(10)
    t.join()
    assert daemon.acquire()  # both gave it back
    daemon.release()
    assert [th for th in threading.enumerate() if th.name == "lease-renew"] == []


def test_a_lease_that_cannot_be_read_is_a_store_error_naming_the_store(tmp_path):
    from indexer.daemon.lease import WriterLease
    from indexer.errors import StoreUnavailable
    from indexer.settings import Settings

    a_file = tmp_path / "news.jsonl"
    a_file.write_text("")
    writer = WriterLease(Settings().replace(**{"store.path": str(a_file / "store")}))
    with pytest.raises(StoreUnavailable, match="writer lease of the store at .*news.jsonl/store"):
        writer.acquire()
    writer.release()  # not held: nothing to give back
