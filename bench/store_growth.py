"""Ingest rate as the store grows: articles/s over the last --window articles before each size,
with resident memory and disk, in one run into one embedded store.

    python bench/store_growth.py [--sizes 10000 100000] [--window 5000]

Articles are news-shaped and distinct: each is 6-15 real sentences (ccf2019_inews, cec_news) drawn
at random, its headline its first sentence, published at --per-day articles a day; --repost-share
of them are reposts of an article of the last two days (re-tagged headline, last sentence dropped),
so the duplicate layers work as in a real stream. Vectors are drawn from a Gaussian fitted to the
default model's embeddings of real news (bench/lookup.py), a repost gets its original's, and the
model is replaced by a lookup of them (the embedding cost is measured in bench/ingest_speed.py):
this measures what grows with the store (lookups, windowed kNN, decisions, writes). Every layer and
rule runs with the default settings.

The window is 5,000 by default, so that the 10k store is measured warm: a window as long as the
first size starts on an empty store, whose first articles have little in their time window and go
faster (one run: 453 articles/s over the first 5,000, 371 over the next 5,000).

The rate at the first size is also measured again right after each size's window (``--reference``,
on by default), in a process of its own: a copy of the store as it stood --warmup articles before
the first size's window ingests those articles untimed, then the window's timed. A run to 1M takes
an hour, and this machine's speed drifts by more than the change being measured over that long
(the 10k rate measured 397 and 468 articles/s in two sessions), so the ratio against the
reference next to it in time compares like with like. Both ratios are printed; the one at the
first size itself shows how far two measurements of the same thing differ. Only the indexer's
time is counted, in both, not the making of the records.

Each window's CPU time per article is printed too (the process's, every thread of it: the indexer
is the only thing running in it while a window is timed). Other work on the machine slows the
wall-clock rate but leaves the CPU an article takes nearly as it is, so on a shared machine the
CPU ratio is the steadier measure of what grows with the store.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
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


CHUNK = 1000  # records handed to the indexer at a time


def duplicates_of(ix: Indexer, records: list[dict]) -> int:
    return sum(o.decision.value == "duplicate" for o in ix.index_many(records))


class Reference:
    """The first size's window ingested again on a copy of the store as it stood --warmup articles
    before that window. Run in a process of its own (``reference_rate``), so that the grown store's
    process keeps its memory figures and caches to itself; the records are made again there, as the
    same seed makes them."""

    def __init__(self, directory: Path, args: argparse.Namespace):
        first = min(args.sizes)
        self.embedder = VectorsByHeadline()
        self.records = list(articles(first, args.per_day, args.repost_share, self.embedder,
                                     fitted_gaussian(Path(args.cache_dir))))
        self.start = first - args.window - args.warmup  # the copy holds the articles before this one
        self.warm_end = first - args.window
        self.base, self.run = directory / "base", directory / "run"

    def _ingest(self, path: Path, *parts: list[dict]) -> tuple[float, float]:
        """Ingest ``parts`` in turn into the store at ``path``; the seconds and the CPU seconds the
        last part took."""
        settings = load_settings(overrides={"store.path": str(path)}, environ={})
        store = open_store(settings, vector_dims=self.embedder.dims, embedding_model=self.embedder.name)
        seconds = cpu = 0.0
        with Indexer(settings, store, Featurizer(settings, self.embedder)) as ix:
            for part in parts:
                started, started_cpu = time.perf_counter(), time.process_time()
                for at in range(0, len(part), CHUNK):
                    duplicates_of(ix, part[at : at + CHUNK])
                seconds, cpu = time.perf_counter() - started, time.process_time() - started_cpu
        return seconds, cpu

    def build_base(self) -> None:
        self._ingest(self.base, self.records[: self.start])

    def rate(self) -> tuple[float, float]:
        """Articles/s over the window, and CPU milliseconds per article."""
        shutil.rmtree(self.run, ignore_errors=True)
        shutil.copytree(self.base, self.run)
        try:
            seconds, cpu = self._ingest(self.run, self.records[self.start : self.warm_end], self.records[self.warm_end :])
        finally:
            shutil.rmtree(self.run, ignore_errors=True)
        n = len(self.records) - self.warm_end
        return n / seconds, cpu * 1000 / n


def reference_rate(args: argparse.Namespace, directory: Path, step: str) -> tuple[float, float] | None:
    """``step`` of the reference (``base``: build the copy once; ``rate``: measure, giving articles/s
    and CPU ms per article) in a child process."""
    command = [sys.executable, __file__, "--sizes", str(min(args.sizes)), "--window", str(args.window),
               "--per-day", str(args.per_day), "--repost-share", str(args.repost_share), "--cache-dir", args.cache_dir,
               "--warmup", str(args.warmup), "--reference-dir", str(directory), "--reference-step", step]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    if step != "rate":
        return None
    rate, cpu_ms = done.stdout.split()[-2:]
    return float(rate), float(cpu_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--window", type=int, default=5_000)
    parser.add_argument("--per-day", type=int, default=2_700)
    parser.add_argument("--repost-share", type=float, default=0.05)
    parser.add_argument("--cache-dir", default=str(FIT_CACHE))
    parser.add_argument("--reference", action=argparse.BooleanOptionalAction, default=True,
                        help="measure the first size again after each size (default: on)")
    parser.add_argument("--warmup", type=int, default=1000, help="untimed articles before a reference window")
    parser.add_argument("--reference-dir", help=argparse.SUPPRESS)  # a reference step's child process
    parser.add_argument("--reference-step", choices=("base", "rate"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference_step:
        reference = Reference(Path(args.reference_dir), args)
        if args.reference_step == "base":
            reference.build_base()
        else:
            print("{:.3f} {:.4f}".format(*reference.rate()))
        return
    sizes = sorted(args.sizes)
    if any(n % CHUNK for n in [*sizes, args.window, args.warmup]):
        parser.error(f"sizes, --window and --warmup must be multiples of {CHUNK}")
    if args.reference and sizes[0] < args.window + args.warmup:
        parser.error("--reference needs the first size to be at least --window + --warmup")
    Path(args.cache_dir).mkdir(parents=True, exist_ok=True)
    fit = fitted_gaussian(Path(args.cache_dir))
    embedder = VectorsByHeadline()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        main_dir, reference_dir = Path(tmp) / "store", Path(tmp) / "reference"
        settings = load_settings(overrides={"store.path": str(main_dir)}, environ={})
        store = open_store(settings, vector_dims=embedder.dims, embedding_model=embedder.name)
        with Indexer(settings, store, Featurizer(settings, embedder)) as ix:
            # The lookup keeps the vectors reposts can still ask for (stories of the last two days,
            # and the batches read ahead), so the bench's own memory does not grow with the store.
            stream = articles(sizes[-1], args.per_day, args.repost_share, embedder, fit,
                              kept_vectors=2 * args.per_day + 4 * ix.settings.input.batch_size + 1000)
            done, dups, timed, timed_cpu = 0, 0, 0.0, 0.0
            chunk: list[dict] = []
            for rec in stream:
                chunk.append(rec)
                if len(chunk) < CHUNK:
                    continue
                # Only the indexer's time counts, not the making of the records, here as in the
                # reference runs.
                started, started_cpu = time.perf_counter(), time.process_time()
                dups += duplicates_of(ix, chunk)
                done += len(chunk)
                chunk = []
                if any(size - args.window < done <= size for size in sizes):
                    timed += time.perf_counter() - started
                    timed_cpu += time.process_time() - started_cpu
                if done not in sizes:
                    continue
                rate, cpu_ms = args.window / timed, timed_cpu * 1000 / args.window
                timed = timed_cpu = 0.0
                rows.append([done, rate, cpu_ms, rss_mib(), disk_mib(main_dir), None])
                if args.reference:
                    if done == sizes[0]:
                        reference_rate(args, reference_dir, "base")
                    rows[-1][5] = reference_rate(args, reference_dir, "rate")
                print(f"  {done:>9,} articles: {rate:.1f} articles/s and {cpu_ms:.2f} CPU ms an article over the last "
                      f"{args.window:,}, RSS {rows[-1][3]:,.0f} MiB, store {rows[-1][4]:,.0f} MiB on disk, {dups:,} duplicates so far"
                      + ("; the {:,} store again right after: {:.1f} articles/s, {:.2f} CPU ms".format(sizes[0], *rows[-1][5])
                         if args.reference else ""),
                      flush=True)
    print(f"{'articles':>10} | {'articles/s (last window)':>24} | {'CPU ms/article':>14} | {'RSS MiB':>8} | {'disk MiB':>8} | disk per article"
          + (f" | {sizes[0]:,} again: articles/s, CPU ms | ratios: rate, CPU" if args.reference else ""))
    for size, rate, cpu_ms, rss, disk, again in rows:
        print(f"{size:>10,} | {rate:>24.1f} | {cpu_ms:>14.2f} | {rss:>8,.0f} | {disk:>8,.0f} | {disk * 2**20 / size / 1024:>7.1f} KiB"
              + (f" | {again[0]:>9.1f}, {again[1]:.2f} | {rate / again[0]:.2f}x, {again[1] / cpu_ms:.2f}x" if again else ""))
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        print(f"rate at {last[0]:,} / rate at {first[0]:,} measured first: {last[1] / first[1]:.2f}x; "
              f"by CPU per article: {first[2] / last[2]:.2f}x")
        if args.reference:
            print(f"rate at {last[0]:,} / rate at {first[0]:,} measured right after it: {last[1] / last[5][0]:.2f}x; "
                  f"by CPU per article: {last[5][1] / last[2]:.2f}x")


if __name__ == "__main__":
    main()
