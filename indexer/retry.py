"""Back-off between retries: the one rule the retry loops here follow (fetching a page, a bulk
write to Elasticsearch, the daemon's worker waiting for its store).

Retry ``n`` (from 0) plans ``base * 2**n`` seconds, capped at ``cap``, and waits a random part of
it between half and all of it ("equal jitter"). Without jitter, clients that failed together (a
node restart, a site answering 503 to every crawler) all come back in the same instant and fail
together again; the half kept as a floor means no retry comes sooner than half its plan.

Each loop counts its own attempts and stops at its own bound; every failure is retried by one
layer only (see ``indexer.store.es_bulk`` for the Elasticsearch client's retries).
"""

from __future__ import annotations

import random

# 2**64 times any sensible base is past every cap: the exponent stops there, so a loop retrying
# for ever never overflows a float.
_MAX_EXPONENT = 64
_shared_rng = random.Random()


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Seconds to wait before retry number ``attempt + 1``: between half and all of
    ``min(cap, base * 2**attempt)``, drawn from ``rng`` (seed one for repeatable waits)."""
    if attempt < 0:
        raise ValueError(f"attempt must be 0 or more, not {attempt}")
    planned = min(cap, base * 2.0 ** min(attempt, _MAX_EXPONENT))
    return planned * (0.5 + 0.5 * (rng or _shared_rng).random())


class Backoff:
    """The waits of a loop that retries until it succeeds or is stopped (the daemon's worker and
    its store): ``step`` gives the next wait, ``reset`` starts again after a success."""

    def __init__(self, initial: float, maximum: float, rng: random.Random | None = None):
        self.initial, self.maximum = initial, max(initial, maximum)
        self.attempt = 0
        self._rng = rng

    def step(self) -> float:
        delay = backoff_delay(self.attempt, self.initial, self.maximum, self._rng)
        self.attempt = min(self.attempt + 1, _MAX_EXPONENT)
        return delay

    def reset(self) -> None:
        self.attempt = 0
