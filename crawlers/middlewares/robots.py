"""robots.txt, fetched once per host and cached.

Status handling follows RFC 9309: a 4xx robots.txt means "no rules" (crawl freely), a 5xx or an
unreachable host means "assume everything is disallowed" for now, since the site may be
overloaded and the rules unknown. Cached entries expire after ``ttl`` seconds so a daily crawl
running for hours picks up changes.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

log = logging.getLogger(__name__)

# (status, text) of GET <origin>/robots.txt, or None when the host could not be reached.
RobotsFetcher = Callable[[str], "tuple[int, str] | None"]


@dataclass
class _Entry:
    parser: RobotFileParser
    fetched_at: float


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def parser_for(status: int | None, text: str) -> RobotFileParser:
    """A parser for one robots.txt answer, applying the RFC 9309 status rules."""
    rp = RobotFileParser()
    if status is None or status >= 500:
        rp.disallow_all = True
    elif 400 <= status < 500:
        rp.allow_all = True
    else:
        rp.parse(text.splitlines())
    return rp


class RobotsCache:
    """``allowed(url)`` and ``crawl_delay(url)`` for one User-Agent, one robots.txt per origin."""

    def __init__(self, user_agent: str, fetch: RobotsFetcher, ttl: float = 6 * 3600, clock: Callable[[], float] = time.monotonic):
        self.user_agent = user_agent
        self._fetch = fetch
        self._ttl = ttl
        self._clock = clock
        self._cache: dict[str, _Entry] = {}

    def _parser(self, url: str) -> RobotFileParser:
        origin = origin_of(url)
        entry = self._cache.get(origin)
        now = self._clock()
        if entry is None or now - entry.fetched_at > self._ttl:
            answer = self._fetch(origin + "/robots.txt")
            status, text = answer if answer is not None else (None, "")
            log.debug("robots.txt for %s: status %s", origin, status)
            entry = _Entry(parser_for(status, text), now)
            self._cache[origin] = entry
        return entry.parser

    def allowed(self, url: str) -> bool:
        return self._parser(url).can_fetch(self.user_agent, url)

    def crawl_delay(self, url: str) -> float | None:
        delay = self._parser(url).crawl_delay(self.user_agent)
        return float(delay) if delay is not None else None
