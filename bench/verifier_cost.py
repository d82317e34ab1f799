"""What the second-stage verifier (``decision.verifier``, on by default) costs at ingest: how many
pairs reach it and how many headlines e5 embeds per 1,000 articles, and the ingest rate with it
on against the same ingest with it off (``decision.verifier = "none"``; default settings otherwise, fresh embedded store, models
loaded outside the clock, a fresh verifier per run so its headline cache starts empty).

    python bench/verifier_cost.py [--n 1000] [--sets inews burst]

* inews: the first ``--n`` ccf2019_inews articles (what bench/ingest_speed.py ingests: ordinary
  web news, few duplicates);
* burst: the burst set of the test part (100 real stories x 20 reposts, shuffled), the worst case
  for the verifier: every story has twenty candidates of itself.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import datasets  # noqa: E402

from indexer.compare.verifier import verifier_for  # noqa: E402
from indexer.pipeline import Indexer  # noqa: E402
from indexer.settings import load_settings  # noqa: E402


def ingest(records, overrides) -> tuple[float, int, int, float]:
    """(articles/s, pairs verified, headlines embedded, seconds e5 took) of one ingest into a fresh store."""
    verifier_for.cache_clear()
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(overrides={"store.path": tmp, **overrides}, environ={})
        with Indexer.open(settings) as ix:
            ix.index_many(records[:2])  # load the default model and tables outside the timing
            verifier = verifier_for(settings.decision.verifier)
            if verifier is not None:
                verifier.cosine("加载", "加载")  # and the e5 engine
                verifier.pairs, verifier.embedded, verifier.seconds = 0, 0, 0.0
            started = time.perf_counter()
            ix.index_many(records[2:])
            rate = (len(records) - 2) / (time.perf_counter() - started)
    if verifier is None:
        return rate, 0, 0, 0.0
    return rate, verifier.pairs, verifier.embedded, verifier.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="inews articles")
    parser.add_argument("--sets", nargs="+", default=("inews", "burst"), choices=("inews", "burst"))
    args = parser.parse_args()
    for name in args.sets:
        if name == "inews":
            records = [a for a in datasets.inews_articles() if a["content"].strip()][: args.n]
        else:
            import heldout_sets

            records = list(heldout_sets.burst_set("test").records)
            random.Random(1).shuffle(records)
        off, *_ = ingest(records, {"decision.verifier": "none"})
        on, pairs, embedded, seconds = ingest(records, {"decision.verifier": "e5-small"})
        per_k = 1000 / (len(records) - 2)
        print(f"{name}: {len(records)} articles; verifier off {off:.1f} articles/s, on {on:.1f} articles/s ({on / off:.2f}x); "
              f"per 1,000 articles: {pairs * per_k:.1f} pairs verified, {embedded * per_k:.1f} headlines embedded by e5 "
              f"in {seconds * per_k:.2f} s")


if __name__ == "__main__":
    main()
