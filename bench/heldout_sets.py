"""Labelled sets built from real articles with the second repost generator (``reposts_v2``) and
the hard negatives of ``hard_negatives``, for the measurements issue 12 asks for:

- ``reposts_set``: real articles, their v2 reposts (some published before the original), digests,
  templated reports and same-kind-different-event reports from cec_news, over a month;
- ``burst_set``: 100 real stories x 20 articles each (the original and 19 reposts), two days;
- ``chain_set``: 100 real stories, each reposted in a chain (a repost of a repost of ...), so
  furniture piles up and edits compound, two days;
- ``traditional_set``: real articles, each with a verbatim copy in traditional characters, among
  other real articles;
- ``site_set``: short real articles as several sites' crawlers save them, each story ending with
  its site's related-reading list and footer (the same under every story of a site), copied by
  other sites with their own list and footer, some writing small figures in Chinese numerals.

Every builder takes ``part`` ("tune" or "test", see ``splits``) and draws its real articles from
that part only. Seeds never include the first generator's default seeds (``datasets.repost_set``,
on which the decision was tuned). Each returns ``LabelledSet``: the records (shuffled once; the
caller shuffles again per arrival order), the truth story of every record, and its kind.

Label caveat: real articles count as distinct stories when they are not lexical copies of each
other (``datasets.distinct_seeds``: 5-gram containment <= 0.3) or, for cec_news, not reports of
one kind within ten days (``hard_negatives.distinct_events``). Two real reports of one event in
other words can still slip through as "distinct"; read a false merge between two originals or
distractors (``quality.py ... -v``) before calling it the engine's error.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import datasets
import hard_negatives
import reposts_v2
from splits import cec_key, check_part, part_of, story_key

CST = datasets.CST
# Reposts per story in the reposts set are drawn from these (partial quotes and combos included).
REPOST_KINDS = [*reposts_v2.RECIPES, "combo", "partial_quote"]
# The burst repeats the plain recipes: the edits a wire story meets in its first two days.
BURST_KINDS = [*reposts_v2.RECIPES, *reposts_v2.RECIPES, "combo"]
# Kinds that are stories of their own and must merge with nothing (hard negatives).
ALONE_KINDS = frozenset({"template", "digest"})


@dataclass
class LabelledSet:
    name: str
    records: list[dict]
    truth: dict[str, str]  # article id -> story id
    kind: dict[str, str]  # article id -> original / template / digest / hard_negative / a repost kind
    hard_pairs: list[tuple[str, str]] = field(default_factory=list)  # different stories that read alike

    @property
    def stories(self) -> int:
        return len(set(self.truth.values()))


def _v1_seed_ids() -> frozenset[str]:
    return frozenset(a["id"] for a in datasets.distinct_seeds(300))


def _add_story(out: LabelledSet, article: dict, when: datetime, kinds: list[str], rng: random.Random,
               times: list[datetime], original_kind: str = "original") -> None:
    story = article["id"]
    out.records.append({"id": story, "title": article["title"], "content": article["content"],
                        "publish_time": when.isoformat()})
    out.truth[story], out.kind[story] = story, original_kind
    for k, (kind, at) in enumerate(zip(kinds, times)):
        rid = f"{story}~v2-{k}"
        # The dateline a repost carries is the story's (one agency piece, reposted), not its own day.
        repost = reposts_v2.make_repost(article, kind, rng, when.day)
        out.records.append({"id": rid, "title": repost["title"], "content": repost["content"], "publish_time": at.isoformat()})
        out.truth[rid], out.kind[rid] = story, kind


def cec_hard_negatives(part: str, exclude=frozenset()) -> list[dict]:
    """cec_news reports of distinct events in ``part``, with ``category``, ``date``, ``place``."""
    reports = []
    for r in datasets.cec_reports():
        if r["id"] in exclude:
            continue
        r = dict(r, date=hard_negatives.report_date(r["date_text"]), place=hard_negatives.lead_place(r["title"], r["content"]))
        if part_of(cec_key(r["category"], r["place"], r["id"])) == part:
            reports.append(r)
    return hard_negatives.distinct_events(reports)


def reposts_set(part: str = "test", n_seeds: int = 120, per_family: int = 8, seed: int = 2024) -> LabelledSet:
    """Real articles with 2-6 v2 reposts each, digests of their leads, templated reports, and
    cec_news reports of distinct events (with 0-2 reposts each; two of one kind in one place
    are published 1-4 days apart), all over 30 days."""
    check_part(part)
    rng = random.Random(seed)
    t0 = datetime(2024, 5, 1, 7, tzinfo=CST)
    out = LabelledSet(f"reposts-v2 ({part})", [], {}, {})
    exclude = _v1_seed_ids()
    seeds = datasets.distinct_seeds(n_seeds, seed=seed, part=part, sources=("inews",), exclude=exclude)
    published = {}
    for a in seeds:
        when = t0 + timedelta(hours=rng.uniform(0, 24 * 30))
        kinds = rng.sample(REPOST_KINDS, rng.randint(2, 6))
        _add_story(out, a, when, kinds, rng, reposts_v2.repost_times(when, len(kinds), rng))
        published[a["id"]] = when
    for d in range(max(1, n_seeds // 10)):
        picked = rng.sample(seeds, rng.randint(3, 5))
        when = max(published[a["id"]] for a in picked) + timedelta(hours=rng.uniform(1, 12))
        dig = reposts_v2.digest(picked, rng, when)
        rid = f"digest-{part}-{d}"
        out.records.append({"id": rid, "title": dig["title"], "content": dig["content"], "publish_time": when.isoformat()})
        out.truth[rid], out.kind[rid] = rid, "digest"
    negatives = cec_hard_negatives(part, exclude)
    first_at: dict[tuple, datetime] = {}
    for r in negatives:
        group = (r["category"], r["place"])
        if r["place"] and group in first_at:
            when = first_at[group] + timedelta(hours=rng.uniform(24, 96))
        else:
            when = t0 + timedelta(hours=rng.uniform(0, 24 * 26))
            first_at.setdefault(group, when)
        kinds = rng.sample(list(reposts_v2.RECIPES), rng.randint(0, 2))
        _add_story(out, r, when, kinds, rng, reposts_v2.repost_times(when, len(kinds), rng), original_kind="hard_negative")
    out.hard_pairs = hard_negatives.same_place_pairs(negatives)
    for j, t in enumerate(hard_negatives.templated_reports_v2(rng, per_family, t0)):
        rid = f"tpl2-{t['family']}-{j}"
        if part_of(story_key(rid)) != part:
            continue
        out.records.append({"id": rid, "title": t["title"], "content": t["content"], "publish_time": t["publish_time"]})
        out.truth[rid], out.kind[rid] = rid, "template"
    rng.shuffle(out.records)
    return out


def burst_set(part: str = "test", stories: int = 100, per_story: int = 20, seed: int = 77) -> LabelledSet:
    """``stories`` real ccf2019_inews articles with ``per_story - 1`` reposts each; every
    article, original included, published at a random moment of the same two days."""
    check_part(part)
    rng = random.Random(seed)
    t0 = datetime(2024, 6, 3, 0, tzinfo=CST)
    out = LabelledSet(f"burst ({part})", [], {}, {})
    seeds = datasets.distinct_seeds(stories, seed=seed, part=part, sources=("inews",), exclude=_v1_seed_ids())
    for a in seeds:
        kinds = [BURST_KINDS[k % len(BURST_KINDS)] for k in range(per_story - 1)]
        times = [t0 + timedelta(hours=rng.uniform(0, 48)) for _ in range(per_story)]
        _add_story(out, a, times[0], kinds, rng, times[1:])
    rng.shuffle(out.records)
    return out


# Chain links: every v2 recipe that keeps the text a page of plain lines (an HTML page or a partial
# quote would end the chain), and one cut (trim_top or teaser) somewhere in each chain.
CHAIN_KINDS = ("dateline", "furniture", "reordered", "sentences_dropped", "synonyms", "spacing")
CHAIN_CUTS = ("trim_top", "teaser")


def chain_set(part: str = "test", stories: int = 100, depth: int = 10, seed: int = 88) -> LabelledSet:
    """``stories`` real ccf2019_inews articles, each followed by a chain of ``depth`` reposts: link
    k reposts link k-1, not the original, as sites copy each other's copies. Each link's furniture
    stays in the next (bylines, ads, disclaimers, font-size bars, inside the text by then), one link
    of a chain cuts the text, and a retitling link may cut its headline from a lead that is
    furniture by then. Every article is published at a random moment of the same two days."""
    check_part(part)
    rng = random.Random(seed)
    t0 = datetime(2024, 6, 3, 0, tzinfo=CST)
    out = LabelledSet(f"chain ({part}, depth {depth})", [], {}, {})
    for a in datasets.distinct_seeds(stories, seed=seed, part=part, sources=("inews",), exclude=_v1_seed_ids()):
        story, link = a["id"], {"title": a["title"], "content": a["content"]}
        out.records.append({"id": story, **link, "publish_time": (t0 + timedelta(hours=rng.uniform(0, 48))).isoformat()})
        out.truth[story], out.kind[story] = story, "original"
        cut_at = rng.randrange(depth)
        for k in range(depth):
            recipe = rng.choice(CHAIN_CUTS if k == cut_at else CHAIN_KINDS)
            repost = reposts_v2.make_repost(link, recipe, rng, t0.day)
            link = {"title": repost["title"], "content": repost["content"]}
            rid = f"{story}~chain-{k + 1}"
            out.records.append({"id": rid, **link, "publish_time": (t0 + timedelta(hours=rng.uniform(0, 48))).isoformat()})
            out.truth[rid], out.kind[rid] = story, f"link {k + 1}"
    rng.shuffle(out.records)
    return out


def traditional_set(part: str = "test", copies: int = 60, distractors: int = 500, seed: int = 5,
                    config: str = "s2t") -> LabelledSet:
    """``copies`` real articles each with a verbatim copy converted to traditional characters
    (OpenCC ``config``), published within a day of it, among ``distractors`` other real
    articles; all over a week."""
    import opencc

    check_part(part)
    rng = random.Random(seed)
    t0 = datetime(2024, 7, 1, 0, tzinfo=CST)
    convert = opencc.OpenCC(config).convert
    out = LabelledSet(f"traditional ({part}, {config})", [], {}, {})
    pool = datasets.distinct_seeds(copies + distractors, seed=seed, part=part, exclude=_v1_seed_ids())
    for i, a in enumerate(pool):
        when = t0 + timedelta(hours=rng.uniform(0, 24 * 7))
        out.records.append({"id": a["id"], "title": a["title"], "content": a["content"], "publish_time": when.isoformat()})
        out.truth[a["id"]], out.kind[a["id"]] = a["id"], "original" if i < copies else "distractor"
        if i < copies:
            rid = f"{a['id']}~{config}"
            out.records.append({"id": rid, "title": convert(a["title"]), "content": convert(a["content"]),
                                "publish_time": (when + timedelta(hours=rng.uniform(-24, 24))).isoformat()})
            out.truth[rid], out.kind[rid] = a["id"], "traditional"
    rng.shuffle(out.records)
    return out


# Site templates of site_set: the header over a site's related-reading list, how it marks each
# listed headline, and its footer lines ({n}: a number of the site's own).
SITE_TEMPLATES = [
    ("大河网", "相关阅读：", "· "), ("映象网", "【热门推荐】", "▪ "), ("中原网", "猜你喜欢", ""),
    ("东方今报", "延伸阅读", "{k}. "), ("郑州晚报", "推荐阅读：", "• "), ("大象新闻", "大家都在看", "[{k}] "),
]
SITE_FOOTERS = [
    "{site}地址：郑州市金水区农业路东{n}号 邮编：4500{d}",
    "新闻热线：0371-6{n}5666 广告热线：0371-6{n}5700",
    "Copyright © 2024 {site} 版权所有 豫ICP备0{n}2341号",
    "违法和不良信息举报电话：0371-6{n}79 举报邮箱：jubao{d}@{n}.cn",
    "豫公网安备 4101050{n}0{d}号",
]
_NUMERALS = {"2": "两", "3": "三", "4": "四", "5": "五", "6": "六", "7": "七", "8": "八", "9": "九", "10": "十"}
_SMALL_FIGURE = re.compile(r"(?<![\d.])(10|[2-9])(?=[人名个辆起家位只])")


def _site_page(content: str, site: int, related: list[str], numbers: int) -> str:
    name, header, mark = SITE_TEMPLATES[site]
    listed = [mark.format(k=k) + h for k, h in enumerate(related, 1)]
    footer = [f.format(site=name, n=numbers, d=site) for f in SITE_FOOTERS]
    return "\n".join([*reposts_v2.blocks(content), header, *listed, *footer])


def site_set(part: str = "test", stories: int = 60, copies: int = 2, seed: int = 11, max_chars: int = 600) -> LabelledSet:
    """``stories`` short real ccf2019_inews articles (at most ``max_chars``), each published by a
    home site and copied by ``copies`` other sites within two days; every page ends with its site's
    related-reading list (headlines of other real articles, the same under every story of the site)
    and footer (registration, hotline and report numbers of its own). A copy re-tags its headline
    half of the time and writes small figures in Chinese numerals (3人 as 三人) half of the time.
    Stories of one site share their furniture word for word; copies of one story share none."""
    check_part(part)
    rng = random.Random(seed)
    t0 = datetime(2024, 5, 6, 0, tzinfo=CST)
    out = LabelledSet(f"sites ({part})", [], {}, {})
    pool = datasets.distinct_seeds(stories * 8, min_chars=60, seed=seed, part=part, sources=("inews",), exclude=_v1_seed_ids())
    short = [a for a in pool if len(a["content"]) <= max_chars][:stories]
    headlines = [a["title"] for a in pool if a not in short and 8 <= len(a["title"]) <= 30]
    related = [rng.sample(headlines, rng.randint(5, 8)) for _ in SITE_TEMPLATES]
    numbers = [rng.randint(10, 99) for _ in SITE_TEMPLATES]
    for i, a in enumerate(short):
        home = i % len(SITE_TEMPLATES)
        when = t0 + timedelta(hours=rng.uniform(0, 48))
        others = rng.sample([k for k in range(len(SITE_TEMPLATES)) if k != home], copies)
        for j, site in enumerate([home, *others]):
            content, title = a["content"], a["title"]
            if j and rng.random() < 0.5:
                content = _SMALL_FIGURE.sub(lambda m: _NUMERALS[m.group(1)], content)
            if j and rng.random() < 0.5:
                title = rng.choice(reposts_v2.TITLE_PREFIXES) + title
            rid = a["id"] if j == 0 else f"{a['id']}~site{site}"
            out.records.append({"id": rid, "title": title, "content": _site_page(content, site, related[site], numbers[site]),
                                "publish_time": (when + timedelta(hours=j and rng.uniform(0, 24))).isoformat(),
                                "source": SITE_TEMPLATES[site][0]})
            out.truth[rid], out.kind[rid] = a["id"], "original" if j == 0 else "site_copy"
    rng.shuffle(out.records)
    return out


def hard_wrap(s: LabelledSet, share: float, seed: int = 9) -> None:
    """Hard-wrap ``share`` of the set's reposts in place, as an e-paper or PDF copy comes: every
    line of the text cut at one width (18-30 characters), through figures and words; their kind
    becomes ``wrapped``. Originals, negatives and HTML pages are left as they are."""
    rng = random.Random(seed)
    for r in s.records:
        if s.kind[r["id"]] in ("original", "hard_negative", "distractor", *ALONE_KINDS) or "<html" in r["content"].lower():
            continue
        if rng.random() < share:
            width = rng.randint(18, 30)
            r["content"] = "\n".join(p[i : i + width] for p in r["content"].split("\n") for i in range(0, len(p), width))
            s.kind[r["id"]] = "wrapped"
