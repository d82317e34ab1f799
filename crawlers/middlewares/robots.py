"""robots.txt, fetched once per origin and cached, read with Protego (the parser Scrapy uses).

Protego follows RFC 9309 where ``urllib.robotparser`` does not: ``*`` and ``$`` wildcards
(``Disallow: /*.pdf$``) and the longest matching rule wins (``Disallow: /`` with
``Allow: /news/`` allows ``/news/``).

Status handling follows RFC 9309: a 4xx robots.txt means "no rules" (crawl freely), a 5xx or an
unreachable host means "assume everything is disallowed" for now, since the site may be
overloaded and the rules unknown. The fetcher also answers "unreachable" when robots.txt
redirects somewhere the crawl may not go (another host, userinfo): the rules are then unknown.
Cached entries expire after ``ttl`` seconds so a daily crawl running for hours picks up changes.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

from protego import Protego

log = logging.getLogger(__name__)

# (status, text) of GET <origin>/robots.txt, or None when it could not be fetched.
RobotsFetcher = Callable[[str], "tuple[int, str] | None"]

_DISALLOW_ALL = "User-agent: *\nDisallow: /\n"


@dataclass
class _Entry:
    rules: Protego
    fetched_at: float


def rules_for(status: int | None, text: str) -> Protego:
    """The rules of one robots.txt answer, applying the RFC 9309 status rules."""
    if status is None or status >= 500:
        return Protego.parse(_DISALLOW_ALL)
    if 400 <= status < 500:
        return Protego.parse("")
    return Protego.parse(text)


class RobotsCache:
    """``allowed(url)`` and ``crawl_delay(url)`` for one User-Agent, one robots.txt per origin.
    The caller passes the origin (``scheme://host[:port]``) and how to fetch its robots.txt, so
    the fetch runs under the same URL checks as the page that needs it."""

    def __init__(self, user_agent: str, ttl: float = 6 * 3600, clock: Callable[[], float] = time.monotonic):
        self.user_agent = user_agent
        self._ttl = ttl
        self._clock = clock
        self._cache: dict[str, _Entry] = {}

    def rules(self, origin: str, fetch: RobotsFetcher) -> Protego:
        entry = self._cache.get(origin)
        now = self._clock()
        if entry is None or now - entry.fetched_at > self._ttl:
            answer = fetch(origin + "/robots.txt")
            status, text = answer if answer is not None else (None, "")
            log.debug("robots.txt for %s: status %s", origin, status)
            entry = _Entry(rules_for(status, text), now)
            self._cache[origin] = entry
        return entry.rules

    def allowed(self, url: str, origin: str, fetch: RobotsFetcher) -> bool:
        return self.rules(origin, fetch).can_fetch(url, self.user_agent)

    def crawl_delay(self, origin: str, fetch: RobotsFetcher) -> float | None:
        delay = self.rules(origin, fetch).crawl_delay(self.user_agent)
        return float(delay) if delay is not None else None
