"""The seed's n×n cosine-matrix dedup against newsdedup, at 5k / 10k / 20k articles: time, peak
memory and pairwise quality, measured in the same run on the same articles and the same vectors.

    python bench/cosine_matrix.py --sizes 5000 10000 20000 --plot docs/bench/cosine_matrix.png

Articles: synthetic reposts of real articles (bench/datasets.py: real ccf2019_inews / cec_news
articles, each with retitled, trimmed, HTML-wrapped and reworded reposts, plus templated reports),
so the truth is known. Both methods get the same default-model embeddings, computed once and
cached in --cache-dir, so neither pays for the model in the timings:

* seed recipe: S = E·Eᵀ (float32, n×n), then greedy: each article not yet taken takes every later
  article with cosine ≥ --threshold into its cluster.
* newsdedup: `Indexer.index_many` with the default settings into a fresh embedded store (exact,
  SimHash, kNN layers and every rule), its embedder replaced by a lookup of the cached vectors
  (the lookup table is built before the timing). It featurises every article (cleaning, jieba,
  SimHash, shingles, headline grams), which the seed recipe does not do.
* newsdedup-decisions (with --decisions-only): the same, with each article's text features also
  computed before the timing, as the seed gets its vectors: what the decisions alone cost.

Each (method, size) runs in its own process; memory is that process's peak RSS above what it held
after loading the articles and vectors (and, for newsdedup-decisions, the features).

Beyond the real repost sets (about 20,000 articles), ``--generated`` sizes take articles from the
store-growth generator (bench/store_growth.py: real sentences, 5% reposts of the last two days,
vectors drawn from a Gaussian fitted to real embeddings) packed into one month, as dense as the
real set is at 20,000 per month times n/20,000. The seed recipe is refused where its n×n float32
matrix alone would not fit in --memory-gib; the arithmetic is printed instead:

    python bench/cosine_matrix.py --sizes 100000 --generated --methods newsdedup
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import datasets  # noqa: E402

from indexer.evaluation import pairwise_prf  # noqa: E402
from indexer.settings import load_settings  # noqa: E402

ARTICLES_PER_SEED = 7  # repost_set makes about this many articles per real seed article


def corpus(cache: Path, n: int) -> tuple[list[dict], dict[str, str], np.ndarray]:
    """The first n articles of one cached repost set, their truth and their embeddings."""
    records_file, vectors_file = cache / "records.jsonl", cache / "vectors.npy"
    if records_file.exists() and vectors_file.exists() and sum(1 for _ in open(records_file)) >= n:
        rows = [json.loads(line) for line in open(records_file, encoding="utf-8")]
        vectors = np.load(vectors_file, mmap_mode="r")
    else:
        from indexer.features.embedding import create_embedder

        records, truth = datasets.repost_set(n // ARTICLES_PER_SEED + 50)
        settings = load_settings(environ={})
        texts = datasets.embedded_texts(records, settings)
        print(f"embedding {len(texts):,} articles once (cached in {cache})", file=sys.stderr)
        vectors = create_embedder(settings.embedding.model).encode(texts)
        rows = [{"record": r, "truth": truth[r["id"]]} for r in records]
        cache.mkdir(parents=True, exist_ok=True)
        with open(records_file, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        np.save(vectors_file, vectors)
    if len(rows) < n:
        raise SystemExit(f"only {len(rows):,} articles can be made from the evaluation data; ask for fewer")
    rows = rows[:n]
    return [r["record"] for r in rows], {r["record"]["id"]: r["truth"] for r in rows}, np.ascontiguousarray(vectors[:n], dtype=np.float32)


DENSE_MONTH_DAYS = 30  # the real set's articles span a month; generated ones are packed as densely


def generated_corpus(n: int) -> tuple[list[dict], dict[str, str], np.ndarray, list[str]]:
    """n articles of the store-growth generator within one month, their truth, their vectors and
    the texts the indexer embeds."""
    import store_growth

    embedder = store_growth.VectorsByHeadline()
    truth: dict[str, str] = {}
    per_day = -(-n // DENSE_MONTH_DAYS)
    fit = store_growth.fitted_gaussian(store_growth.FIT_CACHE)
    records = list(store_growth.articles(n, per_day, 0.05, embedder, fit, truth))
    texts = datasets.embedded_texts(records, load_settings(environ={}))
    return records, truth, np.ascontiguousarray(embedder.encode(texts), dtype=np.float32), texts


def reset_peak_rss() -> float:
    """Reset the kernel's peak-RSS mark (Linux clear_refs 5) and return the current RSS in MiB."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return _status_mib("VmRSS")


def _status_mib(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} missing from /proc/self/status")


def seed_recipe(vectors: np.ndarray, threshold: float) -> list[int]:
    n = len(vectors)
    sims = vectors @ vectors.T
    cluster = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        if cluster[i] >= 0:
            continue
        take = np.flatnonzero((sims[i, i:] >= threshold) & (cluster[i:] < 0)) + i
        cluster[take] = i
    return cluster.tolist()


class CachedVectors:
    """An embedder answering from precomputed vectors, keyed by the text the indexer embeds."""

    name = "use-m3"
    dims = 512

    def __init__(self, table: dict[str, np.ndarray]):
        self._table = table

    def encode(self, texts):
        return np.vstack([self._table[t] for t in texts]) if texts else np.zeros((0, self.dims), np.float32)


class PrecomputedFeatures:
    """A featuriser answering text features from a table by article id (computed before the
    timing), the embedding from the cached vectors: newsdedup's decisions alone."""

    def __init__(self, featurizer, table: dict):
        self._featurizer = featurizer
        self._table = table
        self.settings, self.embedder = featurizer.settings, featurizer.embedder

    def text(self, article):
        return self._table[article.id]

    def embed(self, features):
        return self._featurizer.embed(features)


def text_feature_table(records: list[dict]) -> dict:
    from indexer.article import article_from_record
    from indexer.features import text_features

    settings = load_settings(environ={})
    articles = (article_from_record(r, None, settings.default_tz) for r in records)
    return {a.id: text_features(a.title, a.content, settings) for a in articles}


def run_newsdedup(records: list[dict], table: dict[str, np.ndarray], features: dict | None = None) -> dict[str, str]:
    from indexer.features import Featurizer
    from indexer.pipeline import Indexer
    from indexer.store import open_store

    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(overrides={"store.path": tmp}, environ={})
        embedder = CachedVectors(table)
        featurizer = Featurizer(settings, embedder)
        if features is not None:
            featurizer = PrecomputedFeatures(featurizer, features)
        store = open_store(settings, vector_dims=embedder.dims, embedding_model=embedder.name)
        with Indexer(settings, store, featurizer) as ix:
            outcomes = ix.index_many(records)
    return {o.article_id: o.cluster_id for o in outcomes}


def matrix_gib(n: int) -> float:
    """What the seed recipe's n×n float32 similarity matrix alone takes."""
    return n * n * 4 / 2**30


def measure(method: str, n: int, cache: Path, threshold: float, generated: bool) -> dict:
    if generated:
        records, truth, vectors, texts = generated_corpus(n)
    else:
        records, truth, vectors = corpus(cache, n)
        # The embedder's lookup is keyed by the text the indexer embeds; making that text
        # featurises each article once: done here, before any timing.
        texts = datasets.embedded_texts(records, load_settings(environ={})) if method != "seed" else []
    if method != "seed":
        table = dict(zip(texts, vectors))
        features = text_feature_table(records) if method == "newsdedup-decisions" else None
        run_newsdedup(records[:20], table, features)  # load tokeniser tables and models outside the timing
    base = reset_peak_rss()
    started = time.perf_counter()
    if method == "seed":
        labels = seed_recipe(vectors, threshold)
        pred = {r["id"]: str(c) for r, c in zip(records, labels)}
    else:
        pred = run_newsdedup(records, table, features)
    seconds = time.perf_counter() - started
    peak = _status_mib("VmHWM")
    m = pairwise_prf(pred, truth)
    return {"method": method, "n": n, "seconds": seconds, "peak_extra_mib": max(0.0, peak - base),
            "peak_rss_mib": peak, "precision": m.precision, "recall": m.recall, "f1": m.f1}


def plot(results: list[dict], path: Path, command: str) -> None:
    import plots

    plt = plots.pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for method, label, color in (("seed", "seed: n×n cosine matrix + greedy", "C1"), ("newsdedup", "newsdedup ingest (all layers)", "C0")):
        rs = [r for r in results if r["method"] == method]
        ax1.plot([r["n"] for r in rs], [r["seconds"] for r in rs], "o-", color=color, label=label)
        ax2.plot([r["n"] for r in rs], [r["peak_extra_mib"] for r in rs], "o-", color=color, label=label)
    ax1.set(xlabel="articles", ylabel="seconds (embeddings precomputed)", title="Time")
    ax2.set(xlabel="articles", ylabel="peak extra RSS (MiB)", title="Memory")
    ax1.legend(fontsize=8)
    plots.save(fig, path, command)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000])
    parser.add_argument("--methods", nargs="+", choices=["seed", "newsdedup"], default=["seed", "newsdedup"])
    parser.add_argument("--decisions-only", action="store_true",
                        help="also time newsdedup with the text features computed before the timing")
    parser.add_argument("--generated", action="store_true",
                        help="generated articles and vectors in one dense month instead of the real repost sets")
    parser.add_argument("--memory-gib", type=float, default=24.0,
                        help="the seed recipe is refused where its n×n matrix alone would need more")
    parser.add_argument("--threshold", type=float, default=0.85, help="the seed recipe's cosine threshold")
    parser.add_argument("--cache-dir", default=str(Path(tempfile.gettempdir()) / "newsdedup-bench-cosine"))
    parser.add_argument("--plot")
    parser.add_argument("--measure", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    cache = Path(args.cache_dir)
    if args.measure:
        print(json.dumps(measure(args.measure[0], int(args.measure[1]), cache, args.threshold, args.generated)))
        return
    if not args.generated:
        corpus(cache, max(args.sizes))  # build and embed once, outside the timings
    methods = list(args.methods) + (["newsdedup-decisions"] if args.decisions_only else [])
    results, refused = [], []
    for n in args.sizes:
        for method in methods:
            if method == "seed" and matrix_gib(n) > args.memory_gib:
                refused.append(n)
                print(f"  {n:>7,} seed: refused, its n×n float32 matrix alone needs {n:,}² × 4 bytes = "
                      f"{matrix_gib(n):.1f} GiB (limit --memory-gib {args.memory_gib:g})", file=sys.stderr)
                continue
            out = subprocess.run([sys.executable, __file__, "--measure", method, str(n), "--cache-dir", str(cache),
                                  "--threshold", str(args.threshold)] + (["--generated"] if args.generated else []),
                                 check=True, capture_output=True, text=True)
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = results[-1]
            print(f"  {n:>7,} {method:19s} {r['seconds']:8.1f} s  peak +{r['peak_extra_mib']:8,.0f} MiB "
                  f"(RSS {r['peak_rss_mib']:,.0f})  pairwise P {r['precision']:.4f} R {r['recall']:.4f} F1 {r['f1']:.4f}",
                  file=sys.stderr)
    source = "generated articles and vectors, one dense month" if args.generated else "real repost sets, their embeddings"
    print(f"n×n cosine matrix (seed recipe, threshold {args.threshold}) vs newsdedup, same articles and vectors ({source})")
    if args.decisions_only:
        print("newsdedup-decisions: text features computed before the timing, as the seed's vectors are")
    print(f"{'articles':>9} | {'method':<19} | {'seconds':>8} | {'peak extra MiB':>14} | {'peak RSS MiB':>12} | "
          f"{'P':>6} | {'R':>6} | {'F1':>6}")
    for r in results:
        print(f"{r['n']:>9,} | {r['method']:<19} | {r['seconds']:8.1f} | {r['peak_extra_mib']:14,.0f} | "
              f"{r['peak_rss_mib']:12,.0f} | {r['precision']:.4f} | {r['recall']:.4f} | {r['f1']:.4f}")
    for n in args.sizes:
        seed = next((r for r in results if r["method"] == "seed" and r["n"] == n), None)
        for ours in (r for r in results if r["method"] != "seed" and r["n"] == n):
            if seed is not None:
                print(f"  {n:,}: {ours['method']} takes {ours['seconds'] / seed['seconds']:.2f}x the seed's time and "
                      f"{ours['peak_extra_mib'] / max(seed['peak_extra_mib'], 1):.2f}x its extra memory")
    for n in refused:
        print(f"  {n:,}: the seed recipe was not run: its float32 matrix alone is n²×4 bytes = {matrix_gib(n):.1f} GiB")
    biggest = max(args.sizes)
    if biggest < 100_000:
        print(f"  arithmetic, not measured: the float32 matrix alone is n²×4 bytes = {matrix_gib(biggest):.1f} GiB at "
              f"{biggest:,}, {matrix_gib(100_000):.0f} GiB at 100,000 (this machine has 24 GiB)")
    if args.plot:
        plot([r for r in results if r["method"] in ("seed", "newsdedup")], Path(args.plot),
             "python bench/cosine_matrix.py --sizes " + " ".join(map(str, args.sizes)))


if __name__ == "__main__":
    main()
