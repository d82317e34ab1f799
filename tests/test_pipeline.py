"""The decision path end to end on the embedded store."""

from __future__ import annotations

from indexer.pipeline import Decision

CPI = (
    "国家统计局12日发布数据显示，10月份全国居民消费价格同比上涨2.1%，环比上涨0.3%。其中，城市上涨2.0%，农村上涨2.4%。\n"
    "从同比看，食品价格上涨7.0%，影响CPI上涨约1.29个百分点。食品中，猪肉价格上涨51.8%，鲜果价格上涨12.2%。\n"
    "统计局城市司首席统计师董莉娟表示，10月份受部分地区疫情、天气等因素影响，食品价格有所上涨，非食品价格总体稳定。\n"
    "专家分析认为，随着保供稳价政策持续发力，四季度物价将保持在合理区间运行。"
)
QUAKE = (
    "据中国地震台网正式测定，3月5日8时12分在四川甘孜州泸定县发生5.1级地震，震源深度12千米。\n"
    "地震发生后，四川省地震局立即启动三级应急响应，派出工作组赶赴震区开展灾情调查。\n"
    "目前暂无人员伤亡报告，当地部分老旧房屋出现墙体开裂，交通、通信和电力总体正常。"
)


def rec(i, title, content, day=12, **kw):
    return {"id": i, "title": title, "content": content, "publish_time": f"2024-03-{day:02d}T10:00:00+08:00", **kw}


def paragraph_reports(prefix, n):
    """``n`` records ``prefix0``, ``prefix1``, ..., each one paragraph of CPI or QUAKE, in turn."""
    paragraphs = CPI.split("\n") + QUAKE.split("\n")
    return [rec(f"{prefix}{i}", f"报道{i}：" + paragraphs[i % len(paragraphs)][:10], paragraphs[i % len(paragraphs)]) for i in range(n)]


def test_retitled_repost_with_boilerplate_is_an_exact_duplicate(make_indexer):
    ix = make_indexer()
    out = ix.index_many([
        rec("a", "10月CPI同比上涨2.1%", CPI),
        rec("b", "【快讯】统计局：10月物价涨幅扩大", "<p>原标题：10月CPI同比上涨2.1%</p>" + "".join(f"<p>{p}</p>" for p in CPI.split("\n")) + "<p>责任编辑：王五</p>", day=13),
    ])
    assert [o.decision for o in out] == [Decision.NEW, Decision.DUPLICATE]
    assert (out[1].cluster_id, out[1].dup_of, out[1].reason, out[1].score) == ("a", "a", "exact", 1.0)


def test_articles_with_no_text_left_after_cleaning_are_nobodys_copies(make_indexer):
    """A headline of page chrome or credits over no body cleans to nothing; such articles share
    the empty MD5, SimHash 0 and one embedding, and were all exact copies of one another."""
    from indexer.compare.rules import refusal

    ix = make_indexer()
    empty = [rec("chrome", "点击上方蓝字关注我们", ""), rec("credits", "来源:央视新闻 编辑:芳芳", ""),
             rec("credits-2", "来源:人民网", "来源:人民网"), rec("chrome-2", "分享一篇文章", "")]
    out = ix.index_many(empty)
    assert [o.decision for o in out] == [Decision.NEW] * 4
    evidence, verdict = ix.compare(empty[0], empty[1])
    assert verdict is None and evidence.textless and not evidence.exact
    assert refusal(evidence, ix.settings.decision, ix.settings.simhash).startswith("no text left after cleaning")


def test_a_textless_article_asks_the_store_nothing_and_a_tokenless_one_no_bands(make_indexer, monkeypatch):
    """Every textless article has one content key: asking by it read every textless article ever
    stored (a cost that grew with the store). A text of stopwords alone has SimHash 0, which says
    nothing: two such texts were near copies (score 1.0) of each other."""
    ix = make_indexer()
    asked: list = []
    real_exact, real_bands = ix.store.find_exact, ix.store.find_band_candidates
    monkeypatch.setattr(ix.store, "find_exact", lambda keys: (asked.append(("exact", list(keys))), real_exact(keys))[1])
    monkeypatch.setattr(ix.store, "find_band_candidates",
                        lambda qs: (asked.append(("bands", [q.simhash for q in qs])), real_bands(qs))[1])
    out = ix.index_many([rec("chrome", "点击上方蓝字关注我们", ""), rec("chrome-2", "点击上方蓝字关注我们", "")])
    assert [o.decision for o in out] == [Decision.NEW, Decision.NEW]
    assert all(not keys for _, keys in asked)
    out = ix.index_many([rec("z1", "我们", "是的"), rec("z2", "什么", "他们")])
    assert [o.decision for o in out] == [Decision.NEW, Decision.NEW]
    evidence, verdict = ix.compare(rec("z1", "我们", "是的"), rec("z2", "什么", "他们"))
    assert verdict is None and evidence.hamming == 64
    assert all(not sims for kind, sims in asked if kind == "bands")


def test_trimmed_repost_is_a_near_duplicate(make_indexer):
    ix = make_indexer()
    ix.index_many([rec("a", "10月CPI同比上涨2.1%", CPI)])
    [out] = ix.index_many([rec("b", "统计局：10月CPI涨2.1%", "\n".join(CPI.split("\n")[:2]), day=14)])
    assert (out.decision, out.reason, out.cluster_id) == (Decision.DUPLICATE, "near", "a")


def test_same_title_over_a_different_body_is_not_a_duplicate(make_indexer):
    ix = make_indexer()
    out = ix.index_many([rec("a", "重要通知", CPI), rec("b", "重要通知", QUAKE)])
    assert [o.decision for o in out] == [Decision.NEW, Decision.NEW]


def test_templated_reports_are_not_merged(make_indexer):
    ix = make_indexer()
    frame = "{c}今日{d}{p}%，收报{x}元，成交额{v}亿元。{c}所属板块今日整体{d}，市场人士认为短期仍有波动。"
    out = ix.index_many([
        rec("s1", "贵州茅台今日上涨3.2%", frame.format(c="贵州茅台", d="上涨", p="3.2", x="1688.00", v="52.3")),
        rec("s2", "五粮液今日上涨3.2%", frame.format(c="五粮液", d="上涨", p="3.2", x="168.00", v="21.7")),
        rec("s3", "贵州茅台今日下跌1.5%", frame.format(c="贵州茅台", d="下跌", p="1.5", x="1610.00", v="48.1")),
    ])
    assert [o.decision for o in out] == [Decision.NEW] * 3


def test_near_matches_only_inside_the_time_window(make_indexer):
    ix = make_indexer(**{"decision.time_window_days": 7})
    trimmed = "\n".join(CPI.split("\n")[:3])
    out = ix.index_many([rec("a", "10月CPI同比上涨2.1%", CPI, day=1), rec("b", "10月CPI同比上涨2.1%", trimmed, day=20)])
    assert [o.decision for o in out] == [Decision.NEW, Decision.NEW]
    # No time on the new article: no window.
    [c] = ix.index_many([{"id": "c", "title": "10月CPI同比上涨2.1%", "content": trimmed}])
    assert c.decision is Decision.DUPLICATE


def test_exact_copies_match_across_any_time(make_indexer):
    ix = make_indexer(**{"decision.time_window_days": 7})
    out = ix.index_many([rec("a", "t", CPI, day=1), rec("b", "t2", CPI, day=28)])
    assert out[1].reason == "exact"


def test_copies_inside_one_batch_get_one_canonical(make_indexer):
    ix = make_indexer()
    out = ix.index_many([rec("a", "地震", QUAKE), rec("b", "【突发】地震", QUAKE), rec("c", "地震", QUAKE + "\n来源：某网")])
    assert [o.decision for o in out] == [Decision.NEW, Decision.DUPLICATE, Decision.DUPLICATE]
    assert {o.cluster_id for o in out} == {"a"}
    members = ix.store.cluster_members("a")
    assert [m.is_canonical for m in members] == [True, False, False]


def test_reingest_is_a_noop(make_indexer):
    ix = make_indexer()
    batch = [rec("a", "CPI", CPI), rec("b", "地震", QUAKE), {"title": "无id", "content": QUAKE + "另有消息。", "url": "https://x.example/n?utm_source=w"}]
    first = ix.index_many(batch)
    again = ix.index_many(batch + [{"title": "同一URL", "content": "内容不同也算同一篇", "url": "https://x.example/n"}])
    assert [o.decision for o in again] == [Decision.ALREADY_INDEXED] * 4
    assert [o.cluster_id for o in again[:3]] == [o.cluster_id for o in first]
    assert ix.store.stats().articles == 3


def test_repeated_id_inside_one_batch_is_indexed_once(make_indexer):
    ix = make_indexer()
    out = ix.index_many([rec("a", "CPI", CPI), rec("a", "CPI", CPI)])
    assert [o.decision for o in out] == [Decision.NEW, Decision.ALREADY_INDEXED]
    assert out[1].cluster_id == "a"


def test_invalid_records_are_rejected_and_the_rest_indexed(make_indexer):
    ix = make_indexer()
    out = ix.index_many([{"content": ""}, "not an object", rec("a", "CPI", CPI)], where=["f:1", "f:2", "f:3"])
    assert [o.decision for o in out] == [Decision.REJECTED, Decision.REJECTED, Decision.NEW]
    assert out[0].error == "neither title nor content" and out[0].where == "f:1"


def test_huge_body_is_stored_whole(make_indexer):
    ix = make_indexer(**{"input.feature_max_chars": 2000})
    body = CPI * 20000  # about 3 MB of text
    [out] = ix.index_many([rec("big", "大文章", body)])
    assert out.decision is Decision.NEW
    assert ix.store.get_many(["big"])["big"].content == body


def test_semantic_match_needs_the_cluster_canonical_too(make_indexer):
    """Chain drift: B is close to A, C is close to B but far from A. C may not join A's cluster
    through B; with the guard switched off (cluster_threshold -1) it would."""
    from tests.conftest import TableEmbedder

    # cos(A,B) = 0.90, cos(B,C) = 0.89, cos(A,C) = 0.60; one-character titles share no grams,
    # so the event score is 0.5 x cosine: 0.45, 0.445, 0.30.
    emb = TableEmbedder({"甲": [1, 0, 0, 0], "乙": [0.9, 0.436, 0, 0], "丙": [0.6, 0.8, 0, 0]})
    words = "城市 交通 地铁 线路 开通 运营 乘客 站点 换乘 早高峰 公交 接驳 规划 建设 里程".split()
    batch = [
        rec("A", "甲", " ".join(words[:8]) + "。"),
        rec("B", "乙", " ".join(words[4:12]) + "。"),
        rec("C", "丙", " ".join(words[7:15]) + "。"),
    ]
    common = {"decision.event_threshold": 0.44, "decision.template_guard": False}
    guarded = make_indexer(embedder=emb, **common, **{"decision.cluster_threshold": 0.35}).index_many(batch)
    assert (guarded[1].decision, guarded[1].reason, guarded[1].cluster_id) == (Decision.DUPLICATE, "semantic", "A")
    assert (guarded[2].decision, guarded[2].cluster_id) == (Decision.NEW, "C")
    unguarded = make_indexer(embedder=emb, **common, **{"decision.cluster_threshold": -2.0}).index_many(batch)
    assert (unguarded[2].decision, unguarded[2].dup_of, unguarded[2].cluster_id) == (Decision.DUPLICATE, "B", "A")


def test_explain_reports_the_evidence(make_indexer):
    ix = make_indexer()
    ix.index_many([rec("a", "CPI", CPI), rec("b", "统计局：10月CPI涨2.1%", "\n".join(CPI.split("\n")[:2]))])
    report = ix.explain("b")
    assert report["article"]["dup_of"] == "a"
    first = report["comparisons"][0]
    assert first["id"] == "a" and first["role"] == "dup_of" and first["verdict"] == "near"
    assert first["evidence"]["containment"] >= 0.8 and first["refused"] is None


def test_precheck_shingle_cache_is_bounded_and_changes_no_decision(make_indexer, monkeypatch):
    import indexer.pipeline as pipeline

    paragraphs = CPI.split("\n") + QUAKE.split("\n")
    records = [rec(f"r{i}", f"报道{i}：" + paragraphs[i % len(paragraphs)][:12],
                   "\n".join(paragraphs[j % len(paragraphs)] for j in range(i, i + 1 + i % 3)), day=10 + i % 5)
               for i in range(14)]

    def decisions(ix):
        out = []
        for r in records:  # one per batch, forgetting the sides kept in memory: every candidate is a stored row
            out += ix.index_many([r])
            ix._side_cache.clear()
        return [(o.decision, o.cluster_id, o.reason) for o in out]

    roomy = make_indexer()
    expected = decisions(roomy)
    assert roomy._precheck_shingles, "the pre-check ran and kept what it computed"
    assert any(d is Decision.DUPLICATE for d, _, _ in expected) and any(d is Decision.NEW for d, _, _ in expected)

    budget = max(a.nbytes for a in roomy._precheck_shingles.values()) * 2
    monkeypatch.setattr(pipeline, "PRECHECK_CACHE_BYTES", budget)
    tight = make_indexer()
    assert decisions(tight) == expected
    assert tight._precheck_bytes == sum(a.nbytes for a in tight._precheck_shingles.values()) <= budget


def test_a_fresh_articles_kept_side_equals_the_one_rebuilt_from_its_row(make_indexer):
    import numpy as np

    ix = make_indexer()
    html = "<p>原标题：10月CPI同比上涨2.1%</p>" + "".join(f"<p>{p}</p>" for p in CPI.split("\n")) + "<p>责任编辑：王五</p>"
    ix.index_many([rec("a", "【快讯】10月CPI同比上涨2.1%", html)])
    kept = ix._side_cache.pop("a")
    rebuilt = ix._side_for(ix.store.get_many(["a"])["a"])
    assert kept is not rebuilt and kept.text == rebuilt.text
    assert np.array_equal(kept.shingles, rebuilt.shingles) and np.array_equal(kept.vector, rebuilt.vector)
    assert kept.publish_time == rebuilt.publish_time


def test_features_computed_ahead_decide_like_one_batch(make_indexer, monkeypatch):
    """Several batches in one call, each in several parts: features come from the text and
    embedding stages, two batches ahead, and decisions equal one batch's."""
    from indexer import pipeline
    import threading

    paragraphs = CPI.split("\n") + QUAKE.split("\n")
    records = [rec(f"r{i}", f"报道{i % 5}：" + paragraphs[i % len(paragraphs)][:12],
                   "\n".join(paragraphs[j % len(paragraphs)] for j in range(i % 4, i % 4 + 2)), day=10 + i % 3)
               for i in range(11)]
    records += [dict(records[3]), dict(records[8], title="换了标题")]  # ids seen in earlier batches

    def outcomes(ix):
        return [(o.article_id, o.decision, o.cluster_id, o.reason) for o in ix.index_many(records)]

    whole = outcomes(make_indexer(**{"input.batch_size": 100}))
    ahead = make_indexer(**{"input.batch_size": 3})
    monkeypatch.setattr(pipeline, "FEATURE_PART", 2)
    threads = {"text": set(), "embed": set()}
    for stage in threads:
        def spy(arg, _stage=stage, _real=getattr(ahead.featurizer, stage)):
            if arg:
                threads[_stage].add(threading.current_thread().name.rsplit("_", 1)[0])
            return _real(arg)
        monkeypatch.setattr(ahead.featurizer, stage, spy)
    assert outcomes(ahead) == whole
    assert threads == {"text": {"text-features"}, "embed": {"embedding"}}  # none featurised late
    assert ahead._stages is not None
    assert {d for _, d, _, _ in whole} == {Decision.NEW, Decision.DUPLICATE, Decision.ALREADY_INDEXED}


def test_index_stream_reads_two_batches_ahead_and_keeps_input_order(make_indexer):
    """A stream is decided batch by batch as it is read: the first outcomes arrive before the
    input is used up (at most the batch decided plus two ahead were read), in input order, with
    invalid records REJECTED in place."""
    records = paragraph_reports("s", 20)
    records[4] = {"id": "bad", "title": 5, "content": "x"}
    read = []

    def source():
        for i, r in enumerate(records):
            read.append(i)
            yield r, f"line {i + 1}"

    ix = make_indexer(**{"input.batch_size": 2})
    stream = ix.index_stream(source())
    first = next(stream)
    assert len(read) <= 3 * 2 + 1  # three batches of two valid records, and the invalid one among them
    outcomes = [first, *stream]
    assert [o.where for o in outcomes] == [f"line {i + 1}" for i in range(20)]
    assert outcomes[4].decision is Decision.REJECTED and outcomes[4].article_id == "bad" and "title" in outcomes[4].error
    assert [o.article_id for o in outcomes if o.decision is not Decision.REJECTED] == [r["id"] for r in records if r["id"] != "bad"]
    again = make_indexer(**{"input.batch_size": 100}).index_many(records, [f"line {i + 1}" for i in range(20)])
    assert [(o.article_id, o.decision, o.cluster_id) for o in outcomes] == [(o.article_id, o.decision, o.cluster_id) for o in again]


def test_a_failing_input_still_gets_every_record_read_before_it_decided_and_stored(make_indexer):
    """The input raises mid-stream while the indexer reads ahead: the records read before the
    failure (full batches and the partial one) are decided, written and yielded, then the error
    comes; places that do not match the records are refused before anything is written."""
    records = paragraph_reports("f", 7)

    def source():
        for i, r in enumerate(records):
            yield r, f"line {i + 1}"
        raise OSError("connection reset while reading")

    ix = make_indexer(**{"input.batch_size": 2})
    seen = []
    try:
        for outcome in ix.index_stream(source()):
            seen.append(outcome.article_id)
    except OSError as exc:
        assert "connection reset" in str(exc)
    else:
        raise AssertionError("the input's error was swallowed")
    assert seen == [r["id"] for r in records]
    assert set(ix.store.get_many(seen)) == set(seen)

    fresh = make_indexer()
    try:
        fresh.index_many(records, ["line 1"] * 6)
    except ValueError as exc:
        assert "7 records but 6 places" in str(exc)
    else:
        raise AssertionError("mismatched places accepted")
    assert fresh.store.get_many([r["id"] for r in records]) == {}


def test_a_feature_stage_error_stops_the_stream_after_the_batches_before_it(make_indexer, monkeypatch):
    records = paragraph_reports("e", 8)
    ix = make_indexer(**{"input.batch_size": 2})
    real = ix.featurizer.text

    def text(article):
        if article.id == "e5":
            raise RuntimeError("feature stage broke")
        return real(article)

    monkeypatch.setattr(ix.featurizer, "text", text)
    seen = []
    try:
        for outcome in ix.index_stream((r, None) for r in records):
            seen.append(outcome.article_id)
    except RuntimeError as exc:
        assert "feature stage broke" in str(exc)
    else:
        raise AssertionError("the stage's error was swallowed")
    assert seen == ["e0", "e1", "e2", "e3"]  # e4 and e5 share the failed batch
    assert set(ix.store.get_many([r["id"] for r in records])) == {"e0", "e1", "e2", "e3"}
    ix.close()  # the stage threads stop; parts queued behind the failure are dropped
    assert all(stage._shutdown for stage in ix._stages)


def test_a_stored_sides_shingles_are_the_pre_checks(make_indexer):
    """The side rebuilt from a stored row reuses the shingles the pre-check made of the same text."""
    from indexer.compare.sides import Side
    from indexer.features import text_features

    ix = make_indexer()
    ix.index_many([rec("a", "10月CPI同比上涨2.1%", CPI)])
    stored = ix.store.get_many(["a"])["a"]
    ix._side_cache.clear()
    pre = ix._stored_shingles(stored)
    side = ix._side_for(stored)
    assert side.shingles is pre
    fresh = Side.of("a", text_features(stored.clean_title, stored.clean_body, ix.settings, cleaned=True), None, None)
    assert (side.shingles == fresh.shingles).all()


def test_a_stored_sides_features_are_read_from_its_row_not_tokenised_again(make_indexer, monkeypatch):
    """A stored candidate's text features come from its row (token count included); only a row
    without a token count (an older store, another store kind) is tokenised, to the same features."""
    from dataclasses import replace

    import indexer.features as features

    ix = make_indexer()
    html = "<p>原标题：10月CPI同比上涨2.1%</p>" + "".join(f"<p>{p}</p>" for p in CPI.split("\n"))
    ix.index_many([rec("a", "【快讯】10月CPI同比上涨2.1%", html)])
    kept = ix._side_cache.pop("a")
    stored = ix.store.get_many(["a"])["a"]
    assert stored.token_count == kept.text.token_count > 0

    def no_tokenising(*args, **kwargs):
        raise AssertionError("a stored row was tokenised again")

    with monkeypatch.context() as m:
        m.setattr(features, "weighted_tokens", no_tokenising)
        assert ix._side_for(stored).text == kept.text
    ix._side_cache.clear()
    assert ix._side_for(replace(stored, token_count=None)).text == kept.text
