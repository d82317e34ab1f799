"""Turn response bytes into text without mojibake.

Chinese sites routinely lie about their charset: ``gb2312`` pages use GBK characters, headers say
``ISO-8859-1`` (or nothing, which requests then reads as Latin-1) while the body is GBK, a meta tag
says ``utf-8`` on a page saved as GB18030. So a declaration is only a candidate: each candidate must
decode the bytes *strictly*, and single-byte Western declarations are not trusted for bytes that
look like CJK. GB2312/GBK are decoded as GB18030 and Big5 as Big5-HKSCS (their supersets), which
decode every page the narrower name would plus the extra characters real pages use.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes

_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "gb18030": "gb18030", "big5": "big5hkscs", "big5hkscs": "big5hkscs", "cp950": "big5hkscs"}
# Declarations that decode any byte string, so strictness proves nothing about them.
_WEAK = {"latin_1", "iso8859-1", "cp1252", "ascii", "iso8859-15"}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)
_XML_DECL = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_\-.]+)["']""", re.I)
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
# Typical pieces of UTF-8 read as Latin-1/CP1252 ("ä¸­æ–‡") or GBK read as UTF-8 with replacement.
_MOJIBAKE = re.compile(r"[\ufffd]|[ÃÂâäåæçèéï][\x80-\xbf\u2000-\u206f\u0152-\u0178\u02c6-\u02dc]")


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # the Python codec actually used
    declared: str | None  # what the header or page said, if anything


def normalize_codec(name: str | None) -> str | None:
    """Python codec name for a declared charset, widened to its superset; None if unknown."""
    if not name:
        return None
    name = name.strip().strip("\"'").lower()
    if name in ("x-gbk", "gb_2312-80", "gb_2312", "euc-cn", "x-euc-cn", "cp936", "windows-936"):
        name = "gbk"
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return None
    return _SUPERSETS.get(codec, _SUPERSETS.get(name, codec))


def charset_from_content_type(content_type: str | None) -> str | None:
    m = re.search(r"charset\s*=\s*[\"']?([^;\"'\s]+)", content_type or "", re.I)
    return m.group(1) if m else None


def charset_from_markup(body: bytes) -> str | None:
    """``<meta charset>``, ``<meta http-equiv content="...; charset=">`` or an XML declaration."""
    head = body[:8192]
    m = _XML_DECL.search(head) or _META_CHARSET.search(head)
    return m.group(1).decode("ascii", "ignore") if m else None


def mojibake_ratio(text: str) -> float:
    """Share of characters that are typical decoding damage; 0.0 for clean text."""
    if not text:
        return 0.0
    return len(_MOJIBAKE.findall(text)) / len(text)


def _strict(body: bytes, codec: str) -> str | None:
    try:
        return body.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def decode_body(body: bytes, content_type: str | None = None, override: str | None = None) -> Decoded:
    """Decode ``body``: BOM, then the source's override, valid UTF-8, the HTTP header, the markup
    declaration, then detection. The first candidate that decodes strictly (and is not a Western
    single-byte guess over CJK bytes) wins. Last resort: UTF-8 with replacement characters, which
    the pipeline then drops as mojibake rather than storing it."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return Decoded(body.decode(codec, "replace"), codec, codec)
    declared_header = charset_from_content_type(content_type)
    declared_markup = charset_from_markup(body)
    declared = override or declared_header or declared_markup
    non_ascii = not body.isascii()  # the whole body: a page can open with 64 KiB of ASCII script
    # Non-ASCII bytes that form valid UTF-8 are UTF-8: GBK/Big5 text of any length practically
    # never is, while GB18030 *can* strictly decode UTF-8 bytes into nonsense.
    order = (override, "utf-8", declared_header, declared_markup) if non_ascii else (override, declared_header, declared_markup, "utf-8")
    for codec in dict.fromkeys(normalize_codec(name) for name in order):  # each codec once, in order
        if codec is None or (codec in _WEAK and non_ascii):
            continue
        text = _strict(body, codec)
        if text is not None:
            return Decoded(text, codec, declared)
    best = from_bytes(body[:200_000]).best() if non_ascii else None
    if best is not None:
        codec = normalize_codec(best.encoding) or best.encoding
        text = _strict(body, codec)
        if text is not None and mojibake_ratio(text) < 0.01:
            return Decoded(text, codec, declared)
    # Common Chinese encodings in order of prevalence, tolerant only of a few broken bytes.
    for codec in ("gb18030", "big5hkscs"):
        text = body.decode(codec, "replace")
        if text.count("\ufffd") <= 3:
            return Decoded(text, codec, declared)
    return Decoded(body.decode("utf-8", "replace"), "utf-8", declared)
