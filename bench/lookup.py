"""Embedded-store lookup latency at scale, against a numpy linear scan measured in the same run.

    python bench/lookup.py --n 100000            # ~minutes on 2 cores
    python bench/lookup.py --n 1000000 --keep DIR  # build once, keep the store for re-runs

Synthetic articles: random 64-bit SimHash fingerprints and random unit vectors (512 dims, the
default model's), each query a stored article's fingerprint with 2 bits flipped and its vector plus
noise (cosine about 0.9), as a repost looks to the store. One "lookup" is what the indexer asks
per article: exact key + band candidates (Hamming checked) + kNN (k=10) with a time window.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.features.simhash import FINGERPRINT_LAYOUT, band_keys, hamming  # noqa: E402
from indexer.store import BandQuery, KnnQuery, StoredArticle, TimeWindow  # noqa: E402
from indexer.store.sqlite import SqliteStore  # noqa: E402

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def synthetic(rng, start, count, dims):
    fps = rng.integers(0, 2**63, size=count, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    vecs = rng.normal(size=(count, dims)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    days = rng.uniform(0, 365, size=count)
    return fps, vecs, days


def build(store, n, dims, batch=5000, seed=1):
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    for start in range(0, n, batch):
        count = min(batch, n - start)
        fps, vecs, days = synthetic(rng, start, count, dims)
        rows = []
        for j in range(count):
            i = start + j
            fp = int(fps[j])
            rows.append(StoredArticle(
                id=f"a{i}", url="", canonical_url="", source="s", title=f"t{i}", content=f"c{i}",
                publish_time=T0 + timedelta(days=float(days[j])), clean_title=f"t{i}", clean_body=f"c{i}",
                title_md5=f"{i:032x}", body_md5=f"{i:032x}", content_key=f"{i:032x}", simhash=fp,
                bands=band_keys(fp, 4), vector=vecs[j], cluster_id=f"a{i}", is_canonical=True))
        store.write(rows)
        if (start // batch) % 20 == 0:
            print(f"  built {start + count:,} in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=512)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--keep", help="store directory to build into or reuse")
    args = parser.parse_args()
    directory = args.keep or tempfile.mkdtemp(prefix="nd-lookup-")
    store = SqliteStore(directory, vector_dims=args.dims, embedding_model="synthetic", fingerprint_layout=FINGERPRINT_LAYOUT, bands=4)
    have = store.stats().articles
    if have < args.n:
        print(f"building {args.n - have:,} synthetic articles ({args.dims} dims) in {directory}", file=sys.stderr)
        build_s = build(store, args.n, args.dims) if have == 0 else None
        if build_s:
            print(f"build: {args.n / build_s:,.0f} articles/s", file=sys.stderr)
    # Reconstruct the stored arrays for queries and for the linear-scan baseline.
    rng = np.random.default_rng(1)
    fps, vecs, days = [], [], []
    for start in range(0, args.n, 5000):
        f, v, d = synthetic(rng, start, min(5000, args.n - start), args.dims)
        fps.append(f), vecs.append(v), days.append(d)
    fps, vecs, days = np.concatenate(fps), np.vstack(vecs), np.concatenate(days)
    q_rng = np.random.default_rng(99)
    targets = q_rng.choice(args.n, size=args.queries, replace=False)
    lat = {"exact": [], "band": [], "knn": [], "lookup": [], "scan": []}
    knn_hits = band_hits = 0
    for t in targets:
        fp = int(fps[t])
        for bit in q_rng.choice(64, size=2, replace=False):
            fp ^= 1 << int(bit)
        noisy = vecs[t] + q_rng.normal(size=args.dims).astype(np.float32) * (0.48 / np.sqrt(args.dims))
        noisy /= np.linalg.norm(noisy)
        when = T0 + timedelta(days=float(days[t]))
        window = TimeWindow(when - timedelta(days=7), when + timedelta(days=7))
        t0 = time.perf_counter()
        store.find_exact([f"{t:032x}"])
        t1 = time.perf_counter()
        [cands] = store.find_band_candidates([BandQuery(band_keys(fp, 4), window)])
        band_hits += any(c.id == f"a{t}" and hamming(c.simhash, fp) <= 3 for c in cands)
        t2 = time.perf_counter()
        [hits] = store.knn([KnnQuery(noisy, 10, 0.8, window)])
        knn_hits += any(a.id == f"a{t}" for a, _ in hits)
        t3 = time.perf_counter()
        # Baseline: the same three questions as a numpy linear scan over packed arrays.
        np.bitwise_count(fps ^ np.uint64(fp)) <= 3 if hasattr(np, "bitwise_count") else None
        in_window = np.abs(days - days[t]) <= 7
        scores = vecs @ noisy
        np.argpartition(np.where(in_window, scores, -2), -10)[-10:]
        t4 = time.perf_counter()
        lat["exact"].append(t1 - t0), lat["band"].append(t2 - t1), lat["knn"].append(t3 - t2)
        lat["lookup"].append(t3 - t0), lat["scan"].append(t4 - t3)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = sum(p.stat().st_size for p in Path(directory).iterdir()) / 2**20
    print(f"embedded store, {args.n:,} synthetic articles, {args.dims}-dim vectors, {args.queries} queries")

    def pct(xs, q):
        return 1000 * float(np.percentile(xs, q))

    for name in ("exact", "band", "knn", "lookup", "scan"):
        label = "linear scan (numpy, same questions)" if name == "scan" else name
        print(f"  {label:36s} p50 {pct(lat[name], 50):7.2f} ms   p99 {pct(lat[name], 99):7.2f} ms")
    print(f"  lookup p50 vs linear scan p50: {statistics.median(lat['scan']) / statistics.median(lat['lookup']):.1f}x faster")
    print(f"  recall: planted near-duplicate found by bands {band_hits / args.queries:.3f}, by kNN {knn_hits / args.queries:.3f}")
    print(f"  store on disk {size:,.0f} MiB ({size * 2**20 / args.n:,.0f} bytes/article); peak RSS {rss:,.0f} MiB")
    store.close()


if __name__ == "__main__":
    main()
