"""The article record: what users give us, validated once at the edge."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping

from .dates import parse_time
from .errors import InvalidArticle
from .html import is_whole_page
from .urls import canonical_url

# Characters that never occur in text: NUL and C0 controls other than tab/newline/CR.
# A body with many of them is a binary blob that slipped through (an image, a gzip stream).
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
BINARY_CONTROL_RATIO = 0.01
BINARY_CONTROL_MIN = 8  # a stray control character in a headline is noise to clean, not binary

KNOWN_FIELDS = ("id", "url", "title", "content", "source", "publish_time")

# Unknown fields are kept as the article's ``extra`` and stored as JSON. They come from sources we
# do not control, so their shape is bounded here, once, for every path in (ingest, daemon, crawl):
# a record nested hundreds of levels deep is stored fine but cannot be parsed back on a deep call
# stack, and an unbounded blob would ride along with every read of its neighbours.
MAX_EXTRA_DEPTH = 32  # nesting levels of objects/arrays below the record itself
MAX_EXTRA_BYTES = 1024 * 1024  # the extra fields serialised as UTF-8 JSON
# Fields a store keeps whole as one exact term: Elasticsearch refuses a document whose _id is over
# 512 bytes, and a keyword over Lucene's 32,766-byte term limit, on every try; the article would
# be accepted and then never written. Refused here instead, for every store alike.
MAX_ID_BYTES = 512
MAX_SOURCE_BYTES = 1024
# A canonical URL is looked up as one exact term; Elasticsearch's mapping leaves a longer one out
# of its index (ignore_above: es_mappings/component_mappings.json), so no store matches on it.
MAX_CANONICAL_URL_CHARS = 4096

# Set in ``extra`` when ``content`` is a whole web page (indexer/html.py is_whole_page): its features
# read the story extracted from the page, while ``content`` keeps the page as given.
EXTRACTED_FROM_PAGE = "extracted_from_page"

# Lone UTF-16 surrogates (JSON "\ud800" without its pair) cannot be encoded as UTF-8, so no
# store or queue can write them; refuse the record instead of failing its whole batch later.
_SURROGATE = re.compile(r"[\ud800-\udfff]")


@dataclass(frozen=True)
class Article:
    """One crawled article. ``content`` is kept exactly as given (text or HTML)."""

    id: str
    title: str
    content: str
    url: str = ""
    source: str = ""
    publish_time: datetime | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    id_given: bool = True  # False when the id was derived from the URL or text

    @property
    def canonical_url(self) -> str:
        canon = canonical_url(self.url)
        return canon if len(canon) <= MAX_CANONICAL_URL_CHARS else ""


def _text_field(record: Mapping[str, Any], name: str, where: str | None) -> str:
    value = record.get(name)
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and name in ("id", "source"):
        return str(value)
    if not isinstance(value, str):
        raise InvalidArticle(f"field {name!r} must be a string, got {type(value).__name__}", where)
    return value


def _looks_binary(text: str) -> bool:
    if not text:
        return False
    sample = text[:65536]
    bad = len(_CONTROL_CHARS.findall(sample))
    return "\x00" in sample or (bad >= BINARY_CONTROL_MIN and bad > BINARY_CONTROL_RATIO * len(sample))


def _check_text(name: str, text: str, where: str | None) -> None:
    if (m := _SURROGATE.search(text)) is not None:
        raise InvalidArticle(f"field {name!r} holds a lone surrogate U+{ord(m.group()):04X} at character {m.start()} "
                             "(not encodable as UTF-8)", where)


def _check_extra(extra: Mapping[str, Any], where: str | None) -> None:
    """Refuse unknown fields nested more than MAX_EXTRA_DEPTH objects/arrays deep, larger than
    MAX_EXTRA_BYTES, or holding text that is not encodable. Walks without recursion, so no depth
    can break the check itself."""
    stack: list[tuple[str, Any, int]] = []
    for key, value in extra.items():
        _check_text(str(key), str(key), where)
        stack.append((str(key), value, 1))
    while stack:
        field_name, value, depth = stack.pop()
        if isinstance(value, str):
            _check_text(field_name, value, where)
            continue
        if isinstance(value, Mapping):
            children = list(value.items())
        elif isinstance(value, (list, tuple)):
            children = list(enumerate(value))
        else:
            continue
        if depth > MAX_EXTRA_DEPTH:
            raise InvalidArticle(f"extra field {field_name!r} is nested more than {MAX_EXTRA_DEPTH} levels deep", where)
        for k, v in children:
            if isinstance(k, str):
                _check_text(field_name, k, where)
            stack.append((field_name, v, depth + 1))
    size = len(json.dumps(extra, ensure_ascii=False, default=str).encode("utf-8"))
    if size > MAX_EXTRA_BYTES:
        raise InvalidArticle(f"extra fields take {size} bytes as JSON, more than {MAX_EXTRA_BYTES}", where)


def article_id_for(url: str, title: str, content: str) -> str:
    """Stable id when the record has none: the canonical URL, else the text itself."""
    canon = canonical_url(url)
    basis = ("url:" + canon) if canon else ("text:" + title + "\x1f" + content)
    return hashlib.sha1(basis.encode("utf-8")).hexdigest()[:20]


def article_from_record(
    record: Any, where: str | None = None, default_tz: timezone = timezone(timedelta(hours=8)),
    max_body_bytes: int | None = None,
) -> Article:
    """Validate one input record. Raises InvalidArticle naming ``where`` and the reason.
    ``max_body_bytes``: the most UTF-8 bytes its ``content`` may take (``input.max_body_bytes``)."""
    if not isinstance(record, Mapping):
        raise InvalidArticle(f"record must be a JSON object, got {type(record).__name__}", where)
    title = _text_field(record, "title", where)
    content = _text_field(record, "content", where)
    url = _text_field(record, "url", where).strip()
    source = _text_field(record, "source", where).strip()
    given_id = _text_field(record, "id", where).strip()
    if not title.strip() and not content.strip():
        raise InvalidArticle("neither title nor content", where)
    for name, text in (("title", title), ("content", content)):
        if _looks_binary(text):
            raise InvalidArticle(f"field {name!r} holds binary data, not text", where)
    for name, text in (("id", given_id), ("url", url), ("source", source), ("title", title), ("content", content)):
        _check_text(name, text, where)
    limits = [("id", given_id, MAX_ID_BYTES), ("source", source, MAX_SOURCE_BYTES)]
    if max_body_bytes is not None:
        limits.append(("content", content, max_body_bytes))
    for name, text, limit in limits:
        if (size := len(text.encode("utf-8"))) > limit:
            raise InvalidArticle(f"field {name!r} takes {size} bytes as UTF-8, more than {limit}", where)
    if isinstance(record.get("publish_time"), str):  # the record is queued as it came: it must encode
        _check_text("publish_time", record["publish_time"], where)
    try:
        published = parse_time(record.get("publish_time"), default_tz)
    except ValueError as exc:
        raise InvalidArticle(f"field 'publish_time': {exc}", where) from None
    extra = {k: v for k, v in record.items() if k not in KNOWN_FIELDS}
    _check_extra(extra, where)
    if is_whole_page(content):
        extra[EXTRACTED_FROM_PAGE] = True
    return Article(id=given_id or article_id_for(url, title, content), title=title, content=content, url=url, source=source,
                   publish_time=published, extra=extra, id_given=bool(given_id))
