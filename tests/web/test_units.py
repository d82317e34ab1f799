"""The browser view's pure parts: labelled pairs from the change log, the side-by-side diff,
filters and paging, chart geometry, links, sessions."""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, timedelta, timezone

from indexer.labels import different_pairs, labels_from_changes, split_reason
from indexer.store.base import ClusterChange
from indexer.web.charts import horizontal, stacked_days
from indexer.web.cluster_index import ClusterFilter, Row, duplicate_rate_per_source, duplicates_per_day, page_of, summarise
from indexer.web.pages import safe_href
from indexer.labels import person_name
from indexer.web.sessions import Sessions
from indexer.web.text_diff import side_by_side

AT = datetime(2024, 3, 1, tzinfo=timezone.utc)


def test_labels_from_changes():
    changes = [
        ClusterChange("merge", "c1", "c2", "x", "bridged", "indexer", AT),  # the indexer's own: no label
        ClusterChange("split", "a", "c1", "a", split_reason("c1"), "li", AT),
        ClusterChange("split", "c3", "c1", "b", split_reason("m"), "wang", AT),
        ClusterChange("merge", "c1", "c4", None, "same story", "li", AT),
        ClusterChange("split", "a", "a", "a", "older entry without a partner", "li", AT),  # canonical, no partner: none
    ]
    got = [(x["a"], x["b"], x["label"], x["by"]) for x in labels_from_changes(changes)]
    assert got == [("a", "c1", 0, "li"), ("b", "m", 0, "wang"), ("b", "c3", 1, "wang"), ("c4", "c1", 1, "li")]
    assert different_pairs(changes) == {frozenset(("a", "c1")), frozenset(("b", "m"))}
    # a later "same story" on the same pair lifts the earlier "different"
    later = [*changes, ClusterChange("split", "c1", "a", "a", split_reason("zz"), "li", AT),
             ClusterChange("merge", "c1", "a", None, "same story", "li", AT)]
    assert frozenset(("a", "c1")) not in different_pairs(later)


def test_side_by_side_marks_shared_and_differing_text():
    left = "本报讯 城市科技博览会今日开幕，展会重点展示人工智能成果。"
    right = "新华社电 城市科技博览会今日开幕，展会重点展示人工智能成果。记者 张明"
    d = side_by_side(left, right)
    assert d.right == [(False, "新华社电"), (True, " 城市科技博览会今日开幕，展会重点展示人工智能成果。"), (False, "记者 张明")]
    assert d.left == [(False, "本报讯"), (True, " 城市科技博览会今日开幕，展会重点展示人工智能成果。")]
    assert "".join(t for _, t in d.left) == left and "".join(t for _, t in d.right) == right  # nothing lost
    assert 0.7 < d.shared_ratio < 1.0
    assert side_by_side("完全不同的一句话", "另外一段没有关系的文字").shared_chars == 0  # single shared characters are noise
    assert side_by_side("", "").shared_ratio == 1.0
    long = side_by_side("长" * 10_000, "长" * 10_000)
    assert long.cut and long.left_chars == 6000


def test_side_by_side_of_repetitive_text_is_bounded_and_falls_back_to_sentences(monkeypatch):
    """difflib takes cubic time on repetitive text (a crawled page can be anything): past a bound
    on its character comparisons, the texts are compared sentence by sentence."""
    import difflib

    calls = []
    real = difflib.SequenceMatcher.find_longest_match
    monkeypatch.setattr(difflib.SequenceMatcher, "find_longest_match", lambda self, *a: calls.append(1) or real(self, *a))
    left, right = "啊" * 1500 + "。城市科技博览会今日开幕。", "啊哦" * 750 + "。城市科技博览会今日开幕。"
    d = side_by_side(left, right)
    assert d.by_sentence and len(calls) < 50  # character by character: ~1,500 calls, 12 s at 1,000 characters
    assert (True, "城市科技博览会今日开幕。") in d.left and (True, "城市科技博览会今日开幕。") in d.right
    assert "".join(t for _, t in d.left) == left and "".join(t for _, t in d.right) == right  # nothing lost
    assert side_by_side("啊" * 6000, "啊哦" * 3000).by_sentence  # and at the length the view shows
    # real text stays character by character
    assert not side_by_side("本报讯 城市科技博览会今日开幕。" * 20, "新华社电 城市科技博览会今日开幕。" * 20).by_sentence


def _row(aid: str, cid: str, source: str, day: int, reason: str | None = None, title: str = "标题") -> Row:
    return Row(aid, f"{title}{aid}", f"https://e.cn/{aid}", source, datetime(2024, 3, day, 9, tzinfo=timezone.utc),
               cid, aid == cid, reason)


def test_filters_sort_and_pages():
    rows = [_row("a", "a", "新华网", 1), _row("a2", "a", "人民网", 2, "exact"), _row("b", "b", "人民网", 3, title="台风"),
            *[_row(f"s{i}", f"s{i}", "其他", 4) for i in range(30)]]
    clusters = summarise(rows)
    first = page_of(clusters, ClusterFilter(), "largest", 1, 25)
    assert first.total == 32 and first.pages == 2 and first.clusters[0].cluster_id == "a"
    assert page_of(clusters, ClusterFilter(), "largest", 9, 25).page == 2  # past the end: the last page
    assert [c.cluster_id for c in page_of(clusters, ClusterFilter(query="台风"), "largest", 1, 25).clusters] == ["b"]
    assert [c.cluster_id for c in page_of(clusters, ClusterFilter(query="E.CN/A2"), "largest", 1, 25).clusters] == ["a"]
    assert [c.cluster_id for c in page_of(clusters, ClusterFilter(source="人民网"), "newest", 1, 25).clusters] == ["b", "a"]
    assert [c.cluster_id for c in page_of(clusters, ClusterFilter(reason="exact"), "largest", 1, 25).clusters] == ["a"]
    spanned = ClusterFilter(since=date(2024, 3, 2), until=date(2024, 3, 3))
    assert {c.cluster_id for c in page_of(clusters, spanned, "largest", 1, 25).clusters} == {"a", "b"}
    a = next(c for c in clusters if c.cluster_id == "a")
    assert a.canonical.id == "a" and a.sources == ["人民网", "新华网"] and a.last - a.first == timedelta(days=1)
    assert duplicates_per_day(clusters) == {"2024-03-02": Counter({"exact": 1})}
    assert duplicate_rate_per_source(clusters)[0] == ("人民网", 1, 2)


def test_chart_geometry():
    chart = stacked_days({"2024-03-01": Counter(exact=2, near=1), "2024-03-02": Counter(exact=3)})
    assert [b.title for b in chart.bars] == ["2024-03-01 exact: 2", "2024-03-01 near: 1", "2024-03-02 exact: 3"]
    tallest = max(b.height for b in chart.bars if b.title.startswith("2024-03-02"))
    assert all(b.y >= 0 and b.y + b.height <= chart.height for b in chart.bars)
    assert abs(sum(b.height for b in chart.bars[:2]) - tallest) < 0.2  # 3 duplicates each day: equal stacks
    bars = horizontal([("a", 0.5, "50%"), ("b", 1.0, "100%")]).bars
    assert bars[1].width == 2 * bars[0].width


def test_links_only_for_web_urls_and_sessions():
    assert safe_href("https://e.cn/x?a=1") == "https://e.cn/x?a=1"
    for bad in ("javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,<script>", "vbscript:x", "//evil", "", None):
        assert safe_href(bad) is None, bad
    sessions = Sessions(limit=2)
    one = sessions.create("甲")
    assert sessions.get(one.id) == one and one.csrf_ok(one.csrf) and not one.csrf_ok("x") and not one.csrf_ok(None)
    sessions.create("乙")
    sessions.create("丙")
    assert sessions.get(one.id) is None  # the oldest went when the bound was reached
    expired = Sessions(ttl=-1)
    assert expired.get(expired.create("x").id) is None
    assert person_name("  编辑\n\t王\x00  ", "browser") == "编辑 王"
    assert person_name(" \n", "browser") == "browser"
    # the indexer's own name marks entries that are no corrections: a person never gets it
    assert person_name("indexer", "api") == "indexer (person)" and person_name("Indexer", "api") != "indexer"


def test_login_throttle_counts_wrong_tokens_per_client_address(monkeypatch):
    """One client's wrong tries slow that client only: someone sending a wrong token whenever a
    try frees up must not keep the person with the right one out."""
    from indexer.web import sessions

    clock = [1000.0]
    monkeypatch.setattr(sessions.time, "monotonic", lambda: clock[0])
    throttle = sessions.LoginThrottle(attempts=3, window_seconds=60, max_clients=2)
    for _ in range(3):
        assert throttle.wait_seconds("10.0.0.66") == 0
        throttle.failed("10.0.0.66")
    assert throttle.wait_seconds("10.0.0.66") == 61 and throttle.wait_seconds("10.0.0.7") == 0
    clock[0] += 30
    assert throttle.wait_seconds("10.0.0.66") == 31
    clock[0] += 31
    assert throttle.wait_seconds("10.0.0.66") == 0  # the window passed
    for client in ("a", "b", "c"):  # memory is bounded: the least recently failed address goes first
        throttle.failed(client)
    assert throttle.wait_seconds("a") == 0 and len(throttle._failures) == 2
