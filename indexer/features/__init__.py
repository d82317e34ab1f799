"""Article features: cleaned text, exact keys, SimHash with bands, shingles, embedding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..article import Article
from ..cleaning import clean_body, clean_title, story_under_own_headline
from ..html import is_whole_page
from ..settings import Settings
from .embedding import Embedder
from .exact import content_key, md5_hex
from .simhash import band_keys, simhash
from .title_grams import headline, title_vector
from .tokenize import weighted_tokens

# Cleaning reads at most this many raw characters per feature character wanted: HTML markup
# outweighs its visible text, but a multi-megabyte body must not cost seconds per article.
RAW_PER_FEATURE_CHAR = 8
# A whole saved page is read up to this many characters, whatever the feature prefix: its story can
# sit behind 100-300 KB of scripts and navigation, and main-content extraction needs the page around
# it. The cost is bounded: 400,000 characters of nothing but short paragraphs, the worst case for
# extraction, take about 1 s here; a page that size made of scripts takes milliseconds.
PAGE_MAX_CHARS = 400_000


@dataclass
class TextFeatures:
    """Everything computed from the text alone (no model)."""

    clean_title: str
    clean_body: str
    title_md5: str
    body_md5: str
    content_key: str
    simhash: int
    bands: tuple[int, ...]
    token_count: int  # distinct content tokens; the weights stay in text_features (memory)
    title_vec: dict[str, float]


def text_features(title: str, body: str, settings: Settings, *, cleaned: bool = False) -> TextFeatures:
    """Features of one article's text. ``cleaned`` skips cleaning (text already from a store)."""
    limit = settings.input.feature_max_chars
    if cleaned:
        ctitle, cbody = title, body[:limit]
    else:
        ctitle = clean_title(title[:2000])
        raw_limit = limit * RAW_PER_FEATURE_CHAR
        if len(body) > raw_limit and is_whole_page(body):
            raw_limit = max(raw_limit, PAGE_MAX_CHARS)
        cbody = story_under_own_headline(ctitle, clean_body(body[:raw_limit]))[:limit]
    weights = weighted_tokens(ctitle, cbody)
    # The rest is read off these keys as for a stored row (the body is within feature_max_chars).
    return stored_text_features(
        ctitle, cbody, title_md5=md5_hex(ctitle), body_md5=md5_hex(cbody), content_key=content_key(ctitle, cbody),
        simhash_=simhash(weights), token_count=len(weights), settings=settings,
    )


def stored_text_features(
    clean_title: str, clean_body: str, *, title_md5: str, body_md5: str, content_key: str, simhash_: int,
    token_count: int | None, settings: Settings,
) -> TextFeatures:
    """Features of a stored article's text: what ``text_features`` computed from the same cleaned
    text when the article was written, read back from its row, so a stored candidate is not
    tokenised again. Only the headline grams are computed (cheap; not stored). A row that lacks
    its token count (written before it was kept, or by a store that does not keep it) or whose
    body is longer than ``feature_max_chars`` now (the setting changed since) is featurised anew.
    """
    if token_count is None or len(clean_body) > settings.input.feature_max_chars:
        return text_features(clean_title, clean_body, settings, cleaned=True)
    return TextFeatures(
        clean_title=clean_title,
        clean_body=clean_body,
        title_md5=title_md5,
        body_md5=body_md5,
        content_key=content_key,
        simhash=simhash_,
        bands=band_keys(simhash_, settings.simhash.bands),
        token_count=token_count,
        title_vec=title_vector(headline(clean_title, clean_body)),
    )


def embedding_text(clean_title_: str, clean_body_: str, max_chars: int) -> str:
    return (clean_title_ + "。" + clean_body_ if clean_title_ else clean_body_)[:max_chars]


class Featurizer:
    """Computes features for batches of articles; the embedding model runs once per batch."""

    def __init__(self, settings: Settings, embedder: Embedder | None):
        self.settings = settings
        self.embedder = embedder

    def text(self, article: Article) -> TextFeatures:
        return text_features(article.title, article.content, self.settings)

    def embed(self, features: Sequence[TextFeatures]) -> list[np.ndarray | None]:
        if self.embedder is None or not features:
            return [None] * len(features)
        texts = [embedding_text(f.clean_title, f.clean_body, self.settings.embedding.max_chars) for f in features]
        return list(self.embedder.encode(texts))
