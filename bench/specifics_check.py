"""How often the event-specifics check (indexer/compare/specifics.py) calls two reports different
events, on pairs whose truth is known, for one split part (bench/splits.py; ``tune`` by default,
quote ``test``):

* reposts of one real article, from both generators (``datasets.repost_set``, and the held-out
  ``heldout_sets.reposts_set`` with reposts published before their original, reorders, partial
  quotes): every pair within a story is one event, so every conflict here is a false split;
* ecom2022 dev articles with one event id: independent reports of one event, which legitimately
  differ in details (ecom's events also span days or weeks); their conflict rate bounds what
  the check can cost in recall where the semantic layer would have merged them;
* cec_news reports of distinct events (``hard_negatives.distinct_events``: no two of one kind
  within ten days): every pair of one category, the pairs naming one place
  (``hard_negatives.same_place_pairs``, the case the check is for), and the same pairs with
  their dates left out, as if both events had happened on one day, so that only places,
  figures and people can tell them apart.

    python bench/specifics_check.py [--part tune|test] [--examples 8]

Prints rates and examples of each kind of decision; reads ../shared/data (see bench/datasets.py).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from datetime import date, datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import datasets  # noqa: E402
import hard_negatives  # noqa: E402
import heldout_sets  # noqa: E402
from indexer.cleaning import clean_body, clean_title  # noqa: E402
from indexer.compare.specifics import COARSE_NAMES, extract_specifics, specifics_conflict  # noqa: E402

# Coarse names that are no Chinese city: countries, regions, provinces (two reports naming 美国
# or 四川 are not "in one city").
_NOT_CITIES = frozenset(
    "中国 美国 日本 韩国 朝鲜 英国 法国 德国 俄罗斯 意大利 西班牙 加拿大 澳大利亚 印度 巴基斯坦 阿富汗 伊拉克 伊朗 以色列 "
    "巴勒斯坦 土耳其 埃及 泰国 越南 菲律宾 印度尼西亚 印尼 马来西亚 新加坡 缅甸 巴西 墨西哥 阿根廷 南非 尼日利亚 乌克兰 "
    "叙利亚 沙特 也门 索马里 孟加拉 尼泊尔 斯里兰卡 新西兰 荷兰 比利时 瑞士 瑞典 挪威 芬兰 丹麦 波兰 希腊 葡萄牙 奥地利 "
    "爱尔兰 智利 秘鲁 哥伦比亚 委内瑞拉 古巴 蒙古 哈萨克斯坦 肯尼亚 埃塞俄比亚 阿尔及利亚 利比亚 苏丹 车臣 加沙 巴格达 "
    "全国 国内 海外 境外 内地 大陆 华北 华东 华南 华中 西南 西北 东北 中原 江南 珠三角 长三角 京津冀 亚洲 欧洲 非洲 美洲 "
    "拉美 中东 东南亚 南方 北方 沿海 全省 全市 全县 本市 本省 当地 各地 中华 祖国 北京时间".split()
) | hard_negatives.PROVINCES


def _cities(record: dict) -> frozenset[str]:
    lead = record["title"] + record["content"][:200]
    return frozenset(n for n in COARSE_NAMES - _NOT_CITIES if n in lead)


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


def _story_pairs(records: list[dict], truth: dict[str, str], kind) -> tuple[list, list]:
    """(pairs with the original, all pairs) within each story; kind(record) labels a record."""
    groups = defaultdict(list)
    for r in records:
        groups[truth[r["id"]]].append(r)
    pairs, with_orig = [], []
    for story, group in groups.items():
        specs = [(r, specifics_of(r, datetime.fromisoformat(r["publish_time"]))) for r in group]
        for (ra, sa), (rb, sb) in itertools.combinations(specs, 2):
            item = (specifics_conflict(sa, sb), f"[{kind(ra)}] {ra['title']}", f"[{kind(rb)}] {rb['title']}")
            pairs.append(item)
            if story in (ra["id"], rb["id"]):
                with_orig.append(item)
    return with_orig, pairs


def repost_pairs(part: str, examples: int) -> None:
    records, truth = datasets.repost_set(part=part)
    records = [r for r in records if r.get("kind") != "template"]
    with_orig, pairs = _story_pairs(records, truth, lambda r: r["kind"])
    _report(f"reposts v1 ({part}), original vs repost", with_orig, examples)
    _report(f"reposts v1 ({part}), any two copies of one story", pairs, examples)
    held = heldout_sets.reposts_set(part=part)
    kept = [r for r in held.records if held.kind[r["id"]] not in heldout_sets.ALONE_KINDS]
    with_orig, pairs = _story_pairs(kept, held.truth, lambda r: held.kind[r["id"]])
    _report(f"reposts v2, held-out set ({part}), original vs repost", with_orig, examples)
    _report(f"reposts v2, held-out set ({part}), any two copies of one story", pairs, examples)


def ecom_pairs(part: str, examples: int) -> None:
    events = defaultdict(list)
    for article, event in datasets.ecom_articles(part=part):
        events[event].append((article, specifics_of(article)))
    pairs = [(specifics_conflict(sa, sb), a["title"], b["title"])
             for group in events.values() for (a, sa), (b, sb) in itertools.combinations(group, 2)]
    _report(f"ecom2022 dev ({part}), same event (independent reports, no publish time)", pairs, examples)


def cec_pairs(part: str, examples: int) -> None:
    reports = heldout_sets.cec_hard_negatives(part)
    specs = {}
    for r in reports:
        when = datetime.combine(r["date"], datetime.min.time(), timezone.utc) if isinstance(r["date"], date) else None
        specs[r["id"]] = specifics_of(r, when)
    by_id = {r["id"]: r for r in reports}
    same_kind = [(specifics_conflict(specs[a["id"]], specs[b["id"]]), a["title"], b["title"])
                 for a, b in itertools.combinations(reports, 2) if a["category"] == b["category"]]
    _report(f"cec_news distinct events ({part}), same category", same_kind, 0)
    hard = hard_negatives.same_place_pairs(reports)
    same_place = [(specifics_conflict(specs[a], specs[b]), by_id[a]["title"], by_id[b]["title"]) for a, b in hard]
    _report(f"cec_news distinct events ({part}), same category and place", same_place, examples)
    undated = {k: replace(s, dates=(), all_dates=()) for k, s in specs.items()}
    same_place_undated = [(specifics_conflict(undated[a], undated[b]), by_id[a]["title"], by_id[b]["title"]) for a, b in hard]
    _report(f"cec_news distinct events ({part}), same category and place, dates left out", same_place_undated, examples)
    print(f"  of those, without a conflict (first {examples}):")
    for _, a, b in [p for p in same_place_undated if not p[0]][:examples]:
        print(f"      {a[:50]}  |  {b[:50]}")
    same_city = [(a, b) for a, b in itertools.combinations(reports, 2)
                 if a["category"] == b["category"] and _cities(a) & _cities(b)]
    _report(f"cec_news distinct events ({part}), same category and city",
            [(specifics_conflict(specs[a["id"]], specs[b["id"]]), a["title"], b["title"]) for a, b in same_city], 0)
    city_undated = [(specifics_conflict(undated[a["id"]], undated[b["id"]]), a["title"], b["title"]) for a, b in same_city]
    _report(f"cec_news distinct events ({part}), same category and city, dates left out", city_undated, examples)
    print(f"  of those, without a conflict (first {examples}):")
    for _, a, b in [p for p in city_undated if not p[0]][:examples]:
        print(f"      {a[:50]}  |  {b[:50]}")


def speed() -> None:
    articles = list(itertools.islice(datasets.inews_articles(), 500))
    cleaned = [(clean_title(a["title"]), clean_body(a["content"])) for a in articles]
    when = datetime(2024, 3, 10, 12, tzinfo=timezone.utc)
    start = time.perf_counter()
    specs = [extract_specifics(t, b, when) for t, b in cleaned]
    per_article = (time.perf_counter() - start) / len(specs)
    pairs = list(zip(specs, specs[1:] + specs[:1])) * 10
    start = time.perf_counter()
    for a, b in pairs:
        specifics_conflict(a, b)
    per_pair = (time.perf_counter() - start) / len(pairs)
    print(f"speed: extract_specifics {per_article * 1000:.3f} ms/article (500 inews articles, nothing cached), "
          f"specifics_conflict {per_pair * 1e6:.1f} us/pair")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("tune", "test"), default="tune", help="split part (bench/splits.py)")
    parser.add_argument("--examples", type=int, default=8, help="examples printed per set")
    args = parser.parse_args()
    repost_pairs(args.part, args.examples)
    ecom_pairs(args.part, args.examples)
    cec_pairs(args.part, args.examples)
    speed()


if __name__ == "__main__":
    main()
