"""Side-by-side comparison of two texts: which parts they share and which differ.

Chinese text has no spaces to split words on, so the texts are compared character by character
(``difflib`` with its junk heuristic off: a common character is not noise here). Each side comes
back as segments ``(shared: bool, text)``; the template marks them, escaping the text.

``difflib`` takes cubic time on repetitive text (``"a" * 1000`` against ``"ab" * 500``: 12 s),
and the texts are whatever was crawled, so the character comparison runs under a budget of
character comparisons that bounds it from above; past it, the texts are compared sentence by
sentence (a sentence repeated throughout a text is junk there, so repetition costs nothing), and
the view says so.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import accumulate

MAX_CHARS = 6000  # per side: beyond this the view shows the start (the whole text is in the store)
# Character comparisons one comparison may make, at most: about half a second of CPU. Pairs of real
# news articles of up to 6,000 characters, copies or unrelated, stay far below it.
WORK_BUDGET = 5_000_000
_SENTENCE = re.compile(r"[^。！？!?\n]*(?:[。！？!?\n]+|$)")


@dataclass(frozen=True)
class SideBySide:
    left: list[tuple[bool, str]]
    right: list[tuple[bool, str]]
    shared_chars: int
    left_chars: int
    right_chars: int
    cut: bool
    by_sentence: bool = False  # compared sentence by sentence: too repetitive for characters

    @property
    def shared_ratio(self) -> float:
        longest = max(self.left_chars, self.right_chars)
        return self.shared_chars / longest if longest else 1.0


class _OverBudget(Exception):
    pass


class _BudgetedMatcher(SequenceMatcher):
    """``find_longest_match`` over ``a[alo:ahi]`` visits, for each position of it, the positions of
    ``b`` holding the same character (up to ``bhi``), so the counts of each character of ``a`` in
    ``b``, summed over the range, bound its work; the calls' bounds are summed against the budget."""

    def __init__(self, a: str, b: str):
        in_b = Counter(b)
        self._work_before = list(accumulate((in_b[c] for c in a), initial=0))
        self._budget = WORK_BUDGET
        super().__init__(None, a, b, autojunk=False)

    def find_longest_match(self, alo=0, ahi=None, blo=0, bhi=None):
        ahi = len(self.a) if ahi is None else ahi
        self._budget -= self._work_before[ahi] - self._work_before[alo]
        if self._budget < 0:
            raise _OverBudget
        return super().find_longest_match(alo, ahi, blo, bhi)


def _sentence_blocks(a: str, b: str) -> list[tuple[int, int, int]]:
    """Matching runs of whole sentences, as character blocks (the last one empty, as difflib's)."""
    sa, sb = [s for s in _SENTENCE.findall(a) if s], [s for s in _SENTENCE.findall(b) if s]
    starts_a, starts_b = (list(accumulate(map(len, s), initial=0)) for s in (sa, sb))
    return [(starts_a[i], starts_b[j], starts_a[i + n] - starts_a[i])
            for i, j, n in SequenceMatcher(None, sa, sb, autojunk=True).get_matching_blocks() if n] + [(len(a), len(b), 0)]


def _merge(segments: list[tuple[bool, str]]) -> list[tuple[bool, str]]:
    out: list[tuple[bool, str]] = []
    for shared, text in segments:
        if not text:
            continue
        if out and out[-1][0] == shared:
            out[-1] = (shared, out[-1][1] + text)
        else:
            out.append((shared, text))
    return out


def side_by_side(left: str, right: str, min_run: int = 4) -> SideBySide:
    """Shared runs shorter than ``min_run`` characters count as different (a shared 的 or 了
    between two different sentences is not shared text)."""
    cut = len(left) > MAX_CHARS or len(right) > MAX_CHARS
    a, b = left[:MAX_CHARS], right[:MAX_CHARS]
    by_sentence = False
    try:
        blocks = _BudgetedMatcher(a, b).get_matching_blocks()
    except _OverBudget:
        blocks, by_sentence = _sentence_blocks(a, b), True
    lsegs: list[tuple[bool, str]] = []
    rsegs: list[tuple[bool, str]] = []
    shared = 0
    i = j = 0
    for block_a, block_b, size in blocks:
        lsegs.append((False, a[i:block_a]))
        rsegs.append((False, b[j:block_b]))
        run = size >= min_run
        lsegs.append((run, a[block_a : block_a + size]))
        rsegs.append((run, b[block_b : block_b + size]))
        shared += size if run else 0
        i, j = block_a + size, block_b + size
    return SideBySide(_merge(lsegs), _merge(rsegs), shared, len(a), len(b), cut, by_sentence)
