"""Article pipeline: clean, validate, deduplicate within the run, turn into an indexer record.

Each step is a small callable ``step(article) -> article``; a step that rejects an article raises
``DropArticle(reason)`` and the runner counts ``pipeline/dropped/<reason>``. Nothing that fails a
step reaches an output, so no mojibake or empty page is ever stored.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable

from indexer.html import clean_lines
from indexer.urls import canonical_url

from .encoding import mojibake_ratio
from .errors import DropArticle
from .extract import title_text

MAX_MOJIBAKE_RATIO = 0.005
MAX_TITLE_CHARS = 300


@dataclass(frozen=True)
class CrawledArticle:
    url: str  # canonical URL of the article
    title: str
    content: str
    source: str  # the source's name from the sources file
    publish_time: datetime | None = None

    def to_record(self) -> dict[str, Any]:
        """The indexer's record shape (``indexer.article.article_from_record``)."""
        return {
            "url": self.url,
            "title": self.title,
            "content": self.content,
            "source": self.source,
            "publish_time": self.publish_time.isoformat() if self.publish_time else None,
        }


Step = Callable[[CrawledArticle], CrawledArticle]


def normalize_whitespace(article: CrawledArticle) -> CrawledArticle:
    """Whitespace collapsed, and a title that holds markup read as the text it means (see
    ``extract.title_text``)."""
    title = " ".join(title_text(article.title).split())
    return dataclasses.replace(article, title=title, content=clean_lines(article.content), url=canonical_url(article.url))


def require_title(article: CrawledArticle) -> CrawledArticle:
    if not article.title:
        raise DropArticle("no_title", article.url)
    if len(article.title) > MAX_TITLE_CHARS:
        raise DropArticle("title_too_long", article.url)
    return article


def min_content(chars: int) -> Step:
    """Pages whose body is shorter than ``chars`` are index pages, video stubs or errors."""

    def step(article: CrawledArticle) -> CrawledArticle:
        if len(article.content) < chars:
            raise DropArticle("too_short", f"{article.url}: {len(article.content)} < {chars} chars")
        return article

    return step


def reject_mojibake(article: CrawledArticle, max_ratio: float = MAX_MOJIBAKE_RATIO) -> CrawledArticle:
    """Decoding damage (U+FFFD, UTF-8 read as Latin-1) must never be stored."""
    for name in ("title", "content"):
        ratio = mojibake_ratio(getattr(article, name))
        if ratio > max_ratio:
            raise DropArticle("mojibake", f"{article.url}: {name} {ratio:.1%} damaged")
    return article


class UniqueURL:
    """Drops a second article with the same canonical URL in one run (linked from two lists)."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def __call__(self, article: CrawledArticle) -> CrawledArticle:
        key = canonical_url(article.url)
        if key in self._seen:
            raise DropArticle("duplicate_url", article.url)
        self._seen.add(key)
        return article


class Pipeline:
    def __init__(self, steps: Iterable[Step]):
        self.steps = list(steps)

    def process(self, article: CrawledArticle) -> CrawledArticle:
        for step in self.steps:
            article = step(article)
        return article


def default_pipeline(min_content_chars: int = 30) -> Pipeline:
    return Pipeline([normalize_whitespace, require_title, reject_mojibake, min_content(min_content_chars), UniqueURL()])
