"""Tokens for SimHash and lexical checks: jieba segmentation, noise removed, IDF-weighted.

Segmentation uses rjieba (jieba-rs), whose output equals jieba 0.42.1's on our test paragraphs
(see tests/test_tokenize.py) and is about 20x faster. The IDF table is jieba's own
(``jieba/analyse/idf.txt``), so weights mean the same thing as ``jieba.analyse.extract_tags``.
"""

from __future__ import annotations

import re
from collections import Counter
from math import log
from functools import lru_cache
from importlib import resources

import rjieba

TOKENIZER_NAME = "rjieba-0.2.2+words"  # +words: runs of other scripts are words (segment)
_WORD = re.compile(r"\w", re.UNICODE)
_NUMBER = re.compile(r"^[+-]?\d+(?:[.,]\d+)*%?$")
TITLE_WEIGHT = 2.0
NUMBER_IDF = 6.0  # numbers are informative: they are what templated reports differ in


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    text = (resources.files("indexer") / "data" / "stopwords.txt").read_text("utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#"))


@lru_cache(maxsize=1)
def idf_table() -> tuple[dict[str, float], float]:
    """jieba's IDF per word and the median IDF used for unseen words."""
    # Read as a package file: importing jieba.analyse would load jieba's POS tagger (~1 s).
    path = resources.files("jieba") / "analyse" / "idf.txt"
    with path.open(encoding="utf-8") as fh:
        table = {word: float(value) for word, _, value in (line.strip().partition(" ") for line in fh) if value}
    values = sorted(table.values())
    return table, values[len(values) // 2]


# jieba cuts a run of letters outside Han and ASCII into single letters (вчера -> в ч е р а,
# Pokémon -> Pok é mon, 안녕 -> 안 녕), so every Russian or Korean text was a bag of its alphabet and
# unrelated ones shared fingerprints. Such runs are words of their own: letters, digits and the
# marks of scripts that write vowels as marks (Thai, Devanagari, Arabic), less Han.
_HAN = r"\u2e80-\u2fdf\u3005-\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
_WORD_PART = (r"\w\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
              r"\u0900-\u0963\u0966-\u0dff\u0e00-\u0e2e\u0e30-\u0e4e\u0e50-\u0e59\u0e80-\u0eff"
              r"\u0f00-\u0f03\u0f15-\u0fff\u1000-\u109f\u1780-\u17ff\u3099\u309a")  # less dandas, Thai and Tibetan marks
_OTHER_SCRIPT = re.compile(rf"(?![\x00-\x7f{_HAN}])[{_WORD_PART}]")
_OTHER_SCRIPT_WORD = re.compile(rf"(?:(?![{_HAN}_])[{_WORD_PART}])+")


def segment(text: str) -> list[str]:
    """Words in text order, punctuation and spaces included: jieba's, but a run of letters of
    another script (Cyrillic, Hangul, accented Latin, kana) is one word."""
    if not _OTHER_SCRIPT.search(text):
        return rjieba.cut(text)
    out: list[str] = []
    at = 0
    for m in _OTHER_SCRIPT_WORD.finditer(text):
        if m.group().isascii():
            continue  # jieba's own reading of ASCII (COVID-19, 5G) stays
        if m.start() > at:
            out += rjieba.cut(text[at:m.start()])
        out.append(m.group())
        at = m.end()
    if at < len(text):
        out += rjieba.cut(text[at:])
    return out


def is_number(token: str) -> bool:
    return bool(_NUMBER.match(token))


# token -> IDF weight, 0.0 for tokens that are dropped. After a warm-up nearly every token is one
# dictionary lookup instead of regexes and table probes. A stream's vocabulary is open-ended
# (figures, names, typos: a new token every article or so), so a full cache starts over rather
# than keep a store's worth of tokens for good; the tokens in use are back within a few articles.
_IDF_CACHE: dict[str, float] = {}
_IDF_CACHE_MAX = 200_000


def token_idf(token: str) -> float:
    value = _IDF_CACHE.get(token)
    if value is None:
        value = _compute_idf(token)
        if len(_IDF_CACHE) >= _IDF_CACHE_MAX:
            _IDF_CACHE.clear()
        _IDF_CACHE[token] = value
    return value


def _compute_idf(token: str) -> float:
    tok = token.strip()
    if not tok or tok != token or not _WORD.search(tok) or tok in stopwords():
        return 0.0
    table, median = idf_table()
    if len(tok) == 1 and tok.isascii() and not tok.isdigit():
        return 0.0  # a lone Latin letter says nothing about the story (and "n" is what "\\n" leaves)
    idf = NUMBER_IDF if is_number(tok) else table.get(tok, median)
    if len(tok) == 1 and not tok.isascii():
        idf *= 0.5  # single CJK characters are mostly particles and measure words
    return idf


def weighted_tokens(title: str, body: str) -> dict[str, float]:
    """Token -> weight: (1 + ln tf) x IDF, with title words counted ``TITLE_WEIGHT`` more times.

    Sublinear term frequency: a word repeated hundreds of times (a forum's "下载附件" under every
    picture, a share bar) must not outvote the rest of the text, or unrelated pages from one site
    get one fingerprint.
    """
    counts: Counter[str] = Counter(segment(body))
    for tok in segment(title):
        counts[tok] += TITLE_WEIGHT
    # One pass: a cached token costs one dictionary probe; only new tokens pay for regexes and lookups.
    idf = _IDF_CACHE.get
    return {
        tok: (w if tf == 1 else (1.0 + log(tf)) * w)  # most words occur once: skip the log
        for tok, tf in counts.items()
        if (w := idf(tok)) or (w is None and (w := token_idf(tok)))
    }
