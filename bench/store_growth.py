"""Ingest rate as the store grows: articles/s over the last --window articles before each size,
with resident memory and disk, in one run into one embedded store.

    python bench/store_growth.py [--sizes 10000 100000] [--window 10000]

Articles are news-shaped and distinct: each is 6-15 real sentences (ccf2019_inews, cec_news) drawn
at random, its headline its first sentence, published at --per-day articles a day; --repost-share
of them are reposts of an article of the last two days (re-tagged headline, last sentence dropped),
so the duplicate layers work as in a real stream. Vectors are drawn from a Gaussian fitted to the
default model's embeddings of real news (bench/lookup.py), a repost gets its original's, and the
model is replaced by a lookup of them (the embedding cost is measured in bench/ingest_speed.py):
this measures what grows with the store (lookups, windowed kNN, decisions, writes). Every layer and
rule runs with the default settings.

A window as long as the first size (the default: 10,000 at 10k) starts on an empty store, whose
first articles have little in their time window and go faster (one run: 453 articles/s over the
first 5,000, 371 over the next 5,000): ``--window 5000`` measures a 10k store warm.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets  # noqa: E402
from lookup import fitted_gaussian  # noqa: E402

from indexer.cleaning import clean_title  # noqa: E402
from indexer.features import Featurizer  # noqa: E402
from indexer.pipeline import Indexer  # noqa: E402
from indexer.settings import load_settings  # noqa: E402
from indexer.store import open_store  # noqa: E402

CST = timezone(timedelta(hours=8))
FIT_CACHE = Path(tempfile.gettempdir()) / "newsdedup-bench-growth"  # the fitted Gaussian, made once
T0 = datetime(2024, 1, 1, tzinfo=CST)


class VectorsByHeadline:
    """The model replaced by a lookup: the text the indexer embeds starts with the clean headline."""

    name = "fitted-gaussian"
    dims = 512

    def __init__(self) -> None:
        self.table: OrderedDict[str, np.ndarray] = OrderedDict()

    def encode(self, texts):
        return np.vstack([self.table[t.split("。", 1)[0]] for t in texts]) if texts else np.zeros((0, self.dims), np.float32)


def sentence_pool() -> list[str]:
    pool = set()
    for a in list(datasets.inews_articles()) + list(datasets.cec_articles()):
        for s in re.split(r"(?<=[。！？])", a["content"].replace("\n", "")):
            if 12 <= len(s.strip()) <= 120:
                pool.add(s.strip())
    return sorted(pool)


def articles(n: int, per_day: int, repost_share: float, embedder: VectorsByHeadline, fit,
             truth: dict[str, str] | None = None, kept_vectors: int | None = None):
    """``n`` records, in publishing order, their vectors registered with ``embedder``.

    ``truth``, when given, gets each record's story (the id of the article a repost copies, else
    its own). ``kept_vectors``: the embedder forgets vectors of all but this many latest stories
    (reposts copy stories of the last two days), so a long run's lookup table does not grow."""
    rng, nrng = random.Random(5), np.random.default_rng(5)
    mean, chol = fit
    pool = sentence_pool()
    recent: list[dict] = []
    for i in range(n):
        when = T0 + timedelta(days=i / per_day)
        if recent and rng.random() < repost_share:
            src = rng.choice(recent)
            body = "".join(src["sentences"][:-1])
            rec = {"id": f"g{i}", "title": "【转载】" + src["title"], "content": body, "publish_time": when.isoformat()}
            story = f"g{src['i']}"
        else:
            sentences = rng.sample(pool, rng.randint(6, 15))
            # The headline is the first sentence that cleaning keeps as one (not a follow prompt
            # such as 戳上方“…”关注我们, which cleans to nothing): the lookup is keyed by it.
            for first, sentence in enumerate(sentences):
                title = sentence.rstrip("。！？")[:28] + f" {i}"  # the number keeps headlines distinct
                key = clean_title(title)
                if key:
                    break
            sentences.insert(0, sentences.pop(first))
            vec = (mean + nrng.normal(size=embedder.dims) @ chol.T).astype(np.float32)
            embedder.table[key] = vec / np.linalg.norm(vec)
            if kept_vectors is not None and len(embedder.table) > kept_vectors:
                embedder.table.popitem(last=False)  # the oldest story's
            rec = {"id": f"g{i}", "title": title, "content": "".join(sentences), "publish_time": when.isoformat()}
            recent.append({"title": title, "sentences": sentences, "i": i})
            if len(recent) > 2 * per_day:
                recent.pop(0)
            story = rec["id"]
        if truth is not None:
            truth[rec["id"]] = story
        yield rec


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def disk_mib(directory: Path) -> float:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file()) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--window", type=int, default=10_000)
    parser.add_argument("--per-day", type=int, default=2_700)
    parser.add_argument("--repost-share", type=float, default=0.05)
    parser.add_argument("--cache-dir", default=str(FIT_CACHE))
    args = parser.parse_args()
    Path(args.cache_dir).mkdir(parents=True, exist_ok=True)
    fit = fitted_gaussian(Path(args.cache_dir))
    embedder = VectorsByHeadline()
    sizes = sorted(args.sizes)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(overrides={"store.path": tmp}, environ={})
        store = open_store(settings, vector_dims=embedder.dims, embedding_model=embedder.name)
        with Indexer(settings, store, Featurizer(settings, embedder)) as ix:
            # The lookup keeps the vectors reposts can still ask for (stories of the last two days,
            # and the batches read ahead), so the bench's own memory does not grow with the store.
            stream = articles(sizes[-1], args.per_day, args.repost_share, embedder, fit,
                              kept_vectors=2 * args.per_day + 4 * ix.settings.input.batch_size + 1000)
            done, dups, started_window = 0, 0, None
            chunk: list[dict] = []
            for rec in stream:
                chunk.append(rec)
                if len(chunk) < 1000:
                    continue
                for size in sizes:  # the window before each size is timed
                    if done < size - args.window + 1 <= done + len(chunk) and started_window is None:
                        started_window = time.perf_counter()
                dups += sum(o.decision.value == "duplicate" for o in ix.index_many(chunk))
                done += len(chunk)
                chunk = []
                if done in sizes and started_window is not None:
                    rate = args.window / (time.perf_counter() - started_window)
                    rows.append((done, rate, rss_mib(), disk_mib(Path(tmp))))
                    print(f"  {done:>9,} articles: {rate:.1f} articles/s over the last {args.window:,}, "
                          f"RSS {rows[-1][2]:,.0f} MiB, store {rows[-1][3]:,.0f} MiB on disk, {dups:,} duplicates so far",
                          flush=True)
                    started_window = None
    print(f"{'articles':>10} | {'articles/s (last window)':>24} | {'RSS MiB':>8} | {'disk MiB':>8} | disk per article")
    for size, rate, rss, disk in rows:
        print(f"{size:>10,} | {rate:>24.1f} | {rss:>8,.0f} | {disk:>8,.0f} | {disk * 2**20 / size / 1024:.1f} KiB")
    if len(rows) > 1:
        print(f"rate at {rows[-1][0]:,} / rate at {rows[0][0]:,}: {rows[-1][1] / rows[0][1]:.2f}x")


if __name__ == "__main__":
    main()
