"""Pairwise evidence and the duplicate rules. Pure functions: no store, no model.

The pipeline gathers candidates from the three store questions, computes ``PairEvidence`` for each
(new article, candidate) pair and asks ``judge`` whether it is a duplicate and why:

* **exact**     the content keys (MD5 of the cleaned body, or title+body for very short bodies) are equal;
* **near**      SimHash Hamming distance within the length-dependent limit, or the shorter text's
                shingles are contained in the longer one (a trimmed repost);
* **semantic**  the same news event: an event score (weighted embedding cosine plus headline
                character-gram similarity) above the threshold, and no conflicting figures in
                the two headlines.

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

import numpy as np
import rjieba

from .cleaning import exact_form
from .settings import DecisionSettings, SimhashSettings


class Reason(str, Enum):
    EXACT = "exact"
    NEAR = "near"
    SEMANTIC = "semantic"


SHINGLE = 4  # characters per shingle for containment
_NUMBER = re.compile(r"\d+(?:[.,:：/]\d+)*%?|[零〇一二两三四五六七八九十百千万亿]+(?=[年月日号时点分秒元角股只家名人起例个位%])")
_NOUNISH = {"n", "nr", "ns", "nt", "nz", "nrt", "nrfg", "eng", "x", "j"}
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
class PairEvidence:
    exact: bool
    hamming: int
    short: bool
    containment: float
    cosine: float | None
    title_sim: float
    event_score: float | None  # cosine_weight x cosine + title_sim
    title_numbers_conflict: bool
    template: str | None  # why the pair looks like a templated report, or None


@dataclass(frozen=True)
class Verdict:
    reason: Reason
    score: float


# Odd 64-bit multiplier of the polynomial shingle hash (arithmetic wraps modulo 2**64).
_SHINGLE_BASE = np.uint64(0x9E3779B97F4A7C15)


def shingles(text: str, size: int = SHINGLE) -> np.ndarray:
    """The distinct character ``size``-grams of the compact text, as sorted 64-bit hashes.

    Hashes, not strings: a long article has thousands of shingles and the indexer keeps the
    shingles of recent candidates in memory; 8 bytes each instead of a ~70-byte string in a set,
    and containment becomes one sorted-array intersection.
    """
    compact = exact_form(text)
    if not compact:
        return np.zeros(0, dtype=np.uint64)
    codes = np.frombuffer(compact.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    if len(codes) <= size:
        size = len(codes)
    grams = np.zeros(len(codes) - size + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for offset in range(size):
            grams = grams * _SHINGLE_BASE + codes[offset : offset + len(grams)]
    # Sort and drop repeats: what np.unique returns, ~5x faster at these sizes (it hashes first).
    grams.sort()
    distinct = np.empty(len(grams), dtype=bool)
    distinct[0] = True
    np.not_equal(grams[1:], grams[:-1], out=distinct[1:])
    return grams[distinct]


# A text needs this many shingles (about as many characters) before its containment in another
# text means anything: a two-line stub is "contained" in half the articles that mention its words.
MIN_CONTAINMENT_SHINGLES = 40


def containment(a: np.ndarray, b: np.ndarray) -> float:
    """Share of the smaller shingle set found in the larger: 1.0 when one text is a trimmed copy
    of the other; 0.0 when the smaller text is too short to tell."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    if len(small) < MIN_CONTAINMENT_SHINGLES:
        return 0.0
    return _found(small, large) / len(small)


def _found(keys: np.ndarray, sorted_set: np.ndarray) -> int:
    """How many of ``keys`` are in ``sorted_set`` (no merge sort: a binary search each)."""
    at = np.searchsorted(sorted_set, keys)
    at[at == len(sorted_set)] = 0
    return int(np.count_nonzero(sorted_set[at] == keys))


def contained(a: np.ndarray, b: np.ndarray, threshold: float) -> bool:
    """``containment(a, b) >= threshold``, usually from part of the smaller set: when the misses
    among its first keys already exceed the share that may miss, the rest cannot lift it (most
    pairs the indexer asks about share almost nothing, so a third of the lookups decide them)."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    if len(small) < MIN_CONTAINMENT_SHINGLES:
        return 0.0 >= threshold
    n = len(small)
    sample = min(n, int(1.5 * (1.0 - threshold) * n) + 1)
    # At most every key past the sample is found; divided by n like containment, so the two agree.
    if sample < n and (_found(small[:sample], large) + n - sample) / n < threshold:
        return False
    return containment(small, large) >= threshold


_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def title_number_conflict(title_a: str, title_b: str) -> bool:
    """Both headlines carry numbers and neither set contains the other: different figures,
    so different reports (a repost keeps its numbers, a follow-up may add some)."""
    a, b = set(_DIGITS.findall(title_a)), set(_DIGITS.findall(title_b))
    return bool(a) and bool(b) and not (a <= b or b <= a)


@lru_cache(maxsize=4096)
def _tagged(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((w, f) for w, f in rjieba.tag(text) if w.strip())


def _slot(words: list[tuple[str, str]]) -> tuple[str, frozenset[str]] | None:
    """What a substituted segment is (a number, a polarity word, a name) and the words that make
    it so; None when it holds nothing a template would vary."""
    numbers = frozenset(m.group(0) for w, _ in words for m in _NUMBER.finditer(w))
    if numbers:
        return "number", numbers
    polar = frozenset(w for w, _ in words if w in _POLARITY)
    if polar:
        return "polarity:" + "+".join(sorted({_POLARITY[w] for w in polar})), polar
    names = frozenset(w for w, f in words if f in _NOUNISH and len(w) >= 2 and not _NUMBER.fullmatch(w))
    if names:
        return "name", names
    return None


def _mostly_numbers(words) -> bool:
    return sum(1 for w, _ in words if _NUMBER.fullmatch(w)) * 2 >= len(words)


_PLACE_TAGS = {"ns"}


def place_conflict(lead_a: str, lead_b: str, text_a: str, text_b: str) -> str | None:
    """Both leads (headline and first sentence) name places and neither article mentions any of
    the other's: the same kind of news (a fire, a food poisoning, a police campaign) in two places
    is two events."""
    places_a = {w for w, f in _tagged(lead_a) if f in _PLACE_TAGS and len(w) >= 2}
    places_b = {w for w, f in _tagged(lead_b) if f in _PLACE_TAGS and len(w) >= 2}
    if places_a and places_b and not any(p in text_b for p in places_a) and not any(p in text_a for p in places_b):
        return f"places differ: {sorted(places_a)} vs {sorted(places_b)}"
    return None


ALL_SLOTS = frozenset({"number", "polarity", "name"})


def template_difference(
    a: str, b: str, max_segment: int = 4, diff_chars: int = 800, slots: frozenset[str] = ALL_SLOTS
) -> str | None:
    """If ``a`` and ``b`` are the same sentence frame with slots filled differently (a number for a
    number, a name for a name, 涨 for 跌), describe the first such substitution; else None.

    Only true substitutions count: each side's slot words must be absent from the whole other
    text. Trimming, added boilerplate and dropped sentences leave one text's words inside the
    other's (as substrings), and a number replaced by a non-number (``12日`` -> ``明日``) is a rewording.
    The alignment reads the first ``diff_chars`` of each text, where templated reports put their slots;
    ``slots`` limits which kinds of substitution count."""
    ta, tb = _tagged(a[:diff_chars]), _tagged(b[:diff_chars])
    matcher = SequenceMatcher(None, [w for w, _ in ta], [w for w, _ in tb], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        left, right = _slot(list(ta[i1:i2])), _slot(list(tb[j1:j2]))
        if left is None or right is None:
            continue
        # A run of figures replaced by figures (a lottery draw, a price table) is a substitution at
        # any length; names and words only in short runs, longer ones are rewording.
        long_run = (i2 - i1) > max_segment or (j2 - j1) > max_segment
        if long_run and not (left[0] == right[0] == "number" and _mostly_numbers(ta[i1:i2]) and _mostly_numbers(tb[j1:j2])):
            continue
        (kind_l, slot_l), (kind_r, slot_r) = left, right
        if kind_l.split(":")[0] not in slots:
            continue
        if kind_l.split(":")[0] != kind_r.split(":")[0] or (kind_l.startswith("polarity") and kind_l == kind_r):
            continue
        # Substring, not token, membership: segmentation of the same word varies with its context.
        if any(w in b for w in slot_l) or any(w in a for w in slot_r):
            continue
        return f"{kind_l.split(':')[0]} differs: {''.join(w for w, _ in ta[i1:i2])!r} vs {''.join(w for w, _ in tb[j1:j2])!r}"
    return None


def near_limit(short: bool, simhash: SimhashSettings) -> int:
    return simhash.max_distance_short if short else simhash.max_distance


def judge(ev: PairEvidence, decision: DecisionSettings, simhash: SimhashSettings) -> Verdict | None:
    """The rules, in order of strength. Returns None when the pair is not a duplicate.

    A layer left out of ``decision.layers`` never matches; the others still do.
    """
    if ev.exact and decision.enabled("exact"):
        return Verdict(Reason.EXACT, 1.0)
    if ev.template and decision.template_guard:
        return None
    if decision.enabled("near"):
        if ev.hamming <= near_limit(ev.short, simhash):
            return Verdict(Reason.NEAR, round(1.0 - ev.hamming / 64.0, 4))
        if ev.containment >= decision.near_containment:
            return Verdict(Reason.NEAR, round(ev.containment, 4))
    if (
        decision.enabled("semantic")
        and ev.event_score is not None
        and ev.event_score >= decision.event_threshold
        and ev.cosine >= decision.semantic_min_cosine
        and not ev.title_numbers_conflict
    ):
        return Verdict(Reason.SEMANTIC, round(ev.event_score, 4))
    return None
