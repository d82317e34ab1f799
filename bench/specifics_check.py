"""How often the event-specifics check (indexer/compare/specifics.py) calls two reports different
events, on pairs whose truth is known:

* reposts of one real article (bench/datasets.py ``repost_set``): every pair within a story
  (original and repost, repost and repost) is one event; any conflict here is a false split;
* ecom2022 dev articles with one event id: independent reports of one event, which legitimately
  differ in details; their conflict rate bounds what the check can cost in recall;
* cec_news articles of one category (fire, food poisoning, earthquake, traffic accident, attack):
  almost all pairs are different events of one kind, and pairs naming the same city are the case
  the check is for. The corpus does not mark the few reports of one incident from two outlets, so
  the pairs whose headlines share most of their characters are counted apart and printed.

    python bench/specifics_check.py [--examples 8]

Prints rates and examples of each kind of decision; reads ../shared/data (see bench/datasets.py).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import datasets  # noqa: E402
from indexer.cleaning import clean_body, clean_title  # noqa: E402
from indexer.compare.specifics import _COARSE_NAMES, extract_specifics, specifics_conflict  # noqa: E402

# Countries and regions are coarse too, but two reports naming 美国 are not "in one city".
_NOT_CITIES = frozenset("中国 全国 国内 海外 境外 内地 大陆 华北 华东 华南 华中 西南 西北 东北 中原 江南 亚洲 欧洲 非洲 美洲 南方 北方 沿海 当地 各地".split())


def specifics_of(record: dict, publish_time=None):
    return extract_specifics(clean_title(record["title"]), clean_body(record["content"]), publish_time)


def _kind(reason: str) -> str:
    return reason.split(" differ")[0]


def _report(name: str, pairs: list[tuple], examples: int) -> None:
    """pairs: (reason or None, label a, label b)."""
    conflicts = [p for p in pairs if p[0]]
    rate = len(conflicts) / len(pairs) if pairs else 0.0
    kinds = Counter(_kind(r) for r, *_ in conflicts)
    print(f"{name}: {len(conflicts)} conflicts / {len(pairs)} pairs = {rate:.4f}  by specific: {dict(kinds.most_common())}")
    for reason, a, b in conflicts[:examples]:
        print(f"    {reason}\n      {a[:60]}\n      {b[:60]}")


def repost_pairs(examples: int) -> None:
    records, truth = datasets.repost_set()
    groups = defaultdict(list)
    for r in records:
        if r.get("kind") != "template":
            groups[truth[r["id"]]].append(r)
    pairs, with_orig = [], []
    for group in groups.values():
        specs = [(r, specifics_of(r, datetime.fromisoformat(r["publish_time"]))) for r in group]
        for (ra, sa), (rb, sb) in itertools.combinations(specs, 2):
            item = (specifics_conflict(sa, sb), f"[{ra['kind']}] {ra['title']}", f"[{rb['kind']}] {rb['title']}")
            pairs.append(item)
            if "original" in (ra["kind"], rb["kind"]):
                with_orig.append(item)
    _report("reposts, original vs repost", with_orig, examples)
    _report("reposts, any two copies of one story", pairs, examples)


def ecom_pairs(examples: int) -> None:
    events = defaultdict(list)
    for article, event in datasets.ecom_articles():
        events[event].append((article, specifics_of(article)))
    pairs = [(specifics_conflict(sa, sb), a["title"], b["title"])
             for group in events.values() for (a, sa), (b, sb) in itertools.combinations(group, 2)]
    _report("ecom2022 dev, same event (independent reports, no publish time)", pairs, examples)


def _city(spec_text: str) -> frozenset[str]:
    lead = spec_text[:200]
    return frozenset(n for n in _COARSE_NAMES if n not in _NOT_CITIES and n in lead)


def _char_overlap(a: str, b: str) -> float:
    ga, gb = {a[i : i + 2] for i in range(len(a) - 1)}, {b[i : i + 2] for i in range(len(b) - 1)}
    return len(ga & gb) / max(1, min(len(ga), len(gb)))


def _cec_time(text: str):
    """The cec ``date`` field (2008年04月05日 09:12, 2007-7-26, 2006-8-14 9:34:32) as a datetime."""
    import re

    m = re.match(r"(\d{4})\D(\d{1,2})\D(\d{1,2})", text or "")
    return datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=timezone.utc) if m else None


def cec_pairs(examples: int) -> None:
    rows = [json.loads(l) for l in (datasets.DATA / "cec_news" / "cec_raw_news.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    by_cat = defaultdict(list)
    for row in rows:
        spec = specifics_of({"title": row["title"], "content": row["body"]}, _cec_time(row["date"]))
        by_cat[row["category"]].append((row, spec, _city(spec.text)))
    all_pairs, same_city, look_alike = [], [], []
    per_cat = {}
    for cat, items in by_cat.items():
        cat_pairs = []
        for (ra, sa, ca), (rb, sb, cb) in itertools.combinations(items, 2):
            item = (specifics_conflict(sa, sb), ra["title"], rb["title"])
            if _char_overlap(ra["title"], rb["title"]) >= 0.5:
                look_alike.append(item)  # maybe one incident from two outlets: not counted as different
                continue
            cat_pairs.append(item)
            if ca & cb:
                same_city.append(item)
        per_cat[cat] = cat_pairs
        all_pairs.extend(cat_pairs)
    _report("cec_news, same category (different events)", all_pairs, 0)
    for cat, cat_pairs in per_cat.items():
        n = sum(1 for p in cat_pairs if p[0])
        print(f"    {cat}: {n} / {len(cat_pairs)} = {n / max(1, len(cat_pairs)):.4f}")
    _report("cec_news, same category and same city", same_city, examples)
    missed = [p for p in same_city if not p[0]]
    print(f"  same-city pairs left without a conflict (first {examples}):")
    for _, a, b in missed[:examples]:
        print(f"      {a[:50]}  |  {b[:50]}")
    _report("cec_news, same category, headlines sharing >= half their character pairs (unlabelled; may be one incident)", look_alike, examples)


def speed() -> None:
    articles = list(itertools.islice(datasets.inews_articles(), 500))
    cleaned = [(clean_title(a["title"]), clean_body(a["content"])) for a in articles]
    when = datetime(2024, 3, 10, 12, tzinfo=timezone.utc)
    start = time.perf_counter()
    specs = [extract_specifics(t, b, when) for t, b in cleaned]
    per_article = (time.perf_counter() - start) / len(specs)
    rng = random.Random(3)
    pairs = [(rng.choice(specs), rng.choice(specs)) for _ in range(5000)]
    start = time.perf_counter()
    for a, b in pairs:
        specifics_conflict(a, b)
    per_pair = (time.perf_counter() - start) / len(pairs)
    print(f"speed: extract_specifics {per_article * 1000:.3f} ms/article (500 inews, uncached), "
          f"specifics_conflict {per_pair * 1e6:.1f} us/pair")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=8, help="examples printed per set")
    args = parser.parse_args()
    repost_pairs(args.examples)
    ecom_pairs(args.examples)
    cec_pairs(args.examples)
    speed()


if __name__ == "__main__":
    main()
