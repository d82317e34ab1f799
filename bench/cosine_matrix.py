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
  SimHash, kNN layers and every rule), its embedder replaced by a lookup of the cached vectors.

Each (method, size) runs in its own process; memory is that process's peak RSS above what it held
after loading the articles and vectors.
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


def run_newsdedup(records: list[dict], vectors: np.ndarray) -> dict[str, str]:
    from indexer.features import Featurizer
    from indexer.pipeline import Indexer
    from indexer.store import open_store

    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(overrides={"store.path": tmp}, environ={})
        texts = datasets.embedded_texts(records, settings)
        embedder = CachedVectors(dict(zip(texts, vectors)))
        store = open_store(settings, vector_dims=embedder.dims, embedding_model=embedder.name)
        with Indexer(settings, store, Featurizer(settings, embedder)) as ix:
            outcomes = ix.index_many(records)
    return {o.article_id: o.cluster_id for o in outcomes}


def measure(method: str, n: int, cache: Path, threshold: float) -> dict:
    records, truth, vectors = corpus(cache, n)
    if method != "seed":
        run_newsdedup(records[:20], vectors[:20])  # load tokeniser tables and models outside the timing
    base = reset_peak_rss()
    started = time.perf_counter()
    if method == "seed":
        labels = seed_recipe(vectors, threshold)
        pred = {r["id"]: str(c) for r, c in zip(records, labels)}
    else:
        pred = run_newsdedup(records, vectors)
    seconds = time.perf_counter() - started
    peak = _status_mib("VmHWM")
    m = pairwise_prf(pred, truth)
    return {"method": method, "n": n, "seconds": seconds, "peak_extra_mib": max(0.0, peak - base),
            "precision": m.precision, "recall": m.recall, "f1": m.f1}


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
    parser.add_argument("--threshold", type=float, default=0.85, help="the seed recipe's cosine threshold")
    parser.add_argument("--cache-dir", default=str(Path(tempfile.gettempdir()) / "newsdedup-bench-cosine"))
    parser.add_argument("--plot")
    parser.add_argument("--measure", nargs=2, metavar=("METHOD", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    cache = Path(args.cache_dir)
    if args.measure:
        print(json.dumps(measure(args.measure[0], int(args.measure[1]), cache, args.threshold)))
        return
    corpus(cache, max(args.sizes))  # build and embed once, outside the timings
    results = []
    for n in args.sizes:
        for method in ("seed", "newsdedup"):
            out = subprocess.run([sys.executable, __file__, "--measure", method, str(n), "--cache-dir", str(cache),
                                  "--threshold", str(args.threshold)], check=True, capture_output=True, text=True)
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = results[-1]
            print(f"  {n:>7,} {method:10s} {r['seconds']:8.1f} s  peak +{r['peak_extra_mib']:8,.0f} MiB  "
                  f"pairwise P {r['precision']:.4f} R {r['recall']:.4f} F1 {r['f1']:.4f}", file=sys.stderr)
    print(f"n×n cosine matrix (seed recipe, threshold {args.threshold}) vs newsdedup, same articles and vectors")
    print(f"{'articles':>9} | {'method':<10} | {'seconds':>8} | {'peak extra MiB':>14} | {'P':>6} | {'R':>6} | {'F1':>6}")
    for r in results:
        print(f"{r['n']:>9,} | {r['method']:<10} | {r['seconds']:8.1f} | {r['peak_extra_mib']:14,.0f} | "
              f"{r['precision']:.4f} | {r['recall']:.4f} | {r['f1']:.4f}")
    for n in args.sizes:
        seed = next(r for r in results if r["method"] == "seed" and r["n"] == n)
        ours = next(r for r in results if r["method"] == "newsdedup" and r["n"] == n)
        print(f"  {n:,}: newsdedup takes {ours['seconds'] / seed['seconds']:.2f}x the seed's time and "
              f"{ours['peak_extra_mib'] / max(seed['peak_extra_mib'], 1):.2f}x its extra memory")
    biggest = max(args.sizes)
    print(f"  arithmetic, not measured: the float32 matrix alone is n²×4 bytes = {biggest**2 * 4 / 2**30:.1f} GiB at "
          f"{biggest:,}, {100_000**2 * 4 / 2**30:.0f} GiB at 100,000 (this machine has 24 GiB)")
    if args.plot:
        plot(results, Path(args.plot), "python bench/cosine_matrix.py --sizes " + " ".join(map(str, args.sizes)))


if __name__ == "__main__":
    main()
