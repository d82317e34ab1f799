"""The sources file: which sites to crawl and how, in TOML.

    [defaults]                      # optional, applies to every source (each key overridable)
    user_agent = "examplebot/1.0 (+https://example.org/bot)"
    delay = 1.0                     # seconds between requests to one host
    max_pages = 3                   # list pages followed per source

    [[sources]]
    name = "example-gbk"
    type = "html"                   # html (list + detail pages) | feed (RSS/Atom) | sitemap (news sitemap)
    start_urls = ["https://news.example.cn/list_1.html"]
    next_page_selector = "a.next"   # or page_url_template = "https://.../list_{page}.html"
    link_selector = "ul.news a"
    link_pattern = "/\\d{4}/\\d{4}/\\d+\\.html$"
    title_selector = "h1.title"     # title/body/time selectors are optional: without them the
    body_selector = "div#content"   # generic main-content extractor is used
    time_selector = "span.pubtime"
    crawler = "mypkg.crawlers:OddSiteCrawler"   # optional BaseNewsCrawler subclass for odd sites

Everything is validated when loaded; an error names the source and the key, e.g.
``source 'example-gbk', key 'delay': expected a number, got 'fast'``.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .errors import SourceConfigError, URLRejected
from .fetch import DEFAULT_USER_AGENT, FetchPolicy
from .hosts import host_entry_for, parse_host_entry, parse_target

SOURCE_TYPES = ("html", "feed", "sitemap")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


@dataclass(frozen=True)
class SourceConfig:
    name: str
    start_urls: tuple[str, ...]
    type: str = "html"
    allowed_hosts: tuple[str, ...] = ()  # empty: the hosts of start_urls (see crawlers.hosts for ports)
    encoding: str = ""  # force a charset when a site's declarations are wrong
    crawler: str = ""  # "module:Class" of a BaseNewsCrawler subclass
    # list pages
    link_selector: str = ""
    link_pattern: str = ""
    next_page_selector: str = ""
    page_url_template: str = ""
    first_page: int = 2  # first {page} number of page_url_template (page 1 is usually start_urls)
    max_pages: int = 3
    # detail pages
    title_selector: str = ""
    body_selector: str = ""
    time_selector: str = ""
    remove_selectors: tuple[str, ...] = ()
    # feeds / sitemaps
    follow_links: bool = True  # fetch the article page; False: use the feed's own text
    # limits and politeness
    max_articles: int = 500
    min_content_chars: int = 30
    user_agent: str = DEFAULT_USER_AGENT
    delay: float = 1.0
    timeout: float = 15.0
    max_total_time: float = 120.0  # wall seconds for one response, however slowly it arrives
    max_retries: int = 3
    backoff_base: float = 2.0
    max_retry_after: float = 600.0
    max_bytes: int = 10 * 1024 * 1024
    max_redirects: int = 5
    obey_robots: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)  # free-form settings for subclasses

    @property
    def hosts(self) -> tuple[str, ...]:
        return self.allowed_hosts or tuple(dict.fromkeys(host_entry_for(u) for u in self.start_urls))

    def fetch_policy(self) -> FetchPolicy:
        """The politeness keys a source sets (same names); the others keep FetchPolicy's defaults."""
        return FetchPolicy(**{f.name: getattr(self, f.name) for f in dataclasses.fields(FetchPolicy) if f.name in _FIELDS})


@dataclass(frozen=True)
class SourcesFile:
    sources: tuple[SourceConfig, ...]
    path: str = ""

    def select(self, names: list[str] | tuple[str, ...]) -> "SourcesFile":
        known = {s.name for s in self.sources}
        for n in names:
            if n not in known:
                raise SourceConfigError(f"unknown source; the file has {sorted(known)}", source=n)
        return SourcesFile(tuple(s for s in self.sources if s.name in names), self.path)


_FIELDS = {f.name: f for f in dataclasses.fields(SourceConfig)}
_DEFAULTABLE = set(_FIELDS) - {"name", "start_urls", "extra"}
_LIMITS = {
    "max_pages": (1, 10_000), "max_articles": (1, 1_000_000), "min_content_chars": (0, 1_000_000),
    "delay": (0.0, 3600.0), "timeout": (0.01, 3600.0), "max_total_time": (0.1, 86400.0), "max_retries": (0, 20), "backoff_base": (0.0, 3600.0),
    "max_retry_after": (0.0, 86400.0), "max_bytes": (1024, 1 << 31), "max_redirects": (0, 30), "first_page": (0, 1_000_000),
}


# The TOML types each scalar field type accepts, and how an error names them.
_SCALARS = {"str": (str, "a string"), "bool": (bool, "true or false"), "int": (int, "an integer"), "float": ((int, float), "a number")}


def _coerce(source: str | None, key: str, value: Any) -> Any:
    kind = _FIELDS[key].type
    if kind == "tuple[str, ...]":
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SourceConfigError(f"expected a list of strings, got {value!r}", source=source, key=key)
        out: Any = tuple(value)
    else:
        types, what = _SCALARS[kind]
        # bool is an int to Python, but `delay = true` is a mistake, not 1 second
        if not isinstance(value, types) or (isinstance(value, bool) and kind != "bool"):
            raise SourceConfigError(f"expected {what}, got {value!r}", source=source, key=key)
        out = float(value) if kind == "float" else value
    if key in _LIMITS:
        lo, hi = _LIMITS[key]
        if not lo <= out <= hi:
            raise SourceConfigError(f"must be between {lo} and {hi}, got {out!r}", source=source, key=key)
    return out


def _check_source(cfg: SourceConfig) -> None:
    name = cfg.name
    if cfg.type not in SOURCE_TYPES:
        raise SourceConfigError(f"must be one of {list(SOURCE_TYPES)}, got {cfg.type!r}", name, "type")
    if not cfg.start_urls:
        raise SourceConfigError("at least one URL is required", name, "start_urls")
    for url in cfg.start_urls:
        try:
            parse_target(url)
        except URLRejected as exc:
            raise SourceConfigError(f"not a crawlable http(s) URL: {exc}", name, "start_urls") from None
    for entry in cfg.allowed_hosts:
        try:
            parse_host_entry(entry)
        except ValueError as exc:
            raise SourceConfigError(str(exc), name, "allowed_hosts") from None
    if cfg.link_pattern:
        try:
            re.compile(cfg.link_pattern)
        except re.error as exc:
            raise SourceConfigError(f"invalid regular expression: {exc}", name, "link_pattern") from None
    if cfg.page_url_template and "{page}" not in cfg.page_url_template:
        raise SourceConfigError("must contain {page}", name, "page_url_template")
    if cfg.next_page_selector and cfg.page_url_template:
        raise SourceConfigError("give next_page_selector or page_url_template, not both", name, "page_url_template")
    if cfg.crawler and not re.match(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$", cfg.crawler):
        raise SourceConfigError(f"expected 'package.module:ClassName', got {cfg.crawler!r}", name, "crawler")
    if cfg.encoding:
        from .encoding import normalize_codec

        if normalize_codec(cfg.encoding) is None:
            raise SourceConfigError(f"unknown encoding {cfg.encoding!r}", name, "encoding")
    _check_selectors(cfg)


def _check_selectors(cfg: SourceConfig) -> None:
    """A typo in a CSS selector should fail at load time, not silently match nothing for weeks."""
    import soupsieve

    for key in ("link_selector", "next_page_selector", "title_selector", "body_selector", "time_selector", "remove_selectors"):
        value = getattr(cfg, key)
        for selector in value if isinstance(value, tuple) else (value,):
            if not selector:
                continue
            try:
                soupsieve.compile(selector)
            except soupsieve.SelectorSyntaxError as exc:
                raise SourceConfigError(f"invalid CSS selector {selector!r}: {exc.args[0]}", cfg.name, key) from None


def parse_sources(data: Mapping[str, Any], origin: str = "<sources>") -> SourcesFile:
    """Build and validate the model from parsed TOML."""
    unknown_top = set(data) - {"defaults", "sources"}
    if unknown_top:
        raise SourceConfigError(f"unknown top-level table(s) {sorted(unknown_top)} in {origin}; expected [defaults] and [[sources]]", key=sorted(unknown_top)[0])
    defaults_raw = data.get("defaults", {})
    if not isinstance(defaults_raw, Mapping):
        raise SourceConfigError("must be a table", key="defaults")
    defaults: dict[str, Any] = {}
    for key, value in defaults_raw.items():
        if key not in _DEFAULTABLE:
            raise SourceConfigError(f"unknown key in [defaults]; known: {sorted(_DEFAULTABLE)}", key=key)
        defaults[key] = _coerce(None, key, value)
    raw_sources = data.get("sources")
    if not isinstance(raw_sources, list) or not raw_sources:
        raise SourceConfigError(f"{origin} declares no [[sources]]", key="sources")
    out: list[SourceConfig] = []
    seen_names: set[str] = set()
    for index, raw in enumerate(raw_sources):
        if not isinstance(raw, Mapping):
            raise SourceConfigError("must be a table", source=f"#{index + 1}")
        name = raw.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise SourceConfigError(f"needs a name of letters, digits, '-', '_', '.', got {name!r}", source=f"#{index + 1}", key="name")
        if name in seen_names:
            raise SourceConfigError("duplicate source name", source=name, key="name")
        seen_names.add(name)
        values = dict(defaults)
        for key, value in raw.items():
            if key == "extra":
                if not isinstance(value, Mapping):
                    raise SourceConfigError("must be a table", source=name, key=key)
                values[key] = dict(value)
            elif key not in _FIELDS:
                raise SourceConfigError(f"unknown key; known: {sorted(_FIELDS)}", source=name, key=key)
            elif key != "name":  # read above
                values[key] = _coerce(name, key, value)
        if "start_urls" not in values:
            raise SourceConfigError("missing", source=name, key="start_urls")
        cfg = SourceConfig(name=name, **values)
        _check_source(cfg)
        out.append(cfg)
    return SourcesFile(tuple(out), origin)


def load_sources(path: str | os.PathLike) -> SourcesFile:
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise SourceConfigError(f"sources file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SourceConfigError(f"{path} is not valid TOML: {exc}") from None
    return parse_sources(data, str(path))
