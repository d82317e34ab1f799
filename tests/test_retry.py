"""Retry waits (indexer.retry): jittered, bounded, repeatable with a seed; and a bulk write to
Elasticsearch retried by one layer only (the bulk rounds, not the transport under them)."""

from __future__ import annotations

import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from indexer.retry import Backoff, backoff_delay


def test_waits_double_to_the_cap_jittered_between_half_and_all_of_each_plan():
    rng = random.Random(11)
    waits = [backoff_delay(n, 0.5, 4.0, rng) for n in range(6)]
    plans = [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert all(plan / 2 <= w <= plan for w, plan in zip(waits, plans)), waits
    assert not set(waits) & set(plans) and len(set(waits)) == 6  # jittered, not the plan itself
    # many clients failing together spread out instead of coming back in one instant
    spread = [backoff_delay(3, 0.5, 4.0, random.Random(seed)) for seed in range(50)]
    assert max(spread) - min(spread) > 1.0


def test_a_seed_repeats_the_waits_and_long_loops_never_overflow():
    assert [backoff_delay(n, 1.0, 60.0, random.Random(4)) for n in range(5)] == \
        [backoff_delay(n, 1.0, 60.0, random.Random(4)) for n in range(5)]
    assert 30.0 <= backoff_delay(10_000, 1.0, 60.0) <= 60.0
    with pytest.raises(ValueError):
        backoff_delay(-1, 1.0, 60.0)
    b = Backoff(0.1, 1.0, random.Random(2))
    for _ in range(5000):  # a store down for a long time: the worker keeps stepping
        assert b.step() <= 1.0
    b.reset()
    assert b.step() <= 0.1


class _Failing503(BaseHTTPRequestHandler):
    """An Elasticsearch node answering every request 503, counting them."""

    sent: list[str] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).sent.append(self.path)
        body = b'{"error": {"type": "unavailable", "reason": "node restarting"}, "status": 503}'
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_PUT = do_POST  # noqa: N815 - a bulk request to one index is a PUT

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("kind", ["create", "update"])
def test_a_failing_bulk_write_is_sent_once_per_round_not_again_by_the_transport(kind):
    """The client is built with transport retries (es.max_retries) for single requests; a bulk
    write's requests (new articles, or cluster changes) are retried by its rounds only:
    max_retries + 1 sends, with jittered waits, not (max_retries + 1) ** 2."""
    pytest.importorskip("elasticsearch")
    from indexer.settings import EsSettings
    from indexer.store.es_bulk import bulk_create, bulk_update
    from indexer.store.es_config import make_client

    _Failing503.sent = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing503)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host = f"http://127.0.0.1:{server.server_address[1]}"
        client = make_client([host], EsSettings(max_retries=2, request_timeout=5))
        slept: list[float] = []
        rounds = dict(chunk_docs=10, chunk_bytes=1 << 20, max_retries=2, backoff=1.0, sleep=slept.append, rng=random.Random(1))
        if kind == "create":
            outcome = bulk_create(client, "ndtest", {"a1": {"title": "标题"}, "a2": {"title": "正文"}}, **rounds)
        else:
            outcome = bulk_update(client, {"a1": ("ndtest-1", {"cluster_id": "a2"}), "a2": ("ndtest-1", {"cluster_id": "a2"})}, **rounds)
        client.close()
    finally:
        server.shutdown()
        server.server_close()
    assert [p.split("?")[0] for p in _Failing503.sent] == ["/_bulk"] * 3  # three rounds, one request each
    assert sorted(outcome.failed) == ["a1", "a2"] and outcome.rounds == 3 and outcome.statuses == {"a1": 503, "a2": 503}
    assert len(slept) == 2 and 0.5 <= slept[0] <= 1.0 and 1.0 <= slept[1] <= 2.0 and slept != [1.0, 2.0]


def test_an_article_the_bulk_answer_leaves_out_is_retried_not_counted_written(monkeypatch):
    """A conforming server answers every action; an answer cut short (a proxy, a bug) must not
    pass the articles it leaves out for written: they go round again, and fail if they stay out."""
    pytest.importorskip("elasticsearch")
    from elasticsearch import helpers

    from indexer.store.es_bulk import bulk_create

    sent: list[list[str]] = []

    def answers_all_but_the_last(client, actions, **_):
        ids = [a["_id"] for a in actions]
        sent.append(ids)
        for aid in ids[:-1] if len(ids) > 1 else ids[:0]:
            yield True, {"create": {"_id": aid, "status": 201}}

    class Client:
        def options(self, **_):
            return self

    monkeypatch.setattr(helpers, "streaming_bulk", answers_all_but_the_last)
    docs = {f"a{i}": {"title": str(i)} for i in range(3)}
    outcome = bulk_create(Client(), "ndtest", docs, chunk_docs=10, chunk_bytes=1 << 20, max_retries=2, backoff=0.0,
                          sleep=lambda _: None)
    assert sent == [["a0", "a1", "a2"], ["a2"], ["a2"]]
    assert outcome.written == ["a0", "a1"] and list(outcome.failed) == ["a2"] and outcome.statuses == {"a2": None}
