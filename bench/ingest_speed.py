"""End-to-end ingest rate and embedding throughput on real articles, with ratios to a baseline
measured in the same run.

    python bench/ingest_speed.py [--n 1000]

Baseline: the same ingest with embeddings off (embedding.model=none: exact and near layers only),
so the ratio shows what the semantic layer costs. Embedding throughput is the default model alone
on the same texts the indexer embeds.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402

from indexer.features import embedding_text, text_features  # noqa: E402
from indexer.features.embedding import create_embedder  # noqa: E402
from indexer.pipeline import Indexer  # noqa: E402
from indexer.settings import load_settings  # noqa: E402


def ingest_rate(records, overrides) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(overrides={"store.path": tmp, **overrides}, environ={})
        with Indexer.open(settings) as ix:
            ix.index_many(records[:2])  # load models and tables outside the timing
            started = time.perf_counter()
            ix.index_many(records[2:])
            return (len(records) - 2) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    records = [a for a in datasets.inews_articles() if a["content"].strip()][: args.n]
    settings = load_settings(environ={})
    texts = [embedding_text(f.clean_title, f.clean_body, settings.embedding.max_chars)
             for f in (text_features(r["title"], r["content"], settings) for r in records)]
    embedder = create_embedder(settings.embedding.model)
    embedder.encode(texts[:4])
    started = time.perf_counter()
    embedder.encode(texts)
    embed_rate = len(texts) / (time.perf_counter() - started)
    plain = ingest_rate(records, {"embedding.model": "none"})
    full = ingest_rate(records, {})
    print(f"{len(records)} ccf2019_inews articles (median body ~730 chars)")
    print(f"  embedding, {settings.embedding.model}, {settings.embedding.max_chars} chars: {embed_rate:7.1f} texts/s")
    print(f"  ingest, exact + near layers only:       {plain:7.1f} articles/s   1.00x")
    print(f"  ingest, every layer (default settings): {full:7.1f} articles/s   {full / plain:.2f}x")


if __name__ == "__main__":
    main()
