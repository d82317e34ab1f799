import csv
import json

import pytest

from crawlers.errors import DropArticle, SinkError
from crawlers.pipelines import CrawledArticle, default_pipeline
from crawlers.sinks import CsvSink, HttpPushSink, file_sink
from crawlers.state import CrawlState

from .server import sequence, status

RECORDS = [
    {"url": "http://a/1", "title": "标题一", "content": "第一段\n第二段，含逗号, \"引号\"", "source": "a", "publish_time": "2021-04-05T09:12:00+08:00"},
    {"url": "http://a/2", "title": "标题二", "content": "正文", "source": "a", "publish_time": None},
]


def test_state_survives_reopening_and_uses_canonical_urls(tmp_path):
    with CrawlState(tmp_path / "st") as state:
        state.mark_seen([("http://H.example/n/1.html?utm_source=x&b=2&a=1#top", "s", "new")])
        state.save_validators("http://h.example/list", '"v1"', "Mon, 05 Apr 2021 01:12:00 GMT")
    with CrawlState(tmp_path / "st") as state:
        assert state.is_seen("http://h.example/n/1.html?a=1&b=2")
        assert not state.is_seen("http://h.example/n/2.html")
        assert state.validators("http://h.example/list") == ('"v1"', "Mon, 05 Apr 2021 01:12:00 GMT")
        assert state.seen_count("s") == 1


def test_drops_a_later_fetch_may_not_repeat_are_retried_after_a_day(tmp_path, monkeypatch):
    from crawlers import state as state_module

    clock = [1_000_000.0]
    monkeypatch.setattr(state_module.time, "time", lambda: clock[0])
    with CrawlState(tmp_path / "st") as state:
        state.mark_seen([("http://h.example/waf", "s", "dropped:too_short"), ("http://h.example/dup", "s", "dropped:duplicate_url"),
                         ("http://h.example/ok", "s", "new"), ("http://h.example/gbk", "s", "dropped:mojibake")])
        assert all(state.is_seen(f"http://h.example/{p}") for p in ("waf", "dup", "ok", "gbk"))
        clock[0] += state_module.RETRY_DROPPED_AFTER
        assert [p for p in ("waf", "dup", "ok", "gbk") if not state.is_seen(f"http://h.example/{p}")] == ["waf", "gbk"]


def test_csv_has_the_seed_columns_and_appends_without_a_second_header(tmp_path):
    path = tmp_path / "raw_news_articles.csv"
    sink = CsvSink(path)
    sink.send(RECORDS[:1])
    sink.close()
    sink = CsvSink(path)
    sink.send(RECORDS[1:])
    sink.close()
    with open(path, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["url", "title", "content", "source", "publish_time"]
    assert rows[0]["content"] == RECORDS[0]["content"] and rows[1]["publish_time"] == ""
    assert len(rows) == 2


def test_jsonl_keeps_chinese_readable(tmp_path):
    sink = file_sink(tmp_path / "out.jsonl")
    assert [d.status for d in sink.send(RECORDS)] == ["written", "written"]
    sink.close()
    text = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    assert "标题一" in text and [json.loads(line) for line in text.splitlines()] == RECORDS
    with pytest.raises(SinkError):
        file_sink(tmp_path / "out.parquet")


def test_http_push_sends_ndjson_with_bearer_token(server):
    server.routes["/v1/articles"] = status(202, {"Content-Type": "application/json"}, b'{"accepted": 2}')
    sink = HttpPushSink(server.url("/v1/articles"), token="s3cret")
    deliveries = sink.send(RECORDS)
    (req,) = [r for r in server.log if r.method == "POST"]
    assert req.headers["Authorization"] == "Bearer s3cret"
    assert req.headers["Content-Type"].startswith("application/x-ndjson")
    assert [json.loads(line) for line in req.body.decode("utf-8").splitlines()] == RECORDS
    assert [d.status for d in deliveries] == ["accepted", "accepted"]


def test_http_push_reads_per_article_decisions_when_given(server):
    body = json.dumps({"results": [{"decision": "new", "cluster_id": "c1"}, {"decision": "duplicate", "cluster_id": "c1"}]}).encode()
    server.routes["/v1/articles"] = status(202, {"Content-Type": "application/json"}, body)
    deliveries = HttpPushSink(server.url("/v1/articles")).send(RECORDS)
    assert [(d.status, d.cluster_id) for d in deliveries] == [("new", "c1"), ("duplicate", "c1")]
    assert "Authorization" not in server.log[-1].headers


def test_http_push_takes_a_422_naming_each_refusal_as_those_refusals(server, sleeps):
    """The daemon answers 422 when it refused every article of a batch, each for its own reason:
    the push reports them as rejected (the runner marks them seen and goes on) instead of failing
    the run, whose next run would fetch the same page and fail the same way."""
    body = json.dumps({"accepted": [], "rejected": 2, "results": [
        {"index": 0, "decision": "rejected", "error": "title: binary data"},
        {"index": 1, "decision": "rejected", "error": "neither title nor content"}]}).encode()
    server.routes["/v1/articles"] = status(422, {"Content-Type": "application/json"}, body)
    deliveries = HttpPushSink(server.url("/v1/articles"), sleep=sleeps).send(RECORDS)
    assert [(d.status, d.error) for d in deliveries] == [("rejected", "title: binary data"), ("rejected", "neither title nor content")]
    server.routes["/v1/articles"] = status(422, {"Content-Type": "application/json"}, b'{"error": "unprocessable"}')
    with pytest.raises(SinkError, match="422"):  # a 422 that names no article's refusal is an error
        HttpPushSink(server.url("/v1/articles"), sleep=sleeps).send(RECORDS)
    assert sleeps.calls == []


def test_http_push_retries_503_and_fails_on_401(server, sleeps):
    server.routes["/v1/articles"] = sequence(status(503, {"Retry-After": "2"}), status(202, {}, b"{}"))
    assert len(HttpPushSink(server.url("/v1/articles"), sleep=sleeps).send(RECORDS)) == 2
    assert sleeps.calls == [2.0]
    server.routes["/v1/articles"] = status(401, {}, b'{"error": "bad token"}')
    with pytest.raises(SinkError, match="401"):
        HttpPushSink(server.url("/v1/articles"), token="wrong", sleep=sleeps).send(RECORDS)
    server.routes["/v1/articles"] = status(202, {}, b"not json")
    with pytest.raises(SinkError, match="JSON"):
        HttpPushSink(server.url("/v1/articles")).send(RECORDS)


def _article(**kw):
    base = dict(url="http://a/1?utm_source=x", title="  标题  一 ", content="第一段。\n\n  第二段  很长的正文内容。" * 5, source="a")
    base.update(kw)
    return CrawledArticle(**base)


def test_pipeline_cleans_and_drops_with_reasons():
    pipe = default_pipeline(min_content_chars=20)
    out = pipe.process(_article())
    assert out.title == "标题 一" and out.url == "http://a/1" and "\n\n" not in out.content
    cases = [
        (_article(url="http://a/2", title=""), "no_title"),
        (_article(url="http://a/3", content="太短"), "too_short"),
        (_article(url="http://a/4", content="国家统计局今天发布数据".encode("utf-8").decode("latin-1") * 5), "mojibake"),
        (_article(url="http://a/5", title="标题\ufffd\ufffd", content="正文" * 20), "mojibake"),
        (_article(url="http://a/1#frag"), "duplicate_url"),
    ]
    for article, reason in cases:
        with pytest.raises(DropArticle) as err:
            pipe.process(article)
        assert err.value.reason == reason


def test_indexing_in_process_takes_the_writer_lease(tmp_path):
    """`newsdedup crawl --store DIR` writes like an ingest: not while a daemon holds the store's
    writer lease (refused naming it), and it gives the lease back when the crawl closes its sink."""
    from crawlers.sinks import IndexerSink
    from indexer.daemon.lease import FileLease
    from indexer.errors import WriterBusy
    from indexer.settings import Settings

    settings = Settings().replace(**{"store.path": str(tmp_path / "store"), "embedding.model": "none"})
    daemon = FileLease(tmp_path / "store" / "daemon-writer.lock", owner="host-c:9:daemon")
    assert daemon.acquire()
    with pytest.raises(WriterBusy, match="host-c:9:daemon"):
        IndexerSink(settings)
    daemon.release()
    sink = IndexerSink(settings)
    assert not daemon.acquire()  # the crawl holds it while it indexes
    [delivery] = sink.send([{"id": "a", "url": "https://a.example/1", "title": "泸定5.1级地震", "content": "四川泸定发生5.1级地震。" * 5}])
    assert delivery.status == "new"
    sink.close()
    assert daemon.acquire()
    daemon.release()
