"""Canonical URLs: one spelling per article so re-crawls and reposts of the same URL match."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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


def canonical_url(url: str) -> str:
    """Lower-case scheme and host, drop default ports, fragments and tracking parameters,
    sort the remaining query. Returns the input stripped if it is not an absolute http(s) URL."""
    url = (url or "").strip()
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return url
    host = parts.hostname.lower().rstrip(".")
    if parts.port and parts.port != DEFAULT_PORTS[scheme]:
        host = f"{host}:{parts.port}"
    path = parts.path or "/"
    query = sorted(
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in TRACKING_PARAMS and not k.lower().startswith("utm_")
    )
    return urlunsplit((scheme, host, path, urlencode(query), ""))
