"""What one side brings: views of its text read without reading the whole of it."""

from __future__ import annotations

import random

from indexer.cleaning import exact_form
from indexer.compare.sides import _compact_at_least, shingle_source


def test_the_compact_length_read_from_a_prefix_is_the_whole_texts():
    rng = random.Random(7)
    alphabet = "新闻ab。，！ \n_-—…12"
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 160)))
        n = rng.randrange(1, 40)
        assert _compact_at_least(text, n) == (len(exact_form(text)) >= n), (text, n)
    # punctuation first, words after the prefix: read to the end
    assert _compact_at_least("。" * 200 + "字" * 30, 30) and not _compact_at_least("。" * 200 + "字" * 29, 30)


def test_a_body_too_short_to_stand_alone_is_shingled_with_its_headline():
    assert shingle_source("标题", "正文" * 20) == "正文" * 20
    assert shingle_source("标题", "——" * 100 + "正文") == "标题\n" + "——" * 100 + "正文"
