"""Labelled sets built from real articles with the second repost generator (``reposts_v2``) and
the hard negatives of ``hard_negatives``, for the measurements issue 12 asks for:

- ``reposts_set``: real articles, their v2 reposts (some published before the original), digests,
  templated reports and same-kind-different-event reports from cec_news, over a month;
- ``burst_set``: 100 real stories x 20 articles each (the original and 19 reposts), two days;
- ``traditional_set``: real articles, each with a verbatim copy in traditional characters, among
  other real articles.

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
