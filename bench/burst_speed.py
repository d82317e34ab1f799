"""Ingest rate in a news burst against distinct articles, same size, every layer, embeddings
computed, in one run (the ratio is the figure; the machine is shared and noisy).

    python bench/burst_speed.py [--stories 100] [--per-story 20] [--repeat 1] [--full-compare]

* burst:    ``stories`` real ccf2019_inews stories x ``per-story`` articles each (the original and
            its reposts from the second generator, bench/reposts_v2.py), shuffled, all published
            within two days, so every article has ~per-story near copies in its time window;
* distinct: as many distinct real ccf2019_inews articles, published over two months.
Each is ingested into a fresh embedded store with the default settings; models and tables are
loaded before the timing starts. Burst and distinct runs alternate when --repeat > 1.
--full-compare also ingests the burst comparing every candidate member by member
(pipeline.SETTLE_ON_COPY off) and checks that it gives the same clusters.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402
import heldout_sets  # noqa: E402

import indexer.pipeline as pipeline  # noqa: E402
from indexer.pipeline import Indexer  # noqa: E402
from indexer.settings import load_settings  # noqa: E402

CST = timezone(timedelta(hours=8))


def distinct_articles(n: int, seed: int = 3) -> list[dict]:
    rng = random.Random(seed)
    pool = [a for a in datasets.inews_articles() if a["title"].strip() and len(a["content"]) >= 200]
    rng.shuffle(pool)
    t0 = datetime(2024, 6, 1, tzinfo=CST)
    return [dict(a, publish_time=(t0 + timedelta(hours=rng.uniform(0, 24 * 60))).isoformat()) for a in pool[:n]]


def ingest_seconds(records: list[dict]) -> tuple[float, dict[str, str]]:
    """Seconds to ingest, and the clusters (article id -> cluster id)."""
    with tempfile.TemporaryDirectory() as tmp:
        with Indexer.open(load_settings(overrides={"store.path": tmp}, environ={})) as ix:
            ix.index_many([{"id": "warm-up", "title": "预热", "content": "加载模型和词表。"}])
            started = time.perf_counter()
            ix.index_many(records)
            seconds = time.perf_counter() - started
            return seconds, {a.id: a.cluster_id for a in ix.store.iter_articles()}


def partition(clusters: dict[str, str]) -> set[frozenset[str]]:
    groups: dict[str, set[str]] = {}
    for aid, cid in clusters.items():
        groups.setdefault(cid, set()).add(aid)
    return {frozenset(g) for g in groups.values()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stories", type=int, default=100)
    parser.add_argument("--per-story", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--full-compare", action="store_true", help="also time the member-by-member comparison")
    args = parser.parse_args()
    burst = heldout_sets.burst_set("test", stories=args.stories, per_story=args.per_story).records
    distinct = distinct_articles(len(burst))
    print(f"burst: {len(burst)} articles ({args.stories} stories x {args.per_story}); distinct: {len(distinct)} articles")
    ratios = []
    for r in range(args.repeat):
        d, _ = ingest_seconds(distinct)
        b, settled = ingest_seconds(burst)
        ratios.append((len(burst) / b) / (len(distinct) / d))
        print(f"  run {r + 1}: distinct {len(distinct) / d:.1f} articles/s, burst {len(burst) / b:.1f} articles/s, "
              f"burst/distinct {ratios[-1]:.2f}x", flush=True)
        if args.full_compare:
            pipeline.SETTLE_ON_COPY = False
            full, compared = ingest_seconds(burst)
            pipeline.SETTLE_ON_COPY = True
            same = partition(settled) == partition(compared)
            print(f"         burst comparing every member: {len(burst) / full:.1f} articles/s "
                  f"({(len(burst) / b) / (len(burst) / full):.2f}x faster settled), same clusters: {same}", flush=True)
    print(f"burst/distinct: {min(ratios):.2f}x - {max(ratios):.2f}x over {len(ratios)} runs")


if __name__ == "__main__":
    main()
