"""The second repost generator and the hard negatives (bench/reposts_v2.py, bench/hard_negatives.py),
and the labels of the held-out sets built from the evaluation data (skipped without it)."""

from __future__ import annotations

import random
import re
import sys
from collections import Counter
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import hard_negatives  # noqa: E402
import reposts_v2  # noqa: E402

ARTICLE = {
    "id": "story-1",
    "title": "南京鼓楼区一居民楼发生火灾 3人受伤",
    "content": "12日凌晨2时许，南京市鼓楼区中山北路一居民楼突发火灾。消防部门接警后迅速调派5辆消防车赶赴现场。\n"
               "据悉，起火点位于该楼6层一户居民家中，火势在半小时内被扑灭。火灾造成3人受伤，已被送往医院救治。\n"
               "目前，起火原因正在进一步调查中。消防部门提醒市民注意用电安全。\n"
               "事发小区居民表示，当时听到楼上传来爆炸声，随后看到浓烟。“我们赶紧跑下楼。”一位居民说。",
}
OTHERS = [
    {"title": f"第{i}条新闻标题", "content": f"这是第{i}条新闻的导语，内容各不相同。第二句话补充细节。\n第二段。"} for i in range(5)
]


def _story_sentences(text: str) -> set[str]:
    return {s for p in reposts_v2.blocks(text) for s in reposts_v2.sentences(p)}


def test_sentences_keep_end_marks_and_closing_quotes():
    assert reposts_v2.sentences("他说：“走吧。”然后离开了。好！") == ["他说：“走吧。”", "然后离开了。", "好！"]


def test_one_paragraph_body_is_cut_into_blocks_of_sentences():
    body = "一。二。三。四。五。六。七。"
    assert reposts_v2.blocks(body) == ["一。二。三。", "四。五。六。", "七。"]
    assert reposts_v2.blocks("甲段\n\n乙段\n丙段") == ["甲段", "乙段", "丙段"]


@pytest.mark.parametrize("kind", [*reposts_v2.RECIPES, "combo"])
def test_every_recipe_keeps_most_of_the_story(kind):
    original = _story_sentences(ARTICLE["content"])
    for seed in range(20):
        r = reposts_v2.make_repost(ARTICLE, kind, random.Random(seed), 12)
        assert r["kind"] == kind and r["title"] and r["content"]
        text = re.sub(r"<[^>]+>|&\w+;", "", r["content"])
        kept = sum(s in text for s in original)
        # teasers and sentence drops lose some, synonyms rewrite some; none loses the story
        assert kept >= 2, (kind, seed, r["content"])


def test_furniture_recipes_add_the_furniture():
    rng = random.Random(3)
    dated = reposts_v2.make_repost(ARTICLE, "dateline", rng, 12)
    assert re.match(r"(中新网12日电 |据.+报道，|.+讯 |【.+】)", dated["content"])
    assert re.search(r"版权声明|免责声明|原创稿件", dated["content"])
    page = reposts_v2.make_repost(ARTICLE, "html_page", rng, 12)
    assert page["content"].startswith("<!DOCTYPE html>") and "中山北路" in page["content"]
    teaser = reposts_v2.make_repost(ARTICLE, "teaser", rng, 12)
    assert re.search(r"阅读全文|展开全文|查看更多|下一页", teaser["content"])


def test_reorder_moves_paragraphs_without_losing_any():
    d = reposts_v2.Draft("t", ["a", "b", "c", "d"])
    reposts_v2.reorder(d, random.Random(1), {})
    assert sorted(d.paras) == ["a", "b", "c", "d"] and d.paras != ["a", "b", "c", "d"] and d.paras[0] == "a"


def test_partial_quote_quotes_one_or_two_paragraphs_inside_other_text():
    paras = reposts_v2.blocks(ARTICLE["content"])
    for seed in range(10):
        r = reposts_v2.make_repost(ARTICLE, "partial_quote", random.Random(seed), 1)
        quoted = [p for p in paras if f"“{p}”" in r["content"]]
        assert 1 <= len(quoted) <= 2 and len(quoted) < len(paras)
        assert r["kind"] == "partial_quote"


def test_digest_is_made_of_the_leads_of_three_to_five_stories():
    when = datetime(2024, 5, 3, tzinfo=timezone.utc)
    d = reposts_v2.digest(OTHERS[:4], random.Random(0), when)
    assert d["kind"] == "digest" and "4条要闻" in d["title"]
    assert all(o["title"] in d["content"] and "导语" in d["content"] for o in OTHERS[:4])
    assert "第二段" not in d["content"]  # leads only
    with pytest.raises(ValueError):
        reposts_v2.digest(OTHERS[:2], random.Random(0), when)


def test_some_reposts_are_published_before_their_original():
    when = datetime(2024, 5, 3, tzinfo=timezone.utc)
    times = reposts_v2.repost_times(when, 200, random.Random(0))
    assert any(t < when for t in times) and any(t > when for t in times)
    assert all(when - timedelta(hours=36) <= t <= when + timedelta(hours=72) for t in times)


def test_generator_is_deterministic_given_its_random_source():
    a = [reposts_v2.make_repost(ARTICLE, "combo", random.Random(9), 5) for _ in range(3)]
    b = [reposts_v2.make_repost(ARTICLE, "combo", random.Random(9), 5) for _ in range(3)]
    assert a == b


# ---- hard negatives ---------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("2008年04月05日 09:12", date(2008, 4, 5)), ("2007-7-26", date(2007, 7, 26)),
    ("2006-8-14 9:34:32", date(2006, 8, 14)), ("2014年4月11日07:00", date(2014, 4, 11)),
    ("", None), ("2008年13月40日", None),
])
def test_report_date(text, expected):
    assert hard_negatives.report_date(text) == expected


def _report(i, category, day, place):
    return {"id": f"r{i}", "category": category, "date": date(2008, 1, 1) + timedelta(days=day), "place": place}


def test_distinct_events_keeps_one_report_of_a_kind_within_the_window():
    reports = [_report(0, "火灾", 0, "南京"), _report(1, "火灾", 3, "杭州"), _report(2, "火灾", 30, "南京"),
               _report(3, "地震", 1, "南京"), {**_report(4, "火灾", 90, "南京"), "date": None}]
    kept = hard_negatives.distinct_events(reports, min_days=10)
    assert [r["id"] for r in kept] == ["r0", "r2", "r3"]  # r1 within 10 days of r0 (kept first: 南京 pair), r4 undated
    assert hard_negatives.same_place_pairs(kept) == [("r0", "r2")]


def test_templated_reports_v2_are_one_family_alike_and_each_different():
    start = datetime(2024, 5, 1, tzinfo=timezone.utc)
    reports = hard_negatives.templated_reports_v2(random.Random(1), 5, start, days=10)
    families = Counter(r["family"] for r in reports)
    assert set(families.values()) == {5} and len(families) == 6
    assert len({r["content"] for r in reports}) == len(reports)
    assert all(start <= datetime.fromisoformat(r["publish_time"]) <= start + timedelta(days=10) for r in reports)
    quakes = [r["content"] for r in reports if r["family"] == "quake"]
    assert all(q.startswith("中国地震台网正式测定") for q in quakes)


# ---- sets from the evaluation data --------------------------------------------------------------
def _data_or_skip():
    import datasets

    if not (datasets.DATA / "ccf2019_inews" / "inews.jsonl").exists():
        pytest.skip(f"evaluation data not found at {datasets.DATA}")


def test_reposts_set_labels_and_parts():
    _data_or_skip()
    import heldout_sets

    test = heldout_sets.reposts_set("test", n_seeds=12, per_family=2)
    tune = heldout_sets.reposts_set("tune", n_seeds=12, per_family=2)
    for s in (test, tune):
        ids = [r["id"] for r in s.records]
        assert len(ids) == len(set(ids)) == len(s.truth) == len(s.kind)
        for rid, story in s.truth.items():
            if "~v2-" in rid:
                assert rid.split("~v2-")[0] == story and s.kind[story] in ("original", "hard_negative")
            elif s.kind[rid] in ("digest", "template"):
                assert story == rid
        assert all(a in s.truth and b in s.truth and s.truth[a] != s.truth[b] for a, b in s.hard_pairs)
    assert set(test.truth.values()).isdisjoint(tune.truth.values())


def test_traditional_set_pairs_each_copy_with_its_original():
    _data_or_skip()
    pytest.importorskip("opencc")
    import heldout_sets

    s = heldout_sets.traditional_set("test", copies=5, distractors=20)
    by_id = {r["id"]: r for r in s.records}
    copies = [i for i, k in s.kind.items() if k == "traditional"]
    assert len(copies) == 5 and len(s.records) == 30
    for c in copies:
        original = by_id[s.truth[c]]
        assert by_id[c]["content"] != original["content"] and len(by_id[c]["content"]) == len(original["content"])


def test_site_set_gives_each_site_one_furniture_and_each_copy_another_site():
    _data_or_skip()
    import heldout_sets

    test, tune = heldout_sets.site_set("test", stories=12), heldout_sets.site_set("tune", stories=12)
    assert set(test.truth.values()).isdisjoint(tune.truth.values())
    by_site: dict[str, set[str]] = {}
    for r in test.records:
        story = test.truth[r["id"]]
        tail = r["content"].split("\n")[-5:]  # the footer: five lines of the site's own
        by_site.setdefault(r["source"], set()).add("\n".join(tail))
        assert (r["id"] == story) == (test.kind[r["id"]] == "original")
    assert all(len(footers) == 1 for footers in by_site.values()) and len(by_site) > 1
    copies = Counter(test.truth[i] for i, k in test.kind.items() if k == "site_copy")
    assert set(copies.values()) == {2} and len(copies) == 12
    sources = {}
    for r in test.records:
        sources.setdefault(test.truth[r["id"]], []).append(r["source"])
    assert all(len(set(v)) == len(v) for v in sources.values())  # a story's copies come from other sites


def test_headline_is_cut_from_the_story_not_from_added_furniture(monkeypatch):
    monkeypatch.setitem(reposts_v2.RECIPES, "furniture_then_title", ("dateline", "title_from_lead"))
    for seed in range(10):
        r = reposts_v2.make_repost(ARTICLE, "furniture_then_title", random.Random(seed), 12)
        assert r["title"].startswith("12日凌晨2时许"), r["title"]
