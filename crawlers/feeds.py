"""RSS 2.0 / RSS 1.0 (RDF) / Atom feeds and (news) sitemaps.

Parsed with lxml in recover mode (feeds in the wild are often not well-formed) and with entity
resolution and network access off, so a hostile feed cannot read local files (XXE) or explode
(billion laughs). Namespaces are matched by local name because sites mix RSS versions freely.
"""

from __future__ import annotations

import logging
import zlib
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urljoin

from lxml import etree

from indexer.dates import find_time

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FeedEntry:
    url: str
    title: str = ""
    published: datetime | None = None
    content: str = ""  # text or HTML as the feed gives it (description / content:encoded / summary)
    # a sitemap's <lastmod>: when the page last changed (often when the sitemap was made), so only
    # a fallback for a page that gives no publish time of its own
    modified: datetime | None = None


@dataclass(frozen=True)
class Sitemap:
    entries: tuple[FeedEntry, ...]  # article URLs (<urlset>)
    children: tuple[str, ...]  # nested sitemaps (<sitemapindex>)


def gunzipped(body: bytes, limit: int) -> bytes | None:
    """A gzip file's content (a ``.xml.gz`` sitemap served as a file, without Content-Encoding),
    cut at ``limit`` bytes; None when ``body`` is no gzip file."""
    if body[:2] != b"\x1f\x8b":
        return None
    try:
        return zlib.decompressobj(wbits=31).decompress(body, limit)
    except zlib.error:
        return None


def _parse_xml(body: bytes | str) -> etree._Element | None:
    """Text is parsed as given: the fetcher decoded it as it decodes pages (the HTTP charset, the
    source's override, GB2312 and Big5 read as their supersets), which lxml would not do from the
    declaration alone (a GBK-only character under encoding="gb2312" ends the document there)."""
    encoding = None
    if isinstance(body, str):
        body, encoding = body.lstrip("\ufeff").encode("utf-8"), "utf-8"
    parser = etree.XMLParser(recover=True, resolve_entities=False, no_network=True, huge_tree=False, encoding=encoding)
    try:
        return etree.fromstring(body.strip(), parser)
    except etree.XMLSyntaxError:
        return None


def _local(tag: object) -> str:
    return etree.QName(tag).localname.lower() if isinstance(tag, str) else ""


def _children(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el if _local(c.tag) == name]


def _text(el: etree._Element, *names: str) -> str:
    for name in names:
        for child in _children(el, name):
            text = "".join(child.itertext()).strip()
            if text:
                return text
    return ""


def parse_feed(body: bytes | str, base_url: str = "") -> list[FeedEntry]:
    """Entries of an RSS or Atom feed, in document order; [] when the body is not a feed."""
    root = _parse_xml(body)
    if root is None:
        return []
    kind = _local(root.tag)
    if kind == "rss":
        channels = _children(root, "channel")
        items = [i for ch in channels for i in _children(ch, "item")]
        return [e for e in (_rss_item(i, base_url) for i in items) if e]
    if kind == "rdf":
        return [e for e in (_rss_item(i, base_url) for i in _children(root, "item")) if e]
    if kind == "feed":
        return [e for e in (_atom_entry(i, base_url) for i in _children(root, "entry")) if e]
    log.debug("not a feed: root element %r", kind)
    return []


def _rss_item(item: etree._Element, base_url: str) -> FeedEntry | None:
    link = _text(item, "link")
    if not link:
        guid = _children(item, "guid")
        if guid and guid[0].get("isPermaLink", "true") != "false":
            link = (guid[0].text or "").strip()
    if not link:
        return None
    return FeedEntry(
        url=urljoin(base_url, link),
        title=_text(item, "title"),
        published=find_time(_text(item, "pubdate", "date", "published", "updated")),
        content=_text(item, "encoded", "description"),
    )


def _atom_entry(entry: etree._Element, base_url: str) -> FeedEntry | None:
    href = ""
    for link in _children(entry, "link"):
        if link.get("rel", "alternate") == "alternate" and link.get("href"):
            href = link.get("href")
            break
    if not href:
        return None
    return FeedEntry(
        url=urljoin(base_url, href),
        title=_text(entry, "title"),
        published=find_time(_text(entry, "published", "updated")),
        content=_text(entry, "content", "summary"),
    )


def parse_sitemap(body: bytes | str, base_url: str = "") -> Sitemap:
    """``<urlset>`` entries (with Google News ``news:title``/``news:publication_date`` when present)
    or ``<sitemapindex>`` children."""
    root = _parse_xml(body)
    if root is None:
        return Sitemap((), ())
    kind = _local(root.tag)
    if kind == "sitemapindex":
        children = tuple(urljoin(base_url, _text(sm, "loc")) for sm in _children(root, "sitemap") if _text(sm, "loc"))
        return Sitemap((), children)
    if kind != "urlset":
        return Sitemap((), ())
    entries = []
    for url in _children(root, "url"):
        loc = _text(url, "loc")
        if not loc:
            continue
        news = _children(url, "news")
        title = _text(news[0], "title") if news else ""
        published = find_time(_text(news[0], "publication_date")) if news else None
        entries.append(FeedEntry(url=urljoin(base_url, loc), title=title, published=published,
                                 modified=find_time(_text(url, "lastmod"))))
    return Sitemap(tuple(entries), ())
