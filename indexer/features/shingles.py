"""Character shingles of the compact text, and how much of one text another contains.

Containment (not Jaccard) is the repost measure: a trimmed copy holds only part of the original,
and all of what it holds is in the original.
"""

from __future__ import annotations

import numpy as np

from ..cleaning import exact_form

SHINGLE = 4  # characters per shingle
# Odd 64-bit multiplier of the polynomial shingle hash (arithmetic wraps modulo 2**64).
_SHINGLE_BASE = np.uint64(0x9E3779B97F4A7C15)
# A text needs this many shingles (about as many characters) before its containment in another
# text means anything: a two-line stub is "contained" in half the articles that mention its words.
MIN_CONTAINMENT_SHINGLES = 40


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
    size = min(size, len(codes))
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


def containment(a: np.ndarray, b: np.ndarray) -> float:
    """Share of the smaller shingle set found in the larger: 1.0 when one text is a trimmed copy
    of the other; 0.0 when the smaller text is too short to tell."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    if len(small) < MIN_CONTAINMENT_SHINGLES:
        return 0.0
    return _found(small, large) / len(small)


def share_found(keys: np.ndarray, sorted_set: np.ndarray) -> float:
    """Share of ``keys`` found in ``sorted_set`` (1.0 for no keys): containment of one given text
    in another, whatever their sizes."""
    return _found(keys, sorted_set) / len(keys) if len(keys) else 1.0


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
