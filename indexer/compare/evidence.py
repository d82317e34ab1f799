"""The evidence two sides give: every score and guard finding the rules and the learned model read.

``compare_sides`` is pure. The guard checks, the costliest part, run only where the texts are
close enough for a near or semantic verdict to be possible.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..features.shingles import containment, share_found, shingles
from ..features.simhash import hamming
from ..features.title_grams import cosine as title_cosine
from ..settings import Settings
from .rules import (
    FIGURE_SLOTS,
    HEADLINE_PLACE_SLOTS,
    MIN_QUOTED_CHARS,
    QUOTE_TITLE_SIM,
    place_conflict,
    reads_as_a_part,
    same_headline,
    story_template_difference,
    title_number_conflict,
)
from .roundups import headline_calls_it_a_roundup
from .sides import Side, lead
from .specifics import specifics_conflict

# A headline without a body is read as its article's only when it says this much: 早上好 or 通知
# head many different texts.
HEADLINE_ALONE_MIN_CHARS = 8
# Shingle containment from which two texts count as one frame for the template check, and from
# which semantic candidates' bodies are checked for substituted figures.
TEMPLATE_FRAME_CONTAINMENT = 0.8
SHARED_BODY_CONTAINMENT = 0.4
# Texts one frame are read this far for substitutions, not only their openings: a copy with its
# paragraphs reordered opens with other sentences, and an edited report's changed figures may then
# lie beyond both openings (a fourth generator's never-read seed 449: 5亿元 against 12亿元 in the
# fourth paragraph). Sentences both hold word for word cost a set lookup.
CLOSE_TEXT_CHARS = 4000
# The opening of a text (characters of its shingled text), which a cut copy of it keeps.
OPENING_CHARS = 80


@dataclass(frozen=True)
class PairEvidence:
    exact: bool
    hamming: int
    short: bool
    containment: float
    cosine: float | None
    title_sim: float
    event_score: float | None  # cosine_weight x cosine + title_sim
    title_numbers_conflict: bool
    template: str | None  # why the pair looks like a templated report, or None
    specifics: str | None = None  # which event specific differs (place, date, figure), or None
    headline_only: bool = False  # neither side has a body worth the name (headline pairs)
    roundups: int = 0  # how many of the two sides gather several stories (compare.roundups)
    verifier_cosine: float | None = None  # e5 headline cosine of a borderline pair (compare/verifier.py), or None
    quoted_chars: int = 0  # characters of the body sentences both hold word for word (read when the headlines are one)
    shingle_ratio: float = 1.0  # the shorter text's shingles over the longer's: 1.0 for texts of one length
    roundup_contained: bool = False  # the one roundup of the pair is the text with fewer shingles
    roundup_cut: bool = False  # the other text is the roundup cut short: under its headline, which calls it a roundup
    holds_opening: bool = True  # the text with fewer shingles holds the other's opening (read only where rules.reads_as_a_part)
    headline_alone: bool = False  # one side is a headline without a body, the other an article with one
    textless: bool = False  # one side has no text left after cleaning: nothing to match on (Side.textless)
    adverts: bool = False  # either side is an advertisement (compare.adverts): a copy or nothing


def quoted_sentences(a: Side, b: Side) -> frozenset[str]:
    """The body sentences one side quotes from the other: found word for word in both, and not
    where both keep their furniture (the opening paragraph of both, or the closing paragraph of
    both: a column's standing tip, an account's subscription prompt). A quote sits inside the
    quoting text, between its own opening and closing words."""
    (open_a, close_a), (open_b, close_b) = a.edge_sentences, b.edge_sentences
    return (a.sentences & b.sentences) - (open_a & open_b) - (close_a & close_b)


def short_pair(a: Side, b: Side, settings: Settings) -> bool:
    """Whether the shorter text is short for SimHash (under ``simhash.short_tokens`` tokens), so
    its near distance is the tighter ``max_distance_short``."""
    return min(a.text.token_count, b.text.token_count) < settings.simhash.short_tokens


def compare_sides(a: Side, b: Side, settings: Settings) -> PairEvidence:
    """Evidence for one pair."""
    if a.textless or b.textless:
        return PairEvidence(exact=False, hamming=64, short=True, containment=0.0, cosine=None, title_sim=0.0,
                            event_score=None, title_numbers_conflict=False, template=None, textless=True)
    d = settings.decision
    exact = a.text.content_key == b.text.content_key
    short = short_pair(a, b, settings)
    # A text without content tokens has SimHash 0 whatever it says (的了吗, 我们他们): no evidence.
    dist = hamming(a.text.simhash, b.text.simhash) if a.text.token_count and b.text.token_count else 64
    cont = containment(a.shingles, b.shingles)
    cosine = float(np.dot(a.vector, b.vector)) if a.vector is not None and b.vector is not None else None
    title_sim = title_cosine(a.text.title_vec, b.text.title_vec)
    event = d.cosine_weight * cosine + title_sim if cosine is not None else None
    template = specifics = None
    if exact and d.template_guard and a.text.clean_title != b.text.clean_title:
        # One body under two headlines alike but for a place the body never states (长沙霞光山庄一车库
        # 发生火灾 against 湘潭霞光山庄…, the datelines that named each city cleaned away, a fourth
        # generator's never-read seed 210): one template's reports of two places. Only places: a
        # re-titled repost's headline may be cut short (疑… against 疑为酒后驾车) or reworded
        # (小学子 against 小学生) where its body is the same, and a headline rewritten whole is not read.
        template = story_template_difference(a.text.clean_title, a.story, b.text.clean_title, b.story, read_bodies=False,
                                             slots=HEADLINE_PLACE_SLOTS)
    # A commentary that quotes its story under the story's headline: what ties it to the story is
    # the passage it quotes, whatever surrounds it (a trimmed repost is found by containment).
    quoted = 0
    if not exact and same_headline(a.text.clean_title, b.text.clean_title, title_sim):
        quoted = sum(map(len, quoted_sentences(a, b)))
    if not exact and d.template_guard:
        body_a, body_b = a.story, b.story
        if dist <= settings.simhash.max_distance or cont >= TEMPLATE_FRAME_CONTAINMENT:
            # Texts this close are one frame: any substituted figure or name makes them different news.
            template = story_template_difference(a.text.clean_title, body_a, b.text.clean_title, body_b,
                                                 diff_chars=CLOSE_TEXT_CHARS)
        elif quoted >= MIN_QUOTED_CHARS or (event is not None and event >= d.cluster_threshold):
            # The quote rule rests on these guards too, whatever the embedding says (or without one).
            # Independent reports of one event word their bodies differently (names come and go),
            # so headlines are held to the frame check; bodies that still share much of their
            # text only to their figures (a lottery draw, a price list under one headline).
            template = (
                story_template_difference(a.text.clean_title, body_a, b.text.clean_title, body_b, titles_aligned=True,
                                          read_bodies=False)
                or place_conflict(lead(a.text), lead(b.text), a.text.clean_title + "。" + body_a, b.text.clean_title + "。" + body_b)
                or (
                    story_template_difference(a.text.clean_title, body_a, b.text.clean_title, body_b, slots=FIGURE_SLOTS,
                                              titles_aligned=True)
                    if cont >= SHARED_BODY_CONTAINMENT or quoted >= MIN_QUOTED_CHARS
                    else None
                )
            )
            if template is None:
                # Same topic, same city: the same event only if the specifics both leads state agree.
                specifics = specifics_conflict(a.specifics, b.specifics)
    ev = PairEvidence(
        exact=exact, hamming=dist, short=short, containment=cont, cosine=cosine, title_sim=title_sim,
        event_score=event, title_numbers_conflict=title_number_conflict(a.text.clean_title, b.text.clean_title),
        template=template, specifics=specifics,
        headline_only=a.bodiless and b.bodiless,
        headline_alone=_headline_alone(a, b),
        roundups=int(a.roundup) + int(b.roundup), quoted_chars=quoted, adverts=a.advert or b.advert,
        roundup_contained=a.roundup != b.roundup and (a if len(a.shingles) <= len(b.shingles) else b).roundup,
        roundup_cut=a.roundup != b.roundup and title_sim >= QUOTE_TITLE_SIM
        and headline_calls_it_a_roundup((b if a.roundup else a).text.clean_title),
        shingle_ratio=min(len(a.shingles), len(b.shingles)) / max(len(a.shingles), len(b.shingles), 1),
    )
    if ev.containment >= d.near_containment and reads_as_a_part(ev):
        small, large = (a, b) if len(a.shingles) <= len(b.shingles) else (b, a)
        ev = replace(ev, holds_opening=share_found(shingles(large.story[:OPENING_CHARS]), small.shingles) >= 0.5)
    if d.verifier == "none":
        return ev
    from .verifier import with_verifier  # noqa: PLC0415 - the verifier reads the rules, which import this module

    return with_verifier(ev, a, b, settings)


def _headline_alone(a: Side, b: Side) -> bool:
    """One side is a headline of ``HEADLINE_ALONE_MIN_CHARS`` or more without a body (a feed or list
    page whose article was not fetched), the other an article with one."""
    return a.bodiless != b.bodiless and len((a if a.bodiless else b).text.clean_title) >= HEADLINE_ALONE_MIN_CHARS
