"""Publish times: one reader for every way in (ingest, the daemon, the crawlers).

Forms read:

* ISO 8601, every form ``datetime.fromisoformat`` reads (``2021-04-05T09:12:00+08:00``,
  ``2021-04-05 09:12``, ``2021-04-05``, a trailing ``Z``);
* RFC 822, as feeds write it (``Mon, 05 Apr 2021 01:12:00 GMT``);
* dates as Chinese news sites print them: ``2021年04月05日 09:12``, ``2021年4月5日 9时12分``,
  ``2021/04/05 09:12``, ``2021.4.5``, full-width digits, with words around them
  (``发布时间：2021-04-05 09:12  来源：新华社``: the first date wins); without a year
  (``04-05 09:12``, ``4月5日``: this year, or last year when that would be more than a day ahead);
  relative (``刚刚``, ``30秒前``, ``5分钟前``, ``3小时前``, ``2天前``, ``1周前``,
  ``今天/昨天/前天 08:30``), counted back from the time they are read;
* Unix seconds, as a number.

The time-zone rule: a time printed without an offset is taken in the default zone (ingest and the
daemon: ``input.default_timezone``, +08:00 unless set; the crawlers: China Standard Time), because it
is the local time the site printed. An offset, ``Z`` or an RFC 822 zone is kept (an RFC 822 time
without a zone is UTC), and Unix seconds are an instant (UTC).
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from typing import Any

CST = timezone(timedelta(hours=8))  # China Standard Time
# Publish times outside these years are placeholders (0001-01-01, 9999-12-31), not dates: the time
# window and relative dates (昨天) reckoned from them run off the calendar.
PUBLISH_YEARS = (1800, 2200)

_FULLWIDTH = str.maketrans("０１２３４５６７８９：－／．", "0123456789:-/.")
_TIME = r"(?:\s*(?P<h>\d{1,2})[:：时](?P<mi>\d{1,2})(?:[:：分](?P<s>\d{1,2})秒?)?)?"
# A date with its year: 2021-04-05, 2021/4/5, 2021年4月5日.
DATE_WITH_YEAR = r"(?P<y>(?:19|20)\d{2})\s*[年\-/.]\s*(?P<m>\d{1,2})\s*[月\-/.]\s*(?P<d>\d{1,2})\s*日?"
_ABSOLUTE = re.compile(DATE_WITH_YEAR + r"(?:\s*T)?" + _TIME)
# Not a day followed by a year (04/05/2021: which of the two is the month is not known, and the
# year is not this one).
_NO_YEAR = re.compile(
    r"(?<![\d\-/.])(?P<m>\d{1,2})\s*[月\-/]\s*(?P<d>\d{1,2})(?!\d|\s*[\-/.]\s*(?:\d{4}|\d{2})(?![\d:：时]))\s*日?" + _TIME)
# A zone written after the time: GMT or UTC, with an offset or without (GMT+8 is China's time).
_ZONE_AFTER = re.compile(r"\s*(?:(?:GMT|UTC)\s*(?:(?P<sign>[+-])(?P<oh>\d{1,2})(?::?(?P<om>\d{2}))?)?(?![\d:])|Z\b)", re.I)
_AGO = re.compile(r"(?P<n>\d+)\s*(?P<unit>秒|分钟|分|小时|个小时|天|日|周|星期)\s*前")
_DAY_WORD = re.compile(r"(?P<word>今天|昨天|前天)\s*(?:(?P<h>\d{1,2})[:：](?P<mi>\d{2}))?")
_RFC822 = re.compile(r"^(?:[A-Za-z]{3},\s*)?\d{1,2}\s+[A-Za-z]{3}\s+\d{4}")
_AGO_UNITS = {
    "秒": timedelta(seconds=1), "分钟": timedelta(minutes=1), "分": timedelta(minutes=1),
    "小时": timedelta(hours=1), "个小时": timedelta(hours=1), "天": timedelta(days=1), "日": timedelta(days=1),
    "周": timedelta(weeks=1), "星期": timedelta(weeks=1),
}
_DAY_OFFSET = {"今天": 0, "昨天": 1, "前天": 2}
FORMS = "ISO 8601, RFC 822, a date as news sites print it (2021年04月05日 09:12, 3小时前) or Unix seconds"


def parse_time(value: Any, default_tz: timezone = CST, now: datetime | None = None) -> datetime | None:
    """The ``publish_time`` of an input record as an aware datetime; None when it is missing
    (None or empty). Raises ValueError, naming the value, when it is not a date or time."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):  # a JSON true/false, which Python would read as the numbers 1 and 0
        raise ValueError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        found = _unix_seconds(value)
    elif isinstance(value, datetime):
        found = value if value.tzinfo else value.replace(tzinfo=default_tz)
    elif not isinstance(value, str):
        raise ValueError(f"not a time: {type(value).__name__} {value!r}")
    else:
        found = find_time(value, now=now, tz=default_tz)
        if found is None:
            raise ValueError(f"not a date or time: {value!r} (expected {FORMS})")
    if not PUBLISH_YEARS[0] <= found.year <= PUBLISH_YEARS[1]:
        raise ValueError(f"{value!r} is not a publish time: outside the years {PUBLISH_YEARS[0]}-{PUBLISH_YEARS[1]}")
    return found


def _zone_after(text: str, at: int, default: timezone) -> timezone:
    """The zone written at ``text[at:]`` (``GMT``, ``UTC+8``, ``GMT+08:00``, ``Z``), else ``default``."""
    z = _ZONE_AFTER.match(text, at)
    if z is None:
        return default
    if not z["sign"]:
        return timezone.utc
    offset = timedelta(hours=int(z["oh"]), minutes=int(z["om"] or 0))
    return timezone(-offset if z["sign"] == "-" else offset) if offset < timedelta(hours=24) else default


def find_time(text: str | None, now: datetime | None = None, tz: timezone = CST) -> datetime | None:
    """An aware datetime for the first date in ``text``, or None when there is none.

    ``now`` anchors relative forms and year-less dates (injectable so tests are deterministic).
    """
    if not text:
        return None
    raw = text.strip()
    if (found := _iso(raw, tz) or _rfc822(raw)) is not None:
        return found
    now = (now or datetime.now(tz)).astimezone(tz)
    t = raw.translate(_FULLWIDTH)
    if m := _ABSOLUTE.search(t):  # before 刚刚: "2021-04-05 09:12 刚刚更新" was published then, updated just now
        zone = _zone_after(t, m.end(), tz) if m["h"] is not None else tz
        return _build(int(m["y"]), int(m["m"]), int(m["d"]), m["h"], m["mi"], m["s"], zone)
    if "刚刚" in t:
        return now.replace(microsecond=0)
    if m := _AGO.search(t):
        try:
            return (now - int(m["n"]) * _AGO_UNITS[m["unit"]]).replace(microsecond=0)
        except OverflowError:  # 99999999天前: before the calendar begins
            return None
    if m := _DAY_WORD.search(t):
        day = now - timedelta(days=_DAY_OFFSET[m["word"]])
        return _build(day.year, day.month, day.day, m["h"], m["mi"], None, tz)
    if m := _NO_YEAR.search(t):
        guess = _build(now.year, int(m["m"]), int(m["d"]), m["h"], m["mi"], m["s"], tz)
        # "12-30" read on January 2nd is last year's December.
        if guess is not None and guess > now + timedelta(days=1):
            guess = _build(now.year - 1, int(m["m"]), int(m["d"]), m["h"], m["mi"], m["s"], tz)
        return guess
    return None


def _unix_seconds(value: int | float) -> datetime:
    if not math.isfinite(value):
        raise ValueError(f"not a time: {value!r}")
    try:
        return datetime.fromtimestamp(value, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise ValueError(f"{value!r} is out of range for Unix seconds (milliseconds are not read)") from None


def _build(y: int, mo: int, d: int, h: str | None, mi: str | None, s: str | None, tz: timezone) -> datetime | None:
    try:
        return datetime(y, mo, d, int(h or 0), int(mi or 0), int(s or 0), tzinfo=tz)
    except ValueError:  # 2021-02-30, 25:61 — not a date after all
        return None


def _iso(text: str, tz: timezone) -> datetime | None:
    try:
        dt = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=tz)


def _rfc822(text: str) -> datetime | None:
    if not _RFC822.match(text):
        return None
    try:
        dt = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
