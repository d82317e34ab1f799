"""Publish times as Chinese news sites print them.

Handles absolute forms (``2021年04月05日 09:12``, ``2021-04-05 09:12:33``, ``2021/4/5``,
``04-05 09:12`` without a year), relative forms (``刚刚``, ``30秒前``, ``5分钟前``, ``3小时前``,
``2天前``, ``今天/昨天/前天 08:30``), ISO 8601 and RFC 822 (feeds). Times without an offset are
taken in the site's zone (China Standard Time by default) because that is what the page means.
The text may carry noise around the date (``发布时间：…  来源：…``); the first date found wins.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

CST = timezone(timedelta(hours=8))

_FULLWIDTH = str.maketrans("０１２３４５６７８９：－／．", "0123456789:-/.")
_TIME = r"(?:\s*(?P<h>\d{1,2})[:：时](?P<mi>\d{1,2})(?:[:：分](?P<s>\d{1,2})秒?)?)?"
_ABSOLUTE = re.compile(
    r"(?P<y>(?:19|20)\d{2})\s*[年\-/.]\s*(?P<m>\d{1,2})\s*[月\-/.]\s*(?P<d>\d{1,2})\s*日?(?:\s*T)?" + _TIME
)
_NO_YEAR = re.compile(r"(?<![\d\-/.])(?P<m>\d{1,2})\s*[月\-/]\s*(?P<d>\d{1,2})\s*日?" + _TIME.replace("(?:", "(?:", 1))
_AGO = re.compile(r"(?P<n>\d+)\s*(?P<unit>秒|分钟|分|小时|个小时|天|日|周|星期)\s*前")
_DAY_WORD = re.compile(r"(?P<word>今天|昨天|前天)\s*(?:(?P<h>\d{1,2})[:：](?P<mi>\d{2}))?")
_AGO_UNITS = {
    "秒": timedelta(seconds=1),
    "分钟": timedelta(minutes=1),
    "分": timedelta(minutes=1),
    "小时": timedelta(hours=1),
    "个小时": timedelta(hours=1),
    "天": timedelta(days=1),
    "日": timedelta(days=1),
    "周": timedelta(weeks=1),
    "星期": timedelta(weeks=1),
}
_DAY_OFFSET = {"今天": 0, "昨天": 1, "前天": 2}


def parse_date(text: str | None, now: datetime | None = None, tz: timezone = CST) -> datetime | None:
    """An aware datetime for the first date in ``text``, or None when there is none.

    ``now`` anchors relative forms and year-less dates (injectable so tests are deterministic).
    """
    if not text:
        return None
    raw = text.strip()
    now = (now or datetime.now(tz)).astimezone(tz)
    iso = _parse_iso(raw, tz)
    if iso is not None:
        return iso
    rfc = _parse_rfc822(raw)
    if rfc is not None:
        return rfc
    t = raw.translate(_FULLWIDTH)
    if "刚刚" in t:
        return now.replace(microsecond=0)
    m = _ABSOLUTE.search(t)
    if m:
        return _build(int(m["y"]), int(m["m"]), int(m["d"]), m["h"], m["mi"], m["s"], tz)
    m = _AGO.search(t)
    if m:
        return (now - int(m["n"]) * _AGO_UNITS[m["unit"]]).replace(microsecond=0)
    m = _DAY_WORD.search(t)
    if m:
        day = now - timedelta(days=_DAY_OFFSET[m["word"]])
        return _build(day.year, day.month, day.day, m["h"], m["mi"], None, tz)
    m = _NO_YEAR.search(t)
    if m:
        guess = _build(now.year, int(m["m"]), int(m["d"]), m["h"], m["mi"], m["s"], tz)
        # "12-30" read on January 2nd is last year's December.
        if guess is not None and guess > now + timedelta(days=1):
            guess = _build(now.year - 1, int(m["m"]), int(m["d"]), m["h"], m["mi"], m["s"], tz)
        return guess
    return None


def _build(y: int, mo: int, d: int, h: str | None, mi: str | None, s: str | None, tz: timezone) -> datetime | None:
    try:
        return datetime(y, mo, d, int(h or 0), int(mi or 0), int(s or 0), tzinfo=tz)
    except ValueError:  # 2021-02-30, 25:61 — not a date after all
        return None


def _parse_iso(text: str, tz: timezone) -> datetime | None:
    candidate = text[:-1] + "+00:00" if text.endswith("Z") else text
    if not re.match(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2})?)?$", candidate):
        return None
    try:
        dt = datetime.fromisoformat(candidate)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=tz)


def _parse_rfc822(text: str) -> datetime | None:
    if not re.match(r"^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}", text):
        return None
    try:
        dt = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
