"""Side-by-side comparison of two texts: which parts they share and which differ.

Chinese text has no spaces to split words on, so the texts are compared character by character
(``difflib`` with its junk heuristic off: a common character is not noise here). Each side comes
back as segments ``(shared: bool, text)``; the template marks them, escaping the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

MAX_CHARS = 6000  # per side: beyond this the view shows the start (the whole text is in the store)


@dataclass(frozen=True)
class SideBySide:
    left: list[tuple[bool, str]]
    right: list[tuple[bool, str]]
    shared_chars: int
    left_chars: int
    right_chars: int
    cut: bool

    @property
    def shared_ratio(self) -> float:
        longest = max(self.left_chars, self.right_chars)
        return self.shared_chars / longest if longest else 1.0


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
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    lsegs: list[tuple[bool, str]] = []
    rsegs: list[tuple[bool, str]] = []
    shared = 0
    i = j = 0
    for block in matcher.get_matching_blocks():
        lsegs.append((False, a[i : block.a]))
        rsegs.append((False, b[j : block.b]))
        run = block.size >= min_run
        lsegs.append((run, a[block.a : block.a + block.size]))
        rsegs.append((run, b[block.b : block.b + block.size]))
        shared += block.size if run else 0
        i, j = block.a + block.size, block.b + block.size
    return SideBySide(_merge(lsegs), _merge(rsegs), shared, len(a), len(b), cut)
