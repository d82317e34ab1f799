"""In-process pieces: the durable queue, body parsing, settings, the crawl schedule."""

from __future__ import annotations

import random
import sqlite3
import threading
import time

import pytest

from indexer.daemon.api import ApiError, parse_body
from crawlers.scheduled import CrawlScheduler, QueueSink
from indexer.daemon.metrics import DaemonMetrics
from indexer.daemon.queue import DurableQueue, QueueFull
from indexer.settings import load_settings
from indexer.retry import Backoff
from indexer.errors import ConfigError
from indexer.settings import DaemonSettings, Settings


def _items(*ids):
    return [(i, {"id": i, "title": f"t{i}"}) for i in ids]


def _take_and_die(directory, n: int) -> list[str]:
    """Another process takes ``n`` items and dies holding them (as an out-of-memory kill would:
    nothing is settled); the ids it took."""
    import json
    import subprocess
    import sys

    code = ("import json, os, sys; from indexer.daemon.queue import DurableQueue; "
            "q = DurableQueue(sys.argv[1], max_items=100); "
            "print(json.dumps([i.article_id for i in q.take(int(sys.argv[2]), wait=0, fill=False)]), flush=True); "
            "os._exit(137)")
    done = subprocess.run([sys.executable, "-c", code, str(directory), str(n)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 137, done.stderr
    return json.loads(done.stdout)


def test_queue_put_take_ack_and_restart(tmp_path):
    q = DurableQueue(tmp_path, max_items=5)
    q.put_many(_items("a", "b", "c"), "http")
    assert q.depth() == 3 and q.contains("b")
    first = q.take(2, wait=0, fill=False)
    assert [i.article_id for i in first] == ["a", "b"]
    second = q.take(5, wait=0, fill=False)
    assert [i.article_id for i in second] == ["c"]  # in-hand items are not handed out twice
    q.ack([first[0].seq])
    q.release([first[1].seq])
    assert [i.article_id for i in q.take(5, wait=0, fill=False)] == ["b"]
    with pytest.raises(QueueFull):
        q.put_many(_items("d", "e", "f", "g"), "http")  # all or nothing
    assert q.depth() == 2
    q.close()
    # a restart hands every unacknowledged item out again; a clean close counts against none
    q2 = DurableQueue(tmp_path, max_items=5)
    assert [i.article_id for i in q2.take(5, wait=0, fill=False)] == ["b", "c"]
    q2.close()
    # a process that died holding them: they were being worked on, so one at a time
    assert _take_and_die(tmp_path, 5) == ["b", "c"]
    q3 = DurableQueue(tmp_path, max_items=5)
    b = q3.take(5, wait=0, fill=False)
    assert [i.article_id for i in b] == ["b"]
    assert q3.take(5, wait=0, fill=False) == []  # nothing else while a suspect is in hand
    q3.ack([b[0].seq])
    assert [i.article_id for i in q3.take(5, wait=0, fill=False)] == ["c"]
    q3.close()


def test_queue_sets_aside_an_article_in_hand_at_three_process_stops(tmp_path):
    """An article that kills the process raises nothing: the queue counts the deaths it was being
    worked on in, and not the time the worker only waited (for the store) or a clean close."""
    q = DurableQueue(tmp_path, max_items=10)
    q.put_many(_items("p", "x", "y"), "http")
    q.close()
    assert _take_and_die(tmp_path, 2) == ["p", "x"]
    for _ in range(2):
        assert _take_and_die(tmp_path, 5) == ["p"]  # alone: the next death is its own
    q = DurableQueue(tmp_path, max_items=10)
    x = q.take(5, wait=0, fill=False)
    assert [i.article_id for i in x] == ["x"] and q.dead_count() == 1  # p set aside; x counted once, still alone
    (dead,) = q.dead_letters()
    assert dead.article_id == "p" and "stopped 3 times" in dead.error
    q.waiting([x[0].seq])  # the store is down: x waits in hand
    q.waiting([x[0].seq])  # (twice is once)
    q.close()  # a clean stop: nothing counted now either way
    q = DurableQueue(tmp_path, max_items=10)
    x = q.take(5, wait=0, fill=False)
    assert [i.article_id for i in x] == ["x"]
    q.release([x[0].seq])
    x = q.take(5, wait=0, fill=False)
    q.waiting([x[0].seq])
    q.working([x[0].seq])
    q.working([x[0].seq])  # (twice is once)
    q.ack([x[0].seq])
    assert [i.article_id for i in q.take(5, wait=0, fill=False)] == ["y"]  # never in hand at a death: a batch again
    assert q.requeue(["p"]) == 1
    q.close()
    assert _take_and_die(tmp_path, 5) == ["y", "p"]  # p re-queued with a clean count
    for died in range(2, 4):  # counts kept exactly: y (1 → 2 → 3 deaths) then alone at its third
        assert _take_and_die(tmp_path, 5) == ["y"]
    q = DurableQueue(tmp_path, max_items=10)
    assert [i.article_id for i in q.take(5, wait=0, fill=False)] == ["p"] and q.dead_count() == 1
    q.close()


def test_a_queue_whose_count_cannot_be_written_hands_nothing_out_and_recovers(tmp_path):
    import sqlite3

    q = DurableQueue(tmp_path, max_items=10)
    q.put_many(_items("a", "b"), "http")
    q._db.execute("PRAGMA busy_timeout=50")
    other = sqlite3.connect(tmp_path / "queue.sqlite3")
    other.execute("BEGIN IMMEDIATE")
    try:
        assert q.take(5, wait=0, fill=False) == []  # locked past the busy timeout: later
    finally:
        other.rollback()
        other.close()
    assert [i.article_id for i in q.take(5, wait=0, fill=False)] == ["a", "b"]
    q.close()


def test_queue_of_an_earlier_version_gains_the_attempt_count(tmp_path):
    import json
    import sqlite3

    db = sqlite3.connect(tmp_path / "queue.sqlite3")
    db.execute("CREATE TABLE items (seq INTEGER PRIMARY KEY AUTOINCREMENT, article_id TEXT NOT NULL, "
               "record TEXT NOT NULL, origin TEXT NOT NULL, enqueued_at REAL NOT NULL)")
    db.execute("INSERT INTO items (article_id, record, origin, enqueued_at) VALUES ('a', ?, 'http', 0)",
               (json.dumps({"id": "a", "title": "t"}),))
    db.commit()
    db.close()
    q = DurableQueue(tmp_path, max_items=10)
    q.put_many(_items("b"), "http")
    assert [i.article_id for i in q.take(5, wait=0, fill=False)] == ["a", "b"]
    q.close()


def test_queue_take_waits_for_size_or_time_and_buries(tmp_path):
    q = DurableQueue(tmp_path, max_items=100)
    q.put_many(_items("a"), "http")
    started = time.monotonic()
    got = q.take(10, wait=0.3)
    assert [i.article_id for i in got] == ["a"] and time.monotonic() - started >= 0.25
    threading.Timer(0.05, lambda: q.put_many(_items(*"bcdefghijk"), "http")).start()
    started = time.monotonic()
    assert len(q.take(10, wait=5)) == 10 and time.monotonic() - started < 2  # full batch: no waiting
    q.bury(got[0], "boom")
    assert q.dead_count() == 1 and not q.contains("a")
    q.close()


def test_parse_body_shapes():
    assert parse_body('{"a": 1}') == ([{"a": 1}], {})
    assert parse_body('[{"a": 1}, 2]') == ([{"a": 1}, 2], {})
    items, errors = parse_body('{"a": 1}\n\n{"b": 2}\n{oops\n')
    assert items[:2] == [{"a": 1}, {"b": 2}] and list(errors) == [2]
    for bad in ("", "  ", "{oops", "42", '"text"', "{x\n{y"):
        with pytest.raises(ApiError) as exc:
            parse_body(bad)
        assert exc.value.code == 400


def test_daemon_settings_validate_like_the_rest():
    d = load_settings(environ={"NEWSDEDUP_DAEMON_PORT": "9000", "NEWSDEDUP_DAEMON_LEASE": "none"},
                      overrides={"daemon.batch_wait_seconds": "0.2"}).daemon
    assert (d.port, d.batch_wait_seconds, d.lease) == (9000, 0.2, "none")
    assert DaemonSettings().host == "127.0.0.1" and DaemonSettings().auth_token == ""
    for key, bad in (("port", "70000"), ("lease", "zookeeper"), ("nope", 1), ("queue_max", "many"),
                     ("auth_token", "abc "), ("auth_token", " abc"), ("auth_token", "ab\ncd")):
        with pytest.raises(ConfigError, match=f"daemon.{key}"):
            load_settings(overrides={f"daemon.{key}": bad}, environ={})
    assert load_settings(overrides={"daemon.auth_token": "tökén-42"}, environ={}).daemon.auth_token == "tökén-42"
    b = Backoff(0.5, 2, random.Random(7))  # the store retries: doubling to the cap, jittered below each step
    steps = [b.step() for _ in range(4)]
    assert all(plan / 2 <= got <= plan for got, plan in zip(steps, [0.5, 1, 2, 2])) and len(set(steps)) == 4
    b.reset()
    assert b.step() <= 0.5


def _metrics(q):
    return DaemonMetrics(q.depth, lambda: 1.0, lambda: 1.0)


def test_queue_sink_rejects_invalid_and_waits_while_full(tmp_path):
    q = DurableQueue(tmp_path, max_items=2)
    stop = threading.Event()
    sink = QueueSink(q, Settings(), _metrics(q), stop, poll=0.02)
    out = sink.send([{"url": "https://x.cn/1", "title": "标题", "content": "正文"}, {"url": "https://x.cn/2", "title": ""}])
    assert [d.status for d in out] == ["accepted", "rejected"] and q.depth() == 1
    queued = q.take(1, 0, fill=False)[0]
    assert queued.record.title == "标题"  # the article the sink parsed, not the record to parse again
    q.release([queued.seq])
    threading.Timer(0.1, lambda: q.ack([i.seq for i in q.take(5, 0, fill=False)])).start()
    sink.send([{"url": f"https://x.cn/{i}", "title": f"标题{i}"} for i in (3, 4)])  # waits for room
    assert q.depth() == 2
    from crawlers.errors import SinkError

    threading.Timer(0.1, stop.set).start()
    with pytest.raises(SinkError):
        sink.send([{"url": "https://x.cn/5", "title": "标题5"}])
    q.close()


def test_scheduled_crawl_feeds_the_queue_once_per_url(tmp_path):
    from tests.crawlers.server import FixtureServer
    from tests.crawlers.sites import build_site_b

    srv = FixtureServer().start()
    try:
        build_site_b(srv)
        sources = tmp_path / "sources.toml"
        sources.write_text(f"""
[defaults]
delay = 0.0
timeout = 2.0
max_retries = 0

[[sources]]
name = "site-b"
type = "feed"
start_urls = ["{srv.base}/rss.xml"]
[sources.extra]
interval_seconds = 0.3
""", encoding="utf-8")
        q = DurableQueue(tmp_path / "q", max_items=100)
        m = _metrics(q)
        sched = CrawlScheduler(str(sources), tmp_path / "state", q, Settings(), m, default_interval=900, batch_size=10)
        assert sched.interval(sched.sources.sources[0]) == 0.3
        sched.start()
        deadline = time.monotonic() + 20
        while m.crawl_runs.labels("ok")._value.get() < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        sched.stop()
        sched.join(10)
        assert m.crawl_runs.labels("ok")._value.get() >= 2  # ran again after its interval
        urls = sorted(i.record.url for i in q.take(100, 0, fill=False))
        assert len(urls) == 3 and len(set(urls)) == 3  # the second run found nothing new
        assert all("/private/" not in u for u in urls)
        q.close()
    finally:
        srv.stop()


def test_serve_reads_daemon_settings_from_toml_env_and_flags(tmp_path, monkeypatch):
    from indexer.daemon.cli import load_all

    cfg = tmp_path / "nd.toml"
    cfg.write_text('[store]\npath = "/tmp/x-store"\n[daemon]\nport = 9100\nqueue_max = 7\n', encoding="utf-8")
    monkeypatch.setenv("NEWSDEDUP_DAEMON_BATCH_SIZE", "9")
    monkeypatch.setenv("NEWSDEDUP_DAEMON_AUTH_TOKEN", "tok")
    settings, d = load_all(str(cfg), None, ("daemon.queue_max=8", "embedding.model=none"), host="0.0.0.0")
    assert settings.store.path == "/tmp/x-store" and settings.embedding.model == "none"
    assert (d.port, d.queue_max, d.batch_size, d.host, d.auth_token) == (9100, 8, 9, "0.0.0.0", "tok")


def test_the_worker_prepares_the_next_batch_on_the_indexers_stages_before_deciding_this_one(make_indexer, tmp_path, monkeypatch):
    """The daemon stages batches as ``index_stream`` does: batch n+1 is prepared (parsed once,
    features started on the indexer's text and embedding stages) before batch n is decided; each
    record is parsed once and featurised once, an invalid one is rejected and acknowledged."""
    import threading as th

    from indexer import pipeline
    from indexer.daemon.lease import NoopLease
    from indexer.daemon.worker import Worker

    ix = make_indexer()
    events: list[tuple[str, list]] = []
    decisions: dict[str, str] = {}
    real_prepare, real_decide = ix.prepare, ix.index_prepared

    def prepare(records, where=None):
        events.append(("prepare", list(where)))
        return real_prepare(records, where)

    def index_prepared(batch):
        events.append(("decide", [loc for _, _, loc in batch.valid]))
        outcomes = real_decide(batch)
        decisions.update((o.article_id, o.decision.value) for o in outcomes)
        return outcomes

    parsed: list = []
    real_parse = pipeline.article_from_record
    monkeypatch.setattr(pipeline, "article_from_record", lambda r, *a: (parsed.append(r.get("id")), real_parse(r, *a))[1])
    featurised: dict[str, set] = {}
    real_text = ix.featurizer.text

    def text(article):
        featurised.setdefault(article.id, set()).add(th.current_thread().name.rsplit("_", 1)[0])
        return real_text(article)

    monkeypatch.setattr(ix, "prepare", prepare)
    monkeypatch.setattr(ix, "index_prepared", index_prepared)
    monkeypatch.setattr(ix.featurizer, "text", text)
    records = [{"id": f"w{i}", "title": f"第{i}条消息", "content": f"这是第{i}篇关于降雨的报道，气象台发布了预警。"} for i in range(5)]
    records.insert(2, {"id": "bad", "title": 7})
    q = DurableQueue(tmp_path / "q", max_items=100)
    q.put_many([(r["id"], r) for r in records], "http")
    d = DaemonSettings(batch_size=2, batch_wait_seconds=0.0)
    worker = Worker(Settings(), d, q, _metrics(q), indexer_factory=lambda s: ix, lease_factory=NoopLease)
    assert worker.indexer is None  # what the HTTP layer reads: nothing before the store is open
    worker.start()
    deadline = time.monotonic() + 60
    while q.depth() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert worker.indexer is ix
    worker.stop(0)
    worker.join(30)
    assert q.depth() == 0 and q.dead_count() == 0
    prepared = [places for kind, places in events if kind == "prepare"]
    decided = [kind == "decide" for kind, _ in events]
    assert len(prepared) == 3 and decided.count(True) == 3
    for n in range(2):  # batch n+1 prepared before batch n is decided
        assert events.index(("prepare", prepared[n + 1])) < [i for i, x in enumerate(decided) if x][n]
    assert sorted(parsed) == sorted(r["id"] for r in records)  # each record parsed once
    featurised.pop("warm-up")  # the model loaded before the first batch
    assert featurised == {f"w{i}": {"text-features"} for i in range(5)}  # once each, on the indexer's stage
    assert decisions == {"bad": "rejected", **{f"w{i}": "new" for i in range(5)}}
    q.close()


def test_parse_body_refuses_what_the_json_parser_cannot_handle_with_400_or_per_line():
    deep = "[" * 100_000 + "]" * 100_000
    for bad in ('{"a": ' + deep + "}", '{"n": ' + "9" * 5000 + "}"):  # too deep; an integer past Python's digit limit
        with pytest.raises(ApiError) as exc:
            parse_body(bad)
        assert exc.value.code == 400
    items, errors = parse_body('{"a": 1}\n' + deep + "\n" + '{"n": ' + "9" * 5000 + "}\n")
    assert items[0] == {"a": 1} and errors[1] == "invalid JSON: nested too deeply to parse"
    assert errors[2].startswith("invalid JSON: ") and "digits" in errors[2]
    # an array with one element too deep for the parser: only that element is refused
    items, errors = parse_body('[{"a": "],[{"},\n ' + deep + ', {"b": "\\"]"}]')
    assert items == [{"a": "],[{"}, None, {"b": '"]'}] and errors == {1: "invalid JSON: nested too deeply to parse"}


def test_split_json_array_finds_top_level_elements_without_parsing():
    from indexer.daemon.api import split_json_array

    assert split_json_array('[1, {"a": [2, "x,]"]}, "\\",["]') == ["1", ' {"a": [2, "x,]"]}', ' "\\",["']
    assert split_json_array("[]") == [] and split_json_array("[ ]") == []
    for not_one_array in ('{"a": 1}', "[1] [2]", "[[1]", '["1]"'):
        assert split_json_array(not_one_array) is None


def test_queue_buries_rows_it_cannot_parse_and_requeues_dead_letters(tmp_path):
    import sqlite3

    q = DurableQueue(tmp_path, max_items=4)
    q.put_many(_items("a"), "http")
    other = sqlite3.connect(tmp_path / "queue.sqlite3")  # a row written before the edge bounded records
    with other:
        other.execute("INSERT INTO items (article_id, record, origin, enqueued_at) VALUES ('deep', ?, 'http', 0)",
                      ("[" * 100_000 + "]" * 100_000,))
    q.put_many(_items("b"), "http")  # the queue noticed the other writer: three rows, room for one more
    assert q.depth() == 3
    taken = q.take(5, wait=0, fill=False)
    assert [i.article_id for i in taken] == ["a", "b"]
    q.ack([i.seq for i in taken])
    (dead,) = q.dead_letters()
    assert dead.article_id == "deep" and "cannot be parsed" in dead.error and dead.record.startswith("[[[")
    assert q.depth() == 0
    # requeue: by id or all, back at the end of the queue as stored, never past max_items
    q.put_many(_items("c", "d", "e", "f"), "http")
    with pytest.raises(QueueFull):
        q.requeue()
    assert q.dead_count() == 1
    first = q.take(5, wait=0, fill=False)
    q.ack([i.seq for i in first])
    assert q.requeue(["nope"]) == 0 and q.requeue(["deep"]) == 1 and q.dead_count() == 0
    assert q.take(5, wait=0, fill=False) == [] and q.dead_count() == 1  # still unparseable: buried again
    # a second process re-queues into a running queue; the running one picks it up
    q.put_many(_items("e"), "http")
    (e,) = q.take(5, wait=0, fill=False)
    q.bury(e, "boom")
    cli_side = DurableQueue(tmp_path, max_items=4)
    assert cli_side.requeue(["e"]) == 1
    cli_side.close()
    assert [i.article_id for i in q.take(5, wait=0, fill=False)] == ["e"] and q.depth() == 1
    other.close()
    q.close()


def test_queue_hands_the_producers_parsed_form_to_its_consumer_within_a_budget(tmp_path):
    """The parsed form travels in memory beside the durable record: the consumer of this process
    gets it (also after a release), a budget bounds what waits, and after a restart the stored
    records come back as they were queued."""
    items = _items("a", "b", "c")
    size = len('{"id":"a","title":"ta"}')
    q = DurableQueue(tmp_path, max_items=10, parsed_budget_bytes=2 * size)
    parsed = [object(), object(), object()]
    with pytest.raises(ValueError):
        q.put_many(items, "http", parsed=parsed[:2])
    assert q.depth() == 0
    q.put_many(items, "http", parsed=parsed)
    taken = q.take(3, wait=0, fill=False)
    assert taken[0].record is parsed[0] and taken[1].record is parsed[1]
    assert taken[2].record == items[2][1]  # past the budget: decoded from the queue
    q.release([taken[1].seq])
    assert q.take(1, wait=0, fill=False)[0].record is parsed[1]
    q.ack([taken[0].seq, taken[1].seq])
    d = object()
    q.put_many(_items("d"), "http", parsed=[d])  # acknowledged items freed their share of the budget
    (taken_d,) = q.take(1, wait=0, fill=False)
    assert taken_d.record is d
    q.release([taken[2].seq, taken_d.seq])  # given back: not in hand when the process stops
    q.close()
    again = DurableQueue(tmp_path, max_items=10)
    assert [(i.article_id, i.record) for i in again.take(5, wait=0, fill=False)] == [("c", items[2][1]), *_items("d")]
    again.close()


def test_articles_the_api_validated_are_not_parsed_again_by_the_worker(make_indexer, tmp_path, monkeypatch):
    """POSTed records are validated at the API (an invalid one is refused there, 422) and the
    worker indexes the very articles the API made: no second decode and validation."""
    import json
    from types import SimpleNamespace

    from indexer import pipeline
    from indexer.daemon.api import _enqueue
    from indexer.daemon.lease import NoopLease
    from indexer.daemon.worker import Worker

    parsed_by_worker: list = []
    real_parse = pipeline.article_from_record
    monkeypatch.setattr(pipeline, "article_from_record",
                        lambda r, *a: (parsed_by_worker.append(r.get("id")), real_parse(r, *a))[1])
    ix = make_indexer(embedder=None)
    q = DurableQueue(tmp_path / "q", max_items=100)
    ctx = SimpleNamespace(daemon=SimpleNamespace(queue=q), d=DaemonSettings(), settings=ix.settings, metrics=_metrics(q))
    records = [{"id": f"p{i}", "title": f"第{i}条消息", "content": f"这是第{i}篇关于降雨的报道，气象台发布了预警。"} for i in range(4)]
    body = json.dumps([*records, {"id": "bad", "title": 7}], ensure_ascii=False).encode()
    reply = _enqueue(body, ctx)
    assert reply["accepted"] == [r["id"] for r in records] and reply["rejected"] == 1
    worker = Worker(ix.settings, DaemonSettings(batch_size=2, batch_wait_seconds=0.0), q, _metrics(q),
                    indexer_factory=lambda s: ix, lease_factory=NoopLease, close_store_on_exit=False)
    worker.start()
    deadline = time.monotonic() + 60
    while q.depth() and time.monotonic() < deadline:
        time.sleep(0.02)
    worker.stop(0)
    worker.join(30)
    assert q.depth() == 0 and q.dead_count() == 0
    assert set(ix.store.get_many([r["id"] for r in records])) == {r["id"] for r in records}
    assert parsed_by_worker == []
    q.close()


def test_worker_counts_cluster_merges(tmp_path):
    from types import SimpleNamespace

    from indexer.daemon.worker import Worker
    from indexer.pipeline import Decision, IndexOutcome

    q = DurableQueue(tmp_path / "q", max_items=10)
    m = _metrics(q)
    Worker._count(SimpleNamespace(metrics=m), [
        IndexOutcome("x", Decision.DUPLICATE, "a", "a2", "near", 0.9, merged=["b", "c"]),
        IndexOutcome("y", Decision.NEW, "y"),
    ])
    text = m.render().decode()
    assert "newsdedup_indexer_cluster_merges_total 2.0" in text
    q.close()


def test_a_worker_that_does_not_own_the_store_leaves_it_open_for_the_server(tmp_path, make_indexer):
    """The daemon stops its HTTP server before the store closes: answers in the last moment of a
    shutdown read an open store, not a closed one (500)."""
    from indexer.daemon.lease import NoopLease
    from indexer.daemon.worker import Worker

    ix = make_indexer(embedder=None)
    q = DurableQueue(tmp_path / "q", max_items=10)
    worker = Worker(Settings(), DaemonSettings(batch_wait_seconds=0.0), q, _metrics(q), indexer_factory=lambda s: ix,
                    lease_factory=NoopLease, close_store_on_exit=False)
    worker.start()
    deadline = time.monotonic() + 30
    while worker.indexer is None and time.monotonic() < deadline:
        time.sleep(0.02)
    worker.stop(0)
    worker.join(30)
    assert worker.indexer is ix and ix.store.stats().articles == 0  # still open after the thread ended
    worker.close_store()
    assert worker.indexer is None
    with pytest.raises(Exception):
        ix.store.stats()  # closed now
    q.close()


def test_a_later_stop_never_extends_an_earlier_deadline(tmp_path):
    # A second signal's stop(0) may run before the drain's own stop(grace): the drain ends at once.
    from indexer.daemon.worker import Worker

    q = DurableQueue(tmp_path / "q", max_items=10)
    worker = Worker(Settings(), DaemonSettings(), q, _metrics(q), indexer_factory=lambda s: None)
    worker.stop(0)
    worker.stop(120)
    assert worker._time_left() <= 0 and worker._stopping.is_set()
    q.close()


def test_a_second_signal_ends_a_backoff_sleep_at_once(tmp_path):
    # A drain's backoff after a store failure may be minutes long (store_retry_max_seconds): the
    # second signal's stop(0) must end it, not wait it out.
    from indexer.daemon.worker import Worker

    q = DurableQueue(tmp_path / "q", max_items=10)
    worker = Worker(Settings(), DaemonSettings(), q, _metrics(q), indexer_factory=lambda s: None)
    worker.stop(600)  # the first signal: a drain of up to ten minutes
    threading.Timer(0.2, worker.stop, (0,)).start()  # the second, while the worker sleeps
    started = time.monotonic()
    worker._sleep(30)
    assert time.monotonic() - started < 5
    q.close()


def test_a_daemon_whose_store_blipped_while_taking_the_lease_becomes_ready(tmp_path, make_indexer):
    """The first try of the lease met a store that was down; the second got it. The daemon is ready
    then, with nothing queued: an idle daemon that stayed "store unavailable" until its next batch
    would get none behind a balancer that routes to ready daemons only."""
    from indexer.daemon.worker import Worker
    from indexer.errors import StoreUnavailable

    class BlipLease:
        def __init__(self):
            self.tries, self.held = 0, False

        def acquire(self):
            self.tries += 1
            if self.tries == 1:
                raise StoreUnavailable("connection refused")
            self.held = True
            return True

        def valid(self):
            return self.held

        def renew(self):
            return self.held

        def holder(self):
            return "this daemon"

        def release(self):
            self.held = False

    ix = make_indexer(embedder=None)
    q = DurableQueue(tmp_path / "q", max_items=10)
    lease = BlipLease()
    worker = Worker(Settings(), DaemonSettings(batch_wait_seconds=0.05, store_retry_initial_seconds=0.05), q, _metrics(q),
                    indexer_factory=lambda s: ix, lease_factory=lambda: lease)
    _run_worker_until(worker, lambda: lease.held and worker.ready, timeout=10)
    assert lease.tries == 2 and worker.ready and not worker.store_down
    q.close()


def _run_worker_until(worker, done, timeout=30.0):
    worker.start()
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.02)
    worker.stop(0)
    worker.join(timeout)


def test_an_article_the_store_refuses_for_good_is_dead_lettered_and_the_queue_moves_on(tmp_path, make_indexer):
    """Elasticsearch answers some articles 400 on every try (BulkWriteError.refused): retrying
    the batch as if the store were down would hold every later article back forever."""
    from indexer.daemon.lease import NoopLease
    from indexer.daemon.worker import Worker
    from indexer.errors import BulkWriteError

    ix = make_indexer(embedder=None)
    write = ix.store.write

    def refuses_one(articles, merges=()):  # as the Elasticsearch store does: the rest are written
        write([a for a in articles if a.id != "bad"], merges)
        if any(a.id == "bad" for a in articles):
            raise BulkWriteError("1 article was not written", [("bad", "mapper_parsing_exception")], ["bad"])

    ix.store.write = refuses_one
    q = DurableQueue(tmp_path / "q", max_items=10)
    q.put_many([(i, {"id": i, "title": f"新闻标题{i}", "content": f"正文内容{i}"}) for i in ("ok0", "bad")], origin="http")
    q.put_many([("ok2", {"id": "ok2", "title": "新闻标题ok2", "content": "正文内容ok2"})], origin="http")
    worker = Worker(Settings(), DaemonSettings(batch_size=2, batch_wait_seconds=0.0, store_retry_initial_seconds=0.05),
                    q, _metrics(q), indexer_factory=lambda s: ix, lease_factory=NoopLease, close_store_on_exit=False)
    _run_worker_until(worker, lambda: q.depth() == 0)
    assert sorted(ix.store.get_many(["ok0", "bad", "ok2"])) == ["ok0", "ok2"]
    assert [(d.article_id, "mapper_parsing_exception" in d.error) for d in q.dead_letters()] == [("bad", True)]
    q.close()


def test_a_store_closed_under_a_draining_worker_leaves_its_articles_queued_not_dead(tmp_path, make_indexer):
    """The daemon closes the store when the drain's time is up, even if the worker is still
    writing article by article: what fails after that is not the articles' fault."""
    from indexer.daemon.lease import NoopLease
    from indexer.daemon.worker import Worker

    ix = make_indexer(embedder=None)
    ix.index_prepared = lambda batch: (_ for _ in ()).throw(RuntimeError("the whole batch failed"))  # -> one by one
    one = ix.index_many
    started = threading.Event()

    def slow_one(records, where=None):
        started.set()
        time.sleep(0.2)
        return one(records, where)

    ix.index_many = slow_one
    q = DurableQueue(tmp_path / "q", max_items=10)
    q.put_many([(f"a{i}", {"id": f"a{i}", "title": f"新闻标题{i}", "content": f"正文内容{i}"}) for i in range(6)], origin="http")
    worker = Worker(Settings(), DaemonSettings(batch_size=6, batch_wait_seconds=0.0), q, _metrics(q),
                    indexer_factory=lambda s: ix, lease_factory=NoopLease, close_store_on_exit=False)
    worker.start()
    assert started.wait(30)
    worker.stop(0)
    worker.close_store()  # as Daemon.shutdown does once its join deadline passed
    worker.join(30)
    assert q.dead_letters() == []
    assert q.depth() >= 4  # the first article or two may be written; the rest wait for the next start
    q.close()


class _FailingReads:
    """An embedded store's connection whose next ``failures`` SELECTs fail as a sick disk's do."""

    def __init__(self, db, failures: int):
        self._db, self.failures = db, failures

    def execute(self, sql, *args):
        if self.failures and sql.lstrip().upper().startswith("SELECT"):
            self.failures -= 1
            raise sqlite3.OperationalError("disk I/O error")
        return self._db.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._db, name)


def test_an_embedded_store_that_fails_to_read_keeps_the_articles_queued_not_dead(tmp_path, make_indexer):
    """A read that fails in SQLite is the store's fault, not the articles': the batch waits and is
    retried, as for any store outage, and nothing goes to the dead-letter table."""
    from indexer.daemon.lease import NoopLease
    from indexer.daemon.worker import Worker

    ix = make_indexer(embedder=None)
    ix.index_many([{"id": "old", "title": "新闻标题old", "content": "正文内容old"}])
    ix.store._row_cache.clear()
    sick = _FailingReads(ix.store._db, failures=3)
    ix.store._db = sick
    q = DurableQueue(tmp_path / "q", max_items=10)
    q.put_many([(i, {"id": i, "title": f"新闻标题{i}", "content": f"正文内容{i}"}) for i in ("a", "b", "old")], origin="http")
    worker = Worker(Settings(), DaemonSettings(batch_size=3, batch_wait_seconds=0.0, store_retry_initial_seconds=0.05),
                    q, _metrics(q), indexer_factory=lambda s: ix, lease_factory=NoopLease, close_store_on_exit=False)
    _run_worker_until(worker, lambda: q.depth() == 0)
    assert sick.failures == 0 and q.dead_letters() == []
    assert sorted(ix.store.get_many(["a", "b", "old"])) == ["a", "b", "old"]
    q.close()


def test_ndjson_lines_end_at_newlines_only():
    # U+2028, U+2029 and U+0085 may stand unescaped inside a JSON string (json.dumps with
    # ensure_ascii=False writes them so): a line holding one is still one record.
    body = '{"id": "a", "title": "x\u2028y"}\n{"id": "b", "title": "p\u2029q\u0085r"}\n{"id": "c"}'
    items, errors = parse_body(body)
    assert [i["id"] for i in items] == ["a", "b", "c"] and errors == {}


def test_the_daemon_stops_when_its_http_server_died():
    """A daemon no request can reach must exit (crashed), so that its supervisor restarts it."""
    from types import SimpleNamespace

    from indexer.daemon.service import Daemon

    daemon = SimpleNamespace(stop_requested=threading.Event(), worker=SimpleNamespace(is_alive=lambda: True),
                             httpd=SimpleNamespace(alive=lambda: False), crashed=False)
    waiter = threading.Thread(target=Daemon.wait, args=(daemon,), daemon=True)
    waiter.start()
    waiter.join(10)
    assert not waiter.is_alive() and daemon.crashed


def test_a_shutdown_whose_worker_crashed_or_never_stopped_is_not_clean(caplog, monkeypatch):
    """A worker that crashed during the drain makes the exit code 1; one still inside a slow store or
    model call when the join gives up is a stop (0: what it holds is queued again), and neither
    logs "stopped cleanly"."""
    import logging
    from types import SimpleNamespace

    from indexer.daemon import service
    from indexer.daemon.service import Daemon

    clock = iter(range(0, 10**6, 3))  # the join's ten seconds pass in four reads
    monkeypatch.setattr(service, "time", SimpleNamespace(monotonic=lambda: next(clock)))

    def daemon(worker):
        queue = SimpleNamespace(depth=lambda: 0, close=lambda: None)
        return SimpleNamespace(accepting=True, crawler=None, _signals=1, crashed=False, worker=worker, queue=queue,
                               d=DaemonSettings(shutdown_grace_seconds=0), httpd=SimpleNamespace(stop=lambda: None))

    def worker(alive, crashed):
        return SimpleNamespace(stop=lambda grace: None, is_alive=lambda: alive, join=lambda t: None,
                               close_store=lambda: None, crashed=crashed)

    for alive, crashed, code, clean in ((False, True, 1, False), (True, False, 0, False), (False, False, 0, True)):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="indexer.daemon.service"):
            got = Daemon.shutdown(daemon(worker(alive, crashed)))
        assert got == code and ("stopped cleanly" in caplog.text) == clean, (alive, crashed)
