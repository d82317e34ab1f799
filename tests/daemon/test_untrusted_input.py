"""Hostile records at the daemon's edge (issue 16): deeply nested extra fields, bodies the JSON
parser cannot handle, lone surrogates, a bad extra already in the store, and reads behind the token."""

from __future__ import annotations

import json
import sqlite3

from .conftest import article, read_store


def _with_nested_extra(record: dict, levels: int) -> str:
    """The record as JSON text with ``meta`` nested ``levels`` arrays deep (written as text: the
    encoder itself recurses)."""
    return json.dumps(record, ensure_ascii=False)[:-1] + ', "meta": ' + "[" * levels + '"底"' + "]" * levels + "}"


def _similar(i: int) -> dict:
    """Article 0's story again: even ones an exact copy, odd ones with a line added."""
    a = article(0)
    content = a["content"] if i % 2 == 0 else a["content"] + f"记者补充报道，第{i}次更新。"
    return {**a, "id": f"sim-{i:03d}", "url": f"https://other.example.cn/{i}.html", "content": content}


def test_crafted_records_are_refused_per_item_and_a_bad_stored_extra_poisons_nothing(daemons):
    d = daemons().start()
    # The review's record: an extra field ~980 arrays deep, just within or just beyond what the JSON
    # parser manages depending on the call stack. Either way only that article is refused.
    crafted = _with_nested_extra(article(1), 980)
    r = d.post("[" + json.dumps(article(0), ensure_ascii=False) + ",\n " + crafted + "]")
    assert r.status == 202, r.body
    body = r.json()
    assert body["accepted"] == ["art-0000"]
    assert body["results"][1]["decision"] == "rejected" and "nested" in body["results"][1]["error"]
    shallow = _with_nested_extra(article(1), 300)  # parsed, then refused by the edge's own bound
    r = d.post([article(0), json.loads(shallow)])
    assert r.status == 202 and r.json()["results"][1]["error"] == "extra field 'meta' is nested more than 32 levels deep"

    too_deep = _with_nested_extra(article(9), 5000)
    r = d.post(too_deep)  # deeper than the parser goes: a clear 400, not a 500
    assert r.status == 400 and "nested too deeply" in r.json()["error"]
    r = d.post(json.dumps(article(2), ensure_ascii=False) + "\n" + too_deep + "\n")
    assert r.status == 202 and r.json()["accepted"] == ["art-0002"]
    assert "nested too deeply" in r.json()["results"][1]["error"]

    # a lone surrogate in one article: that article is refused, the rest of the batch accepted
    lone = json.dumps([dict(article(3), title="标题\ud800"), article(4)])  # ASCII escapes: "\ud800" on the wire
    r = d.post(lone)
    assert r.status == 202, r.body
    assert r.json()["accepted"] == ["art-0004"]
    assert "field 'title' holds a lone surrogate U+D800" in r.json()["results"][0]["error"]
    d.wait_drained()
    assert d.stop() == 0

    # A bad extra already in the store (written before the edge bounded it): deeper than any
    # parser recursion, on the canonical article that every similar article is compared with.
    db = sqlite3.connect(d.store / "articles.sqlite3")
    with db:
        db.execute("UPDATE articles SET extra = ? WHERE id = 'art-0000'", ("[" * 100_000 + "]" * 100_000,))
        db.execute("UPDATE articles SET extra = ? WHERE id = 'art-0002'", ("{not json",))
    db.close()

    again = daemons(queue=d.queue).start()
    for start in range(0, 200, 50):
        r = again.post([_similar(i) for i in range(start, start + 50)])
        assert r.status == 202 and len(r.json()["accepted"]) == 50
    again.wait_drained()
    assert again.metric("newsdedup_daemon_dead_letters_total") == 0
    assert again.get("/readyz").status == 200
    clusters = again.get("/v1/clusters?top=3")
    assert clusters.status == 200, clusters.body
    top = clusters.json()["clusters"][0]
    assert top["cluster_id"] == "art-0000" and top["size"] >= 101  # the exact copies at least
    article0 = again.get("/v1/articles/art-0000")
    assert article0.status == 200 and article0.json()["is_canonical"]
    assert again.stop() == 0
    stored = {a.id: a for a in read_store(d.store)}
    assert {f"sim-{i:03d}" for i in range(200)} <= set(stored)
    assert stored["art-0000"].extra == {"unreadable_extra": "[" * 100_000 + "]" * 100_000}  # kept, not lost
    assert stored["art-0002"].extra == {"unreadable_extra": "{not json"}
    assert again.log_text().count("art-0000: stored extra fields cannot be parsed") == 1  # logged once


def test_reads_need_the_token_when_one_is_set_probes_do_not(daemons):
    token = "read-token-1234"
    d = daemons(env={"NEWSDEDUP_DAEMON_AUTH_TOKEN": token}).start()
    auth = {"Authorization": f"Bearer {token}"}
    assert d.post([article(1)], auth).status == 202
    d.wait_drained()
    for path in ("/v1/articles/art-0001", "/v1/clusters", "/v1/clusters/art-0001"):
        refused = d.get(path)
        assert refused.status == 401 and refused.headers["WWW-Authenticate"].startswith("Bearer"), path
        assert "title" not in refused.body.decode()
        assert d.request("GET", path, headers={"Authorization": "Bearer wrong"}).status == 401, path
        assert d.request("GET", path, headers=auth).status == 200, path
    for path in ("/healthz", "/readyz", "/metrics"):
        assert d.get(path).status == 200, path
    assert d.stop() == 0
    assert token not in d.log_text()


def test_elasticsearch_rows_with_an_extra_that_is_not_an_object_still_read():
    from indexer.store.elasticsearch import from_source

    src = {"id": "a1", "cluster_id": "a1", "title": "标题", "simhash": 0, "bands": []}
    assert from_source({**src, "extra": {"作者": "张三"}}).extra == {"作者": "张三"}
    assert from_source(src).extra == {}
    assert from_source({**src, "extra": ["x", ["y"]]}).extra == {"unreadable_extra": ["x", ["y"]]}
    assert from_source({**src, "extra": "{not json"}).extra == {"unreadable_extra": "{not json"}
