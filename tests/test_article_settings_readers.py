from datetime import datetime, timedelta, timezone

import pytest

from indexer.article import article_from_record, parse_time
from indexer.errors import ConfigError, InvalidArticle
from indexer.readers import Record, Rejected, read_records
from indexer.settings import load_settings
from indexer.urls import canonical_url


def test_canonical_url_drops_tracking_and_fragment():
    assert canonical_url("HTTPS://News.Example.com:443/a/b.html?utm_source=x&id=3&spm=1#top") == "https://news.example.com/a/b.html?id=3"
    assert canonical_url("http://x.example/p?b=2&a=1") == "http://x.example/p?a=1&b=2"
    assert canonical_url("not a url") == "not a url"


def test_record_validation_names_the_place():
    with pytest.raises(InvalidArticle, match=r"f.jsonl:3: neither title nor content"):
        article_from_record({"title": " ", "content": ""}, "f.jsonl:3")
    with pytest.raises(InvalidArticle, match="must be a string"):
        article_from_record({"title": ["x"]}, "f:1")
    with pytest.raises(InvalidArticle, match="binary"):
        article_from_record({"title": "t", "content": "\x00\x01\x02PNG" * 100}, "f:1")
    with pytest.raises(InvalidArticle, match="publish_time"):
        article_from_record({"title": "t", "publish_time": "yesterday-ish"}, "f:1")


def test_ids_come_from_the_record_else_the_canonical_url():
    a = article_from_record({"title": "t", "url": "https://n.example/1?utm_source=a"})
    b = article_from_record({"title": "other", "url": "https://n.example/1"})
    assert a.id == b.id and not a.id_given
    assert article_from_record({"id": 42, "title": "t"}).id == "42"
    # a URL too long to be one exact term in every store still gives the id, but no URL identity
    long_url = "https://n.example/" + "x" * 5000
    a, b = article_from_record({"title": "t", "url": long_url}), article_from_record({"title": "u", "url": long_url})
    assert a.id == b.id and a.url == long_url and a.canonical_url == ""


def test_unknown_fields_are_kept():
    a = article_from_record({"title": "t", "author": "张三", "tags": ["a"]})
    assert a.extra == {"author": "张三", "tags": ["a"]}


def test_times_naive_ones_take_the_default_offset():
    cst = timezone(timedelta(hours=8))
    assert parse_time("2021-04-05 09:12") == datetime(2021, 4, 5, 9, 12, tzinfo=cst)
    assert parse_time("2021-04-05T01:12:00Z") == datetime(2021, 4, 5, 9, 12, tzinfo=cst)
    assert parse_time(0) == datetime(1970, 1, 1, tzinfo=timezone.utc)
    assert parse_time(None) is None


def test_settings_layers_and_errors(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text("[decision]\ntime_window_days = 3\n[simhash]\nbands = 6\n")
    s = load_settings(cfg, overrides={"simhash.max_distance": "4"}, environ={"NEWSDEDUP_DECISION_KNN_K": "20"})
    assert (s.decision.time_window_days, s.simhash.bands, s.simhash.max_distance, s.decision.knn_k) == (3.0, 6, 4, 20)
    with pytest.raises(ConfigError, match="'decision.knn_kk'"):
        load_settings(environ={"NEWSDEDUP_DECISION_KNN_KK": "1"})
    with pytest.raises(ConfigError, match="'simhash.bands': must be >= 2"):
        load_settings(overrides={"simhash.bands": 1})
    with pytest.raises(ConfigError, match="'simhash.max_distance'"):
        load_settings(overrides={"simhash.bands": 3, "simhash.max_distance": 3})
    # Elasticsearch answers at most 10,000 hits a search by default (index.max_result_window)
    with pytest.raises(ConfigError, match="'es.candidates_max': must be <= 10000"):
        load_settings(overrides={"es.candidates_max": 20_000})
    with pytest.raises(ConfigError, match="'nope.x'"):
        bad = tmp_path / "b.toml"
        bad.write_text("[nope]\nx = 1\n")
        load_settings(bad, environ={})
    # Other tools' variables under our prefix are not settings.
    assert load_settings(environ={"NEWSDEDUP_TEST_ES_URL": "http://x"}).store.path == "./newsdedup-data"


def test_jsonl_reader_rejects_bad_lines_and_goes_on(tmp_path):
    p = tmp_path / "in.jsonl"
    p.write_bytes(b'{"title": "a"}\n{oops\n\n\xff\xfe\n{"title": "b"}\n')
    items = list(read_records(str(p)))
    assert [type(i) for i in items] == [Record, Rejected, Rejected, Record]
    assert items[1].where.endswith("in.jsonl:2") and "malformed JSON" in items[1].reason
    assert items[2].where.endswith("in.jsonl:4") and "UTF-8" in items[2].reason
    assert items[3].data == {"title": "b"}
    # a rejected line is kept whole, its undecodable bytes recoverable
    assert items[2].raw.encode("utf-8", "surrogateescape") == b"\xff\xfe\n"
    p.write_text("{" + "x" * 50_000 + "\n", encoding="utf-8")
    assert len(next(iter(read_records(str(p)))).raw) == 50_002


def test_csv_reader_handles_quotes_bom_and_bad_rows(tmp_path):
    p = tmp_path / "in.csv"
    p.write_bytes(
        "\ufeffurl,title,content\n".encode()
        + 'http://a,"标题, 带逗号","正文\n两行"\n'.encode()
        + b"http://b,only-two\n"
        + b"http://c,\xff\xfe,x\n"
    )
    items = list(read_records(str(p)))
    assert isinstance(items[0], Record) and items[0].data == {"url": "http://a", "title": "标题, 带逗号", "content": "正文\n两行"}
    assert isinstance(items[1], Rejected) and "2 fields" in items[1].reason and items[1].where.endswith(":4")
    assert isinstance(items[2], Rejected) and "UTF-8" in items[2].reason


def _nested(levels: int):
    value: object = "底"
    for _ in range(levels):
        value = [value]
    return value


def test_unknown_fields_are_bounded_in_depth_and_size_naming_the_record():
    from indexer.article import MAX_EXTRA_BYTES, MAX_EXTRA_DEPTH

    ok = article_from_record({"title": "标题", "tags": _nested(MAX_EXTRA_DEPTH), "meta": {"作者": {"名": "张三"}}}, "f:1")
    assert ok.extra["meta"] == {"作者": {"名": "张三"}}
    # the crafted record of issue 16 (about 980 levels), and far deeper: the check never recurses
    for levels in (MAX_EXTRA_DEPTH + 1, 980, 50_000):
        with pytest.raises(InvalidArticle, match=r"f:2: extra field 'tags' is nested more than \d+ levels deep"):
            article_from_record({"title": "标题", "tags": _nested(levels)}, "f:2")
    with pytest.raises(InvalidArticle, match=r"f:3: extra field 'm' is nested"):
        article_from_record({"title": "标题", "m": {"a": _nested(MAX_EXTRA_DEPTH)}}, "f:3")
    with pytest.raises(InvalidArticle, match=r"f:4: extra fields take \d+ bytes as JSON, more than"):
        article_from_record({"title": "标题", "blob": "长" * (MAX_EXTRA_BYTES // 3 + 1)}, "f:4")
    # a large content is not an extra field: it is not bounded here
    assert len(article_from_record({"title": "标题", "content": "长" * MAX_EXTRA_BYTES}).content) == MAX_EXTRA_BYTES


def test_ids_and_sources_over_a_stores_term_limits_are_refused_with_their_size():
    from indexer.article import MAX_ID_BYTES, MAX_SOURCE_BYTES

    with pytest.raises(InvalidArticle, match=rf"item 3: field 'id' takes 600 bytes as UTF-8, more than {MAX_ID_BYTES}"):
        article_from_record({"id": "新" * 200, "title": "t"}, "item 3")
    with pytest.raises(InvalidArticle, match=rf"field 'source' takes 40000 bytes as UTF-8, more than {MAX_SOURCE_BYTES}"):
        article_from_record({"title": "t", "source": "x" * 40000})
    assert article_from_record({"id": "新" * 170, "title": "t", "source": "s" * MAX_SOURCE_BYTES}).id == "新" * 170


def test_a_publish_time_that_cannot_be_encoded_is_refused_though_a_date_is_in_it():
    # the record is queued as it came, so every string in it must encode as UTF-8
    with pytest.raises(InvalidArticle, match="item 2: field 'publish_time' holds a lone surrogate"):
        article_from_record({"title": "t", "publish_time": "2024-01-02 10:00 \ud800"}, "item 2")


def test_lone_surrogates_are_refused_per_record_wherever_they_are():
    for record, name in (({"title": "标\ud800题"}, "title"), ({"title": "t", "content": "正文\udfff"}, "content"),
                         ({"title": "t", "source": "\ud83d"}, "source"), ({"title": "t", "tags": ["a", "\ud800"]}, "tags"),
                         ({"title": "t", "meta": {"k\udc00": 1}}, "meta")):
        with pytest.raises(InvalidArticle, match=rf"item 7: field '{name}' holds a lone surrogate"):
            article_from_record(record, "item 7")
    # a proper pair (an emoji) is text like any other
    assert article_from_record({"title": "新闻 \U0001F600", "tags": ["\U0001F600"]}).title.endswith("\U0001F600")


def test_ingest_refuses_hostile_records_per_line_and_keeps_them_in_the_rejects_file(tmp_path):
    import json

    from click.testing import CliRunner

    from indexer.cli import EXIT_REJECTS, main

    src = tmp_path / "in.jsonl"
    deep = json.dumps({"id": "deep", "title": "标题", "content": "正文"}, ensure_ascii=False)[:-1] + ', "meta": ' + "[" * 200 + "1" + "]" * 200 + "}"
    def rec(rid, **fields):
        return json.dumps({"id": rid, "title": "标题", "content": "正文", **fields}, ensure_ascii=False)

    src.write_text("\n".join([
        json.dumps({"id": "ok1", "title": "北京暴雨", "content": "北京今日暴雨，多条道路积水。"}, ensure_ascii=False),
        deep,
        json.dumps({"id": "lone", "title": "标题\ud800", "content": "正文"}),  # "\ud800" as an escape on disk
        "[" * 100_000,  # deeper than the JSON parser goes
        '{"n": ' + "1" * 5000 + "}",  # an integer Python will not read
        rec("ago", publish_time="99999999天前"),
        rec("min", publish_time="0001-01-01T00:00:00"),  # .NET's placeholder for no date
        rec("max", publish_time="9999-12-31"),
        rec("big", content="正" * 700),  # over --set input.max_body_bytes=2000 as UTF-8
        json.dumps({"id": "ok2", "title": "上海晴天", "content": "上海今日晴，气温回升。"}, ensure_ascii=False),
    ]) + "\n", encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    result = CliRunner().invoke(main, ["ingest", str(src), "--store", str(tmp_path / "store"), "--set", "embedding.model=none",
                                       "--set", "input.max_body_bytes=2000", "--rejects", str(rejects), "--no-progress"])
    assert result.exit_code == EXIT_REJECTS, result.output
    assert "new: 2" in result.output and "rejected: 8" in result.output
    lines = sorted((json.loads(x) for x in rejects.read_text(encoding="utf-8").splitlines()),
                   key=lambda x: int(x["where"].rsplit(":", 1)[1]))
    assert [x["where"].rsplit(":", 1)[1] for x in lines] == ["2", "3", "4", "5", "6", "7", "8", "9"]
    assert "nested more than" in lines[0]["reason"] and "lone surrogate" in lines[1]["reason"]
    assert lines[1]["record"]["title"] == "标题\ud800"  # kept as it came
    assert "nested too deeply" in lines[2]["reason"] and "digits" in lines[3]["reason"]
    assert "not a date or time" in lines[4]["reason"]
    assert all("outside the years" in x["reason"] for x in lines[5:7])
    assert "'content' takes 2100 bytes as UTF-8, more than 2000" in lines[7]["reason"]


def test_tsv_quoting_as_writers_write_it_and_an_unclosed_quote_is_rejected(tmp_path):
    p = tmp_path / "in.tsv"
    # Python's csv and pandas quote a field holding a quote or a line break
    p.write_text('id\ttitle\tcontent\n1\t"他说""好"""\t"第一段。\n第二段。"\n', encoding="utf-8")
    assert [i.data for i in read_records(str(p))] == [{"id": "1", "title": '他说"好"', "content": "第一段。\n第二段。"}]
    # a quote opened and never closed swallowed the next rows, tabs and all, into one record
    p.write_text('id\ttitle\tcontent\n1\t"快讯 北京暴雨\t正文一\n2\t上海\t正文二\n3\t广州降温"\t正文三\n', encoding="utf-8")
    [item] = list(read_records(str(p)))
    assert isinstance(item, Rejected) and "a field holds a tab" in item.reason and "广州降温" in item.raw


def test_compressed_files_are_read_and_a_broken_one_is_a_reject_not_a_crash(tmp_path):
    import gzip

    for name, body in (("in.csv.gz", "title,content\n北京,正文\n"), ("in.jsonl.gz", '{"title": "北京", "content": "正文"}\n')):
        packed = tmp_path / name
        packed.write_bytes(gzip.compress(body.encode()))
        assert [i.data for i in read_records(str(packed))] == [{"title": "北京", "content": "正文"}]
    whole = gzip.compress(("".join(f'{{"title": "标题{i}", "content": "正文"}}\n' for i in range(2000))).encode())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    items = list(read_records(str(cut)))
    assert isinstance(items[-1], Rejected) and "unreadable after" in items[-1].reason
    assert all(isinstance(i, Record) for i in items[:-1]) and items[:-1]  # what came before stands
    fake = tmp_path / "plain.jsonl.gz"
    fake.write_text('{"title": "t"}\n', encoding="utf-8")
    [item] = list(read_records(str(fake)))
    assert isinstance(item, Rejected) and "unreadable after 0 records" in item.reason


def test_csv_header_naming_a_column_twice_rejects_every_row_and_an_unnamed_column_is_said(tmp_path, caplog):
    """A repeated name used to keep its last column silently, and an unnamed column's values were
    dropped without a word."""
    p = tmp_path / "twice.csv"
    p.write_text("url,title,content,title\nhttp://a,标题,正文,另一个标题\n", encoding="utf-8")
    (item,) = read_records(str(p))
    assert isinstance(item, Rejected) and item.where.endswith("twice.csv:2")
    assert "repeats 'title' (columns 2 and 4)" in item.reason and item.raw == "http://a,标题,正文,另一个标题"

    p = tmp_path / "index.csv"
    p.write_text(",title,content\n0,标题一,正文\n1,标题二,正文\n", encoding="utf-8")
    with caplog.at_level("WARNING", logger="indexer.readers"):
        items = list(read_records(str(p)))
    assert [i.data for i in items] == [{"title": "标题一", "content": "正文"}, {"title": "标题二", "content": "正文"}]
    warnings = [r.getMessage() for r in caplog.records if r.name == "indexer.readers"]
    assert warnings == [f"{p}: column 1 has no name in the header; its values are not read"]
