"""Clustering and pair-classification metrics used by the quality benchmarks and ``newsdedup eval``.

Pairwise scores count article pairs: a predicted pair is two articles in one predicted cluster,
a true pair two articles with one truth label. Computed from the contingency table, so a million
articles cost a dictionary pass, not a million squared pairs.

Nothing to score is an error, not a score: ``pairwise_prf`` and ``bcubed_prf`` with no article
both mappings know, and ``binary_prf`` with no pair, raise ValueError (a perfect 1.0 over an empty
set reads as a result). With articles but no pair on either side (all singletons), pairwise
precision and recall are 1.0: nothing was merged or missed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def row(self) -> str:
        return f"P={self.precision:.4f} R={self.recall:.4f} F1={self.f1:.4f} (tp={self.tp} fp={self.fp} fn={self.fn})"


def _prf(tp: int, fp: int, fn: int) -> PRF:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return PRF(p, r, f, tp, fp, fn)


def _pairs(n: int) -> int:
    return n * (n - 1) // 2


def _contingency(predicted: Mapping[str, Hashable], truth: Mapping[str, Hashable]) -> tuple[list[str], Counter, Counter, Counter]:
    """The ids both mappings know (ValueError when there is none), with the sizes of each
    (cluster, label) cell, each predicted cluster and each truth group over them."""
    ids = list(predicted.keys() & truth.keys())
    if not ids:
        raise ValueError("nothing to score: no article is both predicted and labelled")
    return ids, Counter((predicted[i], truth[i]) for i in ids), Counter(predicted[i] for i in ids), Counter(truth[i] for i in ids)


def pairwise_prf(predicted: Mapping[str, Hashable], truth: Mapping[str, Hashable]) -> PRF:
    """Pairwise P/R/F1 of a clustering against truth labels, over the ids both know (ValueError
    when there is none)."""
    _, joint, pred_sizes, true_sizes = _contingency(predicted, truth)
    tp = sum(_pairs(n) for n in joint.values())
    return _prf(tp, sum(_pairs(n) for n in pred_sizes.values()) - tp, sum(_pairs(n) for n in true_sizes.values()) - tp)


def bcubed_prf(predicted: Mapping[str, Hashable], truth: Mapping[str, Hashable]) -> PRF:
    """B-cubed P/R/F1: per-article precision and recall of its cluster, averaged (ValueError when
    no article is both predicted and labelled)."""
    ids, joint, pred_sizes, true_sizes = _contingency(predicted, truth)
    p = sum(joint[(predicted[i], truth[i])] / pred_sizes[predicted[i]] for i in ids) / len(ids)
    r = sum(joint[(predicted[i], truth[i])] / true_sizes[truth[i]] for i in ids) / len(ids)
    return PRF(p, r, 2 * p * r / (p + r) if p + r else 0.0)


def binary_prf(predicted: Iterable[bool], actual: Iterable[bool]) -> PRF:
    """P/R/F1 of pair decisions against pair labels (ValueError when there is no pair)."""
    tp = fp = fn = n = 0
    for p, a in zip(predicted, actual):
        n += 1
        tp += p and a
        fp += p and not a
        fn += a and not p
    if not n:
        raise ValueError("nothing to score: no pair")
    return _prf(tp, fp, fn)


@dataclass(frozen=True)
class Spread:
    """One score over several runs (arrival orders): its mean and its range."""

    mean: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.mean:.4f} ({self.low:.4f}-{self.high:.4f})"


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("no runs to summarise")
    return Spread(sum(values) / len(values), min(values), max(values))


def over_runs(runs: Sequence[PRF]) -> dict[str, Spread]:
    """Precision, recall and F1 of several runs of one set (e.g. shuffled arrival orders): an
    incremental clusterer's score depends on the order, so one order's figure is one draw."""
    return {name: spread([getattr(r, name) for r in runs]) for name in ("precision", "recall", "f1")}


def by_layer(outcomes, truth: Mapping[str, Hashable]) -> dict[str, PRF]:
    """Precision of each layer's links: a duplicate outcome is a link (article -> dup_of),
    correct when both carry one truth label."""
    counts: dict[str, list[int]] = {}
    for o in outcomes:
        if o.reason and o.dup_of and o.article_id in truth and o.dup_of in truth:
            right = truth[o.article_id] == truth[o.dup_of]
            c = counts.setdefault(o.reason, [0, 0])
            c[0 if right else 1] += 1
    return {reason: _prf(tp, fp, 0) for reason, (tp, fp) in sorted(counts.items())}


def worst_errors(predicted: Mapping[str, Hashable], truth: Mapping[str, Hashable], limit: int = 10):
    """The largest false merges (predicted clusters holding several truth labels) and the most
    split truth groups (one label over several predicted clusters), for reading."""
    from collections import defaultdict

    clusters: dict = defaultdict(list)
    groups: dict = defaultdict(list)
    for i in predicted.keys() & truth.keys():
        clusters[predicted[i]].append(i)
        groups[truth[i]].append(i)
    merges = sorted(
        ((cid, ids) for cid, ids in clusters.items() if len({truth[i] for i in ids}) > 1),
        key=lambda item: -len(item[1]),
    )[:limit]
    misses = sorted(
        ((label, ids) for label, ids in groups.items() if len({predicted[i] for i in ids}) > 1),
        key=lambda item: -len({predicted[i] for i in item[1]}),
    )[:limit]
    return merges, misses
