"""Threshold tuning on labelled pairs: sweep each layer's score, report P/R/F1, plot the
precision-recall curves, and recommend settings.

Every pair is featurised once (embeddings in batches) by the comparer ``compare`` uses, which
applies the ingest rules (``comparer.PairComparer.evidence_for_pairs``); a threshold then only
decides which scores count as a match, so a sweep costs nothing more. The recommendation
maximises F1 subject to a precision floor: duplicate detection that merges different news is worse
than one that misses a repost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .compare.evidence import PairEvidence

# (layer, evidence score, setting it calibrates, higher-is-a-match?)
SCORES = (
    ("near", "containment", "decision.near_containment", True),
    ("near", "hamming", "simhash.max_distance", False),
    ("semantic", "event_score", "decision.event_threshold", True),
    ("semantic", "cosine", "decision.semantic_min_cosine", True),
)


@dataclass(frozen=True)
class SweepRow:
    threshold: float
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class Sweep:
    layer: str
    score: str
    setting: str
    rows: list[SweepRow]
    best: SweepRow | None


_LABEL_WORDS = {"0": False, "1": True, "0.0": False, "1.0": True, "false": False, "true": True}


def parse_label(value: Any) -> bool:
    """A 0/1 duplicate label: a bool, 0 or 1 (int or float), or one of "0", "1", "0.0", "1.0",
    "true", "false" (any case, spaces around). Anything else (null, -1, 2, nan, "yes") raises
    ValueError: a label read the wrong way round moves every threshold the sweep recommends."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):  # nan equals neither
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _LABEL_WORDS:
        return _LABEL_WORDS[value.strip().lower()]
    raise ValueError(f"label {value!r} is not 0 or 1")


def pair_from_line(data: Any, label_key: str) -> tuple[Mapping, Mapping, bool]:
    """``{"a": article, "b": article, KEY: 0/1}``, or the sohu shape ``{"source", "target", KEY}``
    whose sides are headlines. Labels are read by ``parse_label``."""
    if not isinstance(data, Mapping):
        raise ValueError("pair must be a JSON object")
    if label_key not in data:
        raise ValueError(f"no label field {label_key!r}")
    a, b = (data.get("a"), data.get("b")) if "a" in data else (data.get("source"), data.get("target"))
    side = lambda x: {"title": x.strip()} if isinstance(x, str) else x  # noqa: E731
    return side(a), side(b), parse_label(data[label_key])


def pair_groups(pairs: Sequence[tuple[Any, Any]], labels: Sequence[bool]) -> list[str]:
    """Cross-validation groups of pairs: a story's pairs together. Duplicates linked by a shared
    article id (directly or through other duplicates) are one group; a pair of two stories goes
    with its first article's. Linking by every shared article would join a file of candidate pairs
    around a few hub articles into one group, and a cross-validation of one group trains on nothing.
    A pair whose sides carry no id is a group of its own."""
    ids = [[str(s["id"]) for s in pair if isinstance(s, Mapping) and s.get("id") not in (None, "")] for pair in pairs]
    group = linked_groups([found for found, same in zip(ids, labels) if same] + [found[:1] for found in ids])
    return [f"article:{group[found[0]]}" if found else f"pair:{i}" for i, found in enumerate(ids)]


def linked_groups(links: Iterable[Sequence[str]]) -> dict[str, str]:
    """Each id's group: the smallest id linked to it, directly or through others (union-find)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for linked in links:
        for other in linked[1:]:
            a, b = root(linked[0]), root(other)
            parent[max(a, b)] = min(a, b)
        if linked:
            root(linked[0])
    return {x: root(x) for x in parent}


def sweep(evidence: Sequence[PairEvidence], labels: Sequence[bool], min_precision: float = 0.95) -> list[Sweep]:
    y = np.asarray(labels, dtype=bool)
    out = []
    for layer, score, setting, higher in SCORES:
        values = np.asarray([getattr(e, score) if getattr(e, score) is not None else np.nan for e in evidence], dtype=float)
        if np.all(np.isnan(values)):
            continue
        finite = values[~np.isnan(values)]
        grid = np.arange(0, 65) if score == "hamming" else np.unique(np.round(np.quantile(finite, np.linspace(0, 1, 101)), 4))
        rows = []
        for t in grid:
            pred = (values >= t) if higher else (values <= t)
            pred &= ~np.isnan(values)
            tp = int(np.sum(pred & y))
            fp = int(np.sum(pred & ~y))
            fn = int(np.sum(~pred & y))
            p = tp / (tp + fp) if tp + fp else 1.0
            r = tp / (tp + fn) if tp + fn else 0.0
            rows.append(SweepRow(float(t), p, r, 2 * p * r / (p + r) if p + r else 0.0))
        eligible = [r for r in rows if r.precision >= min_precision and r.recall > 0]
        best = max(eligible, key=lambda r: (r.f1, r.precision)) if eligible else None
        out.append(Sweep(layer, score, setting, rows, best))
    return out


def plot(sweeps: Iterable[Sweep], path: str, title: str, caption: str = "") -> None:
    """Precision-recall curves, one per layer's score; ``caption`` (the command that made it,
    date, machine) is printed under the axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5), dpi=110)
    for s in sweeps:
        ax.plot([r.recall for r in s.rows], [r.precision for r in s.rows], marker=".", markersize=3, label=f"{s.layer}: {s.score}")
        if s.best:
            ax.scatter([s.best.recall], [s.best.precision], s=40, zorder=3)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left")
    ax.set_title(title)
    if caption:
        fig.text(0.01, 0.01, caption, fontsize=7)
        fig.tight_layout(rect=(0, 0.03, 1, 1))
    else:
        fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def settings_snippet(sweeps: Iterable[Sweep], bands: int) -> str:
    chosen: dict[str, dict[str, Any]] = {}
    for s in sweeps:
        if s.best is None:
            continue
        section, key = s.setting.split(".")
        value: Any = round(s.best.threshold, 4)
        if key == "max_distance":
            value = int(min(value, bands - 1))  # banding only finds distances below the band count
        chosen.setdefault(section, {})[key] = value
    lines = []
    for section, values in chosen.items():
        lines.append(f"[{section}]")
        lines.extend(f"{k} = {v}" for k, v in values.items())
    return "\n".join(lines)
