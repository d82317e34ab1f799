"""The learned semantic decision: a logistic regression over the pair evidence, calibrated to a
probability that two reports are the same news event.

The hard rules stay guards (templated reports, conflicting headline figures, conflicting event
specifics refuse a match whatever the model says); the model replaces only the hand-set
thresholds of the semantic layer (``decision.event_threshold`` / ``semantic_min_cosine``) when
``decision.semantic_model`` names one: ``builtin`` (fitted by ``bench/fit_pair_model.py`` on the
tune parts of the labelled sets, shipped as package data) or the path of a file written by
``newsdedup tune --fit``. Pure numpy: fitting is iteratively reweighted least squares.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Sequence

import numpy as np

from ..errors import ConfigError
from .evidence import PairEvidence

FEATURES = ("cosine", "title_sim", "cosine_x_title", "containment", "fingerprint_sim", "headline_only", "title_figures_conflict")
BUILTIN = "builtin"
RULES = "rules"
MODEL_FORMAT = "newsdedup-pair-model-1"


def features(ev: PairEvidence) -> np.ndarray:
    """The model's inputs for one pair (a pair without embeddings reads cosine 0)."""
    cosine = ev.cosine if ev.cosine is not None else 0.0
    return np.array([
        cosine, ev.title_sim, cosine * ev.title_sim, ev.containment, 1.0 - ev.hamming / 64.0,
        float(ev.headline_only), float(ev.title_numbers_conflict),
    ])


@dataclass(frozen=True)
class PairModel:
    weights: tuple[float, ...]
    bias: float
    threshold: float  # probability from which a pair of articles is the same event
    headline_threshold: float  # the same for a pair of headlines (no bodies): another regime
    names: tuple[str, ...] = FEATURES
    about: dict = field(default_factory=dict)  # what it was fitted on, cross-validated figures

    def probability(self, ev: PairEvidence) -> float:
        return float(self.probabilities(features(ev)[None, :])[0])

    def threshold_for(self, ev: PairEvidence) -> float:
        return self.headline_threshold if ev.headline_only else self.threshold

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        return _sigmoid(x @ np.asarray(self.weights) + self.bias)

    def save(self, path: str | Path) -> None:
        data = {"format": MODEL_FORMAT, **asdict(self)}
        Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")

    @classmethod
    def from_json(cls, text: str, where: str) -> "PairModel":
        try:
            data = json.loads(text)
            if data.pop("format", None) != MODEL_FORMAT:
                raise ValueError(f"not a {MODEL_FORMAT} file")
            model = cls(tuple(data["weights"]), float(data["bias"]), float(data["threshold"]),
                        float(data["headline_threshold"]), tuple(data["names"]), data.get("about", {}))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError("decision.semantic_model", f"{where}: {exc}") from None
        if model.names != FEATURES or len(model.weights) != len(FEATURES):
            raise ConfigError("decision.semantic_model", f"{where}: fitted on features {model.names}, this version reads {FEATURES}")
        return model


@lru_cache(maxsize=8)
def load_model(name: str) -> PairModel | None:
    """The model a ``decision.semantic_model`` value names; None for the hand-set rules."""
    if name == RULES:
        return None
    if name == BUILTIN:
        return PairModel.from_json(resources.files("indexer.data").joinpath("pair_model.json").read_text("utf-8"), "builtin model")
    try:
        text = Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("decision.semantic_model", f"cannot read {name}: {exc}") from None
    return PairModel.from_json(text, name)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, weights: np.ndarray | None = None, iterations: int = 50) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method (IRLS) with an L2 penalty on the weights (not the
    bias); ``weights`` per example balance the sets a model is fitted on."""
    n, d = x.shape
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    a = np.hstack([x, np.ones((n, 1))])
    beta = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = _sigmoid(a @ beta)
        gradient = a.T @ (w * (p - y)) + penalty * beta
        hessian = (a * (w * p * (1 - p))[:, None]).T @ a + np.diag(penalty) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return beta[:-1], float(beta[-1])


def best_threshold(p: np.ndarray, y: np.ndarray, min_precision: float) -> tuple[float, float, float, float]:
    """(threshold, precision, recall, F1) with the best F1 among thresholds reaching
    ``min_precision``; the highest-precision threshold when none does."""
    best = None
    for t in np.unique(np.round(p, 4)):
        pred = p >= t
        tp, fp, fn = int(np.sum(pred & y)), int(np.sum(pred & ~y)), int(np.sum(~pred & y))
        prec = tp / (tp + fp) if tp + fp else 1.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        key = (prec >= min_precision, f1 if prec >= min_precision else prec)
        if best is None or key > best[0]:
            best = (key, float(t), prec, rec, f1)
    return best[1:]


def cross_validate(x: np.ndarray, y: np.ndarray, groups: Sequence[str], folds: int = 5, l2: float = 1.0,
                   weights: np.ndarray | None = None, min_precision: float = 0.9, refused: np.ndarray | None = None) -> dict:
    """Out-of-fold probabilities by ``folds`` folds of whole groups (a group never straddles a
    fold), the threshold they support, and how calibrated they are (mean predicted probability
    against the observed rate in ten bins). Both calibration means are weighted by ``weights``,
    the weights the model is fitted with: it is calibrated on the weighted set, so an unweighted
    observed rate would show a miscalibration that is only the weighting (``pairs`` still counts
    pairs). Pairs a guard ``refused`` count as predicted 0 for the threshold and its figures, as
    they are in a decision."""
    y = np.asarray(y, dtype=bool)
    fold_of = np.array([hash_fold(g, folds) for g in groups])
    if len(set(fold_of.tolist())) < 2:  # every fold would be trained on nothing or held out empty
        raise ValueError(f"cross-validation needs pairs in two folds at least: {len(set(groups))} group(s) of pairs")
    oof = np.zeros(len(y))
    for k in range(folds):
        train, held = fold_of != k, fold_of == k
        if not held.any():
            continue
        w, b = fit(x[train], y[train].astype(float), l2, None if weights is None else weights[train])
        oof[held] = _sigmoid(x[held] @ w + b)
    calibration_of = oof.copy()
    if refused is not None:
        oof[np.asarray(refused, dtype=bool)] = 0.0
    threshold, precision, recall, f1 = best_threshold(oof, y, min_precision)
    bins = []
    sample_weight = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    for lo in np.linspace(0, 0.9, 10):
        inside = (calibration_of >= lo) & (calibration_of < lo + 0.1 + (1e-9 if lo >= 0.9 else 0))
        w_in = sample_weight[inside]
        if w_in.sum() > 0:
            bins.append({"bin": f"{lo:.1f}-{lo + 0.1:.1f}", "pairs": int(inside.sum()),
                         "predicted": round(float(np.average(calibration_of[inside], weights=w_in)), 3),
                         "observed": round(float(np.average(y[inside], weights=w_in)), 3)})
    return {"folds": folds, "threshold": threshold, "precision": round(precision, 4), "recall": round(recall, 4),
            "f1": round(f1, 4), "calibration": bins, "oof": oof}


def hash_fold(group: str, folds: int) -> int:
    return int.from_bytes(hashlib.sha256(group.encode("utf-8")).digest()[:4], "big") % folds


def refused_by_guards(evidence: Sequence[PairEvidence], decision) -> np.ndarray:
    """Pairs the hard rules refuse as semantic matches whatever a model says, or that lie outside
    where the semantic checks look (``rules.within_semantic_reach``)."""
    from .rules import refused_as_semantic, within_semantic_reach  # noqa: PLC0415 - rules imports this module lazily too

    return np.array([refused_as_semantic(ev) or not within_semantic_reach(ev, decision) for ev in evidence])


def fit_model(x: np.ndarray, y: np.ndarray, groups: Sequence[str], weights: np.ndarray | None = None, l2: float = 1.0,
              min_precision: float = 0.9, min_precision_headlines: float = 0.75, about: dict | None = None,
              refused: np.ndarray | None = None) -> tuple[PairModel, dict]:
    """Cross-validate, pick each regime's threshold from the out-of-fold probabilities of the pairs
    the guards let through (best F1 at the precision floor: article pairs, headline pairs), then
    fit on everything."""
    y = np.asarray(y, dtype=bool)
    report = cross_validate(x, y, groups, folds=5, l2=l2, weights=weights, min_precision=min_precision, refused=refused)
    oof = report.pop("oof")
    headline = x[:, FEATURES.index("headline_only")] > 0
    thresholds = {}
    for name, inside, floor in (("article_pairs", ~headline, min_precision), ("headline_pairs", headline, min_precision_headlines)):
        if inside.any() and y[inside].any():
            t, p, r, f = best_threshold(oof[inside], y[inside], floor)
            report[name] = {"pairs": int(inside.sum()), "threshold": round(t, 4), "precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4)}
            thresholds[name] = t
    w, b = fit(x, y.astype(float), l2, weights)
    model = PairModel(tuple(float(v) for v in w), b, float(thresholds.get("article_pairs", report["threshold"])),
                      float(thresholds.get("headline_pairs", report["threshold"])),
                      about={**(about or {}), "cross_validation": report})
    return model, {**report, "oof": oof}
