"""Roundups: one article that gathers several stories (a morning briefing, 今日要闻, a digest of
the day's news), each item a headline and a lead or two.

A roundup quotes each of its stories word for word, so it reads as a copy of every one of them:
its text holds a short repost's lead, its headline often opens with its first story's headline,
and its embedding is close to each story's. It is still a story of its own (the briefing), and
merged with one of its stories it would pull that story's cluster and the briefing together.

An article is a roundup when both of these hold, each alone being too common:

* its headline calls it one (早报, 要闻, 新闻早知道, 新闻汇总, 资讯一览, 3条新闻): single stories carry
  such words too, as a column tag (早报｜北京今日降温);
* its body lists at least ``MIN_ITEMS`` items numbered in sequence at the start of their lines
  (1. / 1、/ 一、/ ① / 【1】 / (1); one number may be missing, the first too; an item may number its
  own points in another style), or heads as many items with labels in brackets (【浙江】...
  【山东】... 【河南】..., the region or the column of each item, wherever the cleaning left them):
  a policy or a how-to numbers its points too, a long report heads its parts (【事件经过】).

A flash that numbers nothing (its items run on paragraph after paragraph) is told by its headline
instead, when the headline lists its stories, separated by semicolons:

* at least ``MIN_LISTED_ITEMS`` of them (新西兰一著名景点关闭;刘谦回应春晚换壶;iphone出中国红配色);
* or two under a flash column's name (物流运输快讯 | 曝软银拟投资满帮集团;阿里拟在泰国...): one
  story's headline carries a semicolon too (火灾不分季节;两天内萍乡连发两起火灾), and a column's
  name over one story too (快讯:昆明东川区发生森林火灾).

Pure functions of the cleaned headline and body.
"""

from __future__ import annotations

import re

from .specifics import chinese_number

# Items a list must hold, numbered 1, 2, 3 ... in a row, to make a roundup.
MIN_ITEMS = 3

_CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳"
# An item number at the start of a line: 1. 1、 1) 一、 ① 【1】 (1) ; 1.5亿 is a figure, not an item.
_ITEM_NUMBER = re.compile(
    r"^\s*(?:(\d{1,2})\s*([.．](?!\d)|[、)）:：])"
    r"|([一二三四五六七八九十]{1,3})\s*[、.．]"
    r"|([" + _CIRCLED + r"])"
    r"|[【\[(（](\d{1,2}|[一二三四五六七八九十]{1,3})[】\])）])",
    re.MULTILINE,
)
# Headline words that name a gathering of news. Morning/evening papers only as a word of their
# own (早报｜...), not as the tail of an outlet's name (齐鲁晚报, 扬子晚报).
# Gathering words (汇总, 一览) only after a word for news: 常见问题汇总 and 政策一览 gather the
# points of one piece.
_ROUNDUP_HEADLINE = re.compile(
    r"(?<![\u4e00-\u9fff])(?:早报|晚报|午报|晨报|夜报)"
    r"|早知道|要闻|新闻早餐|早班车|新闻联播|简讯|摘编"
    r"|(?:新闻|消息|资讯|热点|头条|快讯)(?:汇总|合集|一览|集锦|速览|精选|摘要)"
    r"|(?:\d+|[一二三四五六七八九十]+)\s*[条则](?:要闻|新闻|消息|资讯|快讯|热点)"
)

# A label in brackets heading an item: a word or a few (a number is an item number, above).
_ITEM_LABEL = re.compile(r"【([^【】\n\d]{1,8})】")

# Stories a headline must list, separated by semicolons, to make a roundup by itself; two do
# under a flash column's name (_FLASH_COLUMN).
MIN_LISTED_ITEMS = 3
MIN_LISTED_ITEM_CHARS = 4
# The cleaning folds the full-width semicolon to ';'.
_LIST_SEPARATOR = re.compile(r"[;；]")
_NOT_LETTER = re.compile(r"[\W_]+")
# A column that gathers the day's short news under its name (物流运输快讯 | ..., 财经速递): with a
# headline that lists two stories, a flash. Alone such names head single stories (快讯:...).
# Not 日报 or 资讯: outlets and sites end their names so (人民日报, 凤凰资讯), and tag headlines with them.
_FLASH_COLUMN = re.compile(_ROUNDUP_HEADLINE.pattern + r"|快讯|速递|速览|播报")


def numbered_items(body: str) -> list[tuple[str, int]]:
    """(numbering style, number) of each item listed at the start of one of the body's lines, in
    order; the style is the delimiter of an arabic number (1. and 1、 are two styles), or the kind
    of numeral (一、, ①, 【1】)."""
    out = []
    for m in _ITEM_NUMBER.finditer(body):
        arabic, delimiter, chinese, circled, bracketed = m.groups()
        if circled:
            out.append(("circled", _CIRCLED.index(circled) + 1))
            continue
        value = chinese_number(arabic or chinese or bracketed)
        if value is not None:
            style = delimiter.replace("．", ".").replace("）", ")").replace("：", ":") if arabic else "chinese" if chinese else "bracketed"
            out.append((style, int(value)))
    return out


def longest_list(body: str) -> int:
    """The most items of one list in the body: numbered in a row whatever their style, or in one
    style, when the items number their own points in another (a digest's 1. 2. 3., the first item
    listing its own 1、2、: read on the heldout tune part, seed 320)."""
    items = numbered_items(body)
    by_style: dict[str, list[int]] = {}
    for style, number in items:
        by_style.setdefault(style, []).append(number)
    return max([longest_numbered_run([n for _, n in items]), *map(longest_numbered_run, by_style.values())])


def longest_numbered_run(numbers: list[int]) -> int:
    """The most items of one list numbered 1, 2, 3 ... in a row. One number may be missing, the
    first too (the cleaning drops an item's headline line that reads like a site's furniture: 2.
    城关警方二维码智慧警务助推窗口服务--兰州文明网, leaving 1, 3, 4, or as item 1 leaving 2, 3, 4: heldout
    tune seed 305); a second gap, or a number that goes back, ends it. A number further ahead is
    an item's own line, not the list's (a driving quiz's 21. in a digest's second item: heldout
    tune seed 600), and is passed over."""
    best = run = last = 0
    skipped = False
    for n in numbers:
        if n == 1:
            run, last, skipped = 1, 1, False
        elif n == 2 and not run:  # a list whose first item is missing
            run, last, skipped = 1, 2, True
        elif run and n == last + 1:
            run, last = run + 1, n
        elif run and n == last + 2 and not skipped:
            run, last, skipped = run + 1, n, True
        elif run and n > last + 2:
            continue
        else:
            run = 0
        best = max(best, run)
    return best


def listed_items(clean_title: str) -> int:
    """How many stories the headline itself lists, separated by semicolons (a part of fewer than
    ``MIN_LISTED_ITEM_CHARS`` letters is a word, not a story: 大风;降温;雨雪)."""
    parts = _LIST_SEPARATOR.split(clean_title)
    if len(parts) < 2:
        return 0
    return sum(len(_NOT_LETTER.sub("", part)) >= MIN_LISTED_ITEM_CHARS for part in parts)


def item_labels(body: str) -> set[str]:
    """The different labels in brackets that head parts of the body (【浙江】, 【行业热闻】)."""
    return set(_ITEM_LABEL.findall(body))


def headline_calls_it_a_roundup(clean_title: str) -> bool:
    """Whether the headline names a gathering of news (早报, 要闻, 新闻汇总 ...): alone, no roundup
    (a column's tag over one story), but a text under such a headline that lists fewer than
    ``MIN_ITEMS`` items may be a roundup cut short."""
    return bool(_ROUNDUP_HEADLINE.search(clean_title))


def is_roundup(clean_title: str, clean_body: str) -> bool:
    """Whether the article gathers several stories (see the module docstring)."""
    listed = listed_items(clean_title)
    if listed >= MIN_LISTED_ITEMS or (listed >= 2 and _FLASH_COLUMN.search(clean_title)):
        return True
    if not headline_calls_it_a_roundup(clean_title):
        return False
    return longest_list(clean_body) >= MIN_ITEMS or len(item_labels(clean_body)) >= MIN_ITEMS
