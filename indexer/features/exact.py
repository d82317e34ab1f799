"""Exact-duplicate keys: MD5 of the cleaned title and body."""

from __future__ import annotations

import hashlib

from ..cleaning import exact_form

# A body shorter than this (after cleaning, without punctuation) is too generic to identify an
# article on its own ("详见附件", "如题", a lone photo caption): its exact key includes the title.
MIN_BODY_CHARS_FOR_KEY = 30


def md5_hex(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def content_key(clean_title: str, clean_body: str) -> str:
    """The key the exact layer matches on: the body alone when it is long enough (the same body
    under a new title is a repost), else title and body together."""
    body = exact_form(clean_body)
    if len(body) >= MIN_BODY_CHARS_FOR_KEY:
        return md5_hex(body)
    return md5_hex(exact_form(clean_title) + "\x1f" + body)
