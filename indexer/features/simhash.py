"""64-bit SimHash over weighted tokens, band keys for candidate lookup, Hamming distance.

A fingerprint is only comparable with one made by the same cleaning, tokenizer and token hash;
``FINGERPRINT_LAYOUT`` names all three and is recorded by every store (a store made with another
layout refuses to open rather than return wrong neighbours).

Banding: split the 64 bits into ``b`` bands. If two fingerprints differ in at most ``k`` bits
and ``b >= k + 1``, at least one band is identical (pigeonhole), so a term lookup on band keys
finds every candidate within distance ``k``; candidates are then checked by exact Hamming distance.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping

import numpy as np
import xxhash

from ..cleaning import CLEANING_VERSION
from .tokenize import TOKENIZER_NAME

BITS = 64
TOKEN_HASH = "xxh3_64"
# The token weighting is part of the layout too: v2 = sublinear (1 + ln tf) x IDF.
# So is the cleaning the tokens are read from: the same article cleaned otherwise gets other tokens.
FINGERPRINT_LAYOUT = f"simhash64/{TOKEN_HASH}/{TOKENIZER_NAME}/w2/{CLEANING_VERSION}"
_MASK64 = (1 << 64) - 1


# Bounded like tokenize's IDF cache: a full cache starts over (a stream's vocabulary is open-ended).
_HASH_CACHE: dict[str, int] = {}
_HASH_CACHE_MAX = 200_000


def token_hash(token: str) -> int:
    value = _HASH_CACHE.get(token)
    if value is None:
        value = xxhash.xxh3_64_intdigest(token.encode("utf-8"))
        if len(_HASH_CACHE) >= _HASH_CACHE_MAX:
            _HASH_CACHE.clear()
        _HASH_CACHE[token] = value
    return value


def simhash(weights: Mapping[str, float]) -> int:
    """Weighted SimHash of token weights, as an unsigned 64-bit int (0 for no tokens)."""
    if not weights:
        return 0
    looked_up = list(map(_HASH_CACHE.get, weights))
    if None in looked_up:  # only new tokens are hashed
        looked_up = [h if h is not None else token_hash(t) for t, h in zip(weights, looked_up)]
    hashes = np.fromiter(looked_up, dtype=np.uint64, count=len(looked_up))
    w = np.fromiter(weights.values(), dtype=np.float64, count=len(weights))
    # Little-endian bytes unpacked LSB-first give bit i of each hash in column i.
    bits = np.unpackbits(hashes.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    votes = w @ (bits.astype(np.float64) * 2.0 - 1.0)
    packed = np.packbits(votes > 0, bitorder="little")
    return int(packed.view(np.uint64)[0])


def hamming(a: int, b: int) -> int:
    return ((a ^ b) & _MASK64).bit_count()


@lru_cache(maxsize=8)
def band_layout(bands: int) -> tuple[tuple[int, int], ...]:
    """(shift, width) of each band; widths differ by at most one bit."""
    if not 1 <= bands <= BITS:
        raise ValueError(f"bands must be in 1..{BITS}, got {bands}")
    base, extra = divmod(BITS, bands)
    layout, shift = [], 0
    for i in range(bands):
        width = base + (1 if i < extra else 0)
        layout.append((shift, width))
        shift += width
    return tuple(layout)


def band_keys(fingerprint: int, bands: int) -> tuple[int, ...]:
    """One integer key per band: band index in the high bits, band value in the low bits,
    so keys of different bands never collide."""
    return tuple(
        (i << 56) | ((fingerprint >> shift) & ((1 << width) - 1))
        for i, (shift, width) in enumerate(band_layout(bands))
    )


def to_signed(value: int) -> int:
    """Unsigned 64-bit to the signed form SQLite and Elasticsearch ``long`` can hold."""
    return value - (1 << 64) if value >= 1 << 63 else value


def from_signed(value: int) -> int:
    return value & _MASK64
