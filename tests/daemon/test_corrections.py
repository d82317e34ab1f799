"""Corrections through the API of a real daemon: split an article out (alone or into another
cluster), merge two clusters, read the labelled pairs; the store holds each at once and keeps it
across a restart; a re-ingest of the same articles changes nothing."""

from __future__ import annotations

from .conftest import article, read_store

TOKEN = "corrections-token"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def _clusters(store) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for a in read_store(store):
        out.setdefault(a.cluster_id, set()).add(a.id)
    return out


def test_split_merge_and_labels(daemons):
    d = daemons(env={"NEWSDEDUP_DAEMON_AUTH_TOKEN": TOKEN}).start()
    corpus = [article(1), article(2, dup_of=1), article(3, dup_of=1), article(4), article(5, dup_of=4), article(6)]
    assert d.post(corpus, AUTH).status == 202
    d.wait_drained()
    assert d.request("GET", "/v1/clusters/art-0001", headers=AUTH).json()["size"] == 3

    # the token guards corrections like every other route
    assert d.request("POST", "/v1/clusters/art-0001/split", {"article_id": "art-0002"}).status == 401
    # split art-0002 out, into a cluster of its own
    r = d.request("POST", "/v1/clusters/art-0001/split", {"article_id": "art-0002"},
                  {**AUTH, "X-Newsdedup-User": "editor-li"})
    assert r.status == 200, r.body
    body = r.json()
    assert body["cluster_id"] == "art-0002" and body["size"] == 1
    assert body["labels"] == [{"a": "art-0002", "b": "art-0001", "label": 0, "kind": "split", "by": "editor-li",
                               "at": body["change"]["at"]}]
    assert _clusters(d.store)["art-0001"] == {"art-0001", "art-0003"}
    # split art-0003 out into cluster art-0004 (a person says it is that story)
    r = d.request("POST", "/v1/clusters/art-0001/split", {"article_id": "art-0003", "into": "art-0004"}, AUTH)
    assert r.status == 200 and r.json()["size"] == 3
    assert {(x["a"], x["b"], x["label"]) for x in r.json()["labels"]} == {("art-0003", "art-0001", 0), ("art-0003", "art-0004", 1)}
    # merge cluster art-0006 into art-0004
    r = d.request("POST", "/v1/clusters/merge", {"into": "art-0004", "from": "art-0006"}, AUTH)
    assert r.status == 200 and r.json()["size"] == 4, r.body
    assert _clusters(d.store)["art-0004"] == {"art-0003", "art-0004", "art-0005", "art-0006"}

    # mistakes answer 4xx and change nothing
    for path, payload, code in [
        ("/v1/clusters/art-0001/split", {"article_id": "art-0005"}, 409),  # not in that cluster
        ("/v1/clusters/art-0001/split", {"article_id": "nope"}, 404),
        ("/v1/clusters/art-0002/split", {"article_id": "art-0002"}, 409),  # alone already
        ("/v1/clusters/art-0004/split", {"article_id": "art-0005", "into": "art-0003"}, 404),  # not a cluster id
        ("/v1/clusters/merge", {"into": "art-0004", "from": "art-0004"}, 409),
        ("/v1/clusters/merge", {"into": "art-0004", "from": "art-0005"}, 404),
        ("/v1/clusters/merge", {"into": "art-0004"}, 400),
        ("/v1/clusters/merge", {"into": "art-0004", "from": "art-0001", "extra": 1}, 400),
    ]:
        r = d.request("POST", path, payload, AUTH)
        assert r.status == code and r.json()["error"], (path, payload, r.status, r.body)
    assert d.request("POST", "/v1/clusters/merge", b"{" + b" " * 70_000 + b"}", AUTH).status == 413

    labels = d.request("GET", "/v1/labels", headers=AUTH).json()["labels"]
    assert [(x["a"], x["b"], x["label"], x["kind"]) for x in labels] == [
        ("art-0002", "art-0001", 0, "split"), ("art-0003", "art-0001", 0, "split"), ("art-0003", "art-0004", 1, "split"),
        ("art-0006", "art-0004", 1, "merge")]
    assert labels[0]["by"] == "editor-li" and labels[1]["by"] == "api"
    m = d.metrics()
    assert m["newsdedup_daemon_http_requests_total{code=200,route=split}"] == 2
    assert m["newsdedup_daemon_http_requests_total{code=200,route=merge}"] == 1
    assert d.stop() == 0

    # the corrections hold across a restart and a re-ingest of the same articles
    again = daemons(queue=d.queue, env={"NEWSDEDUP_DAEMON_AUTH_TOKEN": TOKEN}).start()
    assert again.post(corpus, AUTH).status == 202
    again.wait_drained()
    assert again.metric("newsdedup_indexer_articles_total{decision=already_indexed}") == len(corpus)
    assert again.request("GET", "/v1/labels", headers=AUTH).json()["labels"] == labels
    assert again.stop() == 0
    clusters = _clusters(d.store)
    assert clusters["art-0001"] == {"art-0001"} and clusters["art-0002"] == {"art-0002"}
    assert clusters["art-0004"] == {"art-0003", "art-0004", "art-0005", "art-0006"}


def test_splitting_the_canonical_labels_it_against_who_leads_the_rest(daemons):
    """The label names the member the store makes canonical of the rest: one rule
    (``oldest_other_member``; undated articles tie, and ids break the tie, not arrival order)."""
    d = daemons().start()
    assert d.post([article(1), article(3, dup_of=1), article(2, dup_of=1)]).status == 202
    d.wait_drained()
    r = d.request("POST", "/v1/clusters/art-0001/split", {"article_id": "art-0001"}, {"Content-Type": "application/json"})
    assert r.status == 200, r.body
    (label,) = r.json()["labels"]
    rest = _clusters(d.store)
    assert rest["art-0001"] == {"art-0001"}
    assert rest["art-0002"] == {"art-0002", "art-0003"}
    assert (label["a"], label["b"], label["label"]) == ("art-0001", "art-0002", 0)
    assert d.stop() == 0


def test_an_article_arriving_later_does_not_merge_what_a_person_split(daemons):
    """art-0002 is an exact copy of art-0001; a person says they are different stories. A third
    copy arriving later matches both: it joins one of them, and the two stay apart."""
    d = daemons().start()
    assert d.post([article(1), article(2, dup_of=1)]).status == 202
    d.wait_drained()
    r = d.request("POST", "/v1/clusters/art-0001/split", {"article_id": "art-0002"}, {"Content-Type": "application/json"})
    assert r.status == 200
    assert d.post([article(3, dup_of=1)]).status == 202
    d.wait_drained()
    assert d.stop() == 0
    clusters = {a.id: a.cluster_id for a in read_store(d.store)}
    assert clusters["art-0001"] != clusters["art-0002"], clusters
    assert clusters["art-0003"] in (clusters["art-0001"], clusters["art-0002"])
    # a person saying "same story" afterwards lifts it: a merge by hand is always possible
    again = daemons(queue=d.queue).start()
    r = again.request("POST", "/v1/clusters/merge", {"into": clusters["art-0001"], "from": clusters["art-0002"]},
                      {"Content-Type": "application/json"})
    assert r.status == 200 and r.json()["size"] == 3
    assert again.stop() == 0
