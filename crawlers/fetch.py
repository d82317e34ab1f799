"""HTTP fetching that a site operator would not mind: one requests Session, per-host pacing,
robots.txt, retries with jittered exponential backoff (``indexer.retry``) honouring ``Retry-After``
(within a back-off budget per host and per run), a response size cap, a wall-time cap per response, redirects followed by
hand (each hop re-checked for scheme, userinfo, host and robots, robots.txt's own redirects
included), and conditional GETs (ETag / Last-Modified) so unchanged pages cost a 304.

All requests/urllib3 exceptions are translated here into ``crawlers.errors`` types.
"""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Callable, Collection, Mapping
from urllib.parse import urljoin

import requests
from urllib3.exceptions import NameResolutionError, ReadTimeoutError

from indexer.retry import backoff_delay as jittered_delay

from .deadline import mount_deadlines, response_deadline
from .encoding import Decoded, decode_body
from .errors import (
    ConnectionFailed,
    FetchError,
    FetchTimeout,
    HostNotFound,
    HTTPStatusError,
    ResponseTooLarge,
    RobotsDisallowed,
    TooManyRedirects,
    URLRejected,
)
from .hosts import Target, check_target
from .middlewares.robots import RobotsCache

log = logging.getLogger(__name__)

DEFAULT_USER_AGENT = "newsdedup-crawler/0.1 (+https://github.com/newsdedup/newsdedup)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ROBOTS_MAX_BYTES = 512 * 1024

Counter = Callable[[str], None]


@dataclass(frozen=True)
class FetchPolicy:
    """How politely and how persistently to fetch. Every limit is configurable so tests can use
    tiny values and operators can loosen them per source."""

    user_agent: str = DEFAULT_USER_AGENT
    timeout: float = 15.0  # seconds for connect and for each read
    max_total_time: float = 120.0  # wall seconds for one response, however it is framed (slow-drip guard)
    max_retries: int = 3
    backoff_base: float = 2.0  # seconds; doubles per attempt, jittered down to half
    backoff_max: float = 60.0
    max_retry_after: float = 600.0  # a longer Retry-After means "not today": give up on the URL
    delay: float = 1.0  # minimum seconds between two requests to the same host
    max_crawl_delay: float = 30.0  # cap on a robots.txt Crawl-delay
    max_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5
    obey_robots: bool = True


@dataclass
class FetchResult:
    url: str  # as requested
    final_url: str  # after redirects
    status: int
    headers: Mapping[str, str]
    body: bytes = b""
    retries: int = 0
    not_modified: bool = False

    @property
    def etag(self) -> str | None:
        return self.headers.get("ETag")

    @property
    def last_modified(self) -> str | None:
        return self.headers.get("Last-Modified")

    def decode(self, override: str | None = None) -> Decoded:
        return decode_body(self.body, self.headers.get("Content-Type"), override)


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent
    or unreadable. Dates in the past mean "now" (0)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return max(0.0, (when - now).total_seconds())


def backoff_delay(attempt: int, base: float, cap: float, retry_after: float | None = None,
                  rng: random.Random | None = None) -> float:
    """Seconds before retry number ``attempt + 1``: the server's Retry-After when it gave one
    (it knows its load better than we do), else ``base * 2**attempt`` capped at ``cap`` and
    jittered between half and all of it (``indexer.retry``)."""
    if retry_after is not None:
        return retry_after
    return jittered_delay(attempt, base, cap, rng)


def pacing_key(target: Target) -> str:
    """The pacing and back-off key: host:port."""
    return f"{target.host}:{target.port}"


class HostRateLimiter:
    """Keeps at least ``interval(host)`` seconds between request starts to one host. Shared by
    the sources of a run, which crawl concurrently: a slot is reserved under a lock, the wait
    happens outside it."""

    def __init__(self, sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        self._sleep = sleep
        self._clock = clock
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def wait(self, host: str, interval: float) -> None:
        """Block until ``host`` may be hit again."""
        with self._lock:
            now = self._clock()
            ready = max(now, self._next.get(host, now))
            self._next[host] = ready + interval
        if ready > now:
            self._sleep(ready - now)


class BackoffBudget:
    """How many seconds retries may sleep in total, per host and per run. A site that keeps
    answering 503 with ``Retry-After: 600`` costs at most ``per_host`` seconds, and all the sites
    of a run together at most ``per_run``; past that its URLs fail at the first error."""

    def __init__(self, per_host: float = 600.0, per_run: float = 1800.0):
        self.per_host = per_host
        self.per_run = per_run
        self._spent: dict[str, float] = {}
        self._spent_run = 0.0
        self._lock = threading.Lock()

    def take(self, host: str, seconds: float) -> bool:
        """Book ``seconds`` of back-off for ``host``; False (nothing booked) when that would
        go over either cap."""
        with self._lock:
            spent = self._spent.get(host, 0.0)
            if spent + seconds > self.per_host or self._spent_run + seconds > self.per_run:
                return False
            self._spent[host] = spent + seconds
            self._spent_run += seconds
            return True


def _no_such_name(exc: requests.ConnectionError) -> bool:
    """Whether DNS answered that the host's name does not exist (EAI_NONAME); a resolver that
    failed this time (EAI_AGAIN) is a connection failure, retried."""
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    if not isinstance(reason, NameResolutionError):
        return False
    cause = reason.__cause__ or reason.__context__
    return isinstance(cause, socket.gaierror) and cause.errno == socket.EAI_NONAME


def _fetch_error(url: str, exc: requests.RequestException, too_slow: str | None, status: int | None = None) -> FetchError:
    """What a failed request or body read means (``too_slow``: the wall-time cap fired, which
    breaks the connection under the read)."""
    if too_slow:
        return FetchTimeout(url, too_slow, status=status)
    if not isinstance(exc, requests.ConnectionError):
        return FetchError(url, str(exc), status=status)
    if any(isinstance(a, ReadTimeoutError) for a in exc.args):
        return FetchTimeout(url, "read timed out", status=status)
    if _no_such_name(exc):
        return HostNotFound(url, str(exc), status=status)
    return ConnectionFailed(url, str(exc), status=status)


def _location(value: str) -> str:
    """A Location header as the server meant it: http.client reads header bytes as Latin-1, and a
    server that writes a raw UTF-8 path (/新闻/1.html) means UTF-8 (as requests reads it too)."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


class Fetcher:
    """Fetch pages under a ``FetchPolicy``. ``sleep`` and ``clock`` are injectable for tests.
    ``session`` may be shared between fetchers (connection pooling); the User-Agent is sent per
    request so sources with different User-Agents can share it."""

    def __init__(
        self,
        policy: FetchPolicy = FetchPolicy(),
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        limiter: HostRateLimiter | None = None,
        backoff: BackoffBudget | None = None,
        rng: random.Random | None = None,
    ):
        self.policy = policy
        self._rng = rng  # the jitter of retry waits (seeded in tests)
        self.session = session or requests.Session()
        mount_deadlines(self.session)
        self._sleep = sleep
        # Shared between the fetchers of several sources so two sources on one host still pace,
        # and one hostile host cannot spend the whole run's patience.
        self.limiter = limiter or HostRateLimiter(sleep, clock)
        self.backoff = backoff or BackoffBudget()
        self.robots = RobotsCache(policy.user_agent, clock=clock) if policy.obey_robots else None

    # -- checks ---------------------------------------------------------------------------

    def check_url(self, url: str, allowed_hosts: Collection[str] | None, count: Counter) -> Target:
        """Raise a URLRejected unless ``url`` may be requested: http(s), no userinfo, one
        unambiguous host that ``allowed_hosts`` admits (see ``crawlers.hosts``), allowed by
        robots.txt. Its robots.txt is fetched under the same checks."""
        target = check_target(url, allowed_hosts)
        if self.robots is not None and not self.robots.allowed(url, target.origin, self._robots_fetcher(allowed_hosts, count)):
            raise RobotsDisallowed(url, "disallowed by robots.txt")
        return target

    def _robots_fetcher(self, allowed_hosts: Collection[str] | None, count: Counter):
        return lambda robots_url: self._fetch_robots(robots_url, allowed_hosts, count)

    def _interval(self, target: Target, allowed_hosts: Collection[str] | None, count: Counter) -> float:
        delay = self.policy.delay
        if self.robots is not None:
            crawl_delay = self.robots.crawl_delay(target.origin, self._robots_fetcher(allowed_hosts, count))
            if crawl_delay is not None:
                delay = max(delay, min(crawl_delay, self.policy.max_crawl_delay))
        return delay

    # -- fetching -------------------------------------------------------------------------

    def fetch(
        self,
        url: str,
        *,
        allowed_hosts: Collection[str] | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        count: Counter | None = None,
    ) -> FetchResult:
        """GET ``url`` following at most ``max_redirects`` redirects, each hop checked like the
        first. A 304 answer to a conditional request comes back with ``not_modified=True``."""
        count = count or (lambda key: None)
        current = url
        hops: list[str] = []
        visited = {url}
        while True:
            target = self.check_url(current, allowed_hosts, count)
            headers = {"User-Agent": self.policy.user_agent}
            if not hops:
                if etag:
                    headers["If-None-Match"] = etag
                if last_modified:
                    headers["If-Modified-Since"] = last_modified
            result = self._get_with_retries(current, target, self._interval(target, allowed_hosts, count), headers, count)
            if result.status in REDIRECT_STATUSES:
                location = result.headers.get("Location")
                if not location:
                    raise HTTPStatusError(current, "redirect without Location", status=result.status)
                next_url = urljoin(current, _location(location))
                if next_url in visited:
                    raise TooManyRedirects(url, f"redirect loop via {next_url}", status=result.status)
                if len(hops) >= self.policy.max_redirects:
                    raise TooManyRedirects(url, f"more than {self.policy.max_redirects} redirects", status=result.status)
                hops.append(current)
                visited.add(next_url)
                current = next_url  # checked at the top of the loop like the first URL
                continue
            result.url = url
            result.not_modified = result.status == 304
            return result

    def _get_with_retries(self, url: str, target: Target, interval: float, headers: dict[str, str], count: Counter) -> FetchResult:
        policy = self.policy
        host = pacing_key(target)
        for attempt in range(policy.max_retries + 1):
            self.limiter.wait(host, interval)
            retry_after: float | None = None
            try:
                result = self._get_once(url, headers)
            except (FetchTimeout, ConnectionFailed) as exc:
                error: FetchError = exc
            else:
                result.retries = attempt
                if result.status not in RETRY_STATUSES:
                    if result.status >= 400:
                        raise HTTPStatusError(url, f"HTTP {result.status}", status=result.status)
                    return result
                retry_after = parse_retry_after(result.headers.get("Retry-After"))
                error = HTTPStatusError(url, f"HTTP {result.status}", status=result.status)
                if retry_after is not None and retry_after > policy.max_retry_after:
                    log.warning("%s asks to retry after %.0fs, more than %.0fs: giving up", url, retry_after, policy.max_retry_after)
                    raise error
            if attempt == policy.max_retries:
                raise error
            delay = backoff_delay(attempt, policy.backoff_base, policy.backoff_max, retry_after, self._rng)
            if not self.backoff.take(host, delay):
                log.warning("%s: not retrying after %s, the back-off budget of %s is spent", url, error.cause, host)
                count("retry/budget_spent")
                raise error
            log.info("retrying %s in %.1fs after %s (attempt %d of %d)", url, delay, error.cause, attempt + 1, policy.max_retries)
            count("retry/count")
            count(f"retry/reason/{error.cause}")
            if delay > 0:
                self._sleep(delay)
        raise AssertionError("unreachable")

    def _get_once(self, url: str, headers: Mapping[str, str], *, cut: int | None = None) -> FetchResult:
        """One GET, body read with the size cap (``cut``: the body's first ``cut`` bytes, instead
        of ResponseTooLarge past ``max_bytes``), the whole response under the wall-time cap
        (``crawlers.deadline``: headers and body, whatever the framing)."""
        limit = self.policy.max_bytes if cut is None else cut
        total = self.policy.max_total_time
        too_slow = f"response not complete within {total}s"
        with response_deadline(total) as deadline:
            try:
                response = self.session.get(url, headers=headers, timeout=self.policy.timeout, allow_redirects=False, stream=True)
            except requests.Timeout as exc:
                raise FetchTimeout(url, f"no answer within {self.policy.timeout}s") from exc
            except requests.RequestException as exc:
                raise _fetch_error(url, exc, too_slow if deadline.fired else None) from exc
            with response:
                status = response.status_code
                resp_headers = dict(response.headers)
                if status in REDIRECT_STATUSES or status == 304 or status >= 400:  # no body to read (every retried status is >= 400)
                    return FetchResult(url, url, status, resp_headers)
                declared = response.headers.get("Content-Length", "")
                if declared.isdigit() and int(declared) > limit and cut is None:
                    raise ResponseTooLarge(url, f"Content-Length {declared} > {limit} bytes", status=status)
                chunks: list[bytes] = []
                size = 0
                try:
                    for chunk in response.iter_content(chunk_size=65536):
                        size += len(chunk)
                        if size > limit:
                            if cut is None:
                                raise ResponseTooLarge(url, f"body over {limit} bytes", status=status)
                            chunks.append(chunk[: len(chunk) - (size - limit)])
                            break
                        chunks.append(chunk)
                except requests.RequestException as exc:
                    raise _fetch_error(url, exc, too_slow if deadline.fired else None, status) from exc
            # A close-delimited body cut at the deadline just looks finished: ask the watch.
            if deadline.fired:
                raise FetchTimeout(url, too_slow, status=status)
        return FetchResult(url, url, status, resp_headers, b"".join(chunks))

    def _fetch_robots(self, robots_url: str, allowed_hosts: Collection[str] | None, count: Counter) -> tuple[int, str] | None:
        """robots.txt itself: paced, size- and time-capped, no robots check, a short redirect
        chain allowed (http->https is common), each hop checked like a page's (scheme,
        userinfo, allow-list). Unreachable, or redirected where the crawl may not go -> None,
        which the robots cache reads as "rules unknown, disallow everything"."""
        current = robots_url
        try:
            for _ in range(self.policy.max_redirects + 1):
                target = check_target(current, allowed_hosts)
                self.limiter.wait(pacing_key(target), self.policy.delay)
                result = self._get_once(current, {"User-Agent": self.policy.user_agent}, cut=ROBOTS_MAX_BYTES + 1)
                if result.status in REDIRECT_STATUSES and result.headers.get("Location"):
                    current = urljoin(current, _location(result.headers["Location"]))
                    continue
                if result.status >= 300:
                    return result.status, ""
                # utf-8-sig: a byte-order mark (files saved by Windows tools) would hide the first
                # line's User-agent. Past the cap, the rules in the first ROBOTS_MAX_BYTES are
                # kept, less a line cut in two (RFC 9309, 2.5: parse at least 500 KiB).
                if len(result.body) <= ROBOTS_MAX_BYTES:
                    return result.status, result.body.decode("utf-8-sig", "replace")
                text = result.body[:ROBOTS_MAX_BYTES].decode("utf-8-sig", "replace")  # cut: one byte more came
                return result.status, text[: text.rfind("\n") + 1]
        except URLRejected as exc:
            count(f"fetch/rejected/{exc.cause}")
            log.warning("robots.txt %s redirects where the crawl may not go, treating its rules as unknown: %s", robots_url, exc)
            return None
        except FetchError as exc:
            log.warning("robots.txt %s unreachable: %s", robots_url, exc)
            return None
        return None
