"""Clusters that do not depend on arrival order: merges when a later article bridges two clusters,
and the guard that keeps weaker bridges from merging stories."""

from __future__ import annotations

import random

import pytest

from indexer.pipeline import Decision
from tests.conftest import TableEmbedder
from tests.test_pipeline import CPI, rec

FLOOD = (
    "受持续强降雨影响，江西省鄱阳湖水位16日8时涨至22.6米，超警戒水位3.6米，创下有记录以来新高。\n"
    "江西省防汛抗旱指挥部当日将防汛应急响应提升至一级，沿湖各县组织干部群众日夜巡堤查险。\n"
    "截至16日上午，全省已紧急转移安置受灾群众35.8万人，投入抢险人员超过10万人次。\n"
    "气象部门预计，未来三天江西北部仍有中到大雨，局部暴雨，防汛形势依然严峻。\n"
    "水利部已派出工作组赶赴一线，指导堤防巡查和险情处置，并调运防汛物资支援灾区。"
)


def sentences(text):
    return [s for s in text.replace("\n", "").split("。") if s]


def copies(prefix, titles, body, day):
    """An original and three copies of it: a trimmed one (head), one with its head dropped (tail),
    and a retitled verbatim one. Head and tail share too little text to match each other."""
    s = sentences(body)
    head, tail = "。".join(s[: len(s) * 3 // 5]) + "。", "。".join(s[len(s) * 2 // 5 :]) + "。"
    return [
        rec(f"{prefix}-orig", titles[0], body, day=day),
        rec(f"{prefix}-head", titles[1], head, day=day),
        rec(f"{prefix}-tail", "【转载】" + titles[2], tail, day=day),
        rec(f"{prefix}-tagged", "【快讯】" + titles[0] + "_新浪新闻", body, day=day),
    ]


STORIES = (copies("cpi", ["统计局发布10月物价数据", "十月居民消费价格上涨", "专家解读物价走势"], CPI, 12)
           + copies("flood", ["鄱阳湖水位创有记录以来新高", "江西启动防汛一级响应", "水利部派出工作组"], FLOOD, 13))
# Vectors keyed by headline words (the first key found in title + lead wins): each original sits
# between its head and its tail, which read as one story (cosine 0.88, event score 0.44 with
# headlines that share nothing) but are not similar enough for a semantic match (0.55), and the
# two stories are orthogonal.
EMBEDDER = {"统计局发布": [1, 1, 0, 0], "十月居民": [1, 0.6, 0, 0], "专家解读": [0.6, 1, 0, 0],
            "江西启动": [0, 0, 1, 0.6], "鄱阳湖水位": [0, 0, 1, 1], "水利部派出": [0, 0, 0.6, 1]}


def partition(outcomes):
    groups = {}
    for o in outcomes:
        groups.setdefault(o.cluster_id, set()).add(o.article_id)
    return sorted(sorted(g) for g in groups.values())


def test_head_and_tail_do_not_match_each_other_but_the_original_bridges_them(make_indexer):
    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    cpi = {r["id"]: r for r in STORIES if r["id"].startswith("cpi")}
    first = ix.index_many([cpi["cpi-head"], cpi["cpi-tail"]])
    assert [o.decision for o in first] == [Decision.NEW, Decision.NEW]  # two clusters so far
    [bridge] = ix.index_many([cpi["cpi-orig"]])
    assert bridge.decision is Decision.DUPLICATE and bridge.reason == "near"
    assert len(bridge.merged) == 1
    members = {a.id: a for a in ix.store.iter_articles()}
    assert {a.cluster_id for a in members.values()} == {bridge.cluster_id}
    assert sum(a.is_canonical for a in members.values()) == 1
    demoted = members[bridge.merged[0]]
    assert (demoted.dup_of, demoted.dup_reason) == ("cpi-orig", "merged")
    [change] = ix.store.cluster_changes(bridge.cluster_id)
    assert (change.kind, change.article_id, change.by) == ("merge", "cpi-orig", "indexer")
    assert "bridged by a copy of both" in change.reason
    assert ix.explain("cpi-orig")["cluster_changes"][0]["source"] == bridge.merged[0]


@pytest.mark.parametrize("batch_size", [1, 3, 256])
def test_every_arrival_order_gives_the_same_clusters_for_exact_and_near_copies(make_indexer, batch_size):
    truth = partition(type("O", (), {"cluster_id": r["id"].split("-")[0], "article_id": r["id"]}) for r in STORIES)
    rng = random.Random(batch_size)
    for trial in range(12):
        order = STORIES[:]
        rng.shuffle(order)
        ix = make_indexer(embedder=TableEmbedder(EMBEDDER), **{"input.batch_size": batch_size})
        ix.index_many(order)
        stored = list(ix.store.iter_articles())
        got = partition(type("O", (), {"cluster_id": a.cluster_id, "article_id": a.id}) for a in stored)
        assert got == truth, [r["id"] for r in order]
        assert sorted(a.id for a in stored if a.is_canonical) == sorted({a.cluster_id for a in stored})


def test_two_semantic_matches_do_not_merge_clusters_whose_canonicals_differ(make_indexer):
    emb = TableEmbedder({"甲方案": [1, 0, 0, 0], "乙方案": [0, 1, 0, 0], "两方案": [1, 1, 0, 0]})
    ix = make_indexer(embedder=emb)
    title = "城市更新工作推进会召开"
    # bodies without dates, places or figures, so no event specific tells them apart
    out = ix.index_many([
        rec("a", title, "甲方案：会议强调，要坚持问题导向，聚焦群众关切，推动各项工作落地见效。与会人员围绕重点任务深入交流，提出了意见建议。"),
        rec("b", title, "乙方案：会上，有关部门负责同志通报了老旧小区改造进展，并就下一步加快补齐短板、完善配套设施作出安排。"),
        rec("x", title, "两方案：会议要求，各级各部门要压实责任，强化协同配合，确保更新项目按期完工，让居民早日受益。"),
    ])
    assert [o.decision for o in out] == [Decision.NEW, Decision.NEW, Decision.DUPLICATE]
    assert out[2].reason == "semantic" and out[2].merged == []
    assert len({a.cluster_id for a in ix.store.iter_articles()}) == 2
    assert ix.store.cluster_changes() == []


def test_judging_a_cluster_once_changes_no_cluster(make_indexer, monkeypatch):
    """Settling a cluster on its canonical (or an exact copy) skips comparisons, never a merge or
    a join: the same arrival orders give the same clusters with every member compared."""
    import json
    from pathlib import Path

    import indexer.pipeline as pipeline

    originals = [json.loads(line) for line in (Path(__file__).parent / "fixtures" / "originals.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    reposts = []
    for o in originals:
        paras = o["content"].split("\n")
        reposts += [{**o, "id": o["id"] + "-t", "title": "【转载】" + o["title"], "url": ""},
                    {**o, "id": o["id"] + "-h", "content": "\n".join(paras[:-1]) + "\n责任编辑：刘洋", "url": ""},
                    {**o, "id": o["id"] + "-x", "content": "<p>来源：新华网</p>" + "".join(f"<p>{p}</p>" for p in paras), "url": ""}]
    records = originals + reposts + STORIES
    rng = random.Random(5)
    for trial in range(4):
        order = records[:]
        rng.shuffle(order)
        got = {}
        for settle in (True, False):
            monkeypatch.setattr(pipeline, "SETTLE_ON_COPY", settle)
            ix = make_indexer(embedder=TableEmbedder(EMBEDDER) if trial % 2 else "default", **{"input.batch_size": 7})
            got[settle] = partition(ix.index_many(order))
        assert got[True] == got[False]


def test_a_correction_waits_for_the_batch_being_decided(make_indexer):
    """A person's merge that lands while a batch is decided would leave the batch's copies in a
    cluster that no longer exists; corrections take turns with batches (Indexer.exclusive)."""
    import threading
    import time

    from indexer.store import ClusterChange

    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    cpi = {r["id"]: r for r in STORIES if r["id"].startswith("cpi")}
    flood = {r["id"]: r for r in STORIES if r["id"].startswith("flood")}
    ix.index_many([cpi["cpi-orig"], flood["flood-orig"]])
    real_write, person = ix.store.write, []

    def correct():
        with ix.exclusive():
            ix.store.merge_clusters([ClusterChange("merge", into="flood-orig", source="cpi-orig", reason="same story", by="editor")])

    def write(articles, merges=()):
        if not person:  # the person clicks "merge" while this batch is being written
            person.append(threading.Thread(target=correct))
            person[0].start()
            time.sleep(0.3)
        return real_write(articles, merges)

    ix.store.write = write
    [out] = ix.index_many([cpi["cpi-tagged"]])  # an exact copy: decided into cpi-orig's cluster
    person[0].join(10)
    clusters = {a.id: a.cluster_id for a in ix.store.iter_articles()}
    canonicals = {a.id for a in ix.store.iter_articles() if a.is_canonical}
    assert set(clusters.values()) <= canonicals  # no article in a cluster without its canonical
    assert clusters["cpi-tagged"] == "flood-orig"  # the merge came after the batch and took it along


class _Clusters:
    """A ClusterView over fixed sides: article id -> cluster, cluster -> canonical article id."""

    def __init__(self, sides, cluster_of, canonical_of):
        self.sides, self._cluster_of, self._canonical_of = sides, cluster_of, canonical_of

    def cluster_of(self, article):
        return self._cluster_of[article.id]

    def canonical_side(self, cluster_id):
        return self.sides[self._canonical_of[cluster_id]]

    def side_of(self, article):
        return self.sides[article.id]

    def kept_apart(self, a, b):
        return False


def test_copies_do_not_merge_a_roundups_cluster_into_a_storys():
    """A copy of a roundup that is not told as one (retitled with its first item's headline) can
    join a report of that item; a later copy of it is then a copy of both clusters' members. A
    roundup matches only its own copies, so the two clusters stay apart (read on a burst tune seed)."""
    from types import SimpleNamespace

    from indexer.clusters import Candidate, assign
    from indexer.compare.evidence import compare_sides
    from indexer.compare.rules import judge
    from indexer.compare.sides import Side
    from indexer.features import text_features
    from indexer.settings import Settings
    from tests.compare.test_roundups import FLASH, SOFTBANK_REPORT

    settings = Settings()
    retitled = "曝日本软银拟10亿美元投资满帮集团"

    def side(rid, title, body):
        return Side.of(rid, text_features(title, body, settings), None, None)

    sides = {"flash": side("flash", FLASH["title"], FLASH["content"]),
             "softbank": side("softbank", SOFTBANK_REPORT["title"], SOFTBANK_REPORT["content"]),
             "retitled": side("retitled", retitled, FLASH["content"])}
    assert sides["flash"].roundup and not sides["retitled"].roundup and not sides["softbank"].roundup
    # the retitled copy sits in the report's cluster; the flash leads its own
    view = _Clusters(sides, {"flash": "flash", "softbank": "softbank", "retitled": "softbank"},
                     {"flash": "flash", "softbank": "softbank"})
    arriving = side("copy", retitled, FLASH["content"])
    candidates = []
    for rid in ("retitled", "flash"):
        ev = compare_sides(arriving, sides[rid], settings)
        candidates.append(Candidate(SimpleNamespace(id=rid, is_canonical=rid == "flash"), ev,
                                    judge(ev, settings.decision, settings.simhash)))
    assert [c.verdict.reason.value for c in candidates] == ["exact", "exact"]
    got = assign(arriving, candidates, view, settings)
    assert got.merges == []
    # the same copies between two clusters of one story do merge them
    plain = _Clusters(sides, {"flash": "other", "softbank": "softbank", "retitled": "softbank"},
                      {"other": "retitled", "softbank": "softbank"})
    assert len(assign(arriving, candidates, plain, settings).merges) == 1


def test_a_roundups_copy_retitled_from_its_body_joins_the_roundup_through_its_copies():
    """Read on burst tune seed 697: a roundup's copy without its opening, retitled with a sentence
    of its body, is not told as a roundup by its headline and led a cluster of its own. Later
    copies of it under the roundup's headline (the same body) tell what it is: they join its
    cluster to the roundup's, as copies of one story's two clusters do."""
    from types import SimpleNamespace

    from indexer.clusters import Candidate, assign
    from indexer.compare.evidence import compare_sides
    from indexer.compare.rules import judge
    from indexer.compare.sides import Side
    from indexer.features import text_features
    from indexer.settings import Settings
    from tests.compare.test_roundups import FLASH_BODY, FLASH_TITLE

    settings = Settings()
    trimmed = FLASH_BODY[FLASH_BODY.index("据外媒报道"):]  # the first item dropped

    def side(rid, title, body):
        return Side.of(rid, text_features(title, body, settings), None, None)

    sides = {"flash": side("flash", FLASH_TITLE, FLASH_BODY),
             "retitled": side("retitled", "阿里巴巴集团计划在泰国建立一个物流中心", trimmed)}
    assert sides["flash"].roundup and not sides["retitled"].roundup
    assert judge(compare_sides(sides["retitled"], sides["flash"], settings), settings.decision, settings.simhash) is None
    view = _Clusters(sides, {"flash": "flash", "retitled": "retitled"}, {"flash": "flash", "retitled": "retitled"})
    arriving = side("copy", FLASH_TITLE, trimmed)  # the retitled copy's body under the roundup's headline
    candidates = []
    for rid in ("retitled", "flash"):
        ev = compare_sides(arriving, sides[rid], settings)
        candidates.append(Candidate(SimpleNamespace(id=rid, is_canonical=True), ev, judge(ev, settings.decision, settings.simhash)))
    assert [c.verdict.reason.value for c in candidates] == ["exact", "near"]
    got = assign(arriving, candidates, view, settings)
    assert [(m.into, m.source) for m in got.merges] == [("flash", "retitled")] or \
        [(m.into, m.source) for m in got.merges] == [("retitled", "flash")]
    # a copy of the roundup whose body is not the retitled article's tells nothing of it
    other = side("other", FLASH_TITLE, FLASH_BODY)
    candidates = [Candidate(SimpleNamespace(id=rid, is_canonical=True), ev, judge(ev, settings.decision, settings.simhash))
                  for rid, ev in ((rid, compare_sides(other, sides[rid], settings)) for rid in ("retitled", "flash"))]
    assert assign(other, [c for c in candidates if c.verdict], view, settings).merges == []


def test_two_copies_cut_at_either_end_that_overlap_join_through_the_original(make_indexer):
    """Read on burst tune seeds 301, 302 and 307: one copy lost the opening, another the end and its
    headline (retitled with a body sentence). Each holds most of the other's text, but their
    headlines share nothing, so they do not read as one story by event score. Their original holds
    both and joins them, in every arrival order: overlapping parts of one text, where a head and a
    tail share nothing."""
    s = sentences(FLOOD)
    title = "鄱阳湖水位创有记录以来新高"
    stories = [
        rec("orig", title, FLOOD),
        rec("no-opening", title, "。".join(s[1:]) + "。"),
        rec("no-end", "沿湖各县组织干部群众日夜巡堤查险", "。".join(s[:-1]) + "。"),
    ]
    emb = TableEmbedder({"创有记录": [0, 0, 1, 1]})  # the retitled copy: [0, 0, 0, 1], cosine 0.71
    ix = make_indexer(embedder=emb)
    a, b = ix.index_many(stories[1:])
    assert (a.decision, b.decision) == (Decision.NEW, Decision.NEW)  # the two parts alone stay apart
    ev, _ = ix.compare(stories[1], stories[2])
    assert ev.containment >= 0.5 and ev.event_score < ix.settings.decision.cluster_threshold
    [bridge] = ix.index_many(stories[:1])
    assert bridge.merged and "bridged by a copy of both" in ix.store.cluster_changes(bridge.cluster_id)[0].reason
    for order in ([0, 1, 2], [1, 0, 2], [2, 1, 0], [1, 2, 0]):
        ix = make_indexer(embedder=emb)
        ix.index_many([stories[i] for i in order])
        assert len({a.cluster_id for a in ix.store.iter_articles()}) == 1, order


def test_only_a_roundup_and_a_story_it_holds_are_never_overlapping_parts():
    """Read on burst tune seed 321: two copies of one 快讯 roundup, one cut at the end and one
    without its opening, share 77 % of their text. Two copies of one roundup overlap as parts of
    one text; a roundup and one of its stories never do, whatever they share."""
    from dataclasses import replace

    from indexer.clusters import _overlapping_parts
    from indexer.compare.evidence import PairEvidence

    ev = PairEvidence(exact=False, hamming=11, short=False, containment=0.768, cosine=0.592, title_sim=1.0,
                      event_score=1.296, title_numbers_conflict=False, template=None, roundups=2)
    assert _overlapping_parts(ev) and _overlapping_parts(replace(ev, roundups=0))
    assert not _overlapping_parts(replace(ev, roundups=1))
    assert not _overlapping_parts(replace(ev, containment=0.4))
    assert not _overlapping_parts(replace(ev, template="number differs: '3' vs '4'"))
    assert not _overlapping_parts(replace(ev, specifics="place differs"))


CRASH = ("昨天晚上8点20分左右，在小屯立交桥上由东向西方向3公里处，发生一起特大车祸。一辆装满窑泥，车牌号为云A65189的大货车与一辆"
         "微型车、一辆吉利车相撞后{fire}燃烧，造成{cars}辆车的乘客{dead}死{hurt}伤。据交警四大队值勤民警介绍，此次交通事故是二{road}路"
         "建成以来发生的最大一起车祸。{now}，车祸中的{hurt}名幸存者正在昆医院附二院接受治疗，车祸原因正在调查中。")


def test_a_teaser_of_a_report_and_of_its_edit_joins_the_report_it_is_closer_to(make_indexer):
    """A teaser cut just before the figures an edited report changed is a near copy of both, by
    one containment. It joins the report's cluster, whose other copies read closer to it than the
    edit does, even when that cluster's canonical (a reworded copy, compared first) alone scores
    lower than the edit (a fourth generator's never-read seed 508)."""
    report = dict(fire="起火", cars=3, dead=5, hurt=2, road="环北", now="目前")
    reworded = rec("reworded", "昆明立交桥3车相撞致5死2伤", CRASH.format(**{**report, "fire": "着火", "now": "当前"}))
    original = rec("original", "昆明立交桥3车相撞致5死2伤", CRASH.format(**report))
    edit = rec("edit", "昆明立交桥3车相撞致9死4伤", CRASH.format(**{**report, "cars": 2, "dead": 9, "hurt": 4, "road": "光明"}),
               day=13)
    teaser = rec("teaser", "昆明立交桥3车相撞...", CRASH.format(**report).split("造成")[0] + "造成…")
    out = make_indexer().index_many([reworded, original, edit, teaser])
    assert partition(out) == [["edit"], ["original", "reworded", "teaser"]]
