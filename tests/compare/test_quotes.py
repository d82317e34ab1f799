"""Partial quotes: a commentary that quotes a paragraph of its story under the story's headline is
that story, though its embedding reads the commentary and half its text is someone else's."""

from __future__ import annotations

import pytest

from indexer.compare.rules import same_headline
from indexer.comparer import PairComparer
from tests.conftest import TableEmbedder
from tests.test_pipeline import QUAKE, rec

# The commentary's vector comes from its own words (小编), the report's from its place (泸定):
# cosine 0, so no semantic match can stand in for the quote rule.
EMBEDDER = {"小编": [1, 0, 0, 0], "泸定": [0, 1, 0, 0]}
HEADLINE = "四川泸定发生5.1级地震 暂无人员伤亡"
REPORT = rec("report", HEADLINE, QUAKE)


def commentary(title: str, quoted: str) -> dict:
    return rec("quote", title, "\n".join([
        "今天，小编带大家关注一件事。", "据光明网消息：", f"“{quoted}”",
        "对此，不少网友留言表示关注，也有网友认为应当尽快查明情况。你怎么看？欢迎在评论区留言讨论。",
    ]))


QUOTED = QUAKE.split("\n")[1]  # 地震发生后，四川省地震局立即启动三级应急响应……


@pytest.mark.parametrize("title", [HEADLINE, "网友热议：" + HEADLINE, HEADLINE + " - 光明网"])
def test_a_commentary_quoting_its_story_under_its_headline_is_a_near_match(make_indexer, title):
    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    evidence, verdict = ix.compare(commentary(title, QUOTED), REPORT)
    assert evidence.cosine < ix.settings.decision.semantic_min_cosine, evidence
    assert evidence.containment < ix.settings.decision.near_containment, evidence
    assert evidence.quoted_chars >= 30
    assert verdict is not None and verdict.reason.value == "near", evidence


def test_a_quote_under_another_headline_is_not_the_story(make_indexer):
    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    evidence, verdict = ix.compare(commentary("如何做好地震应急准备", QUOTED), REPORT)
    assert evidence.quoted_chars == 0 and verdict is None, evidence


def test_the_headline_without_a_quoted_sentence_is_not_the_story(make_indexer):
    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    evidence, verdict = ix.compare(commentary(HEADLINE, "震区群众生活秩序正常。"), REPORT)
    assert evidence.quoted_chars == 0 and verdict is None, evidence


STOCK = "消防部门接警后迅速调派多辆消防车赶赴现场处置，现场浓烟滚滚，周边居民已被紧急疏散。"


def test_two_events_of_one_kind_sharing_a_headline_and_a_stock_sentence_stay_apart(make_indexer):
    """Two fires under one generic headline with the fire brigade's stock sentence word for
    word: their own dates and streets make them two events, whatever they share."""
    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    first = rec("f1", "南京一居民楼发生火灾", "\n".join([
        "3月10日凌晨，南京市鼓楼区中山路128号一居民楼发生火灾。", STOCK, "火灾造成3人死亡，起火原因正在调查中。"]), day=10)
    second = rec("f2", "南京一居民楼发生火灾", "\n".join([
        "3月14日下午，南京市江宁区天元东路一居民楼发生火灾。", STOCK, "火灾造成1人受伤，起火原因正在调查中。"]), day=14)
    evidence, verdict = ix.compare(first, second)
    assert evidence.quoted_chars >= 30 and (evidence.template or evidence.specifics), evidence
    assert verdict is None


TIP = "气象部门提醒，近期早晚温差较大，市民朋友请注意及时增减衣物，谨防感冒。另外，本周空气较为干燥，请注意室内加湿。"


def test_a_column_s_standing_words_are_furniture_not_a_quote(make_indexer):
    """Two days of one weather column: one headline, one standing tip closing both, nothing
    else alike. The tip sits where both keep their furniture, so it quotes nothing."""
    ix = make_indexer(embedder=TableEmbedder({"北风": [1, 0, 0, 0], "南风": [0, 1, 0, 0], "小编": [0, 0, 1, 0]}))
    monday = rec("w1", "北京天气预报：明天晴转多云", "\n".join([
        "明天白天晴转多云，北风三四级，最高气温十二度，夜间最低气温零下二度。",
        "受冷空气影响，周末前后本市还将出现一次明显降温过程，山区可能出现小雪，开车的朋友注意路面结冰。",
        "供暖部门表示各供热站已做好准备，居民家中如遇暖气不热可拨打热线电话反映。", TIP]), day=3)
    sunday = rec("w2", "北京天气预报：明天晴转多云", "\n".join([
        "明天白天晴转多云，南风二三级，最高气温十五度，夜间最低气温零度。",
        "今年以来本市降水明显偏少，森林防火形势严峻，进入林区严禁携带火种，园林部门已组织浇灌。",
        "农业部门提醒种植户抓住有利时机做好冬小麦灌溉和大棚蔬菜的保温管理工作。", TIP]), day=9)
    evidence, verdict = ix.compare(monday, sunday)
    assert evidence.cosine < ix.settings.decision.semantic_min_cosine, evidence
    assert evidence.containment < ix.settings.decision.near_containment and evidence.quoted_chars == 0, evidence
    assert verdict is None
    # The same tip quoted inside a commentary under the column's headline would count.
    quoting = rec("w3", "北京天气预报：明天晴转多云", "\n".join(["今天，小编带大家关注一件事。", TIP, "你怎么看？欢迎留言讨论。"]))
    assert ix.compare(quoting, monday)[0].quoted_chars >= 30


@pytest.mark.parametrize("a,b,sim,same", [
    ("四川泸定发生5.1级地震", "网友热议：四川泸定发生5.1级地震", 0.85, True),  # held whole
    ("今日天气", "今日天气预报：北京晴", 0.5, False),  # too short to name one story
    ("四川泸定发生5.1级地震", "四川泸定5.1级地震", 0.92, True),  # alike by grams
    ("四川泸定发生5.1级地震", "云南大理发生地震", 0.5, False),
    ("", "", 0.0, False),
    ("通知", "通知", 1.0, False),  # alike, but too short to name one story
])
def test_same_headline(a, b, sim, same):
    assert same_headline(a, b, sim) is same


def test_a_side_tells_which_stored_articles_share_its_headline(make_indexer):
    """What an ingest pre-check reads to keep a quoting candidate: the stored row's cleaned
    headline, no embedding or shingles."""
    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    quote, report = PairComparer(ix.settings, ix.featurizer).sides([commentary("网友热议：" + HEADLINE, QUOTED), REPORT])
    assert quote.shares_headline_with(report.text.clean_title)
    assert report.shares_headline_with(quote.text.clean_title)
    assert not quote.shares_headline_with("云南大理发生地震")
    # A stored row without a headline shares none: its body's opening is no headline to quote under.
    assert not quote.shares_headline_with("")


def test_ingest_keeps_a_same_headline_neighbour_for_the_quote_rule(make_indexer):
    """At ingest a kNN neighbour below the semantic floor, far by SimHash and not contained, is
    skipped before the full comparison unless it shares the headline: the quote rule needs it."""
    # cosine 0.45: inside the kNN reach (0.30), below the semantic floor (0.60)
    ix = make_indexer(embedder=TableEmbedder({"小编": [0.45, 0.893, 0, 0], "泸定": [1, 0, 0, 0]}))
    assert ix.index_many([REPORT])[0].cluster_id == "report"
    outcome = ix.index_many([commentary("网友热议：" + HEADLINE, QUOTED)])[0]
    assert (outcome.cluster_id, outcome.reason) == ("report", "near"), outcome


def test_the_cheap_headline_bound_never_changes_the_answer(make_indexer):
    """``shares_headline_with`` skips the headline cosine when a bound proves it below the bar: on
    pairs of the fixtures' headlines and edited copies of them (tags, cuts, one character changed,
    near misses around the bar) it answers exactly what the full computation answers."""
    import json
    import random
    from pathlib import Path

    from indexer.features.title_grams import cosine, headline, title_vector

    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    records = [json.loads(line) for name in ("originals", "same_event", "templated")
               for line in open(fixtures / f"{name}.jsonl", encoding="utf-8")]
    titles = [r["title"] for r in records]
    rng = random.Random(7)
    edited = []
    for t in titles:
        i = rng.randrange(len(t))
        j = rng.randrange(len(t))
        edited += [t[:-2], "【快讯】" + t, t[:i] + "某" + t[i + 1:], t[: len(t) // 2], t + "（图）", t[::-1],
                   t[:i] + t[i + 1:], t[:i] + "的" + t[i:], t[:i] + "某" + t[i + 1:j] + "地" + t[j + 1:], "快讯" + t[:-1]]
    sides = PairComparer(ix.settings, ix.featurizer).sides(
        [{"id": f"s{i}", "title": t, "content": "正文。"} for i, t in enumerate(titles)])
    others = titles + edited
    agreed = accepted = 0
    for side in sides:
        for other in others:
            full = same_headline(side.text.clean_title, other,
                                 cosine(side.text.title_vec, title_vector(headline(other, "正文。"))))
            assert side.shares_headline_with(other) is full, (side.text.clean_title, other)
            agreed += 1
            accepted += full
    assert accepted >= len(sides) and agreed > accepted  # both answers were exercised


# Two warnings of one column under one standing headline: different days, districts and rainfall,
# the same stock advice paragraph in the middle (a quote by the text, not one story).
WARNING = "北京市气象台发布暴雨蓝色预警信号"
ADVICE = "请注意防范强降雨可能引发的城市积涝、山洪和泥石流等灾害，远离河道和低洼地带，减少不必要的外出。"


def warning(i, when, districts, rain):
    return rec(f"warn{i}", WARNING, "\n".join([
        f"北京市气象台{when}发布暴雨蓝色预警信号：预计{districts}等区将出现大雨，局地暴雨，小时雨强可达{rain}毫米以上。",
        f"受降雨影响，{districts}部分路段可能出现积水，{districts}山区发生中小河流洪水和地质灾害的风险较高，"
        f"相关部门已于{when}前完成{rain}处积水点的巡查。",
        ADVICE, "市防汛办提醒市民关注最新预警信息，合理安排出行。"]))


@pytest.mark.parametrize("embedder", [None, "table"])
def test_a_shared_passage_under_one_headline_still_meets_the_guards(make_indexer, embedder):
    """The quote rule rests on the template and specifics guards; they run for such a pair
    whatever the embedding says, and without an embedding model at all."""
    ix = make_indexer(embedder=TableEmbedder(EMBEDDER) if embedder else None)
    evidence, verdict = ix.compare(warning(1, "7月12日10时", "海淀、昌平", 40), warning(2, "8月3日16时", "房山、门头沟", 50))
    assert evidence.quoted_chars >= 30, evidence
    assert verdict is None and (evidence.template or evidence.specifics), evidence


def test_two_notices_under_a_generic_headline_sharing_a_stock_sentence_are_two_stories():
    """通知 heads many texts: one stock sentence both quote (a school's reminder to parents) made
    two schools' notices one story by the quote rule, while the held-whole branch and the ingest
    headline query already called such headlines too short to name one story."""
    from indexer.comparer import PairComparer
    from indexer.features import Featurizer
    from indexer.settings import Settings

    shared = "请各位家长督促孩子按时到校，注意上下学途中的交通安全，遇到特殊情况请及时与班主任联系。"
    a = {"id": "a", "title": "通知", "content": "\n".join([
        "市一中定于下周一起开展新学期学生体检工作，体检项目包括身高、体重、视力和口腔检查。", shared, "特此通知。市一中教务处"])}
    b = {"id": "b", "title": "通知", "content": "\n".join([
        "实验小学将于本周五下午举行春季运动会，请全体学生穿校服、运动鞋参加。", shared, "实验小学德育处"])}
    settings = Settings()
    comparer = PairComparer(settings, Featurizer(settings, None))
    evidence, verdict = comparer.compare(a, b)
    assert (evidence.quoted_chars, verdict) == (0, None), evidence
    side_a, side_b = comparer.sides([a, b])
    assert not side_a.shares_headline_with(side_b.text.clean_title)
