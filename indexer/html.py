"""HTML to text, the one way every path reads it: ingest, the daemon and the crawlers.

``element_text`` walks a parsed tree once and keeps the visible text, one block element per line,
skipping ``DROPPED_TAGS``. ``html_to_text`` does that for a fragment or page given as text.

A whole saved page (``is_whole_page``) is more than its story: site navigation, a hot-list sidebar of
other headlines, comments and a footer around it. Read whole, two copies of one story saved from two
sites share less text than two different stories from one site. ``page_text`` therefore reads a whole
page's main content, found by trafilatura (well kept, good on Chinese pages), as the crawlers do for
pages they have no selectors for. Malformed HTML is fine: lxml's parser repairs it as browsers do.
"""

from __future__ import annotations

import functools
import logging
import re
import warnings
from configparser import ConfigParser

import trafilatura
import trafilatura.settings
from bs4 import BeautifulSoup, CData, MarkupResemblesLocatorWarning, NavigableString, PageElement, Tag

log = logging.getLogger(__name__)

# Never visible text (scripts, styles, controls) or page furniture around a story (navigation,
# headers, sidebars, footers).
DROPPED_TAGS = frozenset((
    "script", "style", "noscript", "template", "iframe", "svg", "form", "button", "select", "textarea",
    "nav", "header", "footer", "aside",
))
# Elements that start and end a line of text.
BLOCK_TAGS = frozenset((
    "p", "div", "br", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article",
    "main", "blockquote", "pre", "dd", "dt", "figcaption",
))
# What get_text() counts as text: plain strings and CDATA, not comments, doctypes or the strings
# of <script>/<style>/<template>, which bs4 gives their own NavigableString subclasses.
_TEXT_TYPES = (NavigableString, CData)
_SPACES = re.compile(r"[ \t\r\f\v\u3000\xa0]+")
# A whole page declares itself (doctype, <html>, <head>, <body>) or has site navigation, which no
# story's own markup holds. Looked for near the start, where a page has them.
_PAGE_MARK = re.compile(r"<(?:!doctype\s+html|html|head|body|nav)[\s>]", re.I)
PAGE_MARK_CHARS = 20_000
# Markup closes its elements; a plain text that names a tag (插入<script>标签; HTML5 新增了<nav>、
# <header>等) does not, and read as markup it lost everything after the tag (the text of an
# unclosed <script> is no text) or was taken for a whole page.
_CLOSING_TAG = re.compile(r"</\s*[a-z][a-z0-9]*\s*>", re.I)


def has_closing_tags(text: str) -> bool:
    """Whether ``text`` closes an element within its first PAGE_MARK_CHARS characters."""
    return _CLOSING_TAG.search(text, 0, PAGE_MARK_CHARS) is not None


def parse_html(text: str) -> BeautifulSoup:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        return BeautifulSoup(text, "lxml")


def clean_lines(text: str) -> str:
    """Collapse runs of spaces inside lines and drop empty lines."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def element_text(el: Tag, remove: tuple[str, ...] = ()) -> str:
    """Visible text of ``el``, one block element per line; descendants matching a ``remove``
    selector or in DROPPED_TAGS are skipped (``el`` itself is read whatever its tag: the caller
    chose it). Reads the tree without changing it, in one pass with an explicit stack, so time is
    linear and a page nested 50,000 levels deep neither recurses nor re-walks subtrees."""
    skipped = {id(tag) for selector in remove for tag in el.select(selector)}
    parts: list[str] = []
    stack: list[PageElement | str] = [el]
    while stack:
        node = stack.pop()
        if isinstance(node, str) and not isinstance(node, NavigableString):
            parts.append(node)  # a separator queued when its block element was entered
        elif isinstance(node, Tag):
            if node is not el and (node.name in DROPPED_TAGS or id(node) in skipped):
                continue
            if node.name in BLOCK_TAGS:
                parts.append("\n")
                stack.append("\n")  # popped after the children: the block's closing line break
            stack.extend(reversed(node.contents))
        elif type(node) in _TEXT_TYPES:
            parts.append(str(node))
    return clean_lines("".join(parts))


def html_to_text(html: str) -> str:
    """Visible text of an HTML fragment or page, one block element per line."""
    return element_text(parse_html(html))


def is_whole_page(text: str) -> bool:
    """``text`` is a whole web page, not a story's own markup: it has a doctype, an <html>, <head> or
    <body> tag, or a <nav> element within its first PAGE_MARK_CHARS characters, and is markup
    (``has_closing_tags``)."""
    return _PAGE_MARK.search(text, 0, PAGE_MARK_CHARS) is not None and has_closing_tags(text)


# trafilatura reads the whole page instead of the main content it found when that is under 250
# characters (its MIN_EXTRACTED_SIZE, set for English): a short Chinese news item is often less,
# and its page was read with its navigation (a fifth generator's seed 12: a 90-character item under
# a 首页|新闻|…|评论 bar, whose 评论 then opened "comments", and the story was the menu).
MIN_MAIN_TEXT_CHARS = 25


@functools.cache
def _extraction_config() -> ConfigParser:
    config = trafilatura.settings.use_config()
    config.set("DEFAULT", "MIN_EXTRACTED_SIZE", str(MIN_MAIN_TEXT_CHARS))
    return config


def main_text(html: str, url: str = "") -> str | None:
    """The main content of a page as plain text, one paragraph per line (trafilatura: without
    navigation, sidebars, comments and footers); None when it finds none."""
    try:
        text = trafilatura.extract(html, url=url or None, include_comments=False, include_tables=False,
                                   favor_recall=True, deduplicate=False, config=_extraction_config())
    except Exception as exc:  # a heuristic stack: a page it trips on is read whole instead
        log.warning("main-content extraction failed on %s: %s", url or "a page", exc)
        return None
    return clean_lines(text) if text else None


def page_text(html: str) -> str:
    """The text an HTML body stands for: a whole page's main content (its whole visible text when
    none is found), else the fragment's visible text."""
    found = main_text(html) if is_whole_page(html) else None
    return found or html_to_text(html)
