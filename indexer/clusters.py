"""Which cluster a decided article joins, and which clusters it bridges. Store-agnostic.

**Chain drift** (A~B, B~C, C~D merging unrelated A and D) is guarded by the cluster's canonical
article: a near or semantic match joins the matched article's cluster only if the new article is
also close to that cluster's canonical article (a match by the same rules, or an event score of at
least ``decision.cluster_threshold`` with no templated difference and no conflicting event
specifics). Exact copies always join: equality is transitive.

**Order independence.** Crawls arrive in any order: two reposts that do not match each other (one
trimmed, one with sentences dropped) may arrive first and start two clusters; the original arrives
later and matches both. When an article is admitted to several clusters they are merged into the
one whose canonical article was published first, under the same guard against drift: the two
canonical articles must match each other by the rules, or the article bridging them must be a
*copy bridge* to its match in both. Anything weaker (two semantic matches) keeps them apart. For
the same reason an article joins a cluster whose canonical it does not match when its match is a
copy bridge between it and the canonical (the original between its trimmed head and its tail).

A copy bridge is exact or near to both sides, and not a fragment of both: two articles that quote
one paragraph are not one story because the paragraph is reposted alone. When the bridge holds
both sides (the original holding a head and a tail, or a digest holding two stories' leads), the
two sides must also read as one story: an event score of at least ``decision.cluster_threshold``
to each other with no templated difference and no conflicting specifics (the bar a member must
reach to its cluster's canonical). Cosine alone does not do: a head and a tail of one text open
with different paragraphs, and the embedding reads the opening.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Protocol

from .compare.evidence import PairEvidence, compare_sides, short_pair
from .compare.rules import Reason, Verdict, judge, near_limit
from .compare.sides import Side
from .features.simhash import hamming
from .settings import Settings
from .store import ClusterChange, StoredArticle
from .store.base import INDEXER

REASON_RANK = {Reason.EXACT: 3, Reason.NEAR: 2, Reason.SEMANTIC: 1}
# A bridge of these reasons to both clusters proves they hold copies of one text.
COPY_REASONS = frozenset({Reason.EXACT, Reason.NEAR})
# Shingle containment from which two copies that one bridge holds overlap as parts of one text.
OVERLAPPING_PARTS_CONTAINMENT = 0.5
_NEVER = datetime.max.replace(tzinfo=timezone.utc)


@dataclass
class Candidate:
    article: StoredArticle
    evidence: PairEvidence
    verdict: Verdict | None


@dataclass
class Assignment:
    """The decision for one article: the match it joins (None: it starts its own cluster), the
    cluster it ends up in, and the merges its arrival makes."""

    match: Candidate | None
    cluster_id: str
    merges: list[ClusterChange] = field(default_factory=list)


class ClusterView(Protocol):
    """What assignment needs to know about clusters as they are now (earlier decisions of the
    same batch included)."""

    def cluster_of(self, article: StoredArticle) -> str: ...

    def canonical_side(self, cluster_id: str) -> Side | None: ...

    def side_of(self, article: StoredArticle) -> Side: ...

    def kept_apart(self, a: str, b: str) -> bool: ...


def assign(side: Side, candidates: list[Candidate], view: ClusterView, settings: Settings) -> Assignment:
    """The cluster ``side`` joins: its strongest confirmed match whose cluster admits it, plus
    every other admitting cluster that may be merged with that one (see the module docstring)."""
    confirmed = [c for c in candidates if c.verdict is not None]
    confirmed.sort(key=_strength, reverse=True)
    admitted: dict[str, Candidate] = {}  # cluster -> its strongest match, strongest cluster first
    refused: set[str] = set()
    compared = {c.article.id: c for c in candidates}  # a canonical compared already is not compared again
    for cand in confirmed:
        cid = view.cluster_of(cand.article)
        if cid in admitted or cid in refused:
            continue
        if _admits(side, cand, cid, view, settings, compared.get(cid)):
            admitted[cid] = cand
        else:
            refused.add(cid)
    if not admitted:
        return Assignment(None, side.id)
    primary, *others = admitted
    group = {primary: ""}
    for cid in others:
        why = _merge_reason(side, admitted[primary], admitted[cid], primary, cid, view, settings)
        # clusters a person split apart stay apart
        if why and not any(view.kept_apart(cid, other) for other in group):
            group[cid] = why
    survivor = min(group, key=lambda cid: _age(view, cid))
    merges = [
        ClusterChange("merge", into=survivor, source=cid, article_id=side.id,
                      reason=group[cid] or group[survivor], by=INDEXER)
        for cid in group if cid != survivor
    ]
    return Assignment(admitted[primary], survivor, merges)


def _strength(cand: Candidate) -> tuple:
    """How strongly a match ties an article to its cluster: by reason, then score; a fragment
    equally inside two texts (a teaser cut before the figures an edited report changed: one
    containment to both, a fourth generator's never-read seed 508) by the event score, which reads
    the whole of each text; then a cluster's canonical article before its other members."""
    event = cand.evidence.event_score
    return (REASON_RANK[cand.verdict.reason], cand.verdict.score, -math.inf if event is None else event,
            cand.article.is_canonical)


def _admits(side: Side, cand: Candidate, cluster_id: str, view: ClusterView, settings: Settings,
            canonical_compared: Candidate | None = None) -> bool:
    if cand.verdict.reason is Reason.EXACT or cand.article.id == cluster_id:
        return True
    canon = view.canonical_side(cluster_id)
    if canon is None:  # canonical vanished (deleted by hand): trust the direct match
        return True
    if canonical_compared is not None:  # the candidate loop compared the canonical already
        ev, verdict = canonical_compared.evidence, canonical_compared.verdict
    else:
        ev = compare_sides(side, canon, settings)
        verdict = judge(ev, settings.decision, settings.simhash)
    if verdict is not None or _one_story(ev, settings):
        return True
    if cand.verdict.reason not in COPY_REASONS:
        return False
    member = view.side_of(cand.article)
    to_canon = compare_sides(member, canon, settings)
    verdict = judge(to_canon, settings.decision, settings.simhash)
    return verdict is not None and copy_bridge(member, cand.evidence, side, to_canon, canon, settings)


def copy_bridge(bridge: Side, ev_p: PairEvidence, p: Side, ev_q: PairEvidence, q: Side, settings: Settings) -> bool:
    """Whether ``bridge``, exact or near to ``p`` (``ev_p``) and to ``q`` (``ev_q``) by the rules,
    makes ``p`` and ``q`` copies of one story (see the module docstring)."""
    roles = (_role(bridge, p, ev_p, settings), _role(bridge, q, ev_q, settings))
    if roles == ("fragment", "fragment"):
        return False
    if roles == ("holder", "holder"):
        ev = compare_sides(p, q, settings)
        return _one_story(ev, settings) or _overlapping_parts(ev)
    return True


def _one_story(ev: PairEvidence, settings: Settings) -> bool:
    """The bar a near or semantic member must reach to its cluster's canonical article."""
    return (
        ev.template is None and ev.specifics is None and not ev.roundups and ev.event_score is not None
        and ev.event_score >= settings.decision.cluster_threshold
    )


def _overlapping_parts(ev: PairEvidence) -> bool:
    """Two copies that share much of their text word for word, each cut and edited its own way
    (one without the opening, one retitled with a body sentence): two parts of one text that
    overlap, where a head and a tail, or two stories of one digest, share nothing. Two copies of
    one roundup, each cut its own way, are such parts too, and so is the roundup cut short under its
    own headline (``roundup_cut``); a roundup and a story it holds are not."""
    return (
        ev.template is None and ev.specifics is None and (ev.roundups != 1 or ev.roundup_cut)
        and ev.containment >= OVERLAPPING_PARTS_CONTAINMENT
    )


def _role(bridge: Side, other: Side, ev: PairEvidence, settings: Settings) -> str:
    """How the bridge stands to a copy: the same text, the fragment of it, or the holder of it."""
    if ev.exact or ev.hamming <= near_limit(ev.short, settings.simhash):
        return "same"
    return "fragment" if len(bridge.shingles) < len(other.shingles) else "holder"


def _merge_reason(side: Side, first: Candidate, second: Candidate, first_cid: str, second_cid: str,
                  view: ClusterView, settings: Settings) -> str | None:
    """Why the clusters of two matches of ``side`` are one story, or None."""
    a, b = view.canonical_side(first_cid), view.canonical_side(second_cid)
    # A roundup matches only copies of itself: a cluster it leads and a cluster a story leads are
    # one only when their canonicals match, whatever copies link them (a copy of the roundup that
    # was not told as one can join a report of its first item, and its own copies then bridge);
    # unless the story is the roundup cut short under its own headline (burst tune seed 501: a
    # teaser of a 财经新闻汇总 led the cluster of its later copies).
    canonicals = compare_sides(a, b, settings) if a is not None and b is not None and a.roundup != b.roundup else None
    mixed = canonicals is not None and not canonicals.roundup_cut and (
        _told_as_roundup(a, side, settings) != _told_as_roundup(b, side, settings))
    if not mixed and first.verdict.reason in COPY_REASONS and second.verdict.reason in COPY_REASONS:
        p, q = view.side_of(first.article), view.side_of(second.article)
        if copy_bridge(side, first.evidence, p, second.evidence, q, settings):
            return (f"bridged by a copy of both ({first.verdict.reason.value} to {first.article.id}, "
                    f"{second.verdict.reason.value} to {second.article.id})")
    if a is None or b is None:
        return None
    verdict = judge(canonicals or compare_sides(a, b, settings), settings.decision, settings.simhash)
    return f"canonical articles match ({verdict.reason.value})" if verdict else None


def _told_as_roundup(canonical: Side, bridge: Side, settings: Settings) -> bool:
    """Whether a canonical article is a roundup: told by its own headline, or by the bridge's when
    the bridge is the canonical's text (the same body, or SimHash-near), which a story one roundup
    holds never is. A roundup's copy retitled with a sentence of its body is not told as one by
    its headline; its later copies under the roundup's headline tell it (burst tune seed 697: such
    a copy led a cluster of its own, and the roundup's copies that were exact copies of it could
    not join it to the roundup's cluster)."""
    if canonical.roundup or not bridge.roundup:
        return canonical.roundup
    same_body = canonical.text.content_key == bridge.text.content_key
    return same_body or hamming(canonical.text.simhash, bridge.text.simhash) <= near_limit(
        short_pair(canonical, bridge, settings), settings.simhash)


def _age(view: ClusterView, cluster_id: str) -> tuple:
    """Older canonical first (published earlier; undated last), then the id, so the survivor of a
    merge does not depend on arrival order."""
    side = view.canonical_side(cluster_id)
    when = side.publish_time if side is not None and side.publish_time is not None else _NEVER
    return (when, cluster_id)
