"""Links, pagination and article fields out of HTML.

With selectors from the sources file we take exactly what they point at. Without them we take the
page's main content as the indexer reads a saved page (indexer/html.py: trafilatura), else, when it
finds none, the page's whole visible text. Malformed HTML is fine: lxml's HTML parser repairs it the
way browsers do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup

from indexer.html import element_text, main_text, parse_html

_MARKUP = re.compile(r"<[A-Za-z/!?]")  # the start of a tag, end tag, comment or processing instruction
_SPACES = re.compile(r"[ \t\r\f\v\u3000\xa0]+")
_TIME_META = (
    ("property", "article:published_time"), ("name", "publishdate"), ("name", "PubDate"), ("name", "pubdate"),
    ("itemprop", "datePublished"), ("name", "publish_time"), ("name", "date"), ("property", "og:release_date"),
)
_TIME_HINT = re.compile(r"(?:^|[-_\s])(?:pub|publish|time|date|info|source)", re.I)


@dataclass(frozen=True)
class ExtractedArticle:
    title: str
    content: str  # plain text, one paragraph per line
    time_text: str  # raw publish-time text, parsed later with indexer.dates
    method: str  # "selectors" or "generic", for the stats


def title_text(title: str) -> str:
    """A title as the plain text it is meant to be. A headline never needs tags, but feeds and
    og:title often carry escaped HTML (``&lt;b&gt;``), and a hostile one ``<img onerror=...>``
    or ``<script>``: when the title holds something that reads as a tag or comment, it is parsed
    as HTML and only its text kept (script and style contents dropped, entities decoded).
    ``营收<5亿元`` or ``《三体》`` hold no tag and stay as they are. The result is text, not
    safe HTML: every view must still escape it."""
    if not _MARKUP.search(title):
        return title
    return element_text(parse_html(title)).replace("\n", " ")


def document_base(soup: BeautifulSoup, page_url: str) -> str:
    """What the page's relative links resolve against: its first ``<base href>``, itself resolved
    against the page's URL (HTML's rule), else the page's URL."""
    base = soup.find("base", href=True)
    href = (base.get("href") or "").strip() if base is not None else ""
    resolved = urljoin(page_url, href) if href else page_url
    return resolved if urlsplit(resolved).scheme in ("http", "https") else page_url


def extract_links(soup: BeautifulSoup, base_url: str, selector: str = "", pattern: str = "") -> list[str]:
    """Absolute http(s) links matched by ``selector`` (default: every ``a[href]``) whose URL
    matches ``pattern`` (a regex searched in the absolute URL), deduplicated in page order."""
    base_url = document_base(soup, base_url)
    anchors = soup.select(selector or "a[href]")
    regex = re.compile(pattern) if pattern else None
    out: dict[str, None] = {}
    for a in anchors:
        if a.name != "a":
            a = a.find("a", href=True) or a
        href = (a.get("href") or "").strip()
        if not href or href.startswith(("javascript:", "mailto:", "tel:", "#")):
            continue
        url = urljoin(base_url, href)
        if urlsplit(url).scheme not in ("http", "https"):
            continue
        if regex and not regex.search(url):
            continue
        out.setdefault(url, None)
    return list(out)


def extract_next_page(soup: BeautifulSoup, base_url: str, selector: str) -> str | None:
    el = soup.select_one(selector) if selector else None
    if el is None:
        return None
    if el.name != "a":
        el = el.find("a", href=True) or el
    href = (el.get("href") or "").strip()
    return urljoin(document_base(soup, base_url), href) if href and not href.startswith(("javascript:", "#")) else None


def _select_text(soup: BeautifulSoup, selector: str) -> str:
    el = soup.select_one(selector) if selector else None
    return element_text(el) if el is not None else ""


def _meta(soup: BeautifulSoup, attr: str, value: str) -> str:
    el = soup.find("meta", attrs={attr: value})
    return (el.get("content") or "").strip() if el else ""


def extract_title(soup: BeautifulSoup, selector: str = "") -> str:
    """Selector, else og:title, else the first <h1>, else <title>."""
    title = _select_text(soup, selector).replace("\n", " ")
    if not title:
        title = _meta(soup, "property", "og:title")
    if not title:
        h1 = soup.find("h1")
        title = element_text(h1).replace("\n", " ") if h1 else ""
    if not title and soup.title and soup.title.string:
        title = soup.title.string
    return _SPACES.sub(" ", title).strip()


def extract_time_text(soup: BeautifulSoup, selector: str = "") -> str:
    """Publish time as printed: selector (its ``datetime``/``content`` attribute first), meta tags,
    ``<time>``, then small elements whose class/id suggests a date line."""
    el = soup.select_one(selector) if selector else None
    if el is not None:
        return (el.get("datetime") or el.get("content") or element_text(el)).strip()
    for attr, value in _TIME_META:
        found = _meta(soup, attr, value)
        if found:
            return found
    t = soup.find("time")
    if t is not None:
        return (t.get("datetime") or t.get_text()).strip()
    for el in soup.find_all(["span", "div", "p", "em"], limit=2000):
        ident = " ".join(el.get("class") or []) + " " + (el.get("id") or "")
        if _TIME_HINT.search(ident):
            text = el.get_text(" ", strip=True)
            if text and len(text) < 120 and re.search(r"\d", text):
                return text
    return ""


def extract_article(html: str, url: str, *, title_selector: str = "", body_selector: str = "", time_selector: str = "", remove_selectors: tuple[str, ...] = ()) -> ExtractedArticle:
    """Title, body text and raw publish-time text of one detail page."""
    soup = parse_html(html)
    title = extract_title(soup, title_selector)
    el = soup.select_one(body_selector) if body_selector else None
    content = element_text(el, remove_selectors) if el is not None else ""
    method = "selectors" if el is not None else "generic"
    if not content:
        content = main_text(html, url) or element_text(soup.body or soup)
        # Generic extractors often repeat the headline as the first line.
        first, _, rest = content.partition("\n")
        if title and first.strip() == title:
            content = rest
    return ExtractedArticle(title=title, content=content.strip(), time_text=extract_time_text(soup, time_selector), method=method)
