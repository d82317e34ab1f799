"""Exceptions raised by the crawlers.

    CrawlError
    ├── FetchError(url, status)        a page could not be fetched; ``cause`` names why for the stats
    │   ├── FetchTimeout               no answer within the timeout (after retries)
    │   ├── ConnectionFailed           connection refused / reset / DNS failure (after retries)
    │   ├── HostNotFound               DNS says the host's name does not exist (not retried)
    │   ├── HTTPStatusError            a non-2xx/304 answer (after retries for 5xx/429)
    │   ├── TooManyRedirects           redirect chain longer than allowed, or a loop
    │   ├── ResponseTooLarge           body larger than the configured maximum
    │   └── URLRejected                we refused to request the URL at all
    │       ├── RobotsDisallowed       robots.txt forbids it for our User-Agent
    │       ├── OffsiteURL             host outside the source's allowed hosts
    │       ├── UnsupportedScheme      not http/https
    │       ├── UserinfoInURL          the URL carries user:password@ (never sent, never followed)
    │       └── MalformedURL           an authority the URL parsers could read two ways
    ├── SourceConfigError (also ValueError)  the sources file is invalid; names source and key
    ├── SinkError                      an output (indexer, HTTP push, file) refused the articles
    └── DropArticle(reason)            a pipeline step rejects one article; counted by ``reason``

requests/urllib3 exceptions are translated at the edge (``raise FetchTimeout(...) from exc``) so
callers only ever catch these types.
"""

from __future__ import annotations


class CrawlError(Exception):
    """Root of every error the crawlers raise on purpose."""


class FetchError(CrawlError):
    """A URL could not be fetched. ``cause`` is a short stable word used as a stats key."""

    cause = "error"

    def __init__(self, url: str, message: str = "", status: int | None = None):
        self.url = url
        self.status = status
        super().__init__(f"{url}: {message}" if message else url)


class FetchTimeout(FetchError):
    cause = "timeout"


class ConnectionFailed(FetchError):
    cause = "connection"


class HostNotFound(FetchError):
    """The host's name does not exist (DNS: no such name): not retried, unlike a connection that
    failed or a resolver that could not answer this time."""

    cause = "no_such_host"


class HTTPStatusError(FetchError):
    """``cause`` is ``http_<status>`` so the stats tell 404s from 503s."""

    @property
    def cause(self) -> str:  # type: ignore[override]
        return f"http_{self.status}"


class TooManyRedirects(FetchError):
    cause = "redirects"


class ResponseTooLarge(FetchError):
    cause = "too_large"


class URLRejected(FetchError):
    cause = "rejected"


class RobotsDisallowed(URLRejected):
    cause = "robots"


class OffsiteURL(URLRejected):
    cause = "offsite"


class UnsupportedScheme(URLRejected):
    cause = "scheme"


class UserinfoInURL(URLRejected):
    cause = "userinfo"


class MalformedURL(URLRejected):
    cause = "malformed"


class SourceConfigError(CrawlError, ValueError):
    """The sources file is invalid. ``source`` and ``key`` locate the problem."""

    def __init__(self, message: str, source: str | None = None, key: str | None = None):
        self.source = source
        self.key = key
        where = [f"{what} {value!r}" for what, value in (("source", source), ("key", key)) if value is not None]
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class SinkError(CrawlError):
    """An output refused or failed to take a batch of articles."""


class DropArticle(CrawlError):
    """Raised by a pipeline step to discard one article; ``reason`` becomes a stats key."""

    def __init__(self, reason: str, detail: str = ""):
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}" if detail else reason)
