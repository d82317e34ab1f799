"""Which URLs a crawl may request: the scheme, the userinfo and the host allow-list.

A URL comes from a site we do not control (a link, a redirect, a sitemap ``<loc>``), so it is
admitted only when

* its scheme is http or https;
* it carries no userinfo (``user:pass@``). A news link has no business sending credentials, and
  ``http://allowed.example@other.example/`` is the classic way to make a naive check read the
  wrong host;
* urllib's parser and urllib3's parser (the one requests connects with) read the same host and
  port, and the host is a plain DNS name or IP literal. So no parser differential such as
  ``http://a.example\\@b.example/`` can pass the check for one host and connect to another;
* its host and port match an allow-list entry.

Allow-list entries are ``host``, ``host:port``, ``*.example.com`` (the domain and its subdomains)
or ``*.example.com:port``. **An entry without a port admits only the default port of the URL's
scheme** (80 for http, 443 for https): the usual ``http -> https`` redirect on one site works, but a
redirect to another service on another port of the same machine (an admin console on :8080, a
cache on :6379) does not. Write ``host:port`` to crawl a site served on another port.

Hosts are compared by name, lower case, without a trailing dot, IDNA-encoded; they are not
resolved. A listed name that resolves to an internal address is reachable: the allow-list is
about which names a site can send the crawler to, not about DNS.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Collection
from urllib.parse import urlsplit

from urllib3.util import parse_url

from .errors import MalformedURL, OffsiteURL, UnsupportedScheme, UserinfoInURL

DEFAULT_PORTS = {"http": 80, "https": 443}
_DNS_NAME = re.compile(r"^[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?$")


@dataclass(frozen=True)
class Target:
    """Where a URL connects to: scheme, normalised host and effective port."""

    scheme: str
    host: str
    port: int

    @property
    def origin(self) -> str:
        """``scheme://host[:port]`` with the default port left out (robots.txt is per origin)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port == DEFAULT_PORTS[self.scheme] else f":{self.port}"
        return f"{self.scheme}://{host}{port}"


def normalise_host(host: str) -> str | None:
    """Lower case, no trailing dot, IDNA (punycode) for non-ASCII names; None when the result
    is neither a DNS name nor an IP literal (``%``, spaces, backslashes, empty labels)."""
    host = host.strip().lower().rstrip(".")
    if not host:
        return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    if not _DNS_NAME.match(host) or ".." in host:
        return None
    return host


def parse_target(url: str) -> Target:
    """The (scheme, host, port) ``url`` connects to. Raises UnsupportedScheme, UserinfoInURL or
    MalformedURL (a URL error naming the URL) when it must not be requested at all."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a port that is not a number, or out of range
        raise MalformedURL(url, f"unreadable authority: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.netloc:
        raise UnsupportedScheme(url, f"scheme {parts.scheme!r} not allowed")
    if "@" in parts.netloc:
        raise UserinfoInURL(url, "URL carries user:password@, refused")
    if "\\" in url.split("?", 1)[0].split("#", 1)[0]:
        raise MalformedURL(url, "backslash in the URL, parsers disagree on its host")
    host = normalise_host(parts.hostname or "")
    if host is None:
        raise MalformedURL(url, f"not a host name: {parts.hostname!r}")
    try:
        theirs = parse_url(url)
    except ValueError as exc:
        raise MalformedURL(url, f"unreadable URL: {exc}") from None
    if normalise_host((theirs.host or "").strip("[]")) != host or (theirs.port or None) != (port or None):
        raise MalformedURL(url, f"host read two ways ({parts.hostname!r} / {theirs.host!r})")
    return Target(scheme, host, port if port is not None else DEFAULT_PORTS[scheme])


@dataclass(frozen=True)
class HostEntry:
    """One allow-list entry. ``port`` None: the default port of the URL's scheme only."""

    host: str
    port: int | None
    subdomains: bool

    def admits(self, target: Target) -> bool:
        port = DEFAULT_PORTS[target.scheme] if self.port is None else self.port
        if target.port != port:
            return False
        return target.host == self.host or (self.subdomains and target.host.endswith("." + self.host))


def parse_host_entry(entry: str) -> HostEntry:
    """``host``, ``host:port``, ``[v6]:port``, ``*.domain[:port]``; ValueError when unreadable."""
    text = entry.strip().lower()
    subdomains = text.startswith("*.")
    if subdomains:
        text = text[2:]
    try:
        parts = urlsplit("//" + text)
        port = parts.port
    except ValueError:
        raise ValueError(f"not a host or host:port: {entry!r}") from None
    host = normalise_host(parts.hostname or "")
    if host is None or "@" in parts.netloc or parts.path:
        raise ValueError(f"not a host or host:port: {entry!r}")
    return HostEntry(host, port, subdomains)


def host_allowed(target: Target, allowed: Collection[str]) -> bool:
    """True when an entry of ``allowed`` admits ``target`` (see the module notes on ports)."""
    return any(parse_host_entry(entry).admits(target) for entry in allowed)


def host_entry_for(url: str) -> str:
    """The allow-list entry that admits ``url``'s site: ``host`` for a default port (so http and
    https of that host both pass), else ``host:port``: the origin without its scheme."""
    return parse_target(url).origin.partition("://")[2]


def check_target(url: str, allowed_hosts: Collection[str] | None) -> Target:
    """``parse_target`` plus the allow-list (None: any host). Raises a URLRejected subclass."""
    target = parse_target(url)
    if allowed_hosts is not None and not host_allowed(target, allowed_hosts):
        raise OffsiteURL(url, f"{target.host}:{target.port} not admitted by {sorted(allowed_hosts)}")
    return target
