"""Promises of the README's "How an article is decided" that no other test pinned (found by hand-run
mutation testing): each test here fails when the promised step is dropped or loosened."""

from __future__ import annotations

import pytest

from indexer.cleaning import clean_body
from indexer.features.simhash import hamming, simhash
from indexer.features.tokenize import weighted_tokens


def test_negations_are_fingerprint_tokens():
    """README, Features: "negations 不, 没, 没有 are kept" among the SimHash tokens, though they are
    short function words: 宣布加息 and 宣布不加息 are opposite news, and their fingerprints must
    not be one."""
    weights = weighted_tokens("央行宣布本月不加息", "事故没有造成人员伤亡，嫌疑人仍没落网。")
    assert {"不", "没有", "没"} <= weights.keys()
    assert "不" in weighted_tokens("", "央行宣布本月不加息")
    assert hamming(simhash(weighted_tokens("央行宣布本月不加息", "")), simhash(weighted_tokens("央行宣布本月加息", ""))) > 0


# ---- identity: a record without id at the URL of an earlier record of the same batch --------------

URL = "https://news.example.com/2024/03/12/cpi.html"
CPI_TEXT = ("国家统计局12日发布数据显示，10月份全国居民消费价格同比上涨2.1%，环比上涨0.3%。"
            "其中，城市上涨2.0%，农村上涨2.4%。食品价格上涨7.0%，影响CPI上涨约1.29个百分点。")


def test_a_record_without_id_at_the_url_of_an_earlier_record_in_its_batch_is_already_indexed(make_indexer):
    """README, Write: the same id, else the same canonical URL, again is ``already_indexed``. A
    record without id names its article by its URL, whether the record holding that URL (with an
    id of its own) was stored by an earlier batch or comes earlier in the same one."""
    from indexer.pipeline import Decision
    from tests.test_pipeline import rec

    with_id = rec("x1", "10月CPI同比上涨2.1%", CPI_TEXT, url=URL)
    without_id = {"url": URL + "?utm_source=feed", "title": "10月CPI同比上涨2.1%（更新）", "content": CPI_TEXT + "\n更新于14时。"}
    together = make_indexer().index_many([with_id, without_id])
    ix = make_indexer()
    apart = ix.index_many([with_id]) + ix.index_many([without_id])
    for out in (together, apart):
        assert [(o.decision, o.article_id) for o in out] == [(Decision.NEW, "x1"), (Decision.ALREADY_INDEXED, "x1")]
        assert out[1].cluster_id == out[0].cluster_id == "x1"


# ---- the store's band candidates reach the whole near distance ----------------------------------


def test_a_stored_copy_exactly_at_the_near_distance_is_found_through_the_bands(make_indexer):
    """README, Ask the store: "SimHash band keys, then the exact Hamming distance"; Decide: near at
    Hamming <= 3. A stored text exactly 3 bits away is a candidate and a near duplicate, as the same
    pair is in one batch and under ``compare``. Nothing else can find it: no embedding, no headline,
    texts too short for containment (``simhash.short_tokens`` lowered so that 3 bits is near)."""
    from indexer.pipeline import Decision
    from tests.test_rule_guards import SHORT, SHORT_AT_2_TO_3, _short

    first, second = _short("a", SHORT), _short("b", SHORT_AT_2_TO_3[1])
    settings = {"simhash.short_tokens": 1}
    ix = make_indexer(embedder=None, **settings)
    evidence, verdict = ix.compare(first, second)
    assert evidence.hamming == ix.settings.simhash.max_distance and evidence.containment == 0.0, evidence
    assert verdict is not None and verdict.reason.value == "near"
    apart = ix.index_many([first]) + ix.index_many([second])
    together = make_indexer(embedder=None, **settings).index_many([first, second])
    for out in (apart, together):
        assert (out[1].decision, out[1].reason, out[1].dup_of, out[1].cluster_id) == (Decision.DUPLICATE, "near", "a", "a")


# ---- features: what the exact key and the headline grams leave out --------------------------------


def test_a_copy_rewrapped_and_repunctuated_is_an_exact_duplicate(make_indexer):
    """README, Features: the exact key is the MD5 of the cleaned body without spaces and
    punctuation, so a copy whose paragraphs were joined into one and whose commas were retyped
    keeps the original's key: an exact duplicate, not a near one."""
    from indexer.features.exact import content_key
    from indexer.pipeline import Decision
    from tests.test_pipeline import CPI, rec

    copy = CPI.replace("\n", "").replace("，", ", ")
    assert clean_body(copy) != clean_body(CPI)
    assert content_key("", clean_body(copy)) == content_key("", clean_body(CPI))
    out = make_indexer().index_many([rec("a", "10月CPI同比上涨2.1%", CPI), rec("b", "10月CPI同比上涨2.1%", copy, day=13)])
    assert (out[1].decision, out[1].reason, out[1].dup_of, out[1].score) == (Decision.DUPLICATE, "exact", "a", 1.0)


def test_headline_grams_ignore_punctuation_and_spaces():
    """features/title_grams: punctuation and spaces carry no event (：, ！ and a space differ by
    site, not by story), so two headlines that differ only in them are one headline."""
    from indexer.features.title_grams import cosine, title_vector

    assert cosine(title_vector("泸定地震：暂无人员伤亡！"), title_vector("泸定地震 暂无人员伤亡")) == pytest.approx(1.0)


def test_a_single_chinese_character_weighs_half_its_idf():
    """features/tokenize: single CJK characters are mostly particles and measure words, so their
    IDF counts half in the fingerprint weights (a two-character word counts whole)."""
    from indexer.features.tokenize import idf_table, token_idf

    table, _ = idf_table()
    assert token_idf("涨") == pytest.approx(0.5 * table["涨"])
    assert token_idf("上涨") == pytest.approx(table["上涨"])


# ---- a headline over a stub of a body is a headline alone ----------------------------------------


def test_a_headline_over_a_few_characters_of_body_is_the_article_under_that_headline():
    """A feed item gives its headline and a stub of a description (under 20 characters after
    cleaning): it has a headline only (``sides.HEADLINE_ONLY_BODY``), and so it is the article
    printed under that headline, though its embedding reads nothing of the article's."""
    from indexer.comparer import PairComparer
    from indexer.features import Featurizer
    from indexer.settings import Settings
    from tests.conftest import TableEmbedder
    from tests.test_pipeline import QUAKE, rec

    settings = Settings()
    comparer = PairComparer(settings, Featurizer(settings, TableEmbedder({"正文": [1, 0, 0, 0], "后续": [0, 1, 0, 0]})))
    item = {"title": "四川泸定发生5.1级地震 暂无人员伤亡报告", "content": "详情请关注后续报道。"}
    [side] = comparer.sides([item])
    assert 0 < len(side.text.clean_body) < 20 and side.bodiless
    evidence, verdict = comparer.compare(item, rec("a", "四川泸定发生5.1级地震 暂无人员伤亡报告", "正文：" + QUAKE))
    assert evidence.headline_alone and evidence.cosine < 0.1, evidence
    assert verdict is not None and verdict.reason.value == "semantic", evidence
