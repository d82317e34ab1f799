"""One date reader for ingest, the daemon and the crawlers (indexer/dates.py)."""

import json
from datetime import datetime, timedelta, timezone

import pytest

from indexer.article import article_from_record
from indexer.dates import CST, find_time, parse_time
from indexer.errors import InvalidArticle

NOW = datetime(2021, 4, 5, 12, 0, tzinfo=CST)
UTC = timezone.utc


@pytest.mark.parametrize(
    "value, expected",
    [
        # ISO 8601, with and without an offset
        ("2021-04-05T09:12:00+08:00", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("2021-04-05T09:12:00+00:00", datetime(2021, 4, 5, 9, 12, tzinfo=UTC)),
        ("2021-04-05T01:12:00Z", datetime(2021, 4, 5, 1, 12, tzinfo=UTC)),
        ("2021-04-05T09:12:00.250+08:00", datetime(2021, 4, 5, 9, 12, 0, 250000, tzinfo=CST)),
        ("2021-04-05 09:12", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("2021-04-05", datetime(2021, 4, 5, tzinfo=CST)),
        ("  2021-04-05 09:12:33 ", datetime(2021, 4, 5, 9, 12, 33, tzinfo=CST)),
        # RFC 822 (feeds)
        ("Mon, 05 Apr 2021 01:12:00 GMT", datetime(2021, 4, 5, 1, 12, tzinfo=UTC)),
        ("Mon, 05 Apr 2021 09:12:00 +0800", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        # as Chinese sites print them
        ("2021年04月05日 09:12", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("2021年4月5日", datetime(2021, 4, 5, tzinfo=CST)),
        ("2021年04月05日 09时12分", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("2021年04月05日09:12:33", datetime(2021, 4, 5, 9, 12, 33, tzinfo=CST)),
        ("2021/04/05 09:12", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("2021/4/5", datetime(2021, 4, 5, tzinfo=CST)),
        ("2021.04.05 09:12", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("２０２１年０４月０５日　０９：１２", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("发布时间：2021-04-05 09:12:33  来源：新华社", datetime(2021, 4, 5, 9, 12, 33, tzinfo=CST)),
        # without a year: this year, or last year when this year's would be ahead
        ("04-03 10:20", datetime(2021, 4, 3, 10, 20, tzinfo=CST)),
        ("12月30日 10:00", datetime(2020, 12, 30, 10, 0, tzinfo=CST)),
        # a zone word after the time
        ("2021-04-05 09:12:00 GMT", datetime(2021, 4, 5, 9, 12, tzinfo=UTC)),
        ("2021-04-05 01:12 UTC", datetime(2021, 4, 5, 1, 12, tzinfo=UTC)),
        ("2021-04-05 09:12 GMT+8", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("2021-04-05 09:12 UTC+08:00", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("2021-04-05 09:12 GMT-5", datetime(2021, 4, 5, 9, 12, tzinfo=timezone(timedelta(hours=-5)))),
        # no year, with other figures after the day
        ("6/1-6/3", datetime(2020, 6, 1, tzinfo=CST)),
        ("04-03 / 1次阅读", datetime(2021, 4, 3, tzinfo=CST)),
        ("更新于 04-03/10:00", datetime(2021, 4, 3, tzinfo=CST)),
        # relative, counted back from the time of reading
        ("刚刚", NOW),
        ("2021-04-03 09:12 刚刚更新", datetime(2021, 4, 3, 9, 12, tzinfo=CST)),  # published then, updated now
        ("30秒前", datetime(2021, 4, 5, 11, 59, 30, tzinfo=CST)),
        ("15分钟前", datetime(2021, 4, 5, 11, 45, tzinfo=CST)),
        ("3小时前", datetime(2021, 4, 5, 9, 0, tzinfo=CST)),
        ("2天前", datetime(2021, 4, 3, 12, 0, tzinfo=CST)),
        ("1周前", datetime(2021, 3, 29, 12, 0, tzinfo=CST)),
        ("今天 07:00", datetime(2021, 4, 5, 7, 0, tzinfo=CST)),
        ("昨天 08:30", datetime(2021, 4, 4, 8, 30, tzinfo=CST)),
        ("前天 23:05", datetime(2021, 4, 3, 23, 5, tzinfo=CST)),
        # Unix seconds, an instant
        (1617585120, datetime(2021, 4, 5, 1, 12, tzinfo=UTC)),
        (1617585120.5, datetime(2021, 4, 5, 1, 12, 0, 500000, tzinfo=UTC)),
        (0, datetime(1970, 1, 1, tzinfo=UTC)),
        # datetimes from code: naive ones in the default zone
        (datetime(2021, 4, 5, 9, 12), datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        (datetime(2021, 4, 5, 9, 12, tzinfo=UTC), datetime(2021, 4, 5, 9, 12, tzinfo=UTC)),
    ],
)
def test_every_form_is_read(value, expected):
    got = parse_time(value, CST, now=NOW)
    assert got == expected and got.utcoffset() == expected.utcoffset()
    if isinstance(value, str):
        assert find_time(value, now=NOW) == expected  # what the crawlers read from a page


def test_times_without_an_offset_are_taken_in_the_default_zone():
    zone = timezone(timedelta(hours=-5))
    assert parse_time("2021-04-05 09:12", zone).utcoffset() == timedelta(hours=-5)
    assert parse_time("2021年04月05日 09:12", zone) == datetime(2021, 4, 5, 14, 12, tzinfo=UTC)
    assert parse_time("2021-04-05T09:12:00+08:00", zone).utcoffset() == timedelta(hours=8)
    assert parse_time(1617585120, zone).utcoffset() == timedelta(0)
    assert find_time("2021-04-05 09:12", tz=UTC).utcoffset() == timedelta(0)


@pytest.mark.parametrize("value", [None, "", "   "])
def test_a_missing_time_is_none(value):
    assert parse_time(value) is None


@pytest.mark.parametrize("value, says", [
    ("第3版", "not a date or time: '第3版'"),
    ("来源：新华社", "not a date or time"),
    ("2021年02月30日", "not a date or time"),
    ("1617585120000", "not a date or time"),
    (1617585120000, "out of range for Unix seconds"),
    (float("nan"), "not a time"),
    (True, "not a time: True"),
    ({"t": 1}, "not a time: dict"),
])
def test_what_is_no_time_is_refused_naming_the_value(value, says):
    with pytest.raises(ValueError, match=says.replace("(", r"\(")):
        parse_time(value, now=NOW)


@pytest.mark.parametrize("text", ["", None, "来源：新华社", "2021年02月30日", "第3版",
                                  "04/05/2019 09:12", "05/04/2019"])  # day and month unknown; not this year
def test_page_text_without_a_date_is_none_for_the_crawlers(text):
    assert find_time(text, now=NOW) is None


def test_records_take_every_form_and_a_refusal_names_the_record():
    record = {"title": "标题", "content": "正文", "publish_time": "2021年04月05日 09:12"}
    assert article_from_record(record).publish_time == datetime(2021, 4, 5, 9, 12, tzinfo=CST)
    with pytest.raises(InvalidArticle) as refused:
        article_from_record({**record, "publish_time": "第3版"}, "news.jsonl:7")
    assert str(refused.value).startswith("news.jsonl:7: field 'publish_time': not a date or time: '第3版'")


def test_ingest_accepts_the_forms_the_crawlers_read_and_rejects_the_rest(tmp_path):
    from click.testing import CliRunner

    from indexer.cli import EXIT_REJECTS, main

    src = tmp_path / "in.jsonl"
    rows = [{"id": "cn", "title": "北京暴雨", "content": "北京今日暴雨，多条道路积水。", "publish_time": "2021年04月05日 09:12"},
            {"id": "slash", "title": "上海晴天", "content": "上海今日晴，气温回升。", "publish_time": "2021/04/05 10:00"},
            {"id": "bad", "title": "广州大风", "content": "广州今日大风。", "publish_time": "第3版"}]
    src.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    rejects = tmp_path / "rejects.jsonl"
    result = CliRunner().invoke(main, ["ingest", str(src), "--store", str(tmp_path / "store"), "--set", "embedding.model=none",
                                       "--rejects", str(rejects), "--no-progress"])
    assert result.exit_code == EXIT_REJECTS, result.output
    assert "new: 2" in result.output and "rejected: 1" in result.output
    (rejected,) = [json.loads(line) for line in rejects.read_text(encoding="utf-8").splitlines()]
    assert rejected["where"].endswith(":3") and "not a date or time: '第3版'" in rejected["reason"]
