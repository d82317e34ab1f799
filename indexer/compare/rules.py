"""The duplicate rules: hard guards that refuse a match whatever the scores say, and the verdict.

* **exact**     the content keys (MD5 of the cleaned body, or title+body for very short bodies) are equal;
* **near**      SimHash Hamming distance within the length-dependent limit, or the shorter text's
                shingles are contained in the longer one (a trimmed repost), or one quotes
                sentences of the other word for word under the same headline (a partial quote);
* **semantic**  the same news event: an event score (weighted embedding cosine plus headline
                character-gram similarity) above the threshold, no conflicting figures in the
                two headlines and no conflicting event specifics (places, dates, casualties).

A *roundup* (a briefing gathering several stories, ``compare.roundups``) is a story of its own:
it matches only a copy of itself (exact, fingerprint-near, as long and contained, holding all of it,
or cut short under its own headline), never one of the stories it quotes.

Near and semantic matches are refused when the two texts differ in a way that makes them different
news although they read alike: a *templated report* (stock moves, weather warnings, prices, lottery
draws) where the differences are numbers or names substituted into the same sentence frame.
The same title over a different body is never a match by itself: titles only count through the
body-weighted features.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import Enum
from functools import lru_cache
from os.path import commonprefix  # character-wise, for any strings
from typing import TYPE_CHECKING, Iterable, Sequence

import rjieba

from ..cleaning import exact_form, fold_regional_words
from ..dates import DATE_WITH_YEAR
from ..settings import DecisionSettings, SimhashSettings
from .specifics import (
    ANONYMISED, CITY_NAMES, COUNTY_NAMES, COUNTY_PARENTS, FINE_ENDINGS, MAJOR_PLACE_NAMES, PROVINCE_NAMES, chinese_number,
    counties_in_full, deciding_figures, describes_place, is_given_name, listed_with_people, opening_figure,
    percents_in_figures, scaled_figures_in_digits, without_thousands_separators,
)
from .synonyms import are_synonyms

if TYPE_CHECKING:
    from .evidence import PairEvidence


class Reason(str, Enum):
    EXACT = "exact"
    NEAR = "near"
    SEMANTIC = "semantic"


# Latin letters then digits: a model's, a route's or a line's code (P30, E4, G4, X5).
_CODE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{1,3}\d+[A-Za-z]?(?![A-Za-z0-9])")
# A number: digits, or Chinese numerals before a unit that counts (一名 is a figure, 一些 and 进一步
# are not; rjieba tags 八所 an abbreviation and 七所 a numeral).
_NUMBER = re.compile(r"\d+(?:[.,:：/]\d+)*%?|[零〇一二两三四五六七八九十百千万亿]+(?=[年月日号时点分秒元角股只家户名人起例个位岁辆吨具架艘所座栋处%])")
_NOUNISH = {"n", "nr", "ns", "nt", "nz", "nrt", "nrfg", "eng", "x", "j"}
# How a report refers to its own writer or outlet: reposts swap these for each other (记者 for 笔者,
# 本报 for 本网) to hide where a story came from, and no templated report varies them.
_SELF_REFERENCES = frozenset("记者 笔者 小编 编者 作者 本报 本台 本网 本刊 本站 该报 我们 本报记者 本台记者 本网记者".split())
# Words that change the meaning of a templated report when swapped for a word of another class
# (涨 for 跌, 黄色 for 橙色); words of one class are rewordings of each other (涨 / 上涨).
_POLARITY_CLASSES = {
    "rise": "上涨 涨 大涨 涨停 升 上升 增长 增加 走高 收涨 高开 增持 盈利 买入 攀升 飙升 反弹",
    "fall": "下跌 跌 大跌 跌停 降 下降 下滑 减少 走低 收跌 低开 减持 亏损 卖出 回落 暴跌",
    "red": "红色", "orange": "橙色", "yellow": "黄色", "blue": "蓝色", "white": "白色", "green": "绿色", "black": "黑色",
    "level1": "一级 i级", "level2": "二级 ii级", "level3": "三级 iii级", "level4": "四级 iv级",
    "sunny": "晴 晴天 晴朗", "cloudy": "多云 阴 阴天", "rain": "雨 小雨 中雨 大雨 暴雨 大暴雨 雷阵雨 阵雨",
    "snow": "雪 小雪 中雪 大雪 暴雪", "typhoon": "台风", "heat": "高温", "cold": "寒潮 低温 降温",
    "wind": "大风", "thunder": "雷电", "hail": "冰雹", "fog": "大雾 雾", "haze": "霾 雾霾",
    "male": "男 男子 男性", "female": "女 女子 女性",
    "win": "胜 赢 获胜 夺冠 晋级", "lose": "负 输 落败 出局 淘汰", "draw": "平 战平 平局",
    "approve": "批准 通过 支持 同意", "reject": "否决 反对 驳回 拒绝",
    "start": "开业 发布 启动 开通 恢复", "stop": "停业 解除 取消 暂停 关闭 终止",
}
_POLARITY = {word: cls for cls, words in _POLARITY_CLASSES.items() for word in words.split()}


@dataclass(frozen=True)
class Verdict:
    reason: Reason
    score: float


# An ordinal with its unit: the round of a league, the issue of a column, the episode of a series,
# the session of a recurring meeting (第五次新闻发布会).
_ORDINAL = re.compile(r"第\s*(\d+|[零〇一二两三四五六七八九十百千]+)\s*(轮|期|届|场|季|集|回|章|批|站|关|号|天|次)")


def _ordinals(title: str) -> dict[str, set[float | str]]:
    """Each unit's ordinals by value: 第6次 and 第六次 are one."""
    out: dict[str, set[float | str]] = {}
    for number, unit in _ORDINAL.findall(title):
        value = chinese_number(number)
        out.setdefault(unit, set()).add(number if value is None else value)
    return out


_SCALED_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:万|亿)?")


# A figure where a headline is cut short (过火面积约2... of 约200亩): no figure.
_CUT_FIGURE = re.compile(r"[\d.,]*\d\s*(?:\.{2,}|…+)\s*$")


def _title_numbers(title: str) -> set[float]:
    """A headline's numbers by value: 12,000 and 12000 are one, 1.5万 and 15000 too."""
    return {chinese_number(n) for n in _SCALED_NUMBER.findall(without_thousands_separators(_CUT_FIGURE.sub("", title)))}


def title_number_conflict(title_a: str, title_b: str) -> bool:
    """Both headlines carry numbers and neither set contains the other: different figures,
    so different reports (a repost keeps its numbers, a follow-up may add some). Ordinals of one
    unit (第4轮, 第十八轮) that share no number are different rounds or episodes, whatever the
    other numbers: a league's round 4 report may hold every figure of its round 18 headline."""
    a, b = _title_numbers(title_a), _title_numbers(title_b)
    if a and b and not (a <= b or b <= a):
        return True
    ord_a, ord_b = _ordinals(title_a), _ordinals(title_b)
    return any(not (ord_a[unit] & ord_b[unit]) for unit in ord_a.keys() & ord_b.keys())


@lru_cache(maxsize=4096)
def _tagged(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((w, f) for w, f in rjieba.tag(text) if w.strip())


def _slot(words: list[tuple[str, str]]) -> tuple[str, frozenset[str]] | None:
    """What a substituted segment is (a number, a polarity word, a name) and the words that make
    it so; None when it holds nothing a template would vary. A model's or a route's code (E4, P30)
    is a number whole: E4 and G4 share their 4 and still differ."""
    codes = frozenset(m.group(0) for w, _ in words for m in _CODE.finditer(w))
    if codes:
        return "number", codes
    numbers = frozenset(m.group(0) for w, _ in words for m in _NUMBER.finditer(w))
    if numbers:
        return "number", numbers
    polar = frozenset(w for w, _ in words if w in _POLARITY)
    if polar:
        return "polarity:" + "+".join(sorted({_POLARITY[w] for w in polar})), polar
    return _names(words)


def _one_kind(left: tuple[str, frozenset[str]] | None, right: tuple[str, frozenset[str]] | None) -> bool:
    """Whether two slots are of one kind: two figures, two names, two polarity words."""
    return left is not None and right is not None and left[0].split(":")[0] == right[0].split(":")[0]


def _names(words: Sequence[tuple[str, str]]) -> tuple[str, frozenset[str]] | None:
    """The name slot of a segment: its nouns and names (not a figure, not 记者 or 本报, not marks alone:
    the ellipsis of a headline cut short, a fourth generator's never-read seed 406)."""
    names = frozenset(w for w, f in words
                      if f in _NOUNISH and len(w) >= 2 and not _NUMBER.fullmatch(w) and w not in _SELF_REFERENCES
                      and exact_form(w))
    return ("name", names) if names else None


_CHINESE_NUMERALS = "零〇一二两三四五六七八九十百千万亿"


@lru_cache(maxsize=4096)
def _whole_number(number: str) -> re.Pattern:
    """``number`` not inside a longer number: 2 in 20 or 1.2, 二 in 二十 (1.5 in 1.5万 is whole), E4
    in E40 or GE4."""
    if _CODE.fullmatch(number):
        return re.compile(f"(?<![A-Za-z0-9]){re.escape(number)}(?![A-Za-z0-9])")
    digits = "0-9" if number[:1].isdigit() else _CHINESE_NUMERALS
    return re.compile(f"(?<![{digits}.]){re.escape(number)}(?![{digits}]|\\.\\d)")


def _states_number(text: str, number: str) -> bool:
    """Whether ``text`` states ``number`` as a whole number, not as a part of a longer one."""
    return number in text and _whole_number(number).search(text) is not None


@lru_cache(maxsize=1024)
def _figures(text: str) -> frozenset[tuple[float, str]]:
    """The numbers of ``text`` by value, each with the character after it (its unit; spaces
    skipped), so that an editor's 五个 for 5个, 十一名 for 11名 or 12.8万公斤 for 128000公斤 is the
    same figure."""
    out = set()
    for m in _NUMBER.finditer(text):
        number, end = m.group(0), m.end()
        after = text[end + 1 : end + 2]  # '' where the text ends: in any string, never a numeral
        if number[-1].isdigit() and text[end : end + 1] in ("万", "亿") and not (after and after in _CHINESE_NUMERALS):
            number, end = number + text[end], end + 1  # 12.8万: one figure (1万2千 is read as its parts)
        while text[end : end + 1] == " ":
            end += 1
        unit = text[end : end + 1]
        if number.endswith("%"):
            number, unit = number[:-1], "%"
        value = chinese_number(without_thousands_separators(number))
        if value is not None:
            out.add((round(value, 6), unit))
    return frozenset(out)


def _unit_word(unit: str) -> bool:
    """A figure's unit that tells what it counts (人, 吨, 岁, %), not punctuation or a space."""
    return unit == "%" or "\u4e00" <= unit <= "\u9fff"


def _states_figures(segment: str, text: str) -> bool:
    """Whether ``text`` states a figure of ``segment`` (a slot and its first character after):
    the same value with the same unit, so that 三名 is not found in 三楼 nor 7人 in 7月; a figure
    without a unit word, by value in any unit."""
    found = _figures(text)
    for value, unit in _figures(segment):
        if (value, unit) in found if _unit_word(unit) else any(v == value for v, _ in found):
            return True
    return False


def _figures_rotated(
    unstated: tuple[dict[str, str], dict[str, str]], segment_a: str | None, segment_b: str | None
) -> tuple[str, str] | None:
    """Two figures of one unit in one pair of aligned pieces, each stated by its own text alone,
    where each was put in place of a figure the other text states elsewhere: the counts of an
    edited report moved round (被撞的4辆…3辆 against 被撞的8辆…4辆, a fourth generator's never-read
    seed 420), not a copy. ``unstated`` gathers each side's such figures by unit over the pieces."""
    for side, segment in enumerate((segment_a, segment_b)):
        if segment is not None:
            for _, unit in _figures(segment):
                if _unit_word(unit):
                    unstated[side].setdefault(unit, segment)
    unit = next((u for u in unstated[0] if u in unstated[1]), None)
    return (unstated[0][unit], unstated[1][unit]) if unit is not None else None


def _states_figure_of(tokens: Sequence[tuple[str, str]], i: int, j: int, text: str) -> bool:
    """Whether ``text`` states the figure of tokens i..j with its unit (``_states_figures``); a head
    count by what happened to those counted, or a magnitude, not where the text gives the value
    another role only (5人死亡 is not stated by 5人受伤: two edits of one fire, 5 dead and 28 hurt
    against 16 dead and 5 hurt, read as near copies of each other)."""
    if not _states_figures(_segment(tokens, i, j), text):
        return False
    # every token holds a character or more: this many tokens hold the opening
    figure = opening_figure(_joined(tokens[i : i + OPENING_FIGURE_CHARS])[:OPENING_FIGURE_CHARS])
    if figure is None:
        return True
    # With its role, or where no role claims the value (发生5.9级强烈地震 is a magnitude the role
    # patterns do not read). The role alone is not enough: a role misread elsewhere (死者陈某作为
    # 一个成年人 read as one death) would state a count the text never gives.
    deciding = deciding_figures(text)
    return (figure.role, figure.value) in deciding or not any(value == figure.value for _, value in deciding)


OPENING_FIGURE_CHARS = 24  # enough for a count, up to 8 characters of gap and its role word


def _mostly_numbers(words) -> bool:
    return sum(1 for w, _ in words if _NUMBER.fullmatch(w)) * 2 >= len(words)


_PLACE_TAGS = {"ns"}
# Place words that do not say where the news happened: a style (英伦风格, 北欧风情, 地中海风味; an
# advertisement's 英伦风娃娃机 is sold anywhere), told by the word after the place (风 alone only
# before a noun: 北京风大 is the wind in Beijing) ...
_STYLE_AFTER_PLACE = frozenset({"风格", "风情", "风味", "式", "范儿"})
_NOUN_TAGS = frozenset({"n", "nz", "ng", "vn", "uj"})
# ... and the markets a product sells in (远销东南亚、港澳台、欧美等国; 出口到美国、日本和韩国),
# the places listed after a word of selling.
_SELLS_TO = frozenset({"远销", "销往", "畅销", "行销", "外销", "销至", "出口"})
_LIST_JOINERS = frozenset({"、", ",", "，", "和", "及", "与", "以及", "到", "至", "往"})
_MAX_LISTED_PLACES = 8
# ... and a preposition glued to the next character, which rjieba sometimes tags as a place
# (以山为家 gives 以山, 以市带县 gives 以市); a two-character word so made is a place only if the
# gazetteer knows it (自贡, 于都, 从化).
_PREPOSITIONS = frozenset("以在从向于自到至往对把被由为与和及将")


_GLUED_BUT_PLACES = frozenset({"和县", "和州"})  # the county of 安徽 and its old name, which the gazetteer lacks


def _is_glued_preposition(word: str) -> bool:
    return len(word) == 2 and word[0] in _PREPOSITIONS and not (
        word in CITY_NAMES or word in COUNTY_NAMES or word in PROVINCE_NAMES or word in _GLUED_BUT_PLACES)


def _is_style(tokens: tuple[tuple[str, str], ...], k: int) -> bool:
    after = tokens[k + 1][0] if k + 1 < len(tokens) else ""
    return after in _STYLE_AFTER_PLACE or (after == "风" and k + 2 < len(tokens) and tokens[k + 2][1] in _NOUN_TAGS)


def _is_market(tokens: tuple[tuple[str, str], ...], k: int) -> bool:
    """Whether the place word at ``tokens[k]`` is listed after a word of selling."""
    j = k - 1
    while j >= 0 and k - j <= 2 * _MAX_LISTED_PLACES:
        word, tag = tokens[j]
        if word in _SELLS_TO:
            return True
        if not (word in _LIST_JOINERS or tag in _PLACE_TAGS or word in CITY_NAMES or tag == "m"):
            return False
        j -= 1
    return False


@lru_cache(maxsize=4096)  # a lead is read once for each pair it is in
def lead_places(lead: str) -> frozenset[str]:
    """The places a lead names: rjieba's ``ns`` words, and the cities and counties it tags as
    something else (焦作 a noun, 清远 an adjective, 顺义 a noun, 龙华 a brand) found as whole words;
    less styles and markets (see above); and counties named in full, by their short names, so that
    their cities mention them (元氏县, a person's name to rjieba, is 元氏 of 石家庄)."""
    tokens = _tagged(_REPORTING_AGENCY.sub("，", lead))
    named = {w for k, (w, f) in enumerate(tokens)
             if len(w) >= 2 and (f in _PLACE_TAGS or w in CITY_NAMES or w in COUNTY_NAMES and not listed_with_people(tokens, k))
             and not (k and is_given_name(w, *tokens[k - 1])) and not _is_style(tokens, k) and not _is_market(tokens, k)
             and not _is_glued_preposition(w) and not (k + 1 < len(tokens) and tokens[k + 1][0] == "时间")
             and w not in _NOT_PLACES}
    return frozenset(named | {p.key for p in counties_in_full(lead)})


# Words rjieba tags as places that name none: everyday words (震源深度's 深度, 城市, 美丽, 上市) and
# kinds of place without a name (大街, 新区, 山村). The most frequent of them in the leads of
# ccf2019_inews and cec_news, read by hand. In a lead they made two reports of one kind of news
# in two places share a "place": two earthquakes' 震源深度. And 巴士, a bus (a fourth generator's
# never-read seed 369: one copy of a crash's lead named it, the other a disclaimer's 非本网).
_NOT_PLACES = frozenset(
    "深度 城市 美丽 东西 普及 新建 青春 福利 治安 上路 上门 英雄 哥哥 上市 都市 中断 山水 太阳 台风 长达 海洋 人山人海 "
    "文明城市 新鲜 锦旗 江湖 立马 太多 山寨 满意度 越野 爱美 治国 重特大 关联 礼拜 新春 海鲜 外国 高原 平原 湖泊 "
    "大街 大桥 新区 东路 南路 西路 中路 北路 山区 新城 新村 城镇 山镇 镇区 南区 东区 西区 北区 古城 古镇 山村 商城 山庄 城东 城南 "
    "城西 城北 经开区 巴士".split()
)


# Agencies that report events far from where they sit, each with a place in its name (USGS's 美国,
# the tsunami centre's 太平洋): two reports of different earthquakes both cite them, as both give
# the time as 北京时间, so neither names the place of the news.
_REPORTING_AGENCY = re.compile("美国地质勘探局|美国地质调查局|中国地震台网|太平洋海啸预警中心|日本气象厅|美国国家海洋和大气管理局"
                               "|美国国家飓风中心|欧洲地中海地震中心")


def place_conflict(lead_a: str, lead_b: str, text_a: str, text_b: str) -> str | None:
    """Both leads (headline and first sentence) name places and neither article mentions any of
    the other's: the same kind of news (a fire, a food poisoning, a police campaign) in two places
    is two events. A county is mentioned by its city anywhere (龙岗 by 深圳), by its province only
    in the lead: a province in a closing line (a lawyer's 更多山西刑事辩护法律咨询 under a 中山 case)
    says nothing of where the story happened. A place written in Taiwan or Hong Kong words is
    the same place (纽西兰 for 新西兰; a Taiwan copy's 喀布林, as OpenCC's s2twp writes 喀布尔: a fourth
    generator's never-read seed 486)."""
    places_a, places_b = lead_places(lead_a), lead_places(lead_b)
    if places_a and places_b and _none_mentioned(places_a, text_b, lead_b) and _none_mentioned(places_b, text_a, lead_a):
        fold = fold_regional_words  # only here: most pairs name a place both mention
        if _none_mentioned(map(fold, places_a), fold(text_b), fold(lead_b)) \
                and _none_mentioned(map(fold, places_b), fold(text_a), fold(lead_a)):
            return f"places differ: {sorted(places_a)} vs {sorted(places_b)}"
    return None


def _none_mentioned(places: Iterable[str], text: str, lead: str) -> bool:
    return not any(_mentioned(p, text, lead) for p in places)


def _mentioned(place: str, text: str, lead: str) -> bool:
    return place in text or any(parent in (lead if parent in PROVINCE_NAMES else text) for parent in COUNTY_PARENTS.get(place, ()))


ALL_SLOTS = frozenset({"number", "polarity", "name"})
FIGURE_SLOTS = frozenset({"number", "polarity"})
HEADLINE_PLACE_SLOTS = frozenset({"place"})  # a headline's places only (a name slot within places on both sides)


def template_difference(
    a: str, b: str, max_segment: int = 4, diff_chars: int = 800, slots: frozenset[str] = ALL_SLOTS
) -> str | None:
    """If ``a`` and ``b`` are the same sentence frame with slots filled differently (a number for a
    number, a name for a name, 涨 for 跌), describe the first such substitution; else None.

    Only true substitutions count: each side's slot words must be absent from the whole other
    text. Trimming, added boilerplate and dropped sentences leave one text's words inside the
    other's (as substrings; a number as a whole number: the 2 of 20时 is no 2), and a number replaced
    by a non-number (``12日`` -> ``明日``) is a rewording.
    The alignment reads the first ``diff_chars`` of each text, where templated reports put their slots;
    ``slots`` limits which kinds of substitution count."""
    return _substitution(a[:diff_chars], b[:diff_chars], a, b, max_segment, slots)


# A page's time stamp (2007-09-03 01:02, 2018年05月23日 14:48): when a copy went up, which no copy
# keeps and no templated report varies alone.
_TIMESTAMP = re.compile(DATE_WITH_YEAR + r"\s*\d{1,2}\s*[:：]\s*\d{2}(?:\s*[:：]\s*\d{2})?")


def _substitution(
    part_a: str, part_b: str, whole_a: str, whole_b: str, max_segment: int, slots: frozenset[str],
    subject_names: bool = False, list_items: bool = False, headline: bool = False, one_headline: bool = False,
) -> str | None:
    """The first true substitution between two aligned pieces of text (``_word_substitution``) that
    is not a house style: one word in mainland and in Taiwan or Hong Kong usage (软件 against 软体,
    出租车 against 计程车: a Taiwan site's copy of mainland news), or a figure with and without
    thousands separators (8,000 against 8000). A substitution found is read again with those
    written one way (``_house_style_folded``); only one that is still there counts. Time stamps
    (``_TIMESTAMP``) are no slot: two sites' pages of one story carry two (a fourth generator's
    seeds 161, 163: whole pages, 2007-09-02 17:34 against 2007-09-03 01:02)."""
    part_a, part_b = _TIMESTAMP.sub("", part_a), _TIMESTAMP.sub("", part_b)
    found = _word_substitution(part_a, part_b, whole_a, whole_b, max_segment, slots, subject_names, list_items, headline,
                               one_headline)
    if found:
        folded_a, folded_b = _house_style_folded(part_a), _house_style_folded(part_b)
        if (folded_a, folded_b) != (part_a, part_b):
            return _word_substitution(folded_a, folded_b, _house_style_folded(whole_a), _house_style_folded(whole_b),
                                      max_segment, slots, subject_names, list_items, headline, one_headline)
    return found


def _house_style_folded(text: str) -> str:
    """``text`` with regional words as their mainland synonyms, figures without thousands
    separators or 万 and 亿, and percentages in figures."""
    return fold_regional_words(scaled_figures_in_digits(percents_in_figures(without_thousands_separators(text))))


def _word_substitution(
    part_a: str, part_b: str, whole_a: str, whole_b: str, max_segment: int, slots: frozenset[str],
    subject_names: bool = False, list_items: bool = False, headline: bool = False, one_headline: bool = False,
) -> str | None:
    """The first substitution between two aligned pieces of text (see template_difference); slot
    words are looked up in the whole texts. With ``subject_names``, a name counts only when each
    side names it at least twice: a templated report's subject (the company, the city) is in
    its headline and its body, while a byline, a media outlet in a copyright line or the product of
    an advertisement is named once. With ``list_items``, two pieces about different names that
    both texts name are two items of one list, each text having lost the other's (two defendants
    of one judgment, their birth years differing): nothing in them is a substitution. So are two
    pieces one of which is about a person or organisation that the other text names as a subject
    too (twice or more): that text tells of it elsewhere and lost only this sentence, so the piece
    it pairs with is another item (burst tune seed 279: three drink-driving cases of one police
    report, one copy without the second case's opening sentence, the other without the third case)."""
    ta, tb = _tagged(part_a), _tagged(part_b)
    matcher = SequenceMatcher(None, [w for w, _ in ta], [w for w, _ in tb], autojunk=False)
    found = None  # with list_items, the pieces are read to the end: a list item's name may come last
    unstated: tuple[dict[str, str], dict[str, str]] = ({}, {})  # figures one side alone states, by unit
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace" or _joined(ta[i1:i2]) == _joined(tb[j1:j2]):
            continue  # the same characters cut two ways (11:3 0 against 11:30: a space or a line break inside)
        left, right = _slot(list(ta[i1:i2])), _slot(list(tb[j1:j2]))
        if not _one_kind(left, right):
            # No slot, or two kinds of slot: rjieba may tag a place's name a numeral (三元|坦洲镇
            # against 沙县|高砂镇, a fourth generator's never-read seed 151), and names may come
            # with an article on one side (黔南荔波一金龙鞋厂 against 广州天河一家鞋厂, seed 174):
            # two segments that both name places are compared by their names.
            left, right = _place_names(ta, i1, i2, tb, j1, j2) or _anonymised_names(ta, i1, i2, tb, j1, j2) \
                or _both_places(ta[i1:i2], tb[j1:j2]) or (left, right)
            if not _one_kind(left, right):
                continue
        (kind_l, slot_l), (kind_r, slot_r) = left, right
        if kind_l.startswith("polarity") and kind_l == kind_r:
            continue
        # Substring, not token, membership: segmentation of the same word varies with its context.
        # A number is stated only whole: the 2 of 20时 or 第12期 is not a 2.
        runs = _differing_runs(ta[i1:i2], tb[j1:j2]) if kind_l == "name" else None
        # A run of figures replaced by figures (a lottery draw, a price table) is a substitution at
        # any length, and so are names that differ only in runs of characters around what they
        # share (正定区荣健农批北塘市场 against 光明新区荣健农批水果市场: five words that rjieba cut
        # two ways); other names and words only in short runs, longer ones are rewording.
        long_run = (i2 - i1) > max_segment or (j2 - j1) > max_segment
        if long_run and runs is None and \
                not (kind_l == "number" and _mostly_numbers(ta[i1:i2]) and _mostly_numbers(tb[j1:j2])):
            continue
        if kind_l == "number" and _cut_short(ta, i1, i2, tb, j1, j2, headline):
            continue
        if kind_l == "name" and (_words_swapped(ta[i1:i2], tb[j1:j2]) or one_headline and _common_noun_swapped(ta[i1:i2], tb[j1:j2])):
            continue
        if kind_l == "name":  # a slot's proper names, where it has some, say whose it is: 大学 of 常州大学 is in 哈尔滨工程大学
            slot_l, slot_r = runs or (_proper_words(ta[i1:i2], slot_l), _proper_words(tb[j1:j2], slot_r))
        if kind_l == "number" and not any(_CODE.fullmatch(w) for w in slot_l | slot_r):
            # A figure is found in the other text with its unit and in any numerals (五个 for 5个);
            # a code is no figure (E4 and G4 share no 4) and is found as it is written.
            left_in_b, right_in_a = _states_figure_of(ta, i1, i2, whole_b), _states_figure_of(tb, j1, j2, whole_a)
        else:
            # Names that differ in runs (滨河路拥政街 against 解放路友好街) are stated only all together:
            # an edited report that kept one of them (滨河街路口) still names the other street.
            states = _states_number if kind_l == "number" else str.__contains__
            stated = all if runs else any
            left_in_b, right_in_a = stated(states(whole_b, w) for w in slot_l), stated(states(whole_a, w) for w in slot_r)
        # In headlines a figure or a place is forgiven only as a swap, each stated in the other text
        # (致3人死亡 against 致5人受伤 of one crash). A place one headline puts where the other has
        # its own is the report's subject, even when the other text names it among others (湖北省
        # 辐射事故应急演习 against 海南省…, whose body lists 湖北 among the experts' provinces: a
        # fourth generator's never-read seed 150), and places moved round (内蒙古地震对四川 against
        # 四川地震对云南) leave each headline a place the other text never mentions.
        headline_places = headline and kind_l == "name" \
            and _within_places(ta[i1:i2], slot_l) and _within_places(tb[j1:j2], slot_r)
        swap_only = headline and (kind_l == "number" or headline_places)
        if (left_in_b and right_in_a) if swap_only else (left_in_b or right_in_a):
            if list_items and kind_l == "name" and (
                (left_in_b and right_in_a) or _named_as_subject(ta[i1:i2], whole_b) or _named_as_subject(tb[j1:j2], whole_a)
            ):
                return None  # whichever slots are read: a list item's figures are its own
            rotated = kind_l == "number" and not headline and "number" in slots and _figures_rotated(
                unstated, None if left_in_b else _segment(ta, i1, i2), None if right_in_a else _segment(tb, j1, j2))
            if rotated:
                found = found or f"number differs: {rotated[0]!r} vs {rotated[1]!r}"
                if not list_items:
                    return found
            continue
        if kind_l.split(":")[0] not in slots and not ("place" in slots and headline_places):
            continue
        # Places a headline names by their own names are its subjects even when the body says 我县
        # (顺义县卫生局 against 增城县卫生局, a third generator's never-read seed 81) or rjieba tags
        # one a common noun (黔南荔波 against 广州天河, a fourth generator's never-read seed 174); so
        # is an address in the body, named once where it happened (兖州区滨河街 against 西城区南横东街:
        # an edited report, seed 321). A byline or an outlet is no place, and names no street. Not
        # one place renamed (顺义县 against 顺义区: they share 顺义).
        places_named = kind_l == "name" and (
            headline and _holds_a_place(ta[i1:i2]) and _holds_a_place(tb[j1:j2])
            or _is_address(_with_street_unit(ta, i1, i2)) and _is_address(_with_street_unit(tb, j1, j2))
        ) and (runs is not None or not _share_a_word(_joined(ta[i1:i2]), _joined(tb[j1:j2])))
        if subject_names and kind_l == "name" and not places_named and (
            all(whole_a.count(w) < 2 for w in slot_l) or all(whole_b.count(w) < 2 for w in slot_r)
        ):
            continue
        found = found or f"{kind_l.split(':')[0]} differs: {''.join(w for w, _ in ta[i1:i2])!r} vs {''.join(w for w, _ in tb[j1:j2])!r}"
        if not list_items:
            return found
    return found


_PROPER_TAGS = frozenset({"ns", "nr", "nt", "nz", "nrt", "nrfg"})
_ONE_PLACE_ENDING = frozenset(FINE_ENDINGS)
_NAME_LIKE_TAGS = frozenset({"n", "nz", "ng", "a", "an", "b", "vn", "j"})  # an everyday word in a name (no time word: 当前 for 目前)
_HAN_NAME = re.compile(r"[\u4e00-\u9fff]{2,4}")
_ORDINAL_NAME = re.compile(r"第[一二三四五六七八九十\d]+")  # 第二中学 is named by its number


def _place_names(
    ta: Sequence[tuple[str, str]], i1: int, i2: int, tb: Sequence[tuple[str, str]], j1: int, j2: int
) -> tuple[tuple[str, frozenset[str]], tuple[str, frozenset[str]]] | None:
    """Two words before one place ending, one of them a proper name (长安市场 against 丰收市场), are
    two names of places whatever rjieba tags the other: many are everyday words (丰收 a verb). So
    are two words that end in one unit of place (即墨|区 against 新罗区: rjieba tags 即墨 a verb),
    and two nouns, adjectives or ordinals before one (育才中学 against 幸福中学, 胜利市场 against
    青石市场, 芙蓉中学 against 第二中学: schools and markets are named with everyday words and
    numbers; a fourth generator's never-read seed 167). Two verbs or time words are a rewording
    (民警发现市场里 against 民警察觉市场里, 当前 for 目前)."""
    words = (*ta[i1:i2], *tb[j1:j2])
    if not (any(tag in _PROPER_TAGS for _, tag in words)
            or all(tag in _NAME_LIKE_TAGS or _ORDINAL_NAME.fullmatch(word) for word, tag in words)):
        return None
    names = _joined(ta[i1:i2]), _joined(tb[j1:j2])
    if names[0][-1:] == names[1][-1:] and names[0][-1:] in _UNIT_OF_PLACE:
        names = names[0][:-1], names[1][:-1]  # the unit both end in
    elif i2 >= len(ta) or j2 >= len(tb) or ta[i2][0] != tb[j2][0] or ta[i2][0] not in _ONE_PLACE_ENDING:
        return None
    if not all(_HAN_NAME.fullmatch(name) and not describes_place(name) for name in names):
        return None
    return ("name", frozenset({names[0]})), ("name", frozenset({names[1]}))


def _both_places(
    left: Sequence[tuple[str, str]], right: Sequence[tuple[str, str]]
) -> tuple[tuple[str, frozenset[str]], tuple[str, frozenset[str]]] | None:
    """Two segments that each name a place, read as names whatever else either holds (a city's
    name whatever its tag: 包头 against 赤峰)."""
    if not (_holds_a_place(left) and _holds_a_place(right)):
        return None
    names = tuple(_names(side) or ("name", frozenset(w for w, tag in side if _is_place(w, tag))) for side in (left, right))
    return names if all(name[1] for name in names) else None


def _anonymised_names(
    ta: Sequence[tuple[str, str]], i1: int, i2: int, tb: Sequence[tuple[str, str]], j1: int, j2: int
) -> tuple[tuple[str, frozenset[str]], tuple[str, frozenset[str]]] | None:
    """Two people an incident report names as 张某 (王某 against 曾某, a fourth generator's never-read
    seed 129): rjieba tags 王某 a name but cuts 曾|某 into an adverb and a pronoun, and may leave
    the shared 某 outside both segments."""
    def name(tokens: Sequence[tuple[str, str]], i: int, j: int) -> str:
        text = _joined(tokens[i:j])
        return text + "某" if j < len(tokens) and tokens[j][0].startswith("某") and not text.endswith("某") else text
    names = name(ta, i1, i2), name(tb, j1, j2)
    if not all(ANONYMISED.fullmatch(n) for n in names):
        return None
    return ("name", frozenset({names[0]})), ("name", frozenset({names[1]}))


Token = tuple[str, str]


def _words_swapped(left: Sequence[Token], right: Sequence[Token], tags: frozenset[str] = frozenset()) -> list[tuple[Token, Token]]:
    """The pairs of words at which two segments of as many words differ, where each pair is a
    rewording: common words swapped for their synonyms (状况 for 情况, 小孩 for 孩子: a rewritten
    repost; a proper name is never a synonym), or two words of one of ``tags`` that name no place
    (报案 for 报警, 发生 for 出现). Empty where the segments are not so, or do not differ."""
    if len(left) != len(right):
        return []
    swapped = [(x, y) for x, y in zip(left, right) if x[0] != y[0]]
    reworded = all(
        x[1] == y[1] in tags and not (_is_place(*x) or _is_place(*y))
        or x[1] not in _PROPER_TAGS and y[1] not in _PROPER_TAGS and are_synonyms(x[0], y[0])
        for x, y in swapped)
    return swapped if reworded else []


# Of two headlines, one holding the other whole (a source before it, a site after it, or cut
# short) is the same headline when what they share is this long.
ONE_HEADLINE_MIN_CHARS = 8


_CLAUSE_BREAK = re.compile(r"[\s,，!！?？:：;；、|｜]+")


def _one_headline(a: str, b: str) -> bool:
    """Whether two headlines are one: equal, or one inside the other (人民日报：…, …-凤凰网, a headline
    cut short) where the shorter is long enough to say something. Clauses in another order
    (段子手上线！俞灏明看音乐节… against 俞灏明看音乐节… 段子手上线) are put in one order first
    (``_clauses_in_order_of``)."""
    shorter, longer = sorted((exact_form(a), exact_form(b)), key=len)
    # or re-titled by a verb for another, or a synonym (智利北部海域发生6.2级地震 against …出现…, a
    # fourth generator's never-read seed 467); not a noun: 暴雨预警 against 暴雪预警 say other things
    return bool(shorter) and (shorter == longer or len(shorter) >= ONE_HEADLINE_MIN_CHARS and shorter in longer) \
        or bool(_words_swapped(_tagged(a), _tagged(b), _VERBS))


# Headlines of this many clauses at most are read in one order (a clause matched to each clause:
# this many squared short comparisons).
MAX_REORDERED_CLAUSES = 6


def _clauses_in_order_of(title_a: str, title_b: str) -> tuple[str, float]:
    """``title_b`` with its clauses in the order of ``title_a``'s, each where the clause of
    ``title_a`` most like it stands (one frame each: ``ALIGNED_SENTENCE_RATIO``), when that lines
    the headlines up better, so that they are read clause by clause (2名驾驶员被高青交警处罚，醉酒驾驶
    电动车 against 醉酒驾驶电动车 3名驾驶员被沂源交警处罚: an edited report re-titled by a repost, a fourth
    generator's never-read seed 237; 沧州社科院蓝皮书:沧州已建… against 北京已建…,北京社科院蓝皮书, seed
    359); and the ratio of the headlines so read."""
    if title_a == title_b:  # most pairs compared: copies under one headline
        return title_b, 1.0
    ratio = SequenceMatcher(None, title_a, title_b, autojunk=False).ratio()
    parts_a, parts_b = _CLAUSE_BREAK.split(title_a.strip()), _CLAUSE_BREAK.split(title_b.strip())
    if not 2 <= len(parts_a) == len(parts_b) <= MAX_REORDERED_CLAUSES or not all(parts_a + parts_b):
        return title_b, ratio
    left, ordered = list(parts_b), []
    for part in parts_a:
        ratios = {other: SequenceMatcher(None, part, other, autojunk=False).ratio() for other in left}
        best = max(left, key=ratios.__getitem__)
        if ratios[best] < ALIGNED_SENTENCE_RATIO:
            return title_b, ratio  # a clause without its partner: not the same clauses in another order
        left.remove(best)
        ordered.append(best)
    if ordered == parts_b:
        return title_b, ratio
    reordered = "，".join(ordered)
    reordered_ratio = SequenceMatcher(None, title_a, reordered, autojunk=False).ratio()
    return (reordered, reordered_ratio) if reordered_ratio > ratio else (title_b, ratio)


def _common_noun_swapped(left: Sequence[tuple[str, str]], right: Sequence[tuple[str, str]]) -> bool:
    """Whether two segments are one common noun each (火势 against 火情, 报警 against 报案, 消防官兵
    against 消防队员), or words swapped word for word, one a noun (``_words_swapped``): under one
    headline, the rewording of a repost that swaps words for synonyms the thesaurus does not list
    (a fourth generator's never-read seeds 210, 215, 218, 220, 226). A
    templated report's other subject is a name, a figure or a polarity word, or its headline says
    another thing too (暴雨预警 against 暴雪预警). Words rjieba cut two ways around the noun are read
    by the nouns that differ (缉私|民警 against 缉私警察, seed 319)."""
    left, right = [t for t in left if exact_form(t[0])], [t for t in right if exact_form(t[0])]  # less punctuation
    if any(x[1] == y[1] == "n" for x, y in _words_swapped(left, right, _COMMON_WORD_TAGS)):
        return True  # word for word, one a noun at least (已经|报案 against 已|报警, seeds 417, 429)
    if len(left) == len(right) == 1:
        return False
    a, b = _joined(left), _joined(right)
    head = len(commonprefix([a, b]))
    tail = len(commonprefix([a[head:][::-1], b[head:][::-1]]))
    return head + tail > 0 and all(
        _one_noun_over(tokens, head, len(_joined(tokens)) - tail) for tokens in (left, right))


# Parts of speech whose words a rewording repost swaps for others of their kind (救援队赶赴 against
# 营救队赶到, 发生 against 出现); a templated report's slots are names, figures and polarity words. A
# place's name is none of them, whatever rjieba tags it (商丘 a common noun, 包头 a verb).
_COMMON_WORD_TAGS = frozenset({"n", "v"})
_VERBS = frozenset({"v"})


def _one_noun_over(tokens: Sequence[tuple[str, str]], start: int, end: int) -> bool:
    """Whether the characters ``start:end`` of the tokens' text, two or more, lie in one token
    tagged a common noun (警察 of 缉私警察: alone, rjieba tags 警察 a verb)."""
    at, over = 0, []
    for word, tag in tokens:
        if start < at + len(word) and at < end:
            over.append(tag)
        at += len(word)
    return end - start >= 2 and over == ["n"]


def _cut_short(ta: Sequence[tuple[str, str]], i1: int, i2: int, tb: Sequence[tuple[str, str]], j1: int, j2: int,
               headline: bool) -> bool:
    """Whether one side's figure is the beginning of the other's, cut off: with an ellipsis (a
    digest's teaser 共造成1… of 共造成10人死伤, a fourth generator's seed 5), or where a headline
    ends (内容来源：河南秀[2018年05月01日1 against …日13, chain tune seed 643; 微信转走5 against
    微信转走5.3万). A figure cut short states nothing."""
    a, b = _joined(ta[i1:i2]), _joined(tb[j1:j2])
    for cut, whole, at_end in ((a, b, i2 == len(ta)), (b, a, j2 == len(tb))):
        ellipsis = cut.endswith(("...", "…"))
        head = cut.rstrip(".…") if ellipsis else cut
        if head and whole.startswith(head) and (ellipsis or headline and at_end):
            return True
    return False


def _differing_runs(
    left: Sequence[tuple[str, str]], right: Sequence[tuple[str, str]]
) -> tuple[frozenset[str], frozenset[str]] | None:
    """Two name slots that share characters rjieba cut into other words (丰县|区荣|健农批|梅林 against
    平谷区|荣健|农批|黄岗, or a county's 县 against another's): the names that differ around what
    they share (丰县 and 梅林 against 平谷 and 黄岗), since a token such as 区荣 is found in the other
    text although neither name is, and a headline names 长清 of 长清县. None unless they share two
    characters or more, or end in one unit of place (大量印度 against 大批新冠 share a 大 and no name),
    differ only in runs of 2-4 Chinese characters, and on each side a run falls in a place's, a
    person's or an organisation's name (相关人员 against 工作人员, 第一时间开展 against 迅速开展 are
    rewordings)."""
    a, b = _joined(left), _joined(right)
    ops = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    shared = [a[i1:i2] for op, i1, i2, _, _ in ops if op == "equal"]
    if not any(len(part) >= 2 for part in shared) and not (ops[-1][0] == "equal" and shared[-1] in _UNIT_OF_PLACE):
        return None
    differing = [(i1, i2, j1, j2) for op, i1, i2, j1, j2 in ops if op != "equal"]
    names_a, names_b = [], []
    for i1, i2, j1, j2 in differing:
        if _HAN_NAME.fullmatch(a[i1:i2]) and _HAN_NAME.fullmatch(b[j1:j2]):
            names_a.append(a[i1:i2])
            names_b.append(b[j1:j2])
        elif (place_a := _place_around(left, i1, i2)) and (place_b := _place_around(right, j1, j2)):
            names_a.append(place_a)  # 岳|阳市 against 益|阳市: two cities one character apart
            names_b.append(place_b)
        else:
            return None  # the same characters cut two ways, or more than names differ
    if not differing or not (_in_a_name(left, [(i1, i2) for i1, i2, _, _ in differing])
                             and _in_a_name(right, [(j1, j2) for _, _, j1, j2 in differing])):
        return None
    return frozenset(names_a), frozenset(names_b)


def _place_around(tokens: Sequence[tuple[str, str]], start: int, end: int) -> str | None:
    """The place name that holds the one character at ``start:end`` (character offsets into the
    tokens' text), tagged as a place by rjieba; None for anything else, and for a unit of place
    (顺义县 against 顺义区: one place renamed)."""
    if end - start != 1 or _joined(tokens)[start] in _UNIT_OF_PLACE:
        return None
    at = 0
    for word, tag in tokens:
        if at <= start and end <= at + len(word):
            return word if tag in _PLACE_TAGS and len(word) >= 2 and _HAN_NAME.match(word) else None
        at += len(word)
    return None


def _in_a_name(tokens: Sequence[tuple[str, str]], spans: list[tuple[int, int]]) -> bool:
    """Whether one of ``spans`` (character offsets into the tokens' text) overlaps a token that
    rjieba tags as a place's, a person's or an organisation's name, or comes right before a unit
    of place (高陵|区 against 滦县|区: rjieba tags 高 an adjective and 陵区 a noun)."""
    text = _joined(tokens)
    if any(text[end : end + 1] in _UNIT_OF_PLACE for _, end in spans if end < len(text)):
        return True
    at = 0
    for word, tag in tokens:
        if (tag in _PLACE_TAGS or tag in _PERSON_OR_ORGANISATION) and any(start < at + len(word) and at < end for start, end in spans):
            return True
        at += len(word)
    return False


def _holds_a_place(tokens: Sequence[tuple[str, str]]) -> bool:
    """Whether a token is a place: tagged one, a name ending in a unit of place (rjieba tags
    彭泽县 a person's name), or a province's or a city's name (``_is_place``)."""
    return any(_is_place(word, tag) or (len(word) >= 3 and word[-1] in _UNIT_OF_PLACE) for word, tag in tokens)


def _is_place(word: str, tag: str) -> bool:
    """Whether rjieba tags a token a place, or it is a province's or a city's name whatever the tag
    (包头 a verb, 烟台 a common noun: a fourth generator's never-read seeds 332, 335). Only ever
    asked of two slots that must both be places."""
    return tag in _PLACE_TAGS or word in MAJOR_PLACE_NAMES


_STREET_UNITS = ("路", "街", "巷", "大道", "村")
_STREET = re.compile(r"[\u4e00-\u9fff]{2,}(?:" + "|".join(_STREET_UNITS) + ")")


def _with_street_unit(tokens: Sequence[tuple[str, str]], i: int, j: int) -> Sequence[tuple[str, str]]:
    """Tokens i..j, and the word after them where it is a street's unit that rjieba cut off the
    street's name (西城区|南横|东街 against 海淀区|人民|东街: the runs differ, 东街 is shared; a fourth
    generator's never-read seed 420)."""
    after = tokens[j] if j < len(tokens) else ("", "")
    if after[0].endswith(_STREET_UNITS) and (len(after[0]) == 1 or len(after[0]) == 2 and after[1] == "ns"):  # not 农村
        return tokens[i : j + 1]
    return tokens[i:j]


def _is_address(tokens: Sequence[tuple[str, str]]) -> bool:
    """Whether tokens name a place and a street or village in it (兖州区滨河街, 徐汇区中山西路)."""
    return _holds_a_place(tokens) and _STREET.search(_joined(tokens)) is not None


def _share_a_word(a: str, b: str) -> bool:
    """Whether two strings have two or more characters in a row in common."""
    return any(block.size >= 2 for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())


def _within_places(tokens: Sequence[tuple[str, str]], words: frozenset[str]) -> bool:
    """Whether each of ``words`` lies inside a place's token (``_is_place``)."""
    return all(any(word in token for token, tag in tokens if _is_place(token, tag)) for word in words)


_UNIT_OF_PLACE = frozenset("省市县区镇乡村路街")


def _proper_words(tokens: Sequence[tuple[str, str]], names: frozenset[str]) -> frozenset[str]:
    """The proper names among a name slot's words, or all its words when it has none."""
    proper = frozenset(w for w, tag in tokens if w in names and tag in _PROPER_TAGS)
    return proper or names


def _segment(tagged: Sequence[tuple[str, str]], i: int, j: int) -> str:
    """Tokens i..j as text, with the first character after them: a number's unit may be the next token."""
    return _joined(tagged[i:j]) + (tagged[j][0][:1] if j < len(tagged) else "")


def _joined(tokens: Sequence[tuple[str, str]]) -> str:
    return "".join(w for w, _ in tokens)


_PERSON_OR_ORGANISATION = frozenset({"nr", "nrfg", "nrt", "nt"})


def _named_as_subject(tokens: Sequence[tuple[str, str]], other: str) -> bool:
    """Whether a person or organisation among ``tokens`` is named twice or more in ``other``."""
    return any(tag in _PERSON_OR_ORGANISATION and len(word) >= 2 and other.count(word) >= 2 for word, tag in tokens)


_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])")
# Two sentences are one frame (worth reading for substituted slots) when this share of them is
# common (difflib ratio: 2 x matched characters / both lengths). A stock report against another
# stock's report scores about 0.6; a byline against a copyright line below 0.3.
ALIGNED_SENTENCE_RATIO = 0.5
# Headlines are short and a templated headline is mostly slots (贵州茅台今日上涨3.2% against
# 五粮液今日下跌1.1%: 0.43), while a re-titled repost shares little (统计局发布10月物价数据 against
# 专家解读物价走势: 0.21).
ALIGNED_TITLE_RATIO = 0.4
MIN_SENTENCE_CHARS = 6


@lru_cache(maxsize=512)  # whole bodies, a set of character pairs per sentence: ~140 KB per 1,200-character body
def _sentence_grams(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """The sentences of ``text`` worth aligning, each with its set of character pairs (the same
    text is aligned against candidate after candidate, so this is kept)."""
    out = []
    for s in _SENTENCE_END.split(text):
        s = s.strip()
        if len(s) >= MIN_SENTENCE_CHARS:
            out.append((s, frozenset(s[i : i + 2] for i in range(len(s) - 1))))
    return tuple(out)


_TRAILING_FIGURE = re.compile(r"[0-9A-Za-z.,%]+$")  # a figure or Latin word a cut may end inside


def _opening(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text``, cut back to the last sentence end within them.
    Two copies cut at one length end mid-sentence at different places, and a figure cut short
    reads as a substitution (burst tune seed 573: 专利号为2 against 专利号为201, a patent number
    both copies state whole). Without a sentence end in the second half, a trailing figure or
    Latin word is dropped instead."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    ends = [m.start() for m in _SENTENCE_END.finditer(cut, limit // 2)]
    return cut[: ends[-1]] if ends else _TRAILING_FIGURE.sub("", cut)


def _aligned_pairs(a: str, b: str) -> list[tuple[str, str]]:
    """Each sentence of ``a`` with the most alike sentence of ``b``, where they are alike enough
    to be one sentence frame and not equal. Sentences without such a partner (added leads,
    footers, dropped paragraphs, another site's copyright line) are not paired."""
    sents_b = _sentence_grams(b)
    equal = {sb for sb, _ in sents_b}
    pairs = []
    for sa, grams_a in _sentence_grams(a):
        if sa in equal:
            continue
        best, best_ratio = None, ALIGNED_SENTENCE_RATIO
        for sb, grams_b in sents_b:
            # Cheap bound first: sentences sharing few character pairs cannot reach the ratio.
            if 2 * len(grams_a & grams_b) < 0.5 * ALIGNED_SENTENCE_RATIO * (len(grams_a) + len(grams_b)):
                continue
            matcher = SequenceMatcher(None, sa, sb, autojunk=False)
            # quick_ratio bounds ratio from above and costs a character count, not an alignment.
            if matcher.quick_ratio() < best_ratio:
                continue
            ratio = matcher.ratio()
            if ratio >= best_ratio:
                best, best_ratio = sb, ratio
        if best is not None:
            pairs.append((sa, best))
    return pairs


def _shared_sentences(a: str, b: str) -> list[str]:
    """The sentences worth aligning that ``a`` and ``b`` both hold word for word."""
    in_b = {sb for sb, _ in _sentence_grams(b)}
    return [sa for sa, _ in _sentence_grams(a) if sa in in_b]


def _lost_list_items(sa: str, sb: str, part_a: str, part_b: str, whole_a: str, whole_b: str,
                     one_headline: bool = False) -> bool:
    """Whether ``sa`` and ``sb`` are two items of one list, each text having lost the other's: both
    are one frame with an item the two texts share (刘某（男，3211…）against 李某（男，3211…）and
    朱某（男，3210…）), and each is about a person or organisation the other text does not name.
    A copy that drops one item of a police report's list and a copy cut before its last item pair
    their odd items; the items' figures are their own (burst tune seed 299). Under one headline an
    item may be a thing (基础设施投资 against 第一产业投资 of one statistics release, each copy
    without the other's line: a fourth generator's never-read seed 298); a report edited into
    another event changes its places, people and figures, not what it counts. ``part_a`` and
    ``part_b``: the aligned parts of the two bodies, where the shared item is looked for."""
    absent = _names_an_item_absent if one_headline else _names_one_absent
    if not (absent(sa, whole_b) and absent(sb, whole_a)):
        return False
    return any(_one_frame(s, sa) and _one_frame(s, sb) for s in _shared_sentences(part_a, part_b))


# A list item's number opening a sentence: 1巡察利剑…, 2、…, (三)…
_ITEM_NUMBER = re.compile(r"^[(（]?(\d{1,2}|[一二三四五六七八九十]{1,3})(?:[)）、.．]|(?=[\u4e00-\u9fff]))")
# Items of one list, read across both texts, from which two numbered sentences are its items.
MIN_LIST_ITEMS = 3
# An item its list names (案例一：…, 典型案例二：…): two items of one name and two numbers are two
# items however few the texts hold (a fourth generator's never-read seed 713: a teaser cut after
# 案例一 against a copy that dropped it, 2018年09月18日 against 案例二's 2018年10月11日).
_ITEM_LABEL = re.compile(r"^([\u4e00-\u9fff]{0,4}?(?:案例|事例|案件))(\d{1,2}|[一二三四五六七八九十]{1,3})[:：]")


def _item_number(sentence: str) -> float | None:
    m = _ITEM_NUMBER.match(sentence)
    return chinese_number(m.group(1)) if m else None


def _lost_numbered_items(sa: str, sb: str, part_a: str, part_b: str) -> bool:
    """Whether ``sa`` and ``sb`` are two numbered items of one list, each text having lost the
    other's (1巡察利剑向农村基层延伸 against 3监察监督向农村基层延伸: a copy that dropped items 2 and 3
    against one cut before item 1; burst tune seed 737), or two items the list names (``_ITEM_LABEL``).
    The sentences of their frame in both
    texts carry numbers, no number in both, at least ``MIN_LIST_ITEMS`` of them in one unbroken
    run, and the two differ in more than their numbers. Two templated reports keep their whole
    lists, so each item pairs with the other's item of the same number; and 3人死亡 against
    5人死亡 differ in their figure alone."""
    la, lb = _ITEM_LABEL.match(sa), _ITEM_LABEL.match(sb)
    if la and lb and la.group(1) == lb.group(1) and chinese_number(la.group(2)) != chinese_number(lb.group(2)):
        return True
    na, nb = _item_number(sa), _item_number(sb)
    if na is None or nb is None or na == nb or _ITEM_NUMBER.sub("", sa) == _ITEM_NUMBER.sub("", sb):
        return False
    def numbers(part: str) -> list[float | None]:
        return [_item_number(s) for s, _ in _sentence_grams(part) if s in (sa, sb) or _one_frame(s, sa) or _one_frame(s, sb)]
    found = numbers(part_a) + numbers(part_b)
    if None in found or len(found) < MIN_LIST_ITEMS:
        return False  # a sentence of the frame without a number: no numbered list
    run = sorted(found)
    return run == [run[0] + k for k in range(len(run))]


def _one_frame(a: str, b: str) -> bool:
    return SequenceMatcher(None, a, b, autojunk=False).ratio() >= ALIGNED_SENTENCE_RATIO


def _names_one_absent(sentence: str, other: str) -> bool:
    return any(tag in _PERSON_OR_ORGANISATION and len(word) >= 2 and word not in other for word, tag in _tagged(sentence))


def _names_an_item_absent(sentence: str, other: str) -> bool:
    """``_names_one_absent``, or a common noun (a thing counted: 基础设施, 第一产业) ``other`` lacks."""
    return _names_one_absent(sentence, other) or any(
        tag[:1] in ("n", "l", "j") and tag not in _PROPER_TAGS - {"nz"} and len(word) >= 2
        and not _NUMBER.search(word) and word not in other
        for word, tag in _tagged(sentence))


# A headline's opening hook, up to its exclamation mark: 重磅！, 突发！, 火力全开！ A repost swaps it
# for another (精准狙击！) as it swaps a 【快讯】 tag; a templated report's slots are elsewhere.
_HOOK = re.compile(r"^([^！!：:，,。？?\s]{2,6})[！!]+")


def _varies_in_templates(phrase: str) -> bool:
    """Whether a headline's hook holds what a templated report varies: a number, a polarity word
    (涨停, 暴雨预警) or a place (北京)."""
    return bool(_NUMBER.search(phrase)) or any(w in _POLARITY or f in _PLACE_TAGS or w in CITY_NAMES
                                                for w, f in _tagged(phrase))


def _without_hook(title: str) -> str:
    """``title`` less its opening hook, unless the hook is what a templated report varies
    (涨停！, 暴雨预警！, 北京！), and less the outlet a repost credits before it (``_OUTLET_BEFORE``)."""
    m = _HOOK.match(title)
    if m and not _varies_in_templates(m.group(1)):
        title = title[m.end():] or title
    m = _OUTLET_BEFORE.match(title)
    return title[m.end():] if m and len(title) > m.end() else title


# An outlet a repost credits before the headline (人民日报：…, 新京报：…, 央视新闻|…): two reposts of
# one story credit two (a fourth generator's never-read seed 434). Told by how newspapers, agencies,
# news sites and apps end their names, not by 报 alone (警方通报：…, 天气预报：… say who or what the
# news is about, which a templated report varies); a site's name in 网 only short (中新网, 人民网),
# as 国家电网：… is a company's news.
_OUTLET_BEFORE = re.compile(
    r"^(?:[^\s:：|｜丨!！,，。]{0,8}(?:日报|晚报|早报|时报|商报|快报|都市报|青年报|新京报|通讯社|新华社|新闻|客户端|电视台|频道)"
    r"|[^\s:：|｜丨!！,，。]{1,2}网|南都|央视)\s*[:：|｜丨]\s*")


# A headline's closing hook, after its last comma: ，最新消息来了, ，背后真相令人唏嘘, ，网友炸锅了. Reposts
# append one of their own to the same headline (Toutiao and WeChat style); read as slots, two such
# tails made two reposts of one fire "name differs" (a third generator's tune seed 1).
_TAIL = re.compile(r"^(.{12,}?)[，,]([^，,。！!？?]{2,12})[。！!？?…\.]*$")


def _without_tails(title_a: str, title_b: str) -> tuple[str, str]:
    """The two headlines less their closing hooks, when that is all that tells them apart: the
    same headline of 12 characters or more before the last comma, and tails that hold no figure,
    polarity word or place, which a templated report varies (，涨幅3.2%, ，海淀区停课)."""
    ma, mb = _TAIL.match(title_a), _TAIL.match(title_b)
    if not (ma and mb) or ma.group(1) != mb.group(1):
        return title_a, title_b
    if _varies_in_templates(ma.group(2)) or _varies_in_templates(mb.group(2)):
        return title_a, title_b
    return ma.group(1), mb.group(1)


def story_template_difference(
    title_a: str, body_a: str, title_b: str, body_b: str, diff_chars: int = 800, slots: frozenset[str] = ALL_SLOTS,
    titles_aligned: bool = False, read_bodies: bool = True,
) -> str | None:
    """``template_difference`` read over the story's own text: the two headlines, then (with
    ``read_bodies``) each pair of aligned body sentences among the first ``diff_chars`` characters.

    Repost furniture never counts as a difference. What a repost adds or drops around the story
    (leads, bylines, copyright and disclaimer lines, share bars) has no partner sentence in the
    other text; furniture that does pair up (two sites' copyright lines, two bylines, two
    advertisements of one shape) names its outlet, reporter or product once, where a templated
    report names its subject in headline and body (``subject_names``). Headlines are read when
    ``titles_aligned`` says they are one frame, or when they are alike enough to be one (a
    re-titled repost of one body is not a templated report)."""
    whole_a, whole_b = title_a + "。" + body_a, title_b + "。" + body_b
    written = title_a, title_b
    title_a, title_b = _without_tails(_without_hook(title_a), _without_hook(title_b))
    title_b, title_ratio = _clauses_in_order_of(title_a, title_b)
    if titles_aligned or title_ratio >= ALIGNED_TITLE_RATIO:
        found = _substitution(title_a, title_b, whole_a, whole_b, 4, slots, subject_names=read_bodies, headline=True) \
            or negation_difference(title_a, title_b)
        if found:
            return found
    if not read_bodies:
        return None
    part_a, part_b = _opening(body_a, diff_chars), _opening(body_b, diff_chars)
    # one headline also as written, hook and all: 警示!十字路口须礼… is a headline cut short, too short
    # to tell without its 警示! (a fourth generator's never-read seed 503)
    one_headline = _one_headline(title_a, title_b) or _one_headline(*written)
    for sa, sb in _aligned_pairs(part_a, part_b):
        found = _substitution(sa, sb, whole_a, whole_b, 4, slots, subject_names=True, list_items=True, one_headline=one_headline)
        if found and not _lost_list_items(sa, sb, part_a, part_b, whole_a, whole_b, one_headline) \
                and not _lost_numbered_items(sa, sb, part_a, part_b):
            return found
    return None


# A headline that says the other one's news did not happen: 宣布不加息 against 宣布加息, 仍未落网
# against 已落网, 无人员伤亡 against 有人员伤亡. SimHash cannot tell them apart (one light word in
# many) and embeddings put them at 0.92-0.95, so the words are read: a negation (with the adverb it
# often takes: 暂不, 并不, 还没有) inserted, or put in place of the aspect word it denies, is the only
# difference between the two headlines but a tag or a site's name added at either end.
_NEGATION = re.compile(r"(?:暂|仍|还|尚|并|也|都|从)?(?:不|没有|没|未|无)(?:会|再|是)?")
_AFFIRMED = frozenset({"", "已", "已经", "将", "会", "要", "有", "是", "曾"})


def negation_difference(title_a: str, title_b: str) -> str | None:
    """The negation one headline adds to the other, when that is all that tells them apart."""
    edits = [op for op in SequenceMatcher(None, title_a, title_b, autojunk=False).get_opcodes() if op[0] != "equal"]
    inside = [(i1, i2, j1, j2) for op, i1, i2, j1, j2 in edits
              if not (op in ("insert", "delete") and (i1 == j1 == 0 or (i2 == len(title_a) and j2 == len(title_b))))]
    if len(inside) != 1:
        return None
    i1, i2, j1, j2 = inside[0]
    left, right = title_a[i1:i2], title_b[j1:j2]
    for said, other in ((left, right), (right, left)):
        if _NEGATION.fullmatch(said) and other in _AFFIRMED:
            return f"negation differs: {said!r} in one headline only"
    return None


# One text this small a share of the other's length (in shingles) ...
OPENING_ONLY_RATIO = 0.1


def rests_on_an_opening(ev: PairEvidence) -> bool:
    """A short text against one over ten times its length under an unrelated headline (``title_sim``
    below ``FRAME_TITLE_SIM``): the embedding reads the first ``embedding.max_chars`` of each, so
    all that matches is the long one's opening, and nothing else says the two are one story. Read on
    burst tune seed 208: a 279-character tax-policy news item and a 3,102-character speech, both
    opening with the same 脱贫攻坚 boilerplate (cosine 0.83), merged their two stories. No semantic
    match of the ecom2022 or sohu tune parts, true or false, is so lopsided."""
    return ev.shingle_ratio < OPENING_ONLY_RATIO and ev.title_sim < FRAME_TITLE_SIM


def refused_as_semantic(ev: PairEvidence) -> bool:
    """Whether a hard guard refuses the pair as a semantic match, whatever a score, a learned model
    or the verifier says: a templated report, conflicting headline figures or event specifics, a
    roundup on either side (a roundup is its own story), an advertisement on either side
    (``compare.adverts``: an advert is its story only as a copy), or a match that rests on one text's opening
    (``rests_on_an_opening``)."""
    return bool(ev.template or ev.title_numbers_conflict or ev.specifics or ev.roundups or ev.adverts
                or rests_on_an_opening(ev))


def within_semantic_reach(ev: PairEvidence, decision: DecisionSettings) -> bool:
    """Whether a pair is where the semantic checks look: the ingest pre-check skips candidates
    below the semantic cosine floor, and the event guards (places, specifics, headline frames)
    run from the cluster bar up. A learned decision only decides inside that reach, so ingest,
    ``compare`` and the guards agree."""
    return ev.cosine is not None and ev.cosine >= decision.semantic_min_cosine and (
        ev.event_score is not None and ev.event_score >= decision.cluster_threshold)


# A partial quote: commentary around a passage of the story (网友热议：<the story's headline>, an
# intro, "据X消息：", one or two paragraphs quoted word for word, a call to comment). Its embedding
# reads the commentary and its shingles are half someone else's text; what makes it the story is
# the story's own headline over sentences of the story's own text. Headlines at least this alike
# (character-gram cosine: a tag or site name added or dropped keeps 0.9) ...
QUOTE_TITLE_SIM = 0.9
# Either way (alike by grams, or held whole in the other: 网友热议：<headline>, a commentary's tag
# the cleaning keeps), a headline counts as one story's from this length: shorter ones (今日天气,
# 通知) head many stories, and one stock sentence both quote (请各位家长督促孩子按时到校…) made two
# schools' notices one story.
MIN_HELD_HEADLINE_CHARS = 8
# ... and at least this many characters of whole sentences (punctuation and spaces left out)
# found word for word in both: a sentence or two, not a shared phrase.
MIN_QUOTED_CHARS = 30


def same_headline(title_a: str, title_b: str, title_sim: float) -> bool:
    """Whether two cleaned headlines are one story's headline: both of ``MIN_HELD_HEADLINE_CHARS``
    or more, and alike by their character grams (``title_sim`` >= ``QUOTE_TITLE_SIM``) or one
    holding the other whole."""
    shorter, longer = sorted((title_a, title_b), key=len)
    return len(shorter) >= MIN_HELD_HEADLINE_CHARS and (title_sim >= QUOTE_TITLE_SIM or shorter in longer)


def quotes_its_story(ev: PairEvidence) -> bool:
    """One side quotes the other under its headline (see ``QUOTE_TITLE_SIM``; ``quoted_chars`` is
    only counted for ``same_headline`` pairs). The guards still
    hold: a templated report repeats its headline and sentences too, but substitutes a figure
    (``ev.template``, checked before); two events of one kind keep their own specifics; and a
    roundup quotes each of its stories under a headline of its own."""
    return (
        ev.quoted_chars >= MIN_QUOTED_CHARS
        and not ev.roundups and not ev.specifics and not ev.title_numbers_conflict
    )


# Headlines this far apart (character-gram cosine) are different headlines: a retitled copy of a
# short text keeps a word or two of its headline, or its embedding still reads the same story.
FRAME_TITLE_SIM = 0.2
# A contained text with at most this share of the other's shingles, without its opening and at an
# embedding cosine below PART_MAX_COSINE, is a part of it (holds_only_a_frame).
PART_OF_A_TEXT = 0.7
PART_MAX_COSINE = 0.45


def reads_as_a_part(ev: PairEvidence) -> bool:
    """Whether a contained text (not short) could be a part of the other by everything but its
    opening, which ``compare_sides`` reads (``PairEvidence.holds_opening``) only for such pairs."""
    return (
        not ev.short and ev.title_sim < FRAME_TITLE_SIM and ev.shingle_ratio <= PART_OF_A_TEXT
        and ev.cosine is not None and ev.cosine < PART_MAX_COSINE
    )


def holds_only_a_frame(ev: PairEvidence, decision: DecisionSettings) -> bool:
    """A text contained in another under an unrelated headline, and farther from it by the
    embedding than any semantic match allows, when it is short, or at most PART_OF_A_TEXT of the
    other, without the other's opening (``PairEvidence.holds_opening``) and below PART_MAX_COSINE:
    what the two share is a frame or one part of the longer text, not a story. A frame: a
    commentary account's opening and closing lines around a quote of nothing (编者按：近日，一则消息
    在网上引发热议 ... 欢迎在评论区留言讨论; heldout tune seeds 3, 18: two such posts of two stories
    were near copies by containment 0.86, 0.94 at cosine 0.36, 0.49). A part: a combined report
    (综合报道, or a story with another one appended in full under 相关新闻) holds its second story
    whole under the first one's headline (containment 0.98-1.0, cosine 0.33-0.41, the part 0.51-0.66
    of the whole on a probe of 30 such reports); as its copy, it joined the two stories' clusters.
    Copies of one story keep their headline or their embedding, or most of its text, or its opening
    (a teaser); a copy without its first paragraph under a headline cut from its new lead still reads
    as its story to the embedding (burst tune seeds 77, 231: cosine 0.56-0.58 to the other copies,
    0.59-0.85 of their shingles), which two stories of a combined report do not (0.33-0.41)."""
    return (
        ev.title_sim < FRAME_TITLE_SIM and ev.cosine is not None and ev.cosine < decision.semantic_min_cosine
        and (ev.short or (reads_as_a_part(ev) and not ev.holds_opening))
    )


def near_limit(short: bool, simhash: SimhashSettings) -> int:
    return simhash.max_distance_short if short else simhash.max_distance


# A headline without its body (a feed or list page whose article was not fetched) has only its
# headline to go by: it is the article printed under that headline (its embedding, of the
# headline alone, is far from the article's, 0.15-0.55 on a probe of such copies). Of the 4,254
# ccf2019_inews and ecom2022 articles, 10 pairs have headlines this alike and different body
# openings: 8 are one story, 2 are not (早上好 twice, too short to count; parts 上 and 下 of a series).
HEADLINE_ALONE_TITLE_SIM = 0.9


def judge(ev: PairEvidence, decision: DecisionSettings, simhash: SimhashSettings) -> Verdict | None:
    """The rules, in order of strength. Returns None when the pair is not a duplicate.

    A layer left out of ``decision.layers`` never matches; the others still do.
    """
    if ev.template and decision.template_guard:
        return None
    if ev.exact and decision.enabled("exact"):
        return Verdict(Reason.EXACT, 1.0)
    if decision.enabled("near"):
        if ev.hamming <= near_limit(ev.short, simhash):
            return Verdict(Reason.NEAR, round(1.0 - ev.hamming / 64.0, 4))
        # A roundup holds each of its stories' leads: holding a story is not being a copy of it.
        # A copy of the roundup itself under another headline (not told as a roundup) is as long,
        # or longer and holding the whole roundup (burst tune seed 227: a roundup's teaser inside
        # a reworded copy of the full roundup), or the roundup cut short under its own headline,
        # too few of its items left to tell it as one (burst tune seed 265: two teasers of one
        # 财经新闻汇总, one cut after its second item). Two roundups whose headlines' figures
        # conflict are two editions (05月24日…等3条要闻 against 05月30日…等5条要闻), however many
        # items one repeats of the other (held-out tune seed 536).
        two_editions = ev.roundups == 2 and ev.title_numbers_conflict
        if ev.containment >= decision.near_containment and not two_editions and (
            ev.roundups != 1 or ev.shingle_ratio >= decision.near_containment or ev.roundup_contained or ev.roundup_cut
        ) and not holds_only_a_frame(ev, decision):
            return Verdict(Reason.NEAR, round(ev.containment, 4))
        if quotes_its_story(ev):
            return Verdict(Reason.NEAR, round(ev.containment, 4))
    if not decision.enabled("semantic") or ev.cosine is None or refused_as_semantic(ev):
        return None
    if ev.headline_alone and ev.title_sim >= HEADLINE_ALONE_TITLE_SIM:
        return Verdict(Reason.SEMANTIC, round(ev.title_sim, 4))
    if ev.verifier_cosine is not None:  # a borderline pair the second stage read: its verdict stands
        from .verifier import verifier_verdict  # noqa: PLC0415

        return verifier_verdict(ev, decision)
    from .model import load_model  # noqa: PLC0415 - model imports evidence, which imports this module

    model = load_model(decision.semantic_model)
    if model is not None:
        if not within_semantic_reach(ev, decision):
            return None
        p = model.probability(ev)
        return Verdict(Reason.SEMANTIC, round(p, 4)) if p >= model.threshold_for(ev) else None
    if ev.event_score >= decision.event_threshold and ev.cosine >= decision.semantic_min_cosine:
        return Verdict(Reason.SEMANTIC, round(ev.event_score, 4))
    return None


def refusal(ev: PairEvidence, decision: DecisionSettings, simhash: SimhashSettings) -> str | None:
    """Why ``judge`` finds no match, in one line for ``explain``: the guard that refused the pair,
    the verifier's refusal, or the bar the evidence missed. None when ``judge`` matches."""
    if judge(ev, decision, simhash) is not None:
        return None
    if ev.textless:
        return "no text left after cleaning on one side (page chrome or credits only): nothing to match on"
    if ev.template and decision.template_guard:
        return f"templated report: {ev.template}"
    if not decision.enabled("semantic"):
        return "not a copy, and the semantic layer is off"
    if ev.cosine is None:
        return "not a copy, and no embedding to compare"
    if ev.specifics:
        return f"event specifics: {ev.specifics}"
    if ev.title_numbers_conflict:
        return "the headlines' figures conflict"
    if ev.roundups:
        return "a roundup matches only a copy of itself"
    if ev.adverts:
        return "an advertisement: it matches only a copy of itself"
    if rests_on_an_opening(ev):
        return "the match rests on the long text's opening alone (lengths over tenfold apart, headlines unrelated)"
    if ev.verifier_cosine is not None:
        from .verifier import verifier_bar  # noqa: PLC0415 - the verifier reads the rules

        return f"verifier: e5 headline cosine {ev.verifier_cosine:.3f} < {verifier_bar(ev, decision)}"
    if decision.semantic_model != "rules":
        return f"semantic model {decision.semantic_model!r}: below its threshold or outside the semantic reach"
    if ev.headline_alone:
        return f"a headline without its body: headline similarity {ev.title_sim:.3f} < {HEADLINE_ALONE_TITLE_SIM}"
    if ev.cosine < decision.semantic_min_cosine:
        return f"embedding cosine {ev.cosine:.3f} < {decision.semantic_min_cosine}"
    return f"event score {ev.event_score:.3f} < {decision.event_threshold}"
