from datetime import datetime, timedelta, timezone

import pytest

from crawlers.dates import CST, parse_date

NOW = datetime(2021, 4, 5, 12, 0, tzinfo=CST)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2021年04月05日 09:12", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("2021年4月5日", datetime(2021, 4, 5, tzinfo=CST)),
        ("发布时间：2021-04-05 09:12:33  来源：新华社", datetime(2021, 4, 5, 9, 12, 33, tzinfo=CST)),
        ("2021/04/05 09:12", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("２０２１年０４月０５日　０９：１２", datetime(2021, 4, 5, 9, 12, tzinfo=CST)),
        ("3小时前", datetime(2021, 4, 5, 9, 0, tzinfo=CST)),
        ("15分钟前", datetime(2021, 4, 5, 11, 45, tzinfo=CST)),
        ("2天前", datetime(2021, 4, 3, 12, 0, tzinfo=CST)),
        ("刚刚", NOW),
        ("昨天 08:30", datetime(2021, 4, 4, 8, 30, tzinfo=CST)),
        ("前天 23:05", datetime(2021, 4, 3, 23, 5, tzinfo=CST)),
        ("今天 07:00", datetime(2021, 4, 5, 7, 0, tzinfo=CST)),
        ("04-03 10:20", datetime(2021, 4, 3, 10, 20, tzinfo=CST)),
        ("12月30日 10:00", datetime(2020, 12, 30, 10, 0, tzinfo=CST)),  # a year-less date in the future is last year's
        ("2021-04-05T09:12:00+00:00", datetime(2021, 4, 5, 9, 12, tzinfo=timezone.utc)),
        ("2021-04-05T01:12:00Z", datetime(2021, 4, 5, 1, 12, tzinfo=timezone.utc)),
        ("Mon, 05 Apr 2021 01:12:00 GMT", datetime(2021, 4, 5, 1, 12, tzinfo=timezone.utc)),
    ],
)
def test_chinese_and_machine_formats(text, expected):
    assert parse_date(text, now=NOW) == expected


@pytest.mark.parametrize("text", ["", None, "来源：新华社", "2021年02月30日", "第3版"])
def test_no_date_is_none(text):
    assert parse_date(text, now=NOW) is None


def test_naive_times_take_the_given_zone():
    utc = parse_date("2021-04-05 09:12", tz=timezone.utc)
    assert utc.utcoffset() == timedelta(0)
