"""What one article brings to a comparison: its text features, shingles, vector and publish time,
and the views of its text the rules read (the shingled text, the lead)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property, lru_cache

import numpy as np

from ..cleaning import exact_form
from ..features import TextFeatures
from ..features.exact import MIN_BODY_CHARS_FOR_KEY
from ..features.shingles import shingles
from ..features.title_grams import cosine as title_cosine
from ..features.title_grams import title_vector
from .adverts import is_advert
from .roundups import is_roundup
from .rules import MIN_HELD_HEADLINE_CHARS, QUOTE_TITLE_SIM, same_headline
from .specifics import TEXT_CHARS, Specifics, compact_sentences, extract_specifics

# Characters of the body after the headline that count as the lead: where a report says where
# and when it happened.
LEAD_CHARS = 120
# A body shorter than this (characters) leaves a side with its headline only.
HEADLINE_ONLY_BODY = 20

# The ingest pre-check asks every kNN neighbour whether it shares the new article's headline, and
# the same stored neighbours come up article after article: their headline vectors are kept.
_stored_title_vector = lru_cache(maxsize=4096)(title_vector)


@dataclass
class Side:
    """One side of a comparison."""

    id: str
    text: TextFeatures
    shingles: np.ndarray  # sorted shingle hashes (features.shingles)
    vector: np.ndarray | None
    publish_time: datetime | None

    @classmethod
    def of(cls, article_id: str, text: TextFeatures, vector: np.ndarray | None, publish_time: datetime | None,
           known_shingles: np.ndarray | None = None) -> "Side":
        """``known_shingles``: ``shingles(shingle_text(text))`` when the caller made them already."""
        return cls(article_id, text, known_shingles if known_shingles is not None else shingles(shingle_text(text)),
                   vector, publish_time)

    @cached_property
    def story(self) -> str:
        """``shingle_text``, kept: every comparison of this side reads it."""
        return shingle_text(self.text)

    @cached_property
    def specifics(self) -> Specifics:
        """Event specifics, read when a semantic comparison first needs them."""
        return extract_specifics(self.text.clean_title, self.text.clean_body, self.publish_time)

    @cached_property
    def sentences(self) -> frozenset[str]:
        """The body's sentences long enough to tell a copied passage, compacted: read when two
        headlines are one, to find the passages a commentary quotes from its story."""
        return compact_sentences(self.text.clean_body[:TEXT_CHARS])

    @cached_property
    def edge_sentences(self) -> tuple[frozenset[str], frozenset[str]]:
        """The compacted sentences of the body's first and of its last paragraph: where a site's
        furniture sits (a subscription prompt on top, a standing tip or disclaimer at the end),
        which two different pieces of one site or column share word for word."""
        lines = [line for line in self.text.clean_body[:TEXT_CHARS].split("\n") if line.strip()]
        if not lines:
            return frozenset(), frozenset()
        return compact_sentences(lines[0]), compact_sentences(lines[-1])

    def shares_headline_with(self, clean_title: str) -> bool:
        """Whether another article (its cleaned headline) carries this side's headline
        (``rules.same_headline``): then one may quote the other (``rules.quotes_its_story``)
        whatever their embeddings and shingles say, so a pre-check that skips candidates no
        rule can accept must not skip it. An article without a headline carries none: its body's
        opening is no headline to quote under."""
        if min(len(self.text.clean_title), len(clean_title)) < MIN_HELD_HEADLINE_CHARS:
            return False  # too short to name one story (and no headline is none)
        if same_headline(self.text.clean_title, clean_title, 0.0):  # one holds the other whole
            return True
        # Cheap bound first (most neighbours share little of the headline): a gram both headlines
        # have starts with a character of the other's, and the cosine of unit vectors is at most
        # the norm of this side's weights over the grams they share.
        weights = self._headline_weight_by_first_char
        if sum(weights.get(c, 0.0) for c in set(clean_title)) < QUOTE_TITLE_SIM**2 - 1e-9:  # float slack
            return False
        return title_cosine(self.text.title_vec, _stored_title_vector(clean_title)) >= QUOTE_TITLE_SIM

    @cached_property
    def _headline_weight_by_first_char(self) -> dict[str, float]:
        """The squared weights of this side's headline grams, summed by the gram's first character."""
        out: dict[str, float] = {}
        for gram, w in self.text.title_vec.items():
            out[gram[0]] = out.get(gram[0], 0.0) + w * w
        return out

    @cached_property
    def bodiless(self) -> bool:
        """A headline without a body worth the name: none, a few characters, or the headline again
        (a feed whose item repeats its title as its description)."""
        body, title = self.text.clean_body, exact_form(self.text.clean_title)
        return len(body) < HEADLINE_ONLY_BODY or (not _compact_at_least(body, len(title) + 1) and exact_form(body) == title)

    @cached_property
    def textless(self) -> bool:
        """Nothing left after cleaning: a headline of page chrome or credits (来源:X 编辑:Y) over no
        body. Such texts share every key (the same empty MD5, SimHash 0, one embedding), so they
        would all be copies of one another."""
        return not exact_form(self.text.clean_title) and not exact_form(self.text.clean_body)

    @cached_property
    def roundup(self) -> bool:
        """Whether the article gathers several stories (``roundups``): a story of its own."""
        return is_roundup(self.text.clean_title, self.text.clean_body)

    @cached_property
    def advert(self) -> bool:
        """Whether the article is a seller's advertisement (``adverts``): a story only as a copy."""
        return is_advert(self.text.clean_title + "。" + self.text.clean_body[:TEXT_CHARS])


def _compact_at_least(text: str, n: int) -> bool:
    """Whether ``exact_form(text)`` has ``n`` characters or more, read from a prefix first: the
    exact form of a prefix is a prefix of the exact form, and a body of prose reaches ``n`` within
    its first few times ``n`` characters (pair after pair, a whole long body need not be read)."""
    return len(exact_form(text[: 4 * n])) >= n or (len(text) > 4 * n and len(exact_form(text)) >= n)


def shingle_source(clean_title: str, clean_body: str) -> str:
    """The text containment reads: the body, or title and body when the body is too short to
    stand for the article (the same rule as the exact key)."""
    if _compact_at_least(clean_body, MIN_BODY_CHARS_FOR_KEY):
        return clean_body
    return clean_title + "\n" + clean_body


def shingle_text(tf: TextFeatures) -> str:
    return shingle_source(tf.clean_title, tf.clean_body)


def lead(tf: TextFeatures) -> str:
    """Headline and the first sentence or so of the body."""
    return tf.clean_title + "。" + tf.clean_body[:LEAD_CHARS]
