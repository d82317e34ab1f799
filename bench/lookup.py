"""Lookup scale curve: the embedded store vs a numpy linear scan vs the `simhash` package's
SimhashIndex, at several store sizes, with latency and memory per article.

    python bench/lookup.py --sizes 10000 100000 --queries 1000
    python bench/lookup.py --sizes 10000 100000 1000000 --data-dir DIR --plot docs/bench/lookup.png

Stores are built once under --data-dir (a fresh temporary directory by default) and reused by
later runs with the same directory; each size is measured in its own process so the memory figures
belong to that method alone.

Synthetic articles: random 64-bit SimHash fingerprints, publish times spread over a year, and
512-dim vectors drawn from a Gaussian fitted to the default model's embeddings of real news
(ccf2019_inews: mean and covariance of about 3,000 articles, cached in the data directory), so the
vectors have the anisotropy real embeddings have; `--vectors uniform` draws them uniformly on the
sphere instead (the worst case for HNSW). A query is a stored article with 2 fingerprint bits
flipped and its vector plus noise (cosine about 0.9), asked the way the indexer asks: exact key,
SimHash bands with a Hamming bound of 3, kNN (k and cosine floor from the default settings) inside a
±7-day window. The first 100 queries warm the caches and are not timed.

Baselines, measured in the same run on the same data and queries:
* linear scan: numpy over packed arrays (fingerprints, days, vectors) — the three questions.
* SimhashIndex (`simhash` 2.1.2, k=3): answers the near-duplicate question only (no exact key, no
  vectors, no time window), built in pure Python.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from indexer.features.simhash import FINGERPRINT_LAYOUT, band_keys  # noqa: E402
from indexer.settings import load_settings  # noqa: E402
from indexer.store import BandQuery, KnnQuery, StoredArticle, TimeWindow  # noqa: E402
from indexer.store.sqlite import SqliteStore  # noqa: E402

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
DIMS = 512
BATCH = 5000
WARMUP = 100
MAX_DISTANCE = 3


# ---- synthetic data -----------------------------------------------------------------------------
def fitted_gaussian(data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """Mean and Cholesky factor of real embeddings (default model, real news), cached."""
    cache = data_dir / "real_vectors_fit.npz"
    if cache.exists():
        with np.load(cache) as z:
            return z["mean"], z["chol"]
    import datasets

    from indexer.features.embedding import create_embedder

    settings = load_settings(environ={})
    records = [r for _, r in zip(range(3000), (a for a in datasets.inews_articles() if a["content"].strip()))]
    texts = datasets.embedded_texts(records, settings)
    vectors = create_embedder(settings.embedding.model).encode(texts).astype(np.float64)
    mean = vectors.mean(axis=0)
    cov = np.cov(vectors, rowvar=False) + 1e-6 * np.eye(vectors.shape[1])
    chol = np.linalg.cholesky(cov)
    np.savez(cache, mean=mean, chol=chol)
    return mean, chol


def synthetic(rng: np.random.Generator, count: int, vectors: str, fit) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fps = rng.integers(0, 2**63, size=count, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    gauss = rng.normal(size=(count, DIMS))
    if vectors == "fitted":
        mean, chol = fit
        gauss = mean + gauss @ chol.T
    vecs = gauss.astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    days = rng.uniform(0, 365, size=count)
    return fps, vecs, days


def dataset(n: int, vectors: str, fit):
    """The same arrays every time for a given n (built batch by batch from one seed)."""
    rng = np.random.default_rng(1)
    parts = [synthetic(rng, min(BATCH, n - s), vectors, fit) for s in range(0, n, BATCH)]
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(3))


def queries(n: int, count: int, fps, vecs, days):
    rng = np.random.default_rng(99)
    out = []
    for t in rng.choice(n, size=min(count, n), replace=False):
        fp = int(fps[t])
        for bit in rng.choice(64, size=2, replace=False):
            fp ^= 1 << int(bit)
        noisy = vecs[t] + rng.normal(size=DIMS).astype(np.float32) * (0.48 / np.sqrt(DIMS))
        noisy = (noisy / np.linalg.norm(noisy)).astype(np.float32)
        out.append((int(t), fp, noisy, float(days[t])))
    return out


def open_store(directory: Path) -> SqliteStore:
    s = load_settings(environ={}).store
    return SqliteStore(directory, vector_dims=DIMS, embedding_model="synthetic", fingerprint_layout=FINGERPRINT_LAYOUT,
                       bands=4, ef_search=s.ann_ef_search, m=s.ann_m, ef_construction=s.ann_ef_construction)


def build(directory: Path, n: int, vectors: str, fit) -> float:
    rng = np.random.default_rng(1)
    started = time.perf_counter()
    with open_store(directory) as store:
        # One windowless question first, as a stream with undated articles asks: the store then
        # feeds its graphs as it grows (a stream of dated articles only would build none, and the
        # first windowless question of the measurement would build them all).
        store.knn([KnnQuery(np.full(DIMS, DIMS ** -0.5, dtype=np.float32), 1, 2.0)])
        for start in range(0, n, BATCH):
            count = min(BATCH, n - start)
            fps, vecs, days = synthetic(rng, count, vectors, fit)
            store.write([StoredArticle(
                id=f"a{i}", url="", canonical_url="", source="s", title=f"t{i}", content=f"c{i}",
                publish_time=T0 + timedelta(days=float(days[j])), clean_title=f"t{i}", clean_body=f"c{i}",
                title_md5=f"{i:032x}", body_md5=f"{i:032x}", content_key=f"{i:032x}", simhash=int(fps[j]),
                bands=band_keys(int(fps[j]), 4), vector=vecs[j], cluster_id=f"a{i}", is_canonical=True)
                for j, i in enumerate(range(start, start + count))])
            if (start // BATCH) % 20 == 19:
                print(f"  built {start + count:,} in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return n / (time.perf_counter() - started)


# ---- measurement (one process per size) ---------------------------------------------------------
def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def percentiles(xs: list[float]) -> dict:
    ms = np.asarray(xs[WARMUP:]) * 1000
    return {"p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99))}


def measure(directory: Path, n: int, count: int, vectors: str, fit) -> dict:
    decision = load_settings(environ={}).decision
    fps, vecs, days = dataset(n, vectors, fit)
    asked = queries(n, count + WARMUP, fps, vecs, days)
    result: dict = {"n": n, "queries": len(asked) - WARMUP, "vectors": vectors,
                    "knn_k": decision.knn_k, "knn_min_cosine": decision.knn_min_cosine}
    del fps, vecs, days
    gc.collect()

    before = rss_mib()
    store = open_store(directory)
    lat = {"exact": [], "bands": [], "knn": [], "lookup": [], "knn_no_window": []}
    band_hits = knn_hits = 0
    ann_ids: list[list[str]] = []  # the HNSW answers to windowless queries, checked against exact ones below
    for i, (t, fp, noisy, day) in enumerate(asked):
        when = T0 + timedelta(days=day)
        window = TimeWindow(when - timedelta(days=7), when + timedelta(days=7))
        t0 = time.perf_counter()
        store.find_exact([f"{t:032x}"])
        t1 = time.perf_counter()
        [cands] = store.find_band_candidates([BandQuery(band_keys(fp, 4), window, None, fp, MAX_DISTANCE)])
        t2 = time.perf_counter()
        [hits] = store.knn([KnnQuery(noisy, decision.knn_k, decision.knn_min_cosine, window)])
        t3 = time.perf_counter()
        lat["exact"].append(t1 - t0), lat["bands"].append(t2 - t1), lat["knn"].append(t3 - t2), lat["lookup"].append(t3 - t0)
        # An article without a publish time has no window: that question goes to the HNSW graph.
        t4 = time.perf_counter()
        [open_hits] = store.knn([KnnQuery(noisy, decision.knn_k, decision.knn_min_cosine)])
        lat["knn_no_window"].append(time.perf_counter() - t4)
        ann_ids.append([a.id for a, _ in open_hits])
        if i >= WARMUP:
            band_hits += any(c.id == f"a{t}" for c in cands)
            knn_hits += any(a.id == f"a{t}" for a, _ in hits)
    resident = rss_mib() - before
    store.close()
    disk = sum(p.stat().st_size for p in directory.iterdir())
    result["store"] = {name: percentiles(xs) for name, xs in lat.items()}
    result["store"].update(recall_bands=band_hits / result["queries"], recall_knn=knn_hits / result["queries"],
                           disk_bytes_per_article=disk / n, resident_bytes_per_article=resident * 2**20 / n)

    # Linear scan over packed arrays in this process.
    before = rss_mib()
    fps, vecs, days = dataset(n, vectors, fit)
    resident = rss_mib() - before
    scan, overlap = [], []
    for i, (t, fp, noisy, day) in enumerate(asked):
        if i >= WARMUP:  # exact top-k without a window, for the recall of the HNSW answers
            everything = vecs @ noisy
            best = np.argpartition(everything, -decision.knn_k)[-decision.knn_k:]
            exact_ids = {f"a{j}" for j in best if everything[j] >= decision.knn_min_cosine}
            if exact_ids:
                overlap.append(len(exact_ids & set(ann_ids[i])) / len(exact_ids))
        t0 = time.perf_counter()
        _ = np.flatnonzero(np.bitwise_count(fps ^ np.uint64(fp)) <= MAX_DISTANCE)
        in_window = np.abs(days - day) <= 7
        scores = np.where(in_window, vecs @ noisy, -2.0)
        top = np.argpartition(scores, -decision.knn_k)[-decision.knn_k:]
        _ = top[scores[top] >= decision.knn_min_cosine]
        scan.append(time.perf_counter() - t0)
    result["scan"] = {"lookup": percentiles(scan), "resident_bytes_per_article": resident * 2**20 / n}
    result["store"]["recall_at_k_no_window"] = float(np.mean(overlap)) if overlap else None
    fp_list = [int(x) for x in fps]
    del fps, vecs, days
    gc.collect()

    # SimhashIndex from the `simhash` package: near-duplicate question only.
    try:
        from simhash import Simhash, SimhashIndex
    except ImportError:
        result["simhash_index"] = None
        return result
    import logging

    logging.getLogger("simhash").setLevel(logging.WARNING)  # it logs every large bucket
    before = rss_mib()
    started = time.perf_counter()
    index = SimhashIndex([(f"a{i}", Simhash(fp)) for i, fp in enumerate(fp_list)], k=MAX_DISTANCE)
    build_s = time.perf_counter() - started
    resident = rss_mib() - before
    del fp_list
    lat_si, si_hits = [], 0
    for i, (t, fp, _noisy, _day) in enumerate(asked):
        t0 = time.perf_counter()
        found = index.get_near_dups(Simhash(fp))
        lat_si.append(time.perf_counter() - t0)
        if i >= WARMUP:
            si_hits += f"a{t}" in found
    result["simhash_index"] = {"lookup": percentiles(lat_si), "recall": si_hits / result["queries"],
                               "build_s": build_s, "resident_bytes_per_article": resident * 2**20 / n}
    return result


# ---- report -------------------------------------------------------------------------------------
def report(results: list[dict]) -> None:
    print(f"lookup scale curve ({results[0]['vectors']} vectors, {DIMS} dims, kNN k={results[0]['knn_k']} "
          f"floor {results[0]['knn_min_cosine']}, {results[0]['queries']} timed queries per size)")
    head = f"{'articles':>10} | {'method':<38} | {'p50 ms':>8} | {'p99 ms':>8} | {'RAM B/art':>9} | {'x scan p50':>10} | recall"
    print(head)
    print("-" * len(head))
    for r in results:
        scan = r["scan"]["lookup"]["p50_ms"]
        s = r["store"]
        rows = [
            ("embedded store: exact", s["exact"], None, ""),
            ("embedded store: bands", s["bands"], None, f"{s['recall_bands']:.3f}"),
            ("embedded store: kNN (±7-day window)", s["knn"], None, f"{s['recall_knn']:.3f}"),
            ("embedded store: one lookup", s["lookup"], s["resident_bytes_per_article"], ""),
            ("embedded store: kNN, no window (HNSW)", s.get("knn_no_window"), None,
             f"{s['recall_at_k_no_window']:.3f} @k" if s.get("recall_at_k_no_window") is not None else ""),
            ("linear scan (numpy)", r["scan"]["lookup"], r["scan"]["resident_bytes_per_article"], ""),
        ]
        if r.get("simhash_index"):
            si = r["simhash_index"]
            rows.append(("SimhashIndex (near question only)", si["lookup"], si["resident_bytes_per_article"], f"{si['recall']:.3f}"))
        for name, lat, ram, recall in (row for row in rows if row[1]):
            ram_s = f"{ram:9,.0f}" if ram is not None else " " * 9
            print(f"{r['n']:>10,} | {name:<38} | {lat['p50_ms']:8.2f} | {lat['p99_ms']:8.2f} | {ram_s} | "
                  f"{scan / lat['p50_ms']:9.1f}x | {recall}")
        print(f"{'':>10} | store on disk {s['disk_bytes_per_article']:,.0f} bytes/article"
              + (f"; SimhashIndex built in {r['simhash_index']['build_s']:.1f} s" if r.get("simhash_index") else ""))


def plot(results: list[dict], path: Path, command: str) -> None:
    import plots

    plt = plots.pyplot()
    ns = [r["n"] for r in results]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    series = [("embedded store (exact+bands+kNN)", [r["store"]["lookup"] for r in results], "C0"),
              ("linear scan, numpy (same questions)", [r["scan"]["lookup"] for r in results], "C1")]
    if all(r.get("simhash_index") for r in results):
        series.append(("SimhashIndex (near question only)", [r["simhash_index"]["lookup"] for r in results], "C2"))
    for label, lats, color in series:
        ax1.plot(ns, [x["p50_ms"] for x in lats], "o-", color=color, label=f"{label} p50")
        ax1.plot(ns, [x["p99_ms"] for x in lats], "s--", color=color, alpha=0.6, label=f"{label} p99")
    ax1.axhline(10, color="grey", lw=0.8, ls=":")
    ax1.set(xscale="log", yscale="log", xlabel="articles in store", ylabel="ms per lookup", title="Lookup latency")
    ax1.legend(fontsize=7)
    ram = [("embedded store", [r["store"]["resident_bytes_per_article"] for r in results], "C0"),
           ("linear scan", [r["scan"]["resident_bytes_per_article"] for r in results], "C1")]
    if all(r.get("simhash_index") for r in results):
        ram.append(("SimhashIndex", [r["simhash_index"]["resident_bytes_per_article"] for r in results], "C2"))
    for label, ys, color in ram:
        ax2.plot(ns, ys, "o-", color=color, label=label)
    ax2.plot(ns, [r["store"]["disk_bytes_per_article"] for r in results], "o:", color="C0", alpha=0.6, label="embedded store on disk")
    ax2.set(xscale="log", xlabel="articles in store", ylabel="bytes per article", title="Memory per article")
    ax2.legend(fontsize=7)
    plots.save(fig, path, command)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--vectors", choices=["fitted", "uniform"], default="fitted")
    parser.add_argument("--data-dir", help="where stores are built and kept (reused when present)")
    parser.add_argument("--plot", help="write a PNG of the curve here")
    parser.add_argument("--json", help="append the results as JSON lines here")
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)  # internal: one size, in this process
    args = parser.parse_args()
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="nd-lookup-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    fit = fitted_gaussian(data_dir) if args.vectors == "fitted" else None

    if args.measure:
        directory = data_dir / f"{args.vectors}-{args.measure}"
        print(json.dumps(measure(directory, args.measure, args.queries, args.vectors, fit)))
        return

    results = []
    for n in args.sizes:
        directory = data_dir / f"{args.vectors}-{n}"
        if not (directory / "done").exists():
            print(f"building {n:,} synthetic articles in {directory}", file=sys.stderr)
            rate = build(directory, n, args.vectors, fit)
            (directory / "done").write_text(f"{rate:.1f} articles/s\n")
        print(f"measuring {n:,} (store built at {(directory / 'done').read_text().strip()})", file=sys.stderr)
        out = subprocess.run(
            [sys.executable, __file__, "--measure", str(n), "--queries", str(args.queries), "--vectors", args.vectors,
             "--data-dir", str(data_dir)], check=True, capture_output=True, text=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["build_articles_per_s"] = float((directory / "done").read_text().split()[0])
        results.append(result)
        if args.json:
            with open(args.json, "a") as fh:
                fh.write(json.dumps(result) + "\n")
    report(results)
    if args.plot:
        command = "python bench/lookup.py --sizes " + " ".join(map(str, args.sizes)) + f" --queries {args.queries} --vectors {args.vectors}"
        plot(results, Path(args.plot), command)


if __name__ == "__main__":
    main()
