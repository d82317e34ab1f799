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
        client = server.client()
        try:
            client.indices.delete(index=f"{index}*", ignore_unavailable=True)
        except Exception:  # noqa: BLE001 - cleanup only
            pass
        finally:
            client.close()
