"""Headline similarity: TF-IDF cosine over character 1-3-grams of the cleaned title.

Character grams need no segmentation, so two headlines that word the same event differently
(郑州 / 郑州市, 疫苗接种 / 接种疫苗) still share most of their weight, and rare grams (names,
places) weigh most. The IDF table ships in ``indexer/data/title_char_idf.tsv`` (built by
``bench/build_title_idf.py`` from news headlines); grams it lacks get the highest IDF.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache
from importlib import resources

# Punctuation and spaces carry no event: 【】, ！ and …… differ by site, not by story.
_NOT_WORD = re.compile(r"[\W_]+")
GRAM_SIZES = (1, 2, 3)
# Texts without a title use the start of the body as their headline.
HEADLINE_FROM_BODY_CHARS = 48


def char_grams(text: str) -> Counter[str]:
    compact = _NOT_WORD.sub("", text)
    grams: Counter[str] = Counter()
    for n in GRAM_SIZES:
        grams.update(compact[i : i + n] for i in range(len(compact) - n + 1))
    return grams


@lru_cache(maxsize=1)
def idf_table() -> tuple[dict[str, float], float]:
    """IDF per gram, and the IDF of an unseen gram."""
    text = (resources.files("indexer") / "data" / "title_char_idf.tsv").read_text("utf-8")
    lines = text.splitlines()
    n = int(lines[0].split("\t")[1])
    table = {gram: float(value) for gram, _, value in (line.rpartition("\t") for line in lines[1:])}
    return table, math.log(1 + n) + 1


def headline(clean_title: str, clean_body: str) -> str:
    return clean_title or clean_body[:HEADLINE_FROM_BODY_CHARS]


def title_vector(text: str) -> dict[str, float]:
    """L2-normalised sublinear TF-IDF weights of the headline's character grams."""
    table, unseen = idf_table()
    weights = {g: (1.0 + math.log(tf)) * table.get(g, unseen) for g, tf in char_grams(text).items()}
    norm = math.sqrt(sum(w * w for w in weights.values()))
    return {g: w / norm for g, w in weights.items()} if norm else {}


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(g, 0.0) for g, w in a.items())
