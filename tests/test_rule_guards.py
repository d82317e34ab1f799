"""Rules the README promises that a plausible change to the decision path would break silently:
the chain-drift guard for near matches, URL identity only for records without an id, and the
stricter Hamming limit for short texts. Tested through ``Indexer.index_many`` and
``Indexer.compare`` only, so they hold whatever shape the pipeline's internals take."""

from __future__ import annotations

import pytest

from indexer.pipeline import Decision
from tests.conftest import TableEmbedder
from tests.test_pipeline import CPI, QUAKE, rec


# ---- chain drift through near matches ------------------------------------------------------------
# B is a round-up that quotes A (CPI) whole and C (an earthquake report) whole, so A~B and B~C are
# near matches (each is a trimmed copy of B) while A and C share nothing. The table embedder keys
# the vectors on the one-character titles: cos(A,B) = cos(B,C) = 0.71 makes each a kNN candidate of
# the next, cos(A,C) = 0, and titles that share no character grams keep every event score below
# the semantic threshold, so only the near layer can link them.
CHAIN_EMBEDDER = {"乙": [1, 1, 0, 0], "甲": [1, 0, 0, 0], "丙": [0, 1, 0, 0]}
CHAIN = [rec("A", "甲", CPI), rec("B", "乙", CPI + "\n" + QUAKE), rec("C", "丙", QUAKE)]


def test_the_chain_is_two_near_matches_and_one_non_match(make_indexer):
    ix = make_indexer(embedder=TableEmbedder(CHAIN_EMBEDDER))
    a, b, c = CHAIN
    for left, right in ((a, b), (b, c)):
        evidence, verdict = ix.compare(left, right)
        assert verdict is not None and verdict.reason.value == "near", (left["id"], right["id"], evidence)
        assert evidence.template is None
    evidence, verdict = ix.compare(a, c)
    assert verdict is None and evidence.containment < 0.8 and evidence.event_score < 0.4, evidence


@pytest.mark.parametrize("batches", [[CHAIN], [CHAIN[:1], CHAIN[1:2], CHAIN[2:]]], ids=["one-batch", "three-batches"])
def test_a_near_match_does_not_join_a_cluster_whose_canonical_it_is_not_near(make_indexer, batches):
    """C is a near copy of B, B joined A's cluster, C is not close to A: C starts its own cluster
    instead of reaching A through B. The canonical is checked both when it was decided in the
    same batch and when it is read back from the store."""
    ix = make_indexer(embedder=TableEmbedder(CHAIN_EMBEDDER))
    out = [o for batch in batches for o in ix.index_many(batch)]
    assert (out[0].decision, out[0].cluster_id) == (Decision.NEW, "A")
    assert (out[1].decision, out[1].reason, out[1].dup_of, out[1].cluster_id) == (Decision.DUPLICATE, "near", "A", "A")
    assert (out[2].decision, out[2].cluster_id, out[2].dup_of) == (Decision.NEW, "C", None)


# ---- identity by canonical URL ---------------------------------------------------------------------
URL = "https://news.example.com/2024/03/12/cpi.html"


def test_two_records_with_their_own_ids_and_one_url_are_both_indexed(make_indexer):
    """An explicit id is the article's identity: a second article under the same URL (a page
    updated in place, a feed that reuses URLs) is indexed, in the same batch and in a later one."""
    ix = make_indexer()
    first = ix.index_many([rec("x1", "10月CPI同比上涨2.1%", CPI, url=URL),
                           rec("x2", "泸定5.1级地震", QUAKE, url=URL + "?utm_source=feed")])
    # x3 is a trimmed copy of x2: it is decided (a near duplicate), not taken for x1 or x2.
    later = ix.index_many([rec("x3", "泸定地震：暂无人员伤亡", QUAKE.split("\n")[0], url=URL)])
    assert [(o.article_id, o.decision, o.dup_of) for o in first + later] == [
        ("x1", Decision.NEW, None), ("x2", Decision.NEW, None), ("x3", Decision.DUPLICATE, "x2")]


def test_a_record_without_id_at_a_stored_url_is_already_indexed(make_indexer):
    ix = make_indexer()
    [stored] = ix.index_many([rec("x1", "10月CPI同比上涨2.1%", CPI, url=URL)])
    # No id: the URL (canonicalised, tracking parameter dropped) names the article, whatever the text.
    again = {"url": URL + "?utm_source=feed", "title": "10月CPI同比上涨2.1%（更新）", "content": CPI + "\n更新于14时。"}
    [out] = ix.index_many([again])
    assert (out.decision, out.article_id, out.cluster_id) == (Decision.ALREADY_INDEXED, "x1", stored.cluster_id)
    # In one batch the second record without id reports its first copy.
    fresh = {"url": "https://news.example.com/quake.html", "title": "泸定5.1级地震", "content": QUAKE}
    out = ix.index_many([fresh, dict(fresh, title="泸定地震（更新）")])
    assert [o.decision for o in out] == [Decision.NEW, Decision.ALREADY_INDEXED]
    assert out[1].article_id == out[0].article_id


# ---- Hamming limit of short texts -------------------------------------------------------------------
# Under simhash.short_tokens (60) content tokens a few words move more bits, so short texts are near
# only within simhash.max_distance_short (1) bits, not max_distance (3). The texts are short enough
# (under 40 shingles) that containment cannot tell, and there is no embedder: only Hamming decides.
SHORT = "四川省地震局立即启动三级应急响应，派出工作组赶赴震区开展灾情调查。"
SHORT_AT_2_TO_3 = [SHORT.replace("立即", "迅速"), SHORT.replace("派出", "派遣")]
SHORT_ONE_BIT = ("地震发生后，当地部分老旧房屋出现墙体开裂，交通和电力总体正常。",
                 "地震发生后，当地部分老旧房屋发生墙体开裂，交通和电力总体正常。")


def _short(i, text):
    return rec(i, "", text)


@pytest.mark.parametrize("variant", SHORT_AT_2_TO_3, ids=["one-word-changed", "another-word-changed"])
def test_a_short_text_two_or_three_bits_away_is_not_a_near_match(make_indexer, variant):
    ix = make_indexer(embedder=None)
    evidence, verdict = ix.compare(_short("a", SHORT), _short("b", variant))
    assert evidence.short and 2 <= evidence.hamming <= 3 and evidence.containment == 0.0, evidence
    assert verdict is None
    assert [o.decision for o in ix.index_many([_short("a", SHORT), _short("b", variant)])] == [Decision.NEW, Decision.NEW]
    # The same distance is a near match once the texts no longer count as short: the refusal
    # above is the short-text limit, not something else about the pair.
    long_rules = make_indexer(embedder=None, **{"simhash.short_tokens": 1})
    evidence, verdict = long_rules.compare(_short("a", SHORT), _short("b", variant))
    assert not evidence.short and verdict is not None and verdict.reason.value == "near"


def test_a_short_text_one_bit_away_is_a_near_match(make_indexer):
    ix = make_indexer(embedder=None)
    a, b = _short("a", SHORT_ONE_BIT[0]), _short("b", SHORT_ONE_BIT[1])
    evidence, verdict = ix.compare(a, b)
    assert evidence.short and evidence.hamming <= 1 and not evidence.exact, evidence
    assert verdict is not None and verdict.reason.value == "near"
    out = ix.index_many([a, b])
    assert (out[1].decision, out[1].reason, out[1].cluster_id) == (Decision.DUPLICATE, "near", "a")


def test_a_story_held_inside_a_combined_report_is_no_copy_of_it():
    # A combined report holds a second story whole under the first one's headline: contained, but
    # under an unrelated headline, far by the embedding, a part of the longer text and without its
    # opening. A teaser keeps the opening; a copy without its first paragraph keeps most of the text.
    from indexer.compare.evidence import PairEvidence
    from indexer.compare.rules import Reason, judge
    from indexer.settings import Settings

    s = Settings()

    def ev(**kw):
        base = {"exact": False, "hamming": 20, "short": False, "containment": 1.0, "cosine": 0.38, "title_sim": 0.0,
                "event_score": 0.19, "title_numbers_conflict": False, "template": None, "shingle_ratio": 0.5,
                "holds_opening": False}
        return PairEvidence(**{**base, **kw})

    assert judge(ev(), s.decision, s.simhash) is None
    assert judge(ev(holds_opening=True), s.decision, s.simhash).reason is Reason.NEAR  # a teaser
    assert judge(ev(shingle_ratio=0.85), s.decision, s.simhash).reason is Reason.NEAR  # most of the text
    assert judge(ev(cosine=0.7, event_score=0.35), s.decision, s.simhash).reason is Reason.NEAR  # the embedding reads one story
    assert judge(ev(title_sim=0.5, event_score=0.69), s.decision, s.simhash).reason is Reason.NEAR  # its headline
