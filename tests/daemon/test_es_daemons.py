"""Two daemons pointed at one Elasticsearch index (noida-db in the tests): one writer holds the
lease, the other is a standby that takes over when the writer dies, and clusters stay whole."""

from __future__ import annotations

import uuid

import pytest

from .conftest import article

pytestmark = pytest.mark.es


def test_two_daemons_one_index_failover(daemons):
    from tests.es.server import require_server

    server = require_server()
    if server.auth:
        pytest.skip("this test passes no credentials to the daemons")
    index = f"ndtest-{uuid.uuid4().hex[:10]}"
    sets = {"es.index": index, "es.replicas": "0", "daemon.lease_ttl_seconds": "1.0",
            "daemon.lease_retry_seconds": "0.1", "es.write_refresh": "wait_for"}
    a = daemons(name="a", store=server.url, sets=sets).start()
    b = daemons(name="b", store=server.url, sets=sets).start(wait_ready=False)
    try:
        b.wait_for(lambda: "standby" in " ".join(b.get("/readyz").json()["reasons"]), 20, "standby")
        assert b.post([article(1)]).status == 503
        assert a.post([article(i) for i in range(1, 6)] + [article(6, dup_of=1)]).status == 202
        a.wait_drained()
        assert a.get("/v1/articles/art-0006").json()["cluster_id"] == "art-0001"
        a.kill9()  # no release: the standby waits for the lease to expire
        b.wait_for(lambda: b.get("/readyz").status == 200, 20, "takeover")
        assert b.metric("newsdedup_daemon_lease_held") == 1
        assert b.post([article(7, dup_of=1), article(8)]).status == 202
        b.wait_drained()
        cluster = b.get("/v1/clusters/art-0001").json()
        assert sorted(m["id"] for m in cluster["members"]) == ["art-0001", "art-0006", "art-0007"]
        assert sum(m["is_canonical"] for m in cluster["members"]) == 1
        assert b.stop() == 0
    finally:
        _drop_indices(server, index)


def test_corrections_and_the_queue_with_an_elasticsearch_store(daemons, tmp_path):
    """With Elasticsearch the queue lives under daemon.queue_base named after the index, and the
    corrections are in the index: split, merge, labels, and a later copy does not re-merge."""
    from tests.es.server import require_server

    server = require_server()
    if server.auth:
        pytest.skip("this test passes no credentials to the daemons")
    index = f"ndtest-{uuid.uuid4().hex[:10]}"
    base = tmp_path / "queues"
    sets = {"es.index": index, "es.replicas": "0", "es.write_refresh": "wait_for", "daemon.queue_base": str(base)}
    d = daemons(store=server.url, sets=sets, queue_with_store=True)
    try:
        d.start()
        (queue_dir,) = list(base.iterdir())
        assert queue_dir.name.startswith(f"{index}@") and (queue_dir / "queue.sqlite3").is_file()
        assert d.post([article(1), article(2, dup_of=1), article(3), article(4, dup_of=3)]).status == 202
        d.wait_drained()
        json_type = {"Content-Type": "application/json"}
        assert d.request("POST", "/v1/clusters/art-0001/split", {"article_id": "art-0002"}, json_type).status == 200
        r = d.request("POST", "/v1/clusters/merge", {"into": "art-0001", "from": "art-0003"}, json_type)
        assert r.status == 200 and r.json()["size"] == 3, r.body
        labels = [(x["a"], x["b"], x["label"]) for x in d.get("/v1/labels").json()["labels"]]
        assert labels == [("art-0002", "art-0001", 0), ("art-0003", "art-0001", 1)]
        assert d.post([article(5, dup_of=1)]).status == 202  # a copy of both sides of the split
        d.wait_drained()
        a1, a2 = (d.get(f"/v1/articles/art-000{i}").json()["cluster_id"] for i in (1, 2))
        assert a1 != a2
        assert d.stop() == 0
    finally:
        _drop_indices(server, index)


def _drop_indices(server, index: str) -> None:
    """Remove what the test made (articles, change log, templates, lease), by name: a real cluster
    refuses wildcard deletes (``action.destructive_requires_name`` is true by default since 8.0)."""
    from indexer.daemon.lease import lease_index_name
    from indexer.settings import EsSettings
    from indexer.store.es_schema import build_schema, drop

    client = server.client()
    try:
        drop(client, build_schema(EsSettings(index=index), vector_dims=None, embedding_model="none",
                                  fingerprint_layout="f", bands=4))
        client.indices.delete(index=lease_index_name(index), ignore_unavailable=True)
    except Exception:  # noqa: BLE001 - cleanup only
        pass
    finally:
        client.close()
