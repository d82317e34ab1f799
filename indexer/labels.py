"""Corrections people made, as labelled pairs of articles.

Every correction is an entry of the store's change log (``Store.cluster_changes``) with ``by``
naming who made it (the indexer's own merges say ``indexer``), so the labels live in the store:
with Elasticsearch in its index, where Kibana shows them too. A pair is read from each entry:

* merge of cluster ``source`` into ``into``: their canonical articles are the same story (1);
* split of ``article_id`` out of ``source``: the article and the article it was compared against
  (named in the reason, ``... as <id>``; else the cluster's canonical) are different stories (0);
  split into another cluster: the article and that cluster's canonical are the same story (1).

``newsdedup labels export`` writes them as the pairs file ``newsdedup tune`` reads.
"""

from __future__ import annotations

import re
from typing import Iterable

from .store.base import INDEXER, ClusterChange
SPLIT_REASON = "not the same story as {partner}"
MERGE_REASON = "same story"
_PARTNER = re.compile(r"not the same story as (.+)$")


def person_name(text: str, default: str) -> str:
    """The name a correction is recorded under: one printable line of at most 60 characters,
    ``default`` when empty, and never the indexer's own name, whose entries are no corrections
    (a person calling themselves "indexer" would have their splits ignored)."""
    name = "".join(ch for ch in " ".join(text.split())[:60] if ch.isprintable())
    if not name:
        return default
    return f"{name} (person)" if name.lower() == INDEXER else name


def split_reason(partner: str) -> str:
    return SPLIT_REASON.format(partner=partner)


def labels_from_changes(changes: Iterable[ClusterChange]) -> list[dict]:
    """The labelled pairs of the corrections among ``changes``, oldest first."""
    out: list[dict] = []
    for ch in changes:
        if ch.by == INDEXER:
            continue
        at = ch.at.isoformat() if ch.at else None
        base = {"kind": ch.kind, "by": ch.by, "at": at}
        if ch.kind == "merge":
            out.append({"a": ch.source, "b": ch.into, "label": 1, **base})
        elif ch.kind == "split" and ch.article_id:
            m = _PARTNER.search(ch.reason or "")
            partner = m.group(1) if m else ch.source
            if partner != ch.article_id:
                out.append({"a": ch.article_id, "b": partner, "label": 0, **base})
            if ch.into != ch.article_id:
                out.append({"a": ch.article_id, "b": ch.into, "label": 1, **base})
    return out


def different_pairs(changes: Iterable[ClusterChange]) -> set[frozenset[str]]:
    """Pairs a person said are different stories (and not later said to be the same)."""
    verdict = {frozenset((lab["a"], lab["b"])): lab["label"] for lab in labels_from_changes(changes)}  # the last word wins
    return {pair for pair, label in verdict.items() if label == 0 and len(pair) == 2}
