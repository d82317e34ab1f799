"""The HTTP API of a real daemon process: formats, per-item errors, reads, metrics, limits."""

from __future__ import annotations

import json
import socket

from .conftest import article, read_store


def test_post_formats_reads_and_metrics(daemons):
    d = daemons().start()
    one = d.post(article(1))
    assert one.status == 202, one.body
    assert one.json()["accepted"] == ["art-0001"]
    arr = d.post([article(2), article(3, dup_of=1), {"title": "", "content": ""}, "not an object"])
    assert arr.status == 202
    body = arr.json()
    assert body["accepted"] == ["art-0002", "art-0003"]
    assert [r.get("status") for r in body["results"]] == ["accepted", "accepted", None, None]
    assert body["results"][2]["index"] == 2 and "neither title nor content" in body["results"][2]["error"]
    assert body["results"][3]["index"] == 3 and "JSON object" in body["results"][3]["error"]
    ndjson = "\n".join(json.dumps(a, ensure_ascii=False) for a in (article(4), article(5, dup_of=4))) + "\n{broken\n"
    nd = d.post(ndjson, {"Content-Type": "application/x-ndjson"})
    assert nd.status == 202
    assert nd.json()["accepted"] == ["art-0004", "art-0005"]
    assert nd.json()["results"][2]["index"] == 2 and "invalid JSON" in nd.json()["results"][2]["error"]
    d.wait_drained()

    got = d.get("/v1/articles/art-0003")
    assert got.status == 200
    assert got.json()["cluster_id"] == "art-0001" and got.json()["dup_reason"] == "exact"
    assert d.get("/v1/articles/nope").status == 404
    cluster = d.get("/v1/clusters/art-0001").json()
    assert cluster["size"] == 2
    assert [m["id"] for m in cluster["members"]] == ["art-0001", "art-0003"]
    assert cluster["members"][1]["dup_reason"] == "exact" and cluster["members"][1]["score"] == 1.0
    top = d.get("/v1/clusters?top=2").json()["clusters"]
    assert {c["cluster_id"] for c in top} == {"art-0001", "art-0004"} and all(c["size"] == 2 for c in top)
    assert d.get("/v1/clusters?top=zero").status == 400
    assert d.get("/v1/clusters/none-such").status == 404
    head = d.request("HEAD", "/healthz")  # probes that send HEAD get the status without a body
    assert head.status == 200 and head.body == b""
    assert d.request("HEAD", "/readyz").status == 200

    m = d.metrics()
    assert m['newsdedup_daemon_articles_accepted_total{origin=http}'] == 5
    assert m["newsdedup_daemon_articles_rejected_total"] == 3
    assert m["newsdedup_indexer_articles_total{decision=new}"] == 3
    assert m["newsdedup_indexer_articles_total{decision=duplicate}"] == 2
    assert m["newsdedup_indexer_duplicates_total{reason=exact}"] == 2
    assert m["newsdedup_queue_depth"] == 0
    assert m["newsdedup_batch_seconds_count"] >= 1
    assert m["newsdedup_store_errors_total"] == 0
    assert m["newsdedup_daemon_ready"] == 1

    # re-posting is safe: the indexer answers ALREADY_INDEXED, nothing is stored twice
    assert d.post([article(1)]).status == 202
    d.wait_for(lambda: d.metric("newsdedup_indexer_articles_total{decision=already_indexed}") == 1, 10, "re-post processed")
    assert d.stop() == 0
    assert sorted(a.id for a in read_store(d.store)) == [f"art-{i:04d}" for i in range(1, 6)]


def test_without_a_token_other_sites_cannot_reach_the_daemon(daemons):
    """A daemon without a token on this machine is reachable from any page the browser opens: a
    page of another site can post a "simple" request (text/plain, a form, no type: no CORS
    preflight), and one whose name was re-pointed at this machine (DNS rebinding) is same-origin.
    So articles are read only from JSON types, and only localhost names, IP addresses and
    daemon.allowed_hosts are answered."""
    d = daemons(sets={"daemon.allowed_hosts": "news.internal, Pipeline.Example."}).start()
    for media in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        refused = d.post(article(1), {"Content-Type": media})
        assert refused.status == 415 and "application/json" in refused.json()["error"], media
    with socket.create_connection(("127.0.0.1", d.port)) as s:  # no type at all
        body = json.dumps(article(1)).encode()
        s.sendall(b"POST /v1/articles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        assert b" 415 " in s.recv(1000)
    assert d.post(article(2), {"Content-Type": "application/x-ndjson; charset=utf-8"}).status == 202
    assert d.metric("newsdedup_daemon_articles_accepted_total{origin=http}") == 1
    for host in ("rebind.evil.example", f"rebind.evil.example:{d.port}", "news.internal.evil.example"):
        answer = d.request("GET", "/v1/clusters", headers={"Host": host})
        assert answer.status == 421 and "daemon.allowed_hosts" in answer.json()["error"], host
        assert d.request("GET", "/ui/clusters", headers={"Host": host}).status == 421
    for host in (f"localhost:{d.port}", f"127.0.0.1:{d.port}", f"[::1]:{d.port}", "10.1.2.3", "news.internal:80",
                 "pipeline.example", "NEWS.INTERNAL."):
        assert d.request("GET", "/v1/clusters", headers={"Host": host}).status == 200, host
    assert d.stop() == 0


def test_host_names_a_daemon_without_a_token_answers():
    from indexer.daemon.api import answers_host, host_name
    from indexer.settings import DaemonSettings

    assert [host_name(h) for h in ("a.example:8080", "[::1]:80", "[fe80::1]", "LOCALHOST", "a.example:x", "localhost:")] == [
        "a.example", "::1", "fe80::1", "localhost", "a.example:x", "localhost"]
    plain, listed = DaemonSettings(), DaemonSettings(allowed_hosts="news.internal")
    assert answers_host("localhost:1", plain) and answers_host("app.localhost", plain) and answers_host("192.168.1.9:80", plain)
    assert not answers_host("news.internal", plain) and answers_host("news.internal:9", listed)
    assert not answers_host("localhost.evil.example", plain) and not answers_host("127.0.0.1.nip.io", plain)
    assert answers_host("anything.example", DaemonSettings(allowed_hosts="*"))


def test_malformed_oversized_unauthorised_and_full(daemons, tmp_path):
    token = "s3cret-token-value"
    fault = tmp_path / "outage"
    fault.touch()  # the store is "down": nothing drains, so the queue fills
    d = daemons(flaky=True, env={"NDTEST_FAULT_FILE": str(fault), "NEWSDEDUP_DAEMON_AUTH_TOKEN": token},
                sets={"daemon.max_body_bytes": "4096", "daemon.queue_max": "3"}).start(wait_ready=False)
    auth = {"Authorization": f"Bearer {token}"}
    assert d.post(article(1)).status == 401
    assert d.post(article(1), {"Authorization": "Bearer wrong"}).status == 401
    assert d.post(article(1), {"Authorization": token}).status == 401
    # with a token, the token guards: any host name is answered (and asked for it)
    assert d.request("GET", "/v1/clusters", headers={"Host": "rebind.evil.example"}).status == 401
    assert d.post("{not json", auth).status == 400
    assert d.post("", auth).status == 400
    assert d.post("42", auth).status == 400
    assert d.post(b"\xff\xfe\x00garbage", auth).status == 400
    big = dict(article(1), content="长" * 5000)
    assert d.post(big, auth).status == 413
    only_bad = d.post([{"title": 5}], auth)
    assert only_bad.status == 422 and "must be a string" in only_bad.json()["results"][0]["error"]
    assert d.request("PUT", "/v1/articles", b"{}", auth).status == 405
    assert d.get("/nowhere").status == 404
    assert d.post([article(1), article(2)], auth).status == 202
    full = d.post([article(3), article(4)], auth)
    assert full.status == 429 and full.headers["Retry-After"]
    assert d.post([article(3)], auth).status == 202  # exactly at the bound
    ready = d.get("/readyz")
    assert ready.status == 503 and any("store unavailable" in r for r in ready.json()["reasons"])
    # a raw request without Content-Length, then a stalled client: the daemon stays up
    with socket.create_connection(("127.0.0.1", d.port)) as s:
        s.sendall(b"POST /v1/articles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer " + token.encode() + b"\r\n\r\n")
        assert b" 411 " in s.recv(1000)
    assert d.get("/healthz").status == 200
    m = d.metrics()
    assert m["newsdedup_daemon_articles_accepted_total{origin=http}"] == 3
    assert m["newsdedup_queue_depth"] == 3
    assert m["newsdedup_daemon_http_requests_total{code=401,route=articles_post}"] == 3
    assert m["newsdedup_daemon_http_requests_total{code=429,route=articles_post}"] == 1
    fault.unlink()
    d.wait_drained()
    assert d.stop() == 0
    assert token not in d.log_text()
    assert sorted(a.id for a in read_store(d.store)) == ["art-0001", "art-0002", "art-0003"]


def test_a_non_ascii_token_matches_as_clients_send_it():
    """curl and browsers send a header's non-ASCII characters as UTF-8; the login form reads the
    token as UTF-8 too, so the API must match the same bytes."""
    from starlette.requests import Request

    from indexer.daemon.api import bearer_ok

    def asking(raw: bytes) -> Request:
        return Request({"type": "http", "method": "GET", "path": "/", "headers": [(b"authorization", raw)]})

    assert bearer_ok(asking("Bearer tökén-42".encode()), "tökén-42")
    for token in ("voilà", "Åsa-token-Å", "secret-丠"):  # UTF-8 ending in 0xA0 or 0x85: spaces as latin-1 text
        assert bearer_ok(asking(f"Bearer {token}".encode()), token), token
    assert not bearer_ok(asking("Bearer tökén-42".encode("latin-1")), "tökén-42")
    assert bearer_ok(asking(b"bearer  plain-token "), "plain-token") and not bearer_ok(asking(b"Bearer plain"), "plain-token")
