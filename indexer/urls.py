"""Canonical URLs: one spelling per article so re-crawls and reposts of the same URL match.

Encoding, query order and host spelling follow ``w3lib.url.canonicalize_url`` (the rules Scrapy
uses): ``/新闻`` and ``/%E6%96%B0%E9%97%BB`` are one URL, percent-escapes get one case, query
parameters are sorted, non-ASCII hosts become punycode. On top of that we drop what never selects
content: the fragment, default ports, userinfo and tracking parameters.
"""

from __future__ import annotations

from urllib.parse import unquote_plus, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

# Query parameters that only track where a click came from; they never select content.
TRACKING_PARAMS = frozenset(
    {
        "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "utm_id",
        "spm", "from", "fromsource", "share_token", "share_from", "sharefrom", "scene",
        "gclid", "fbclid", "yclid", "mc_cid", "mc_eid", "_hsenc", "_hsmi", "ref", "ref_src",
        "isappinstalled", "clicktime", "enterid", "wfr", "tt_from", "timestamp", "_t",
    }
)
DEFAULT_PORTS = {"http": 80, "https": 443}


def is_tracking_param(name: str) -> bool:
    name = name.lower()
    return name in TRACKING_PARAMS or name.startswith("utm_")


def _without_tracking(query: str) -> str:
    """The raw query minus tracking parameters, each kept pair left as written (its encoding is
    w3lib's to normalise)."""
    return "&".join(p for p in query.split("&") if p and not is_tracking_param(unquote_plus(p.split("=", 1)[0])))


def canonical_url(url: str) -> str:
    """Lower-case scheme and host, drop default ports, userinfo, fragments and tracking
    parameters, sort the remaining query, one percent-encoding (UTF-8) for paths and queries.
    Returns the input stripped if it is not an absolute http(s) URL."""
    url = (url or "").strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # an unreadable port: not a URL we can spell canonically
        return url
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return url
    host = parts.hostname.rstrip(".")
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    if port is not None and port != DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    trimmed = urlunsplit((scheme, host, parts.path or "/", _without_tracking(parts.query), ""))
    try:
        return canonicalize_url(trimmed, keep_blank_values=True, keep_fragments=False)
    except (UnicodeError, ValueError):  # a lone surrogate or an unencodable host: keep it trimmed
        return trimmed
