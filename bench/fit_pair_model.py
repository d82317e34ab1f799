"""Fit the builtin semantic pair model (indexer/data/pair_model.json) on the TUNE parts of the
labelled sets, report 5-fold cross-validated P/R/F1 and calibration, and write the model.

    python bench/fit_pair_model.py                 # fit, cross-validate, write the builtin model
    python bench/fit_pair_model.py --dry-run       # cross-validate only
    python bench/fit_pair_model.py --verifier      # choose the e5 verifier's bars (decision.verifier_min_cosine*)

Pairs (bench/splits.py tune parts only; the test parts are never read here):
- sohu2021 short-short B train: headline pairs, labelB (same event);
- ecom2022 dev: every pair of articles of tune-part events whose embeddings reach the kNN floor,
  labelled same event or not;
- reposts of real articles (first generator, tune seeds): an article and each of its reposts
  (positive), and other stories within the kNN floor (negative).
Each set carries the same total weight, so the many sohu pairs do not drown the articles.

With ``--verifier`` it fits no model: on the same tune pairs it finds the borderline ones
(indexer/compare/verifier.py: what ``decision.verifier = "e5-small"`` reads in the band the
``decision.verifier_min_event``/``verifier_max_event`` settings give), embeds their
headlines with e5 and prints, per regime (article pairs: ecom + reposts; headline pairs: sohu),
the e5 cosine bar with the best F1 of the whole regime when the first stage's decision
(``decision.semantic_model``) is replaced by "e5 cosine >= bar" on its borderline pairs. Those
bars are the defaults of ``decision.verifier_min_cosine`` and ``verifier_min_cosine_headlines``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402
import splits  # noqa: E402

from indexer.comparer import PairComparer  # noqa: E402
from indexer.compare.model import FEATURES, features, fit_model, refused_by_guards  # noqa: E402
from indexer.compare.rules import judge  # noqa: E402
from indexer.compare.verifier import HeadlineVerifier, borderline, verifier_text  # noqa: E402
from indexer.features.embedding import E5SmallEmbedder  # noqa: E402
from indexer.settings import load_settings  # noqa: E402

MODEL_PATH = Path(__file__).resolve().parents[1] / "indexer" / "data" / "pair_model.json"


def candidate_pairs(sides, floor):
    """Index pairs whose embeddings reach the kNN floor (what the store would hand the rules)."""
    m = np.vstack([s.vector for s in sides])
    sims = m @ m.T
    return [(i, j) for i, j in itertools.combinations(range(len(sides)), 2) if sims[i, j] >= floor]


def prf(pred: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    tp, fp, fn = int(np.sum(pred & y)), int(np.sum(pred & ~y)), int(np.sum(~pred & y))
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def choose_verifier_bars(evidence, pair_sides, labels, sets, settings) -> None:
    """Print the e5 bar of each regime (see the module's docstring) and what it does on tune."""
    on = settings.replace(**{"decision.verifier": "e5-small"})
    verifier = HeadlineVerifier(E5SmallEmbedder())
    y = np.asarray(labels, dtype=bool)
    base = np.asarray([judge(ev, settings.decision, settings.simhash) is not None for ev in evidence])
    band = np.asarray([borderline(ev, on) for ev in evidence])
    e5 = np.full(len(y), np.nan)
    started = time.perf_counter()
    for k in np.flatnonzero(band):
        a, b = pair_sides[k]
        e5[k] = verifier.cosine(verifier_text(a.text.clean_title, a.text.clean_body), verifier_text(b.text.clean_title, b.text.clean_body))
    print(f"verifier: {int(band.sum())} borderline pairs of {len(y)}, {verifier.embedded} headlines embedded by e5 "
          f"({time.perf_counter() - started:.0f}s); first stage: decision.semantic_model = {settings.decision.semantic_model}")
    names = np.asarray(sets)
    for regime, inside, key in (("article pairs (ecom, reposts)", names != "sohu", "decision.verifier_min_cosine"),
                                ("headline pairs (sohu)", names == "sohu", "decision.verifier_min_cosine_headlines")):
        m = band & inside
        if not m.any():
            continue

        def decide(t, m=m, inside=inside):
            return np.where(m, e5 >= t, base)[inside]

        bar = max(np.unique(np.round(e5[m], 3)), key=lambda t: (prf(decide(t), y[inside])[2], t))
        print(f"  {regime}: {int(m.sum())} borderline of {int(inside.sum())}; first stage P %.3f R %.3f F1 %.3f" % prf(base[inside], y[inside])
              + f"; with {key} = {bar:.3f}: P %.3f R %.3f F1 %.3f" % prf(decide(bar), y[inside]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sohu", type=int, default=4000, help="sohu pairs of the tune part to use")
    parser.add_argument("--seeds", type=int, default=150, help="repost seeds (tune part)")
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--min-precision", type=float, default=0.9, help="for article pairs")
    parser.add_argument("--min-precision-headlines", type=float, default=0.75,
                        help="for headline pairs (sohu): the rules reach 0.73 there")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--verifier", action="store_true", help="choose the e5 verifier's bars instead of fitting the model")
    args = parser.parse_args()
    # the first stage's evidence, without the verifier's cosine (choose_verifier_bars adds it)
    settings = load_settings(overrides={"store.path": "unused", "decision.verifier": "none"}, environ={})
    comparer = PairComparer.open(settings)
    floor = settings.decision.knn_min_cosine
    rows, labels, groups, sets = [], [], [], []
    started = time.perf_counter()

    evidence, pair_sides = [], []

    def add(ev, label, group, name, a, b):
        """``group``: the pair's cross-validation group, its story or event (of two, the smaller):
        a story's pairs are held out together. An article of pairs across two stories can be in
        two folds; grouping by every shared article joins the whole candidate set into one group."""
        evidence.append(ev)
        pair_sides.append((a, b))
        rows.append(features(ev))
        labels.append(bool(label))
        groups.append(group)
        sets.append(name)

    sohu = list(datasets.sohu_pairs(part="tune"))[: args.sohu]
    sides = comparer.sides([{"id": f"s{i}", "title": x} for i, (a, b, _) in enumerate(sohu) for x in (a, b)])
    for i, (a, b, y) in enumerate(sohu):
        add(comparer.evidence(sides[2 * i], sides[2 * i + 1]), y, splits.sohu_key(a, b), "sohu", sides[2 * i], sides[2 * i + 1])

    ecom = list(datasets.ecom_articles(part="tune"))
    sides = comparer.sides([a for a, _ in ecom])
    for i, j in candidate_pairs(sides, floor):
        (a, ea), (b, eb) = ecom[i], ecom[j]
        add(comparer.evidence(sides[i], sides[j]), ea == eb, splits.ecom_key(min(ea, eb)), "ecom", sides[i], sides[j])

    records, truth = datasets.repost_set(args.seeds, part="tune")
    records = [r for r in records if r.get("kind") != "template"]
    sides = comparer.sides(records)
    for i, j in candidate_pairs(sides, floor):
        a, b = records[i]["id"], records[j]["id"]
        same = truth[a] == truth[b]
        # every positive pair would drown the set: keep the pairs with an original in them
        if same and records[i]["kind"] != "original" and records[j]["kind"] != "original":
            continue
        add(comparer.evidence(sides[i], sides[j]), same, splits.story_key(min(truth[a], truth[b])), "reposts", sides[i], sides[j])

    if args.verifier:
        choose_verifier_bars(evidence, pair_sides, labels, sets, settings)
        return
    x, y = np.vstack(rows), np.asarray(labels, dtype=bool)
    names = np.asarray(sets)
    weights = np.zeros(len(y))
    for name in set(sets):
        weights[names == name] = len(y) / (len(set(sets)) * np.sum(names == name))
    print(f"pairs: {dict(zip(*np.unique(names, return_counts=True)))}, positives {int(y.sum())}, "
          f"features {FEATURES}, {time.perf_counter() - started:.0f}s")
    model, cv = fit_model(x, y, groups, weights, args.l2, args.min_precision, args.min_precision_headlines,
                          about={"command": "python bench/fit_pair_model.py"}, refused=refused_by_guards(evidence, settings.decision))
    oof = cv.pop("oof")
    for name in ("article_pairs", "headline_pairs"):
        print(f"5-fold CV, {name}: {cv[name]}")
    for name in sorted(set(sets)):
        inside = names == name
        pred = oof[inside] >= np.where(x[inside, FEATURES.index("headline_only")] > 0, model.headline_threshold, model.threshold)
        tp, fp, fn = int(np.sum(pred & y[inside])), int(np.sum(pred & ~y[inside])), int(np.sum(~pred & y[inside]))
        p = tp / (tp + fp) if tp + fp else 1.0
        r = tp / (tp + fn) if tp + fn else 0.0
        cv.setdefault("per_set", {})[name] = {"pairs": int(inside.sum()), "precision": round(p, 4), "recall": round(r, 4),
                                              "f1": round(2 * p * r / (p + r) if p + r else 0.0, 4)}
        print(f"  {name:8s} {cv['per_set'][name]}")
    print("calibration (out-of-fold):", *(f"{b['bin']}: {b['pairs']} pairs, predicted {b['predicted']} observed {b['observed']}" for b in cv["calibration"]), sep="\n  ")
    print("weights:", dict(zip(FEATURES, np.round(model.weights, 3))), "bias", round(model.bias, 3))
    model.about["cross_validation"]["per_set"] = cv["per_set"]
    model.about["fitted_on"] = "tune parts: " + ", ".join(f"{k} {v['pairs']} pairs" for k, v in cv["per_set"].items())
    if not args.dry_run:
        model.save(MODEL_PATH)
        print(f"wrote {MODEL_PATH}")


if __name__ == "__main__":
    main()
