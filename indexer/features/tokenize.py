"""Tokens for SimHash and lexical checks: jieba segmentation, noise removed, IDF-weighted.

Segmentation uses rjieba (jieba-rs), whose output equals jieba 0.42.1's on our test paragraphs
(see tests/test_tokenize.py) and is about 20x faster. The IDF table is jieba's own
(``jieba/analyse/idf.txt``), so weights mean the same thing as ``jieba.analyse.extract_tags``.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from importlib import resources
from pathlib import Path

import rjieba

TOKENIZER_NAME = "rjieba-0.2.2"
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
    import jieba.analyse

    path = Path(jieba.analyse.__file__).with_name("idf.txt")
    table: dict[str, float] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            word, _, value = line.strip().partition(" ")
            if value:
                table[word] = float(value)
    values = sorted(table.values())
    return table, values[len(values) // 2]


def segment(text: str) -> list[str]:
    """Raw jieba segmentation (punctuation and spaces included)."""
    return rjieba.cut(text)


def content_tokens(text: str) -> list[str]:
    """Segmented words without punctuation, spaces and stopwords, in text order."""
    stop = stopwords()
    out = []
    for tok in rjieba.cut(text):
        tok = tok.strip()
        if tok and _WORD.search(tok) and tok not in stop:
            out.append(tok)
    return out


def is_number(token: str) -> bool:
    return bool(_NUMBER.match(token))


def weighted_tokens(title: str, body: str) -> dict[str, float]:
    """Token -> weight: term frequency x IDF, with title words counted ``TITLE_WEIGHT`` times.
    Single-character CJK tokens get half weight: they are mostly particles and measure words."""
    table, median = idf_table()
    counts: Counter[str] = Counter(content_tokens(body))
    for tok in content_tokens(title):
        counts[tok] += TITLE_WEIGHT
    weights = {}
    for tok, tf in counts.items():
        idf = NUMBER_IDF if is_number(tok) else table.get(tok, median)
        if len(tok) == 1 and not tok.isascii():
            idf *= 0.5
        weights[tok] = tf * idf
    return weights
