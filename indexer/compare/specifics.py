"""Event specifics: what makes one fire, one food poisoning, one crash a different event from the
next one of its kind in the same city.

Two reports that an embedding and a headline similarity call "the same news" may still be two
events: the same kind of incident, in the same city, a few days apart. What tells them apart is
what a reporter writes down about the event itself: the street or building (finer than the city),
the date it happened, the casualty count, the people involved. ``extract_specifics`` reads these
from one report's cleaned headline and body; ``specifics_conflict`` says whether two reports'
specifics rule out one event and which specific decided.

The comparison is built so that a repost or a rewrite of one report (trimmed, sentences dropped,
retitled) never conflicts with its original:

* a specific stated on one side only is never a conflict (rewrites drop details);
* each side's *lead* specifics (headline and the first ``LEAD_CHARS`` of the body, where a report
  says what happened, where and when) are checked against *everything* the other side says, so a
  lead that shifted because a sentence was dropped still finds its specifics in the original;
* figures given as approximations or updates (约, 30多, 至少, 升至) never conflict;
* dates agree within a day either way (publishing across midnight, 昨日 against 10日).

Pure functions of their arguments; rjieba tagging is cached like ``decision._tagged``.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from difflib import SequenceMatcher
from functools import cached_property, lru_cache
from importlib import resources
from typing import Iterator, Sequence

import rjieba

from ..dates import CST

# The lead: headline plus this many characters of the body. Reports say what, where and when here.
LEAD_CHARS = 300
# A county named without its 县 or 区 (顺义) is read only in the headline and this much of the body,
# where a report says where it happened: further on, a bare name is as often an account's or a
# desk's (整理编辑:宝安安全你我他).
OPENING_CHARS = 120
# How much of the body the "does the other side mention it anywhere" checks read: enough for any
# news report, bounded so that a pasted book cannot make a pair comparison slow.
TEXT_CHARS = 20000
# How much of the body dates and figures are collected from for those checks.
BODY_FIGURE_CHARS = 3000
# Dates this many days apart still count as one (publishing across midnight, 昨日 against 10日).
DATE_SLACK_DAYS = 1
# A copy keeps its original's 昨天 for up to this many days (``_one_relative_day``), and reads this
# many words after it to tell its sentence.
REPOST_LAG_DAYS = 3
RELATIVE_CONTEXT_CHARS = 12
# ... and that sentence is the same when its words after the relative day keep their figures and
# this share of their characters (a difflib ratio): a rewording copy swaps a word or two (位于 for
# 地处), a templated report its figures or more of its words.
RELATIVE_CONTEXT_ALIKE = 0.8
# How far after the publish day a date without a year (3月15日) or month (15日) may still be read.
MONTH_DAY_AHEAD_DAYS = 90
DAY_AHEAD_DAYS = 7
# How long before its publish day a report's event can have happened (news is about last month at
# the oldest); older dates in its lead are background.
EVENT_DAYS_BEFORE = 31


# ---- numbers ------------------------------------------------------------------------------------

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
_NUM = r"(?:\d+(?:\.\d+)?[万亿]?|[零〇一二两三四五六七八九十百千万亿]+)"
_NUMBER = re.compile(_NUM)


def chinese_number(text: str) -> float | None:
    """The value of an Arabic or Chinese numeral (``12``, ``3.5万``, ``十二``, ``两``, ``一百零五``,
    ``二〇〇八``); None when ``text`` is not one."""
    if not text:
        return None
    big = 1
    if text[-1] in _CN_BIG and len(text) > 1 and text[0].isdigit():
        big, text = _CN_BIG[text[-1]], text[:-1]
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text) * big
    if any(c not in _CN_DIGITS and c not in _CN_UNITS and c not in _CN_BIG for c in text):
        return None
    if all(c in _CN_DIGITS for c in text) and len(text) > 1:  # 二〇〇八: digit by digit
        return float("".join(str(_CN_DIGITS[c]) for c in text))
    total, section, digit = 0, 0, None
    for c in text:
        if c in _CN_DIGITS:
            digit = _CN_DIGITS[c]
        elif c in _CN_UNITS:
            section += (1 if digit is None else digit) * _CN_UNITS[c]
            digit = None
        else:  # 万 / 亿
            section += digit or 0
            total += (section or 1) * _CN_BIG[c]
            section, digit = 0, None
    if digit and len(text) > 1 and (unit := _CN_UNITS.get(text[-2]) or _CN_BIG.get(text[-2])):
        digit *= unit // 10  # spoken short: 一万二 is 12,000, 两千三 2,300, 三百五 350
    return float(total + section + (digit or 0))


# ---- dates --------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class EventDate:
    """A date written in a report. ``year`` and ``month`` are None when neither the text nor the
    publish time gives them (``10日`` in an article with no publish time)."""

    year: int | None
    month: int | None
    day: int
    # The words the report used (10日, 昨日): a copy that keeps them says the same day, whatever
    # day it was published on. Not part of equality.
    surface: str = field(default="", compare=False)
    # After a relative day (昨天, 今晨): the words that follow it, which a copy keeps (``_one_relative_day``).
    context: str = field(default="", compare=False)

    def __str__(self) -> str:
        if self.year is not None and self.month is not None:
            return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"
        if self.month is not None:
            return f"{self.month}月{self.day}日"
        return f"{self.day}日"


_DAY_NUM = r"(\d{1,2}|[一二三四五六七八九十]{1,3})"
_YEAR_WORD = r"(?:(\d{4}|[零〇一二三四五六七八九]{4})年|(去年|前年|今年))?"
# Each pattern opens with a lookahead of the characters it can start with: a scan then fails at a
# glance on most of a text's positions instead of trying every alternative (3x faster).
_DATE = re.compile(
    r"(?=[\d一二三四五六七八九十零〇去前今本上])" + _YEAR_WORD + r"(?:" + _DAY_NUM + r"月|(本月|上月|上个月))?" + _DAY_NUM + r"[日号](电)?"
)
# What joins a date to a second day of its month: 4月18日与19日, 3月5日至7日, 5月1日、2日.
_DAY_AFTER_DATE = re.compile(r"[与和及至到、\-—~～]|以及")
_NOT_A_WORD_CHARACTER = re.compile(r"\W+")  # spaces and punctuation, read past in a relative day's context
_RELATIVE_DAYS = {"今天": 0, "今日": 0, "今晨": 0, "今早": 0, "今晚": 0, "昨天": -1, "昨日": -1,
                  "昨晚": -1, "昨夜": -1, "前天": -2, "前日": -2}
_TIME_OF_DAY = r"(?:凌晨|清晨|早上|早晨|上午|中午|午间|下午|傍晚|晚上|晚间|夜间|夜里|深夜|\d{1,2}[时点]|[零一二三四五六七八九十]{1,3}[时点])"
# A number with 号 and no month is a date only with the time of day after it (20号晚上, 21号凌晨):
# alone it is far more often a house, a line, a unit or a document (34号, 2号线, 3号机组,
# 监基金字[2004]69号), read so in the leads of ccf2019_inews, cec_news and ecom2022.
_TIME_AFTER_DAY = re.compile(r"[晚早夜]|" + _TIME_OF_DAY)  # also 20号晚 and 21号早
# 今天 and 今日 date an event only with the time of day after them (今天下午, 今日10时): alone they
# open commentary and furniture ("今天，小编带大家关注……", "今日头条"), which copies do not share.
# (前天津市副市长 is a former 天津 official; 今晚报 a newspaper)
_RELATIVE = re.compile(r"(?:今天|今日)(?=" + _TIME_OF_DAY + r")|今晨|今早|今晚(?!报(?![警道告案]))|昨天|昨日|昨晚|昨夜|前天(?!津)|前日")


# An event named by its date in a headline (昆明7.21公车恐怖袭击事件, “7·20”河南暴雨, 3·01暴恐案): month and
# day joined by a dot, an event word closing the name within a few characters; not a figure with
# its unit (7.21亿, 6.5级地震, 1.5小时后发生爆炸).
_NAMED_DATE = re.compile(
    r"(?<![\d.·])(1[0-2]|0?[1-9])[.·・](3[01]|[12]\d|0?[1-9])"
    r"(?![\d%亿万千百元米吨倍秒天年个级度岁]|小时|公里|公斤|分钟|摄氏)"
    r"(?=[^，,。；;！!？?\s]{0,10}?(?:事件|事故|案|大火|火灾|爆炸|地震|袭击|惨案|车祸|暴雨|洪水|空难|枪击))"
)


def headline_named_dates(clean_title: str) -> tuple[tuple[int, int], ...]:
    """(month, day) of each event the headline names by its date."""
    return tuple(dict.fromkeys((int(m.group(1)), int(m.group(2))) for m in _NAMED_DATE.finditer(clean_title)))


def _day_of(publish_time: datetime | date | None) -> date | None:
    if publish_time is None:
        return None
    if isinstance(publish_time, datetime):
        # the day on the reporter's calendar: an RSS stamp in GMT of a Chinese morning's report
        # (23:30 GMT, 07:30 in Beijing) dates its 今晨 and 昨晚 a day early otherwise
        return (publish_time.astimezone(CST) if publish_time.tzinfo else publish_time).date()
    if isinstance(publish_time, date):
        return publish_time
    raise TypeError(f"publish_time must be a datetime, a date or None, not {type(publish_time).__name__}")


def _valid(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _latest_before(candidates, anchor: date, ahead_days: int) -> date | None:
    """Of the valid candidate dates, the latest not more than ``ahead_days`` after the publish day:
    news reports what has happened, and looks only a little ahead (14日 in an article of 1 April
    is 14 March; 3月15日 in a January one is last March)."""
    valid = [d for d in candidates if d is not None and (d - anchor).days <= ahead_days]
    return max(valid) if valid else None


def _resolve(year: int | None, month: int | None, day: int, anchor: date | None) -> EventDate | None:
    if not 1 <= day <= 31 or (month is not None and not 1 <= month <= 12):
        return None
    if anchor is None:
        # a day its month does not have (6月31日, 2月28日至30日) is no date: read in a leap year
        # when the year is not written
        if month is not None and _valid(year if year is not None else 2024, month, day) is None:
            return None
        return EventDate(year if month is not None else None, month, day)
    if year is not None and month is not None:
        d = _valid(year, month, day)
    elif month is not None:
        d = _latest_before((_valid(anchor.year + k, month, day) for k in (-1, 0, 1)), anchor, MONTH_DAY_AHEAD_DAYS)
    else:
        months = []
        for k in (-1, 0, 1):
            m = anchor.month + k
            y, m = (anchor.year - 1, 12) if m == 0 else (anchor.year + 1, 1) if m == 13 else (anchor.year, m)
            months.append(_valid(y, m, day))
        d = _latest_before(months, anchor, DAY_AHEAD_DAYS)
    return EventDate(d.year, d.month, d.day) if d else None


def dates_in(text: str, publish_time: datetime | date | None, *, datelines: bool = True) -> list[EventDate]:
    """The calendar dates written in ``text``, resolved against the publish day where the text
    leaves out the year or month (``10日``, ``3月10日``, ``昨日``). Relative days (昨天, 前天) need
    a publish time and are skipped without one; vague ones (日前, 近日, 当天) are never dates.
    ``datelines=False`` skips the ``10日电`` of a news-agency dateline, which dates the report,
    not the event."""
    return [d for _, dateline, d in _dates_at(text, publish_time) if datelines or not dateline]


def _dates_at(text: str, publish_time: datetime | date | None) -> list[tuple[int, bool, EventDate]]:
    """(offset, is a dateline, date) for each date ``dates_in`` reads."""
    anchor = _day_of(publish_time)
    found = []
    previous: tuple[EventDate, int] | None = None  # the last date read and where it ends
    for m in _DATE.finditer(text):
        digits_year, word_year, month_s, month_word, day_s, dateline = m.groups()
        if m.start() > 0 and text[m.start() - 1].isdigit():
            continue  # the tail of a longer number
        day = chinese_number(day_s)
        month = chinese_number(month_s) if month_s else None
        year = chinese_number(digits_year) if digits_year else None
        if not (month or year or word_year or month_word) and previous and previous[0].month is not None \
                and _DAY_AFTER_DATE.fullmatch(text[previous[1]:m.start()]):
            # The second day of 4月18日与19日 or 3月5日至7日 is in the first one's month.
            year, month = previous[0].year, previous[0].month
        if word_year and anchor is not None:
            year = anchor.year + {"今年": 0, "去年": -1, "前年": -2}[word_year]
        if month_word and anchor is not None:
            month = anchor.month if month_word == "本月" else (anchor.month - 2) % 12 + 1
            if month_word != "本月" and anchor.month == 1:
                year = anchor.year - 1
            elif year is None:
                year = anchor.year
        elif month_word:
            continue
        if month is None and year is not None:
            continue  # "2008年10日" is not a date
        if month is None and m.group().endswith("号") and not _TIME_AFTER_DAY.match(text, m.end()):
            continue  # a house, line or document number (路154号, 2号线, [2018]2号), not 20号晚上
        if day is None or day != int(day) or (month is not None and month != int(month)):
            continue
        resolved = _resolve(int(year) if year else None, int(month) if month else None, int(day), anchor)
        if resolved:
            surface = m.group()[:-1] if dateline else m.group()
            found.append((m.start(), bool(dateline), replace(resolved, surface=surface)))
            previous = (resolved, m.end())
    if anchor is not None:
        for m in _RELATIVE.finditer(text):
            d = anchor + timedelta(days=_RELATIVE_DAYS[m.group()])
            context = _NOT_A_WORD_CHARACTER.sub("", text[m.end():m.end() + 3 * RELATIVE_CONTEXT_CHARS])[:RELATIVE_CONTEXT_CHARS]
            found.append((m.start(), False, EventDate(d.year, d.month, d.day, m.group(),
                                                      context if len(context) == RELATIVE_CONTEXT_CHARS else "")))
    return found


def _could_be_the_event(d: EventDate, publish_time: datetime | date | None) -> bool:
    """A date the report's event can have happened on: within ``EVENT_DAYS_BEFORE`` days before
    the publish day and ``DAY_AHEAD_DAYS`` after it. Older dates in a lead are background (早在
    2016年2月4日, 去年同期), which copies cut to different paragraphs keep or lose. Without a
    publish time or a full date, any date can be."""
    anchor = _day_of(publish_time)
    if anchor is None or d.year is None or d.month is None:
        return True
    return -EVENT_DAYS_BEFORE <= (date(d.year, d.month, d.day) - anchor).days <= DAY_AHEAD_DAYS


def _day_distance(a: EventDate, b: EventDate) -> int:
    """Days between two dates, reading only what both know (a day without its month is compared
    as days of adjacent months: 31日 and 1日 are a day apart)."""
    if a.year is not None and b.year is not None and a.month is not None and b.month is not None:
        return abs((date(a.year, a.month, a.day) - date(b.year, b.month, b.day)).days)
    if a.month is not None and b.month is not None:
        # A leap year, and the year boundary wraps: 12月31日 and 1月1日 are a day apart.
        da = date(2024, a.month, min(a.day, calendar.monthrange(2024, a.month)[1])).timetuple().tm_yday
        db = date(2024, b.month, min(b.day, calendar.monthrange(2024, b.month)[1])).timetuple().tm_yday
        return min(abs(da - db), 366 - abs(da - db))
    # Day numbers only: the nearest reading across a month end (31, 30, 29 or 28 days long).
    near = abs(a.day - b.day)
    for length in (28, 29, 30, 31):  # the earlier day must be one its month has: 30日 and 2日 are 2 or 3 days apart
        if a.day <= length:  # a in a month this long, b in the next
            near = min(near, abs(a.day - b.day - length))
        if b.day <= length:  # b in it, a in the next
            near = min(near, abs(a.day - b.day + length))
    return near


# A character a written date cannot follow and still be the same date: 9日 inside 19日 or 十九日
# is another day.
_NUMERAL_BEFORE = "0-9零〇一二两三四五六七八九十"


@lru_cache(maxsize=1024)
def _surface_pattern(surface: str) -> re.Pattern:
    return re.compile(f"(?<![{_NUMERAL_BEFORE}])" + re.escape(surface))


def _says_the_same_words(surface: str, text: str) -> bool:
    """``text`` writes the date ``surface`` as a whole, not as the tail of a longer number."""
    return surface in text and _surface_pattern(surface).search(text) is not None


def _dates_meet(lead: tuple[EventDate, ...], other: tuple[EventDate, ...], other_text: str) -> bool:
    """Some lead date is within the slack of a date the other report gives, or the other report
    writes the same date in the same words (3月10日 read in two years). A relative day (昨日,
    今晨) is its day: two trucks that overturned "昨天" in reports six days apart are two events (a
    verbatim copy published days later is linked by the text layers, before any specifics), but
    for a copy that kept its original's sentence within a few days (``_one_relative_day``)."""
    return any(a.surface and a.surface not in _RELATIVE_DAYS and _says_the_same_words(a.surface, other_text) for a in lead) or any(
        _day_distance(a, b) <= DATE_SLACK_DAYS or _one_relative_day(a, b) for a in lead for b in other
    )


def _one_relative_day(a: EventDate, b: EventDate) -> bool:
    """Two relative days of one offset (昨天, 昨日), each followed by the same words, in reports
    published a few days apart: one sentence of one report (昨天15时许，位于仙台大街与湛江路交会处…),
    which a site copied days later without moving its 昨天 (a fourth generator's never-read seeds
    415, 478, 480: the copy of 昨天 read as two days later). The same words a week apart are two
    events of one kind (``REPOST_LAG_DAYS``)."""
    return bool(a.context) and bool(b.context) and _RELATIVE_DAYS.get(a.surface) == _RELATIVE_DAYS.get(b.surface) \
        and _day_distance(a, b) <= REPOST_LAG_DAYS and _same_sentence_after(a.context, b.context)


def _same_sentence_after(a: str, b: str) -> bool:
    """Two relative days' contexts are one sentence's: the same, or with the same figures and a
    word or two swapped (昨日15时许，位于仙台大街… against a rewording copy's 昨日15时许，地处仙台大街…:
    a fourth generator's never-read seed 670)."""
    return a == b or (_NUMBER.findall(a) == _NUMBER.findall(b)
                      and SequenceMatcher(None, a, b, autojunk=False).ratio() >= RELATIVE_CONTEXT_ALIKE)


# ---- figures ------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Figure:
    """A key figure with what it counts. ``exact`` is False for approximations and running
    totals (约50人, 30多人, 至少3人, 升至5人): those say "about" or "so far" and never conflict."""

    role: str
    value: float
    exact: bool = True

    def __str__(self) -> str:
        text = f"{self.value:g}"
        return text if self.exact else f"~{text}"


# Role words after a head count ("3人死亡", "12名学生中毒") and before one ("死亡3人", "死亡人数升至5人").
_ROLE_WORDS = {
    "deaths": "死亡|遇难|身亡|丧生|罹难|殒命|丧命|不治|亡",
    "injured": "受伤|轻伤|重伤|伤势|伤",
    "poisoned": "中毒|就医|送医|就诊|住院|入院|治疗|出现不适|出现呕吐",
    "missing": "失踪|失联",
    "trapped": "被困",
}
_ROLE_NOUNS = {
    "deaths": "死亡人数|遇难人数|死亡|遇难|死者|遇难者|罹难者",
    "injured": "受伤人数|受伤|伤者|伤员|轻伤|重伤",
    "poisoned": "中毒人数|中毒|就医|住院|送医|中毒者|患者|病例",
    "missing": "失踪人数|失踪|失联",
    "trapped": "被困人数|被困",
}
_ROLE_OF_WORD = {w: role for role, words in _ROLE_WORDS.items() for w in words.split("|")}
_CARERS = re.compile(r"医生|医护|医务|专家|护士")
_RANGE_JOINERS = "至到-~—～"
_NUMERALS = "0123456789零〇一二两三四五六七八九十百千万"
_ROLE_OF_NOUN = {w: role for role, words in _ROLE_NOUNS.items() for w in words.split("|")}
# Words before a figure that make it an approximation or a count so far (已造成: more may follow).
_APPROX_BEFORE = (r"(至少|最少|超过|逾|近|将近|约|大约|共约|达到|已达|达|升至|增至|上升至|上升到|增加至|增加到|攀升至|累计|总计|已增至"
                  r"|已经造成|已造成|已致|已导致|已有|已经有|至今已|目前已|暂时)?")
_APPROX_AFTER = r"(余|多|来|几)?"
# What leaves a number's scale word (万, 千万) alone after it: 20多万, 几千万, 数十万.
_APPROX_SCALED = "多余几来数"
_HEADS = "人|名|位|个|例|具|口"
_GAP = r"[^\d\s,.;:!?，。；：！？、()（）\"“”]{0,8}?"
_FIGURE_START = r"(?=[\d零〇一二两三四五六七八九十百千万亿至最超逾近将约大共达已升增上攀累总])"
_COUNT_THEN_ROLE = re.compile(
    _FIGURE_START + _APPROX_BEFORE + r"(" + _NUM + r")" + _APPROX_AFTER
    + r"(?:(?:" + _HEADS + r")" + _GAP + r"(" + "|".join(sorted(_ROLE_OF_WORD, key=len, reverse=True)) + r")"
    + r"|(死|伤|亡))"
)
# What may stand between a role noun and its count (死者为1名, 中毒学生共22人). Nothing else may:
# 伤者中有一名 counts a part of them, 死亡第三位 is a rank, and 死者陈某作为一个成年人 and
# 被困在了一个电梯 count nobody.
_ROLE_GAP = r"的?(?:人员|学生|人质|人数)?(?:共有|共计|报告|为|有|是|共|已)?"
_ROLE_THEN_COUNT = re.compile(
    "(?=[" + "".join(sorted({w[0] for w in _ROLE_OF_NOUN})) + "])"
    r"(" + "|".join(sorted(_ROLE_OF_NOUN, key=len, reverse=True)) + r")"
    + _ROLE_GAP + _APPROX_BEFORE + r"(" + _NUM + r")" + _APPROX_AFTER + r"(?:" + _HEADS + r")"
)
_MAGNITUDE = re.compile(
    r"(?=[\d里震地强余m至最超逾近将约大共达已升增上攀累总])(?:(?:(里氏|震级为?|震级达)\s*" + _APPROX_BEFORE + r"(\d+(?:\.\d)?)\s*级?"
    # after 地震, 余震 or m, 级 or a decimal makes a magnitude (地震3人死亡, 余震3次, 宝马m5 are none;
    # nor 地震1.2万人受灾)
    r"|(?:地震|强震|余震|(?<![a-z\d])m)\s*" + _APPROX_BEFORE + r"(\d+(?:\.\d)?)(?:(?<=\.\d)(?![万亿千百\d])\s*级?|\s*级))"
    r"|" + _APPROX_BEFORE + r"(\d+(?:\.\d)?)级(?:左右的?)?(?:地震|强震|余震|的地震))"
)
_MONEY = re.compile(_FIGURE_START + _APPROX_BEFORE + r"(\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千]+)" + _APPROX_AFTER + r"(万|亿)?元")
_AREA = re.compile(_FIGURE_START + _APPROX_BEFORE + r"(\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千]+)" + _APPROX_AFTER
                   + r"(万)?(平方米|平米|平方公里|亩|公顷)")
_AREA_FACTOR = {"平方米": 1.0, "平米": 1.0, "平方公里": 1_000_000.0, "公顷": 10_000.0, "亩": 666.67}


def _figure(role: str, number: str, before: str | None, after: str | None, scale: float = 1.0) -> Figure | None:
    value = chinese_number(number)
    if value is None:
        return None
    return Figure(role, round(value * scale, 4), exact=not before and not after)


# Figures that identify an event. Money and areas are extracted too, but a report quotes many
# sums (losses, fines, budgets, prices) and copies cut to different paragraphs keep different ones.
DECIDING_ROLES = frozenset({"deaths", "injured", "poisoned", "missing", "trapped", "magnitude"})


# How far two figures of a role may lie apart and still be one: a magnitude is revised by a tenth
# or two after the first automatic reading (汶川 7.8, then 8.0). Rounding guards the float compare.
FIGURE_SLACK = {"magnitude": 0.2 + 1e-9}


def figures_in(text: str) -> list[Figure]:
    """Head counts by what happened to the people counted (deaths, injured, poisoned, missing,
    trapped), earthquake magnitudes, sums of money (in yuan) and areas (in square metres)."""
    return [f for _, f in _figures_at(text)]


def opening_figure(text: str) -> Figure | None:
    """The deciding figure (``DECIDING_ROLES``) that ``text`` opens with: 5人死亡、28人受伤 opens
    with 5 deaths."""
    return next((f for at, f in _figures_at(text) if at == 0 and f.role in DECIDING_ROLES), None)


@lru_cache(maxsize=1024)
def deciding_figures(text: str) -> frozenset[tuple[str, float]]:
    """The deciding figures of ``text`` as (role, value)."""
    return frozenset((f.role, f.value) for _, f in _figures_at(text) if f.role in DECIDING_ROLES)


def _figures_at(text: str) -> list[tuple[int, Figure]]:
    """``figures_in`` with the offset each figure starts at."""
    found = []
    for m in _COUNT_THEN_ROLE.finditer(text):
        before, number, after, word, short = m.groups()
        role = _ROLE_OF_WORD[word] if word else {"死": "deaths", "亡": "deaths", "伤": "injured"}[short]
        if m.start(2) > 0 and text[m.start(2) - 1].isdigit():
            continue
        if word == "治疗" and _CARERS.search(m.group()):
            continue  # 3名医生赶到现场参与治疗: who treat, not who were treated
        # the upper end of a range (3至5人) is no exact count
        ranged = m.start(2) > 1 and text[m.start(2) - 1] in _RANGE_JOINERS and text[m.start(2) - 2] in _NUMERALS
        # 万 of 20多万人 and 千万 of 几千万人: the scale of a round figure, as approximate as it
        fig = _figure(role, number, before or ("range" if ranged else None),
                      after or (m.start(2) > 0 and text[m.start(2) - 1] in _APPROX_SCALED))
        if fig and fig.value > 0:
            found.append((m.start(), fig))
    for m in _ROLE_THEN_COUNT.finditer(text):
        noun, before, number, after = m.groups()
        fig = _figure(_ROLE_OF_NOUN[noun], number, before, after)
        if fig and fig.value > 0:
            found.append((m.start(), fig))
    for m in _MAGNITUDE.finditer(text):
        g = m.groups()  # (word, before, number) after a magnitude's word, after 地震 or m, before 级
        before, number = next((b, n) for b, n in ((g[1], g[2]), (g[3], g[4]), (g[5], g[6])) if n)
        value = float(number)
        if 1.0 <= value <= 9.9:
            found.append((m.start(), Figure("magnitude", value, exact=not before)))
    for m in _MONEY.finditer(text):
        before, number, after, big = m.groups()
        if m.start(2) > 0 and text[m.start(2) - 1].isdigit():
            continue
        fig = _figure("money", number, before, after, _CN_BIG.get(big, 1))
        if fig and fig.value > 0:
            found.append((m.start(), fig))
    for m in _AREA.finditer(text):
        before, number, after, wan, unit = m.groups()
        fig = _figure("area", number, before, after, _AREA_FACTOR[unit] * (10_000 if wan else 1))
        if fig and fig.value > 0:
            found.append((m.start(), fig))
    return found


# ---- places and people ----------------------------------------------------------------------------

# Provinces, prefecture-level cities, countries, regions and the world's big cities: coarser than an
# event's place. Two reports naming the same city say nothing about whether they report one event
# (莫斯科 in 莫斯科里加地铁站 is no mention of that station by a report of a Moscow market).
_PROVINCES = frozenset("""
北京 天津 上海 重庆 河北 山西 辽宁 吉林 黑龙江 江苏 浙江 安徽 福建 江西 山东 河南 湖北 湖南 广东 海南 四川 贵州 云南
陕西 甘肃 青海 台湾 内蒙古 广西 西藏 宁夏 新疆 香港 澳门
""".split())
# Prefecture-level cities (and Taiwan's).
_CITIES = frozenset("""
石家庄 唐山 秦皇岛 邯郸 邢台 保定 张家口 承德 沧州 廊坊 衡水 太原 大同 阳泉 长治 晋城 朔州 晋中 运城 忻州 临汾 吕梁
呼和浩特 包头 乌海 赤峰 通辽 鄂尔多斯 呼伦贝尔 巴彦淖尔 乌兰察布 兴安 锡林郭勒 阿拉善 沈阳 大连 鞍山 抚顺 本溪 丹东
锦州 营口 阜新 辽阳 盘锦 铁岭 朝阳 葫芦岛 长春 四平 辽源 通化 白山 松原 白城 延边 哈尔滨 齐齐哈尔 鸡西 鹤岗 双鸭山
大庆 伊春 佳木斯 七台河 牡丹江 黑河 绥化 大兴安岭 南京 无锡 徐州 常州 苏州 南通 连云港 淮安 盐城 扬州 镇江 泰州 宿迁
杭州 宁波 温州 嘉兴 湖州 绍兴 金华 衢州 舟山 台州 丽水 合肥 芜湖 蚌埠 淮南 马鞍山 淮北 铜陵 安庆 黄山 滁州 阜阳 宿州
六安 亳州 池州 宣城 巢湖 福州 厦门 莆田 三明 泉州 漳州 南平 龙岩 宁德 南昌 景德镇 萍乡 九江 新余 鹰潭 赣州 吉安 宜春
抚州 上饶 济南 青岛 淄博 枣庄 东营 烟台 潍坊 济宁 泰安 威海 日照 莱芜 临沂 德州 聊城 滨州 菏泽 郑州 开封 洛阳 平顶山
安阳 鹤壁 新乡 焦作 濮阳 许昌 漯河 三门峡 南阳 商丘 信阳 周口 驻马店 济源 武汉 黄石 十堰 宜昌 襄阳 襄樊 鄂州 荆门
孝感 荆州 黄冈 咸宁 随州 恩施 仙桃 潜江 天门 神农架 长沙 株洲 湘潭 衡阳 邵阳 岳阳 常德 张家界 益阳 郴州 永州 怀化
娄底 湘西 广州 韶关 深圳 珠海 汕头 佛山 江门 湛江 茂名 肇庆 惠州 梅州 汕尾 河源 阳江 清远 东莞 中山 潮州 揭阳 云浮
南宁 柳州 桂林 梧州 北海 防城港 钦州 贵港 玉林 百色 贺州 河池 来宾 崇左 海口 三亚 三沙 儋州 成都 自贡 攀枝花 泸州
德阳 绵阳 广元 遂宁 内江 乐山 南充 眉山 宜宾 广安 达州 雅安 巴中 资阳 阿坝 甘孜 凉山 贵阳 六盘水 遵义 安顺 毕节 铜仁
黔西南 黔东南 黔南 昆明 曲靖 玉溪 保山 昭通 丽江 普洱 思茅 临沧 楚雄 红河 文山 西双版纳 大理 德宏 怒江 迪庆 拉萨
日喀则 昌都 林芝 山南 那曲 阿里 西安 铜川 宝鸡 咸阳 渭南 延安 汉中 榆林 安康 商洛 兰州 嘉峪关 金昌 白银 天水 武威
张掖 平凉 酒泉 庆阳 定西 陇南 临夏 甘南 西宁 海东 海北 黄南 果洛 玉树 海西 银川 石嘴山 吴忠 固原 中卫 乌鲁木齐
克拉玛依 吐鲁番 哈密 昌吉 博尔塔拉 巴音郭楞 阿克苏 克孜勒苏 喀什 和田 伊犁 塔城 阿勒泰 石河子 台北 新北 桃园 台中
台南 高雄 基隆 新竹 嘉义
""".split())
# The world's big cities: as coarse as a Chinese city, and no county follows one in a headline.
_WORLD_CITIES = frozenset("""
莫斯科 圣彼得堡 伦敦 巴黎 柏林 罗马 米兰 马德里 巴塞罗那 维也纳 布鲁塞尔 阿姆斯特丹 日内瓦 苏黎世 斯德哥尔摩 雅典
基辅 明斯克 华沙 布拉格 布达佩斯 伊斯坦布尔 安卡拉 开罗 德黑兰 耶路撒冷 特拉维夫 利雅得 迪拜 多哈 喀布尔 伊斯兰堡
卡拉奇 拉合尔 新德里 孟买 加尔各答 班加罗尔 达卡 加德满都 科伦坡 曼谷 河内 胡志明市 金边 万象 仰光 吉隆坡 雅加达
马尼拉 东京 大阪 京都 横滨 名古屋 首尔 釜山 平壤 乌兰巴托 悉尼 墨尔本 纽约 华盛顿 洛杉矶 旧金山 芝加哥 休斯敦
西雅图 波士顿 多伦多 温哥华 渥太华 墨西哥城 圣保罗 里约热内卢 布宜诺斯艾利斯 约翰内斯堡 开普敦 内罗毕 拉各斯
""".split())
COARSE_NAMES = _PROVINCES | _CITIES | frozenset("""
中国 美国 日本 韩国 朝鲜 英国 法国 德国 俄罗斯 意大利 西班牙 加拿大 澳大利亚 印度 巴基斯坦 阿富汗 伊拉克 伊朗 以色列
巴勒斯坦 土耳其 埃及 泰国 越南 菲律宾 印度尼西亚 印尼 马来西亚 新加坡 缅甸 巴西 墨西哥 阿根廷 南非 尼日利亚 乌克兰
叙利亚 沙特 也门 索马里 孟加拉 尼泊尔 斯里兰卡 新西兰 荷兰 比利时 瑞士 瑞典 挪威 芬兰 丹麦 波兰 希腊 葡萄牙 奥地利
爱尔兰 智利 秘鲁 哥伦比亚 委内瑞拉 古巴 蒙古 哈萨克斯坦 肯尼亚 埃塞俄比亚 阿尔及利亚 利比亚 苏丹 车臣 加沙 巴格达
全国 国内 海外 境外 内地 大陆 华北 华东 华南 华中 西南 西北 东北 中原 江南 珠三角 长三角 京津冀 亚洲 欧洲 非洲 美洲
拉美 中东 东南亚 南方 北方 沿海 全省 全市 全县 本市 本省 当地 各地 中华 祖国 北京时间
""".split()) | _WORLD_CITIES
# City names that running text uses as words of another kind more often (来宾 a guest, 阿里 the
# company, 白银 silver, 日照 sunshine, 朝阳 the morning sun, 安康 good health).
_CITY_HOMOGRAPHS = frozenset("来宾 阿里 白银 日照 朝阳 安康 大同 长治 白山 黑河 兴安 通化 普洱 红河 文山 山南 中卫 天门 三明 吉安 海东 海北 海西 黄南 玉树 德宏 开封 包头".split())
# The cities a headline or lead can be told by, as whole words (``rules.place_conflict``).
CITY_NAMES = _CITIES - _CITY_HOMOGRAPHS
# Provinces and cities, homographs too: a place where the word it stands for is one (包头 against
# 赤峰; rjieba tags 包头 a verb and 烟台 a common noun).
MAJOR_PLACE_NAMES = _PROVINCES | _CITIES
# Counties and districts as running text writes them, without 县 or 区 (顺义, 龙华, 义乌): the
# names rarely used as another word, from GB/T 2260 (made by scripts/counties.py), each with the
# cities and provinces it lies in (龙华: 深圳 广东 海口 海南).
_COUNTY_ROWS = [line.split("\t") for line in (resources.files("indexer") / "data" / "counties.tsv").read_text("utf-8").splitlines()]
COUNTY_PARENTS = {name: tuple(parents.split()) for name, parents, _ in _COUNTY_ROWS}
COUNTY_NAMES = frozenset(COUNTY_PARENTS)
# The short name of each county in ``COUNTY_NAMES`` by its full names (化州市 and 化州, 漾濞彝族自治县
# and 漾濞县 to 漾濞): a report that writes 化州市 mentions what another writes as 化州.
SHORT_COUNTY_NAMES = {
    written: short
    for short, _, fulls in _COUNTY_ROWS
    for full in fulls.split()
    for written in (full.split("(")[0], short + full.split("(")[0][-1])
}
# Counties and districts by their full names (漾濞县, 仁和区; scripts/counties.py): a word that is
# one of these is a place, whatever part of speech rjieba gives it (漾濞县: a verb).
COUNTY_FULL_NAMES = frozenset((resources.files("indexer") / "data" / "county_full_names.txt").read_text("utf-8").split())
_COUNTY_ENDINGS = tuple({name[-1] for name in COUNTY_FULL_NAMES})
# Provinces and regions a county can lie in, less the four cities that are provinces (顺义 in 北京).
PROVINCE_NAMES = _PROVINCES - {"北京", "天津", "上海", "重庆"}


# Endings of an administrative name at city level or above (南京市, 江苏省, 延边朝鲜族自治州).
_COARSE_ENDINGS = ("省", "市", "自治区", "自治州", "州", "盟", "地区", "特别行政区")
# Endings of a place finer than a city, longest first so 小区 is read before 区. Districts and
# counties (区, 县) are a coarser level than the rest: see ``_place_conflict``.
_DISTRICT_ENDINGS = ("区", "县", "旗")
FINE_ENDINGS = tuple((
    "大道 大街 街道 胡同 路 街 巷 弄 "
    "写字楼 大厦 大楼 广场 购物中心 中心 大酒店 酒店 宾馆 饭店 商场 商厦 市场 超市 商城 公寓 小区 花园 家园 新村 "
    "社区 村 镇 乡 屯 寨 工业区 开发区 工业园 产业园 园区 "
    "幼儿园 小学 中学 大学 学院 学校 职校 技校 医院 卫生院 诊所 "
    "公司 集团 工厂 厂 车间 煤矿 矿 "
    "高速公路 高速 国道 省道 县道 大桥 桥 隧道 火车站 汽车站 车站 加油站 收费站 地铁站 机场 码头 "
).split())
_ALL_ENDINGS = FINE_ENDINGS + _DISTRICT_ENDINGS
# Endings that make a kind of place (a factory, a company, a mall) rather than a place: these need
# a proper name (金鹰购物中心, 国药集团) to count.
_INSTITUTION_ENDINGS = frozenset(
    "公司 集团 工厂 厂 车间 中心 购物中心 市场 超市 商城 商场 商厦 广场 大厦 大楼 写字楼 酒店 大酒店 宾馆 饭店".split()
)
_PLACE_ENDING = re.compile("|".join(sorted(_ALL_ENDINGS, key=len, reverse=True)))
# Name parts that make no place of an ending: 道路, 人民医院 (where any city sends its injured),
# 疾控中心 (which every food poisoning in a city reports to).
_GENERIC_NAMES = re.compile(
    r"^(?:第?[一二三四五六七八九十\d]*(?:人民|中医|中西医结合|妇幼保健|妇女儿童|儿童|附属)|中心|市中心"
    r"|疾控|疾病预防控制|急救|120急救|紧急救援|指挥|应急|卫生|卫生监督|监督|服务|信息|新闻|传染病|精神卫生|救助|"
    r"购物|商业|交通|物流|数据|培训|研究|检测|技术|体育|文化|活动|会展|会议|展览|"
    r"当地|附近|周边|周围|现场|事发|事故|居民|住宅|学生|农村|乡村|城乡|城市|全市|全省|全县|各地|多个|多家|"
    r"一些|部分|有关|相关|这个|那个|这所|那所|这家|那家|其他|其它|所在|同一|高速|公|马|铁|线|一|小|大|中|新|老|"
    r"偏远|山|灾|重灾|辖|市|城|主城|自治|开发|工业|高新|保税|风景|旅游|今年以来|国内|国际|海外|全球|跨|地|社|景|园|"
    r"集团|企业|民营|私营|国有|外资|合资|保险|证券|银行|投资|科技|网络|电子|发展|建设|建筑|房地产|实业|贸易|有限|股份|有限责任)$"
)
# Words a company or market name ends in before its ending (科技有限公司, 网络交易市场): what is
# left before them must still be a name.
_GENERIC_TAIL = re.compile(
    r"(?:科技|有限|责任|股份|集团|实业|发展|投资|贸易|控股|网络|信息|技术|电子|商务|电子商务|交易|国际|中国|超级|"
    r"金融|资本|股票|证券|消费|房地产|房产|二手|批发|零售|农贸|菜|农产品|建材|物流|服务|管理|咨询|文化|传媒|顾问|公关|广告|上市)+$"
)
# Streets are often named with a verb (解放路, 建设路, 起义路): one such word right before a street
# ending is its name.
_STREET_ENDINGS = frozenset("大道 大街 胡同 路 街 巷 弄".split())
_VERB_TAGS = frozenset({"v", "vn", "a", "ad", "an", "l", "i"})
# Common nouns ending in a place word that rjieba sometimes tags as names.
_COMMON_PLACE_WORDS = frozenset("小镇 乡镇 城镇 村镇 集镇 农村 乡村 山村 渔村 城乡 小区 社区 街道 马路 公路 道路 铁路 工厂 学校 医院 公司 集团 市场 超市".split())
# First characters of a description, not a name: 各乡镇, 该小区, 全市各医院, 多家工厂.
_DETERMINERS = frozenset("各全该本此这那某其每多数几诸")
# Words no place name holds: a walk that took them in crossed a clause.
_NOT_IN_PLACE = re.compile(r"报道|媒体|记者|发生|获悉|了解|表示|通报|介绍|经|据|被|称|资料|图|之路")
# Tags of tokens that can be part of a place's name; anything else (a verb, a preposition, a
# pronoun, punctuation) ends the name to its left.
_NAME_TAGS = frozenset({"n", "ns", "nr", "nrt", "nrfg", "nz", "nt", "j", "eng", "q", "ng", "b", "s", "zg", "g"})
_PROPER_TAGS = frozenset({"ns", "nr", "nrt", "nrfg", "nz", "nt", "j", "eng"})
# The tags rjieba gives a county's name after its city or province in a headline (苏州吴江, 云南丘北:
# a person's name). Not an organisation's, an abbreviation's or another proper noun's: after a city
# those are its agencies, firms and events (郑州交警, 广州中院, 北京纪委, 上海联通, 深圳新闻网).
_MISREAD_COUNTY_TAGS = frozenset({"ns", "nr", "nrt", "nrfg"})
_MAX_PLACE_CHARS = 14
# A county or district that rjieba tags as a person's name (吴堡县, 夏邑县): one unit, not two run
# together (平山县元氏县), and not a banner (旗 also ends 五星红旗).
_COUNTY_AS_NAME = re.compile(r"[^区县旗市省]{2,5}[区县]")


# A name in quotation marks before a place word: 莫斯科东部的“切尔基佐夫”市场, 位于“阳光花园”小区.
# The quotes cut the tokens a name is walked from, so these are read from the text; the name
# alone counts as a mention (another report may write it without quotes).
_QUOTED_PLACE = re.compile(
    "[“「\"]([^“”「」\"\\s\\d，。、；：！？,.;:!?（）()《》]{2,10})[”」\"]("
    + "|".join(sorted(FINE_ENDINGS, key=len, reverse=True)) + ")"
)

# Function words and kind suffixes that a quoted name does not hold: “吃掉了”集团, “花园式”医院.
_NOT_A_QUOTED_NAME = re.compile(r"[的了着过把被是]|[式型类性化号]$")


@dataclass(frozen=True, order=True)
class Place:
    """A place finer than a city. ``key`` is the place without the administrative units before it
    (中山路 in 南京市鼓楼区中山路); ``names`` are the proper names inside it (金鹰 in 金鹰购物中心),
    which count as a mention of the place too: one report's 金鹰商场 is another's 金鹰购物中心."""

    level: int  # 0 district or county, 1 anything finer
    key: str
    mention: str
    names: tuple[str, ...] = ()

    def mentioned_in(self, text: str) -> bool:
        return self.key in text or any(_name_mentioned(n, text) for n in self.names)


# A name followed by one of these is a news outlet's (新华社, 新华网, 南方日报), not a place's:
# the 新华 of 新华乡 is not mentioned by a wire credit.
_OUTLET_AFTER_NAME = "社|网|日报|晚报|早报|商报|都市报|电视台|广播电台"


@lru_cache(maxsize=4096)
def _name_mention(name: str) -> re.Pattern:
    return re.compile(f"{re.escape(name)}(?!{_OUTLET_AFTER_NAME})")


def _name_mentioned(name: str, text: str) -> bool:
    return name in text and _name_mention(name).search(text) is not None


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[tuple[str, str, int], ...]:
    """(word, tag, start offset) for each rjieba token of ``text``."""
    out, at = [], 0
    for word, tag in rjieba.tag(text):
        out.append((word, tag, at))
        at += len(word)
    return tuple(out)


def _is_coarse(word: str) -> bool:
    return word in COARSE_NAMES or (len(word) >= 3 and word.endswith(_COARSE_ENDINGS) and not word.endswith(FINE_ENDINGS))


def _is_admin(word: str) -> bool:
    """A token that names an administrative unit: ends a place's name to its left."""
    return _is_coarse(word) or (
        len(word) >= 3 and word.endswith(_DISTRICT_ENDINGS) and not _PLACE_ENDING.fullmatch(word[-2:])
    )


def _name_token(word: str, tag: str) -> bool:
    if tag == "m":  # 第十七中学, 101国道, 3号院: ordinals and plain numbers name places, 一 and 几 do not
        return word.startswith("第") or word.isdigit()
    return tag in _NAME_TAGS and not _is_coarse(word) and word not in _WALK_STOPS


# Words tagged as nouns that still end a place's name on their left (一居民楼 is not a place).
_WALK_STOPS = frozenset("市 省 县 区 本市 该市 全市 该 此 这 那 某 其 本 一家 一所 一座 一个 一处 一栋 多家 多所 附近 位于 记者 消息 报道 发生 事故 火灾 现场".split())


def places_in(text: str) -> list[Place]:
    """Places finer than a city named in ``text``: names ending in a street, building, school,
    company, village, road or bridge word, and districts and counties."""
    tokens = _tokens(text)
    if not tokens:
        return []
    token_at = [0] * len(text)  # char offset -> index of the token holding it
    for i, (word, _, start) in enumerate(tokens):
        for k in range(start, start + len(word)):
            token_at[k] = i
    found: dict[str, Place] = {}
    for m in _PLACE_ENDING.finditer(text):
        ending = m.group()
        i = token_at[m.start()]
        word, tag, start = tokens[i]
        end = m.end()
        if start + len(word) > end and tag not in _PROPER_TAGS:
            continue  # the ending is the head of another word: 村民, 厂房, 大学生, 路段
        if start + len(word) < end:
            continue  # the ending straddles two tokens: segmentation says it is not one
        if (tag not in _PROPER_TAGS and len(word) - len(ending) == 1 or word in _COMMON_PLACE_WORDS) and start + len(word) == end:
            continue  # a common noun: 农村, 小镇, 药厂, 家园
        begin = start
        j = i - 1
        admin = None
        while j >= 0 and end - tokens[j][2] <= _MAX_PLACE_CHARS:
            w, t, s = tokens[j]
            if _is_admin(w):
                admin = w
                break
            street_verb = j == i - 1 and start == m.start() and ending in _STREET_ENDINGS and len(w) >= 2 and t in _VERB_TAGS
            if not (_name_token(w, t) or street_verb) or w.endswith(_ALL_ENDINGS):
                break  # a word that is not part of a name, or the place before this one
            begin = s
            j -= 1
        key = text[begin:end]
        if _NOT_IN_PLACE.search(key):
            continue
        name = _GENERIC_TAIL.sub("", key[: -len(ending)])
        if len(name) < 2 and not (len(name) == 1 and name.isdigit()) or describes_place(name):
            continue
        district_tag = tag in ("ns", "n") or tag == "nr" and _COUNTY_AS_NAME.fullmatch(key) or word in COUNTY_FULL_NAMES
        if ending in _DISTRICT_ENDINGS and (key != word or not district_tag or not 3 <= len(key) <= 6):
            continue  # a district is one word: 鼓楼区, 密云县; 网约车成重灾区 is not one
        names = tuple(
            w for w, t, s in tokens[token_at[begin] : i + 1]
            if t in _PROPER_TAGS and len(w) >= 2 and begin <= s and s + len(w) <= end
            and not _PLACE_ENDING.search(w) and not _is_coarse(w) and not _GENERIC_NAMES.match(w)
        )
        if ending in _INSTITUTION_ENDINGS and not names and tag not in _PROPER_TAGS:
            continue  # 服装厂, 广播公司, 购物中心: a kind of place until a name makes it one
        level = 0 if ending in _DISTRICT_ENDINGS else 1
        mention = (admin + key) if admin and not _is_coarse(admin) else key
        found.setdefault(key, Place(level, key, mention, names))
    for m in _QUOTED_PLACE.finditer(text):
        name, ending = m.group(1), m.group(2)
        word, _, start = tokens[token_at[m.start(2)]]
        if (start, len(word)) != (m.start(2), len(ending)):
            continue  # the place word is part of another: “我们回家”路上
        if _quoted_name(name):
            found.setdefault(name + ending, Place(1, name + ending, m.group(), (name,)))
    return list(found.values())


def describes_place(name: str) -> bool:
    """A name part that describes a place rather than names it: 人民 (医院), 该 (小区), 疾控 (中心)."""
    return bool(_GENERIC_NAMES.match(name)) or name[0] in _DETERMINERS


def _quoted_name(name: str) -> bool:
    """Whether the words in quotes before a place word name it: a proper name, not a description,
    a phrase or a kind in quotes (“吃掉了”集团, “花园式”医院)."""
    return not (describes_place(name) or _NOT_IN_PLACE.search(name) or _is_coarse(name) or _NOT_A_QUOTED_NAME.search(name)) \
        and any(t in _PROPER_TAGS for _, t, _ in _tokens(name))


def county_places(text: str) -> list[Place]:
    """Counties and districts ``text`` names without their 县 or 区 (顺义, 龙华): whole words of
    ``COUNTY_NAMES`` that are not a person's name; and those it names in full (``counties_in_full``)."""
    tokens = _tokens(text)
    found = [Place(0, word, word) for k, (word, _, _) in enumerate(tokens)
             if word in COUNTY_NAMES and not (k and is_given_name(word, *tokens[k - 1][:2])) and not listed_with_people(tokens, k)]
    return found + [p for p in counties_in_full(text) if not any(f.key in p.mention for f in found)]


def counties_in_full(text: str) -> list[Place]:
    """Counties, districts and county-level cities ``text`` names in full (``COUNTY_FULL_NAMES``:
    化州市, or 合作 市 over two words, whose short name is a common word first; 元氏县, which rjieba
    tags a person's name), keyed by the short name where running text writes one."""
    tokens = _tokens(text)
    found: list[Place] = []
    for end, (last, _, _) in enumerate(tokens):
        if not last.endswith(_COUNTY_ENDINGS):  # every full name ends so: skip the joins
            continue
        for k in range(end, max(-1, end - 3), -1):
            name = "".join(word for word, _, _ in tokens[k : end + 1])
            if name in COUNTY_FULL_NAMES and not any(p.key in name for p in found) \
                    and not _ends_a_coarse_name(text, tokens[k][2]):
                found.append(Place(0, SHORT_COUNTY_NAMES.get(name, name), name))
    return found


def _ends_a_coarse_name(text: str, at: int) -> bool:
    """Whether the characters before ``at`` and the first after it are a city's or province's
    name: 沙市区 in 长沙市区 (downtown 长沙) is not the district of 荆州."""
    return any(text[max(0, at - k) : at + 1] in COARSE_NAMES for k in (1, 2))


def listed_with_people(tagged: Sequence[tuple[str, ...]], k: int) -> bool:
    """Whether the word at ``tagged[k]`` (word and tag first) stands in a 、 list next to a person's
    name: a name too (苏非、李尚、田由、雷波、伍波, a legend's eight names, where 雷波 is also a county)."""
    return any(
        0 <= k + 2 * step < len(tagged) and tagged[k + step][0] == "、" and tagged[k + 2 * step][1].startswith("nr")
        and tagged[k + 2 * step][0] not in COUNTY_NAMES and tagged[k + 2 * step][0] not in COARSE_NAMES
        for step in (-1, 1)
    )


def is_given_name(word: str, before: str, before_tag: str) -> bool:
    """Whether a two-character place word after ``before`` is a person's given name after the
    surname: 赵丹阳, 谷文昌, 孙卫东 (not 向 in 向义乌出发, a preposition; not a province or city:
    唐山东缸窑)."""
    return len(word) == 2 and word not in COARSE_NAMES and len(before) == 1 \
        and (before_tag == "nr" or before in SURNAMES and before_tag not in _NOT_SURNAME_TAGS)


# Tags of a surname character used as another word (向 a preposition, 于 a conjunction).
_NOT_SURNAME_TAGS = frozenset({"p", "v", "c", "d", "u", "r", "f", "m"})


def headline_places(title: str) -> list[Place]:
    """Counties and districts a headline names without their 县 or 区 (福州闽侯, 河南社旗):
    rjieba ``ns`` words that are not provinces, cities, countries or regions, and the name right
    after a province or city. Read in the headline only: in running text ``ns`` tags too many
    other words."""
    tokens = _tokens(title)
    out = []
    for k, (word, tag, _) in enumerate(tokens):
        after_coarse = k > 0 and _is_coarse(tokens[k - 1][0]) and tokens[k - 1][0] not in _WORLD_CITIES \
            and tag in _MISREAD_COUNTY_TAGS and 2 <= len(word) <= 3  # 东京奥运会: no place
        if (tag == "ns" or after_coarse) and len(word) >= 2 and not _is_coarse(word) and not word.endswith(_ALL_ENDINGS) \
                and not _GENERIC_NAMES.match(word) and not _NOT_IN_PLACE.search(word):
            out.append(Place(0, word, word))
    return out


# Words before a name that make it a byline, not a person in the story.
_BYLINE_BEFORE = re.compile(r"(?:记者|通讯员|编辑|实习生|摄影|摄像|作者|主持人|评论员)\s*$")
SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
# 张某, 李某某: how incident reports name victims and suspects. Not 于某日, 向某部门.
ANONYMISED = re.compile(f"[{SURNAMES}]某+(?![日地处天年月时些种个位人家市县村区所单部公企机学医])")


def people_in(text: str) -> list[str]:
    """Named people (rjieba ``nr``, and anonymised 张某 forms) in ``text``, bylines left out."""
    out = []
    for word, tag, start in _tokens(text):
        if tag in ("nr", "nrfg", "nrt") and 2 <= len(word) <= 4 and not _BYLINE_BEFORE.search(text[max(0, start - 6) : start]):
            out.append(word)
    out.extend(m.group() for m in ANONYMISED.finditer(text) if not _BYLINE_BEFORE.search(text[max(0, m.start() - 6) : m.start()]))
    return list(dict.fromkeys(out))


def headline_people(title: str) -> list[str]:
    """The people a headline names in full: three-character rjieba ``nr`` words that open with a
    common surname (郑炳松, 杨光富). Whom a headline names is whom the story is about; shorter
    ``nr`` words are too often other words (道德, 高达, 西岳), and so are those ending like a place
    (夏邑县, 高新区)."""
    return list(dict.fromkeys(w for w, tag, _ in _tokens(title) if tag in ("nr", "nrfg", "nrt") and _full_name(w)))


def _full_name(word: str) -> bool:
    return len(word) == 3 and word[0] in SURNAMES and not word.endswith(_ALL_ENDINGS) \
        and word not in COARSE_NAMES and not word.endswith(_LANDSCAPE_ENDINGS) and word not in _NOT_PEOPLE


# rjieba tags some places and things as people's names too (石家庄 and 张家界 are cities, 秦皇岛 an
# island city, 马拉松 a race): a city, a place ending no given name ends with, or a known thing is no
# person. (江, 山, 海, 峰, 泉 end places and given names alike: 李春江, 王海峰.)
_LANDSCAPE_ENDINGS = tuple("岛甸港湾")
_NOT_PEOPLE = frozenset("马拉松".split())


# A court case's number: （2017）赣01民终2795号, (2018)京0105民初1234号. A judgment is its case's
# document, and a report of a case cites it; another number is another case.
_CASE_NUMBER = re.compile(r"[（(]\s*\d{4}\s*[）)]\s*([\u4e00-\u9fff]{1,2}\s*\d{0,6}\s*[\u4e00-\u9fff]{1,6}?\s*\d+\s*号)")
_SPACES = re.compile(r"\s+")


def case_numbers(text: str) -> list[str]:
    """The case numbers ``text`` states, without their year and spaces (赣01民终2795号): a report
    that cites a case writes its number so, whatever brackets it puts around the year."""
    if "号" not in text:
        return []
    return list(dict.fromkeys(_SPACES.sub("", m.group(1)) for m in _CASE_NUMBER.finditer(text)))


# ---- what a headline is about: the work it names, the episode of a series ---------------------------

# A title in book-title marks: a film, a song, a programme, a law or a document. The innermost
# marks when nested (《王菲-宽恕-(电视剧《天龙八部03版》片尾曲）》 names 天龙八部03版 too).
_WORK = re.compile(r"《([^《》]{1,60})》")


def headline_works(title: str) -> list[str]:
    """The works a headline names in book-title marks, compacted (no spaces or punctuation:
    《你好，李焕英》 and 《你好李焕英》 are one film)."""
    return list(dict.fromkeys(w for w in (_NOT_WORD.sub("", m.group(1)) for m in _WORK.finditer(title)) if w))


# A series name opening a headline, then its separator (射雕英雄传：…, 熊出没：…, 刘勇课堂|…,
# 每天一首好歌-…), or closing it after one (…全程笑料丨笑动剧场). Letters only (no digits: 2021-03-01
# opens a dated headline, not a series).
_SERIES_NAME = r"[\u4e00-\u9fffA-Za-z·]{2,12}"
_SERIES_FIRST = re.compile(rf"^({_SERIES_NAME})\s*[：:｜|丨-]")
_SERIES_LAST = re.compile(rf"[｜|丨]\s*({_SERIES_NAME})\s*$")
# Under one series name, the rest of two headlines shares at most this share of its character
# pairs (of the shorter rest) when they are two episodes: 熊二想睡觉，熊大用烤鱼排诱惑它 against
# 熊二打开光头强背的坛子 shares 0.06. A rewrite of one headline keeps its words (0.38 and up on
# the sohu tune pairs labelled one event, but for one drama's two scenes at 0.07).
EPISODE_REST_OVERLAP = 0.2
EPISODE_REST_CHARS = 60


def _char_pairs(compact: str) -> frozenset[str]:
    """The character pairs of a compacted text (no spaces or punctuation)."""
    return frozenset(compact[i : i + 2] for i in range(len(compact) - 1))


def _series_and_rest(title: str) -> tuple[str, str] | None:
    if m := _SERIES_FIRST.match(title):
        return m.group(1), title[m.end() :]
    if m := _SERIES_LAST.search(title):
        return m.group(1), title[: m.start()]
    return None


def episode_conflict(title_a: str, title_b: str) -> str | None:
    """Two headlines under one series name (a drama, a cartoon, a variety show, a column) that
    go on to say different things are two episodes, whatever an embedding of the series name says."""
    sa, sb = _series_and_rest(title_a), _series_and_rest(title_b)
    if not (sa and sb and sa[0] == sb[0]):
        return None
    rest_a, rest_b = (_NOT_WORD.sub("", rest[:EPISODE_REST_CHARS]) for rest in (sa[1], sb[1]))
    if not (rest_a and rest_b):
        return None
    if min(len(rest_a), len(rest_b)) == 1:  # 一字内蒙古：劲！ has no character pairs
        if rest_a in rest_b or rest_b in rest_a:
            return None
    else:
        pairs_a, pairs_b = _char_pairs(rest_a), _char_pairs(rest_b)
        if len(pairs_a & pairs_b) >= EPISODE_REST_OVERLAP * min(len(pairs_a), len(pairs_b)):
            return None
    return f"episodes differ: {title_a[:30]!r} vs {title_b[:30]!r}"


# A match between two sides: 雄鹿VS湖人, 广东对阵辽宁, Lakers vs Celtics, or its result: 北京胜深圳,
# 湖人击败快船. Each side is told by the name next to the word: the last two characters before it
# and the first two after (a Latin name whole), which a report of the same match writes too
# (尤文图斯VS斯佩齐亚 and 尤文vs斯佩齐亚 share 斯佩). A bare 胜 is a result only outside the words
# it makes with its neighbours (决胜, 获胜, 胜利, 胜诉 ...).
_MATCHUP = re.compile(r"([A-Za-z]+|[\u4e00-\u9fff]{2})\s*(?:[vV][sS]\.?|对阵|对战|战胜|击败|力克|不敌|负于|险胜|大胜|完胜|惜败|绝杀"
                      r"|(?<![决获取优名必制全])胜(?![利诉出任地算负率券]))\s*([A-Za-z]+|[\u4e00-\u9fff]{2})")


def headline_matchups(title: str) -> list[tuple[str, str]]:
    """The matches a headline names, each as the two names next to its vs, 对阵 or result word."""
    return list(dict.fromkeys((m.group(1).lower(), m.group(2).lower()) for m in _MATCHUP.finditer(title)))


def _matchups_conflict(a: Specifics, b: Specifics) -> str | None:
    """Both headlines name matches and neither report names both sides of one of the other's:
    two games (雄鹿VS湖人 against 雄鹿VS鹈鹕)."""
    if not (a.matchups and b.matchups):
        return None
    text_a, text_b = a.text.lower(), b.text.lower()
    if any(x in text_b and y in text_b for x, y in a.matchups) or any(x in text_a and y in text_a for x, y in b.matchups):
        return None
    return f"matches differ: {_show_matches(a.matchups)} vs {_show_matches(b.matchups)}"


def _show_matches(pairs: tuple[tuple[str, str], ...]) -> str:
    return "、".join(f"{x}-{y}" for x, y in pairs)


# ---- one report's specifics and the comparison ----------------------------------------------------


@dataclass(frozen=True)
class Specifics:
    """The event specifics of one report. ``places``, ``dates``, ``figures`` and ``people`` come
    from the lead (headline and the first ``LEAD_CHARS`` of the body): what the report is about. ``all_dates``, ``all_figures`` and ``text`` cover the whole report and
    answer "does this report mention that at all" for the other side's lead specifics."""

    places: tuple[Place, ...] = ()
    dates: tuple[EventDate, ...] = ()
    figures: tuple[Figure, ...] = ()
    people: tuple[str, ...] = ()
    headline_people: tuple[str, ...] = ()
    case_numbers: tuple[str, ...] = ()  # court case numbers in the lead (``case_numbers``)
    headline: str = ""
    works: tuple[str, ...] = ()  # works the headline names (``headline_works``)
    matchups: tuple[tuple[str, str], ...] = ()  # matches the headline names (``headline_matchups``)
    all_dates: tuple[EventDate, ...] = ()
    all_figures: tuple[Figure, ...] = ()
    text: str = ""
    named_dates: tuple[tuple[int, int], ...] = ()  # events the headline names by date (7.21事件): (month, day)
    lead_written_dates: tuple[EventDate, ...] = ()  # dates the lead writes with their month (3月1日), however old
    sentences: frozenset[str] = frozenset()  # the body's sentences, compacted (``compact_sentences``)
    refutation: str = ""  # the word by which the headline refutes a claim (``refutation_in``), or ""

    @cached_property
    def telling(self) -> frozenset[str]:
        """Of ``sentences``, those that tell the event (``telling_sentences``): read only when two
        reports share enough sentences to be cuts of one (``copies_of_one_report``), from the body
        that ``text`` holds after the headline's line."""
        return telling_sentences(self.text.partition("\n")[2])


# A sentence this long, found word for word in another report, was copied from it.
MIN_SHARED_SENTENCE_CHARS = 10
_SENTENCE_END = re.compile(r"[。！？!?；;\n]+")
_NOT_WORD = re.compile(r"[\W_]+")


# A report that refutes a claim (辟谣, 系谣言, 消息不实, 是假的) is news of its own, not a copy of the
# reports of the claim, which an embedding and a headline similarity read as the same news: of the
# 64 rumour/refutation headline pairs among the first 2,000 WSDM Cup 2019 fake-news pairs, 31 were
# semantic matches. "不是谣言" and "真的假的？" assert or ask, they refute nothing; 不信谣不传谣 is a
# slogan under police notices. Only the headline is read: a refutation says so there, while
# independent reports of one event may quote a denial in their lead or not (read over the lead,
# the check cost ecom2022 test F1 0.739 -> 0.716, where the claim and its denial are one event).
_REFUTATION = re.compile(
    r"辟谣|(?<!不是)(?<!并非)谣言|系谣|(?<!不)是谣|谣传|(?<![不勿])传谣|造谣|(?<!真的)(?<![放请休度寒暑病产婚])假的"
    r"|不实(?![行施现际])|不属实|假消息|假新闻"
    r"|虚假信息|纯属虚构|子虚乌有|编造|并非事实|并无此事|(?:回应|回复|否认|澄清)[^，。,！!？?]{0,30}(?:传言|传闻)"
)


def refutation_in(headline: str) -> str:
    """The first word of ``headline`` that refutes a claim, or ""."""
    m = _REFUTATION.search(headline)
    return m.group() if m else ""


def _stance_conflict(a: Specifics, b: Specifics) -> str | None:
    """One headline refutes a claim and the other does not: a refutation and a report of its claim."""
    if bool(a.refutation) == bool(b.refutation):
        return None
    return f"stance differs: {a.refutation or b.refutation!r} in one report only"


def compact_sentences(body: str) -> frozenset[str]:
    """The body's sentences without spaces and punctuation, those long enough to count as copied."""
    return frozenset(compact for _, compact in _long_sentences(body))


def _long_sentences(body: str) -> Iterator[tuple[str, str]]:
    """(sentence, its compact form) of the body's sentences long enough to count as copied."""
    for sentence in _SENTENCE_END.split(body):
        if len(compact := _NOT_WORD.sub("", sentence)) >= MIN_SHARED_SENTENCE_CHARS:
            yield sentence, compact


def telling_sentences(body: str) -> frozenset[str]:
    """Of ``compact_sentences``, those that state a date (a relative day too: 昨天上午，榕城区…一处老房子
    突然发生火灾, held-out tune seed 753) or a figure (not any digit: a hotline's 120
    or 110 is in every report of its kind): what one report
    says of its event, not the closing lines every report of its kind shares (伤者已被送往医院救治,
    事故原因正在进一步调查中; 警方提醒广大驾驶人出行注意安全)."""
    return frozenset(compact for s, compact in _long_sentences(body)
                     if _dates_at(s, None) or _RELATIVE.search(s) or _figures_at(s))


def copies_of_one_report(a: Specifics, b: Specifics) -> bool:
    """At least two sentences, and half the sentences of the report with fewer, appear word for
    word in both, one of them telling the event (``telling_sentences``): the two are cuts of one
    report (a trimmed repost, another with sentences dropped), whose leads may have slid to
    different sentences, each with a detail the other cut. Two reports of two crashes sharing
    only their stock closing lines are not (they met every count but this one)."""
    shared = len(a.sentences & b.sentences)
    return shared >= 2 and shared * 2 >= min(len(a.sentences), len(b.sentences)) and bool(a.telling & b.telling)


# A comma between a digit and exactly three more: 8,000 and 1,250,000 (not 1,2 or 3,45).
_THOUSANDS_SEPARATOR = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def without_thousands_separators(text: str) -> str:
    """1,500 as 1500 (cleaning folds ， to ,: a Hong Kong or Taiwan copy writes 1,500人死亡)."""
    return _THOUSANDS_SEPARATOR.sub("", text) if "," in text else text


# A percentage in words: 百分之三十九, 百分之零点五, 百分之39.
_PERCENT_IN_WORDS = re.compile(r"百分之(\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百]+(?:点[零〇一二三四五六七八九]+)?)")


def percents_in_figures(text: str) -> str:
    """百分之三十九 as 39%, 百分之零点五 as 0.5%: one figure in two house styles (a fifth generator's
    seeds 1-20: 25 copies that wrote their original's percentages in figures were refused as
    templated reports, 百分之三十九 against 39%)."""
    return _PERCENT_IN_WORDS.sub(_percent_in_figures, text) if "百分之" in text else text


# A figure scaled by 万 or 亿: 1.8万, 1609.2万, 3亿.
_SCALED_FIGURE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)([万亿])")


def scaled_figures_in_digits(text: str) -> str:
    """1.8万 as 18000, 1609.2万 as 16092000: one figure in two house styles (a fifth generator's
    never-read seeds 40, 42, 43: 1.8万人 against 18000人 was a substituted number)."""
    return _SCALED_FIGURE.sub(_scaled_in_digits, text) if ("万" in text or "亿" in text) else text


def _scaled_in_digits(m: re.Match) -> str:
    value = Decimal(m.group(1)) * (10_000 if m.group(2) == "万" else 100_000_000)
    return format(value.normalize(), "f")


def _percent_in_figures(m: re.Match) -> str:
    whole, _, fraction = m.group(1).partition("点")
    value = chinese_number(whole)
    if value is None:
        return m.group()
    return f"{value:g}" + ("." + "".join(str(_CN_DIGITS[c]) for c in fraction) if fraction else "") + "%"


def extract_specifics(clean_title: str, clean_body: str, publish_time: datetime | date | None = None) -> Specifics:
    """The specifics of one report from its cleaned headline and body; relative dates (10日, 昨日)
    are resolved against ``publish_time`` when given."""
    clean_title, clean_body = without_thousands_separators(clean_title or ""), without_thousands_separators(clean_body or "")
    lead = f"{clean_title}\n{clean_body[:LEAD_CHARS]}"
    places = places_in(lead)
    for extra in headline_places(clean_title) + county_places(f"{clean_title}\n{clean_body[:OPENING_CHARS]}"):
        if not _named_within(extra, places):
            places.append(extra)
    whole = f"{clean_title}\n{clean_body[:BODY_FIGURE_CHARS]}"  # the lead is its beginning
    dates, figures = _dates_at(whole, publish_time), _figures_at(whole)
    return Specifics(
        places=tuple(places),
        dates=tuple(dict.fromkeys(d for at, dateline, d in dates
                                  if at < len(lead) and not dateline and _could_be_the_event(d, publish_time))),
        figures=tuple(dict.fromkeys(f for at, f in figures if at < len(lead))),
        people=tuple(people_in(lead)),
        headline_people=tuple(headline_people(clean_title)),
        case_numbers=tuple(case_numbers(lead)),
        headline=clean_title,
        works=tuple(headline_works(clean_title)),
        matchups=tuple(headline_matchups(clean_title)),
        all_dates=tuple(dict.fromkeys(d for _, _, d in dates)),
        all_figures=tuple(dict.fromkeys(f for _, f in figures)),
        text=f"{clean_title}\n{clean_body[:TEXT_CHARS]}",
        named_dates=headline_named_dates(clean_title),
        lead_written_dates=tuple(dict.fromkeys(d for at, dateline, d in dates
                                               if at < len(lead) and not dateline and d.month is not None and "月" in d.surface)),
        sentences=compact_sentences(clean_body[:TEXT_CHARS]),
        refutation=refutation_in(clean_title),
    )


def _named_within(place: Place, places: list[Place]) -> bool:
    return any(place.key in p.key for p in places)


def _names_conflict(kind: str, lead_a, lead_b, text_a: str, text_b: str, show=str) -> str | None:
    """Both leads name things of one kind and neither report mentions any the other names."""
    if lead_a and lead_b and not any(x.mentioned_in(text_b) if isinstance(x, Place) else x in text_b for x in lead_a) \
            and not any(x.mentioned_in(text_a) if isinstance(x, Place) else x in text_a for x in lead_b):
        return f"{kind} differ: {'、'.join(show(x) for x in lead_a)} vs {'、'.join(show(x) for x in lead_b)}"
    return None


def _place_conflict(a: Specifics, b: Specifics) -> str | None:
    """Places are compared at the finest level both leads name: streets, buildings and villages
    when both name some, else districts and counties (two fires on different streets of one
    district are two fires, whatever the shared district)."""
    for level in (1, 0):
        pa, pb = _places_within_reach(a, b, level), _places_within_reach(b, a, level)
        if pa and pb:
            return _names_conflict("places", pa, pb, a.text, b.text, show=lambda p: p.mention)
    return None


# A text that ends in an ellipsis was cut there: a teaser (……全文请点击), a digest's first half.
_CUT_SHORT = re.compile(r"(?:\.{3,}|…+)\s*$")


def _places_within_reach(a: Specifics, b: Specifics, level: int) -> list[Place]:
    """``a``'s lead places of ``level``; when ``b`` was cut short (``_CUT_SHORT``), only those ``a``
    names before the length ``b`` kept: of what comes later, a teaser says nothing. (A fourth
    generator's never-read seed 658: a teaser of a report, cut after its 切布克镇, against a copy
    that dropped that sentence and ends with the report's last paragraph, 阿布贾的客运车站.)"""
    places = [p for p in a.places if p.level == level]
    if not _CUT_SHORT.search(b.text):
        return places
    return [p for p in places if a.text.find(p.mention) < len(b.text)]


def _date_conflict(a: Specifics, b: Specifics) -> str | None:
    if a.dates and b.dates and not _dates_meet(a.dates, b.all_dates, b.text) and not _dates_meet(b.dates, a.all_dates, a.text):
        return f"event dates differ: {'、'.join(map(str, a.dates))} vs {'、'.join(map(str, b.dates))}"
    return _named_date_conflict(a, b) or _named_date_conflict(b, a)


def _written_date_conflict(a: Specifics, b: Specifics) -> str | None:
    """Dates older than an event's (background, or a report read long after its event) still tell
    two events apart when both leads write one with its month and neither report has the other's:
    two charity sales of 4月18日 and 5月18日 (burst tune seed 466). Read only where the event dates
    decided nothing, after every other specific."""
    if not (a.dates and b.dates) and a.lead_written_dates and b.lead_written_dates \
            and not _dates_meet(a.lead_written_dates, b.all_dates, b.text) and not _dates_meet(b.lead_written_dates, a.all_dates, a.text):
        return f"lead dates differ: {'、'.join(map(str, a.lead_written_dates))} vs {'、'.join(map(str, b.lead_written_dates))}"
    return None


def _named_date_conflict(a: Specifics, b: Specifics) -> str | None:
    """``a``'s headline names its event by a date (7.21事件) that ``b`` never mentions, while ``b``'s
    lead dates its own event with another month and day. Read whatever the publish times say: an
    event's name keeps its date when the report is years later, or its publish time wrong (held-out
    tune seeds 339 and 345: 昆明7.21公车恐怖袭击事件 against the 3月1日 attack at 昆明火车站)."""
    for month, day in a.named_dates:
        if not b.lead_written_dates or (month, day) in b.named_dates:
            continue
        written = (f"{month}.{day}", f"{month}·{day}", f"{month}・{day}", f"{month}月{day}日", f"{month}月{day}号")
        # b's dates with their month (its lead's among them)
        if any(w in b.text for w in written) or any(d.month == month and abs(d.day - day) <= 1 for d in b.all_dates):
            continue
        return f"event dates differ: {month}.{day} (the headline's event) vs {'、'.join(f'{d.month}月{d.day}日' for d in b.lead_written_dates)}"
    return None


def _figure_conflict(a: Specifics, b: Specifics) -> str | None:
    """For each role both leads give exact figures for, neither report states any of the other's
    figures; a role with an approximation or running total on either side is left alone."""
    roles = sorted({f.role for f in a.figures} & {f.role for f in b.figures} & DECIDING_ROLES)
    for role in roles:
        all_a = [f for f in a.all_figures if f.role == role]
        all_b = [f for f in b.all_figures if f.role == role]
        if not all(f.exact for f in all_a + all_b):
            continue
        lead_a = {f.value for f in a.figures if f.role == role}
        lead_b = {f.value for f in b.figures if f.role == role}
        slack = FIGURE_SLACK.get(role, 0.0)
        if not _figures_meet(lead_a, all_a, lead_b, all_b, slack):
            return f"{role} differ: {'、'.join(f'{v:g}' for v in sorted(lead_a))} vs {'、'.join(f'{v:g}' for v in sorted(lead_b))}"
    return None


def _figures_meet(lead_a: set[float], all_a, lead_b: set[float], all_b, slack: float) -> bool:
    """Some lead figure of either side is among the other side's figures of its role, within ``slack``."""
    return any(abs(x - y.value) <= slack for x in lead_a for y in all_b) or any(
        abs(x - y.value) <= slack for x in lead_b for y in all_a
    )


def _anonymised(people: tuple[str, ...]) -> tuple[str, ...]:
    """The 张某 forms among the people. Only these decide: rjieba's ``nr`` tags two-character words
    as names too often (道德, 高达), and independent reports of one event quote different people."""
    return tuple(p for p in people if "某" in p)


def _headline_person_unnamed(a: Specifics, b: Specifics) -> str | None:
    """``a``'s headline names whom its story is about, ``b``'s headline names nobody while its lead
    names people in full, and neither report mentions any of the other's: two officials' visits
    written alike (a burst tune merge: 任永前 in the headline of one, 张守华 in the lead of the
    other, whose headline was cut from its first sentence)."""
    if not a.headline_people or b.headline_people:
        return None
    return _names_conflict("headline people", a.headline_people, tuple(p for p in b.people if _full_name(p)), a.text, b.text)


def _case_conflict(a: Specifics, b: Specifics) -> str | None:
    """Both leads give court case numbers and neither report cites one of the other's: two
    judgments (or reports of two cases) of one court, written alike."""
    if not (a.case_numbers and b.case_numbers):
        return None
    return _names_conflict("case numbers", a.case_numbers, b.case_numbers, _SPACES.sub("", a.text), _SPACES.sub("", b.text))


# Two works' compacted titles sharing this share of their character pairs (of the shorter) are
# one work named two ways: 浪姐2 and 乘风破浪的姐姐2, 送你一朵小红花 misspelt 给你一朵小红花.
# Two songs of one singer share the singer's name only (张学友她来听我的演唱会, 张学友如果这都不算爱: 0.22).
SAME_WORK_OVERLAP = 0.5


def _one_work(x: str, y: str) -> bool:
    pairs_x, pairs_y = _char_pairs(x), _char_pairs(y)
    return bool(pairs_x and pairs_y) and len(pairs_x & pairs_y) >= SAME_WORK_OVERLAP * min(len(pairs_x), len(pairs_y))


def _works_conflict(a: Specifics, b: Specifics) -> str | None:
    """Both headlines name works, and neither report names one of the other's (or a work
    named alike): two songs of one singer, two films of one festival."""
    if not (a.works and b.works) or any(_one_work(x, y) for x in a.works for y in b.works):
        return None
    return _names_conflict("works", a.works, b.works, _NOT_WORD.sub("", a.text), _NOT_WORD.sub("", b.text))


def specifics_conflict(a: Specifics, b: Specifics) -> str | None:
    """Why two reports cannot be one event, naming the specific that decided, or None.

    Only specifics both leads state count, and only when neither report mentions any of the
    other's: a detail one side leaves out, or mentions further down, is no conflict. Checked in
    order: event dates, places, figures, people (张某 forms), headline people, court case numbers,
    works named in headlines, matches (雄鹿VS湖人), the episodes of one series (``episode_conflict``) and
    stance (a refutation against a report of its claim).
    Named organisations decide nothing:
    independent reports of one event quote different authorities, and rjieba's ``nt`` tag is too
    loose to tell a party to the event from a source. Two cuts of one report
    (``copies_of_one_report``) never conflict."""
    if copies_of_one_report(a, b):
        return None
    return (
        _date_conflict(a, b)
        or _place_conflict(a, b)
        or _figure_conflict(a, b)
        or _names_conflict("people", _anonymised(a.people), _anonymised(b.people), a.text, b.text)
        or _names_conflict("headline people", a.headline_people, b.headline_people, a.text, b.text)
        or _headline_person_unnamed(a, b) or _headline_person_unnamed(b, a)
        or _case_conflict(a, b)
        or _works_conflict(a, b)
        or _matchups_conflict(a, b)
        or episode_conflict(a.headline, b.headline)
        or _stance_conflict(a, b)
        or _written_date_conflict(a, b)
    )
