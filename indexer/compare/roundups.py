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
  (1. / 1、/ 一、/ ① / 【1】 / (1)): a policy or a how-to numbers its points too.

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
    r"^\s*(?:(\d{1,2})\s*(?:[.．](?!\d)|[、)）:：])"
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


def item_numbers(body: str) -> list[int]:
    """The numbers of the items listed at the starts of the body's lines, in order."""
    out = []
    for m in _ITEM_NUMBER.finditer(body):
        arabic, chinese, circled, bracketed = m.groups()
        if circled:
            out.append(_CIRCLED.index(circled) + 1)
            continue
        value = chinese_number(arabic or chinese or bracketed)
        if value is not None:
            out.append(int(value))
    return out


def longest_numbered_run(numbers: list[int]) -> int:
    """The most items of one list numbered 1, 2, 3 ... in a row (a number out of turn ends it)."""
    best = run = 0
    for n in numbers:
        if n == 1:
            run = 1
        elif run and n == run + 1:
            run += 1
        else:
            run = 0
        best = max(best, run)
    return best


def is_roundup(clean_title: str, clean_body: str) -> bool:
    """Whether the article gathers several stories (see the module docstring)."""
    return bool(_ROUNDUP_HEADLINE.search(clean_title)) and longest_numbered_run(item_numbers(clean_body)) >= MIN_ITEMS
