"""The store-less pair comparer behind ``compare``, ``tune`` and ``Indexer.compare``."""

from __future__ import annotations

import pytest

import indexer.comparer as comparer_module
from indexer.comparer import PairComparer
from indexer.errors import InvalidArticle
from indexer.features import Featurizer
from indexer.settings import Settings
from tests.conftest import TableEmbedder
from tests.test_pipeline import CPI, QUAKE, rec


class CountingEmbedder(TableEmbedder):
    def __init__(self, table):
        super().__init__(table)
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        return super().encode(texts)


def _comparer(**overrides) -> tuple[PairComparer, CountingEmbedder]:
    settings = Settings().replace(**overrides)
    embedder = CountingEmbedder({"物价": [1, 0, 0, 0], "CPI": [1, 0, 0, 0], "地震": [0, 1, 0, 0]})
    return PairComparer(settings, Featurizer(settings, embedder)), embedder


def test_open_loads_the_model_on_the_configured_device(monkeypatch):
    asked = []
    monkeypatch.setattr(comparer_module, "create_embedder", lambda model, device="cpu": asked.append((model, device)))
    comparer = PairComparer.open(Settings().replace(**{"embedding.model": "some/model", "embedding.device": "cuda:1"}))
    assert asked == [("some/model", "cuda:1")]
    assert comparer.featurizer.embedder is None  # what create_embedder returned


def test_compare_applies_the_ingest_rules_to_one_pair():
    comparer, _ = _comparer()
    evidence, verdict = comparer.compare(rec("a", "10月CPI同比上涨2.1%", CPI), rec("b", "【快讯】10月CPI同比上涨2.1%", CPI + "\n责任编辑：王五"))
    assert verdict is not None and verdict.reason.value == "exact" and evidence.exact
    evidence, verdict = comparer.compare(rec("a", "CPI", CPI), rec("c", "地震", QUAKE))
    assert verdict is None and not evidence.exact and evidence.cosine == pytest.approx(0.0)


def test_a_layer_switched_off_never_matches():
    comparer, _ = _comparer(**{"decision.layers": "near,semantic"})
    evidence, verdict = comparer.compare(rec("a", "CPI", CPI), rec("b", "CPI", CPI))
    assert evidence.exact and verdict is not None and verdict.reason.value == "near"


def test_pairs_are_embedded_in_one_batch_with_the_evidence_of_one_pair_at_a_time():
    comparer, embedder = _comparer()
    pairs = [
        (rec("a", "10月CPI同比上涨2.1%", CPI), {"title": "物价数据", "content": CPI}),
        ({"title": "泸定5.1级地震", "content": QUAKE}, {"title": "CPI", "content": CPI}),
    ]
    batched = comparer.evidence_for_pairs(pairs)
    assert embedder.calls == 1
    assert batched == [comparer.compare(a, b)[0] for a, b in pairs]
    assert batched[0].exact and not batched[1].exact


def test_a_bad_side_is_named():
    comparer, _ = _comparer()
    with pytest.raises(InvalidArticle, match="pair 2 b"):
        comparer.evidence_for_pairs([({"title": "CPI"}, {"title": "CPI"}), ({"title": "CPI"}, {"title": ""})])
    with pytest.raises(InvalidArticle, match="^b: "):
        comparer.compare({"title": "CPI"}, {"content": 3})


def test_indexer_compare_is_the_comparers(make_indexer):
    ix = make_indexer(embedder=TableEmbedder({"CPI": [1, 0, 0, 0]}))
    a, b = rec("a", "CPI", CPI), rec("b", "统计局：CPI", "\n".join(CPI.split("\n")[:3]))
    assert ix.compare(a, b) == PairComparer(ix.settings, ix.featurizer).compare(a, b)


# ---- a headline without its body -----------------------------------------------------------------
# A feed or list page whose article was not fetched gives a headline alone. Its embedding reads the
# headline only, far from the article's: the table embedder gives them orthogonal vectors, so only
# the headline can join them.
HEADLINE_EMBEDDER = {"正文": [1, 0, 0, 0], "地震": [0, 1, 0, 0]}


def _headline_comparer() -> PairComparer:
    settings = Settings()
    return PairComparer(settings, Featurizer(settings, TableEmbedder(HEADLINE_EMBEDDER)))


def test_a_headline_alone_is_the_article_under_that_headline():
    from indexer.compare.rules import refusal

    comparer = _headline_comparer()
    article = rec("a", "四川泸定发生5.1级地震 暂无人员伤亡报告", "正文：" + QUAKE)
    evidence, verdict = comparer.compare({"title": "【快讯】四川泸定发生5.1级地震 暂无人员伤亡报告"}, article)
    assert evidence.headline_alone and evidence.cosine < 0.1
    assert verdict is not None and verdict.reason.value == "semantic", evidence
    # another headline is not enough, and explain says why
    evidence, verdict = comparer.compare({"title": "泸定县组织干部群众开展防灾减灾演练"}, article)
    assert evidence.headline_alone and verdict is None
    assert refusal(evidence, comparer.settings.decision, comparer.settings.simhash).startswith("a headline without its body")
    # nor is a headline too short to tell one article from another
    evidence, verdict = comparer.compare({"title": "地震快讯"}, rec("b", "地震快讯", "正文：" + QUAKE))
    assert not evidence.headline_alone and verdict is None


def test_two_headlines_alone_are_not_read_as_an_article_and_its_headline():
    comparer = _headline_comparer()
    evidence, _ = comparer.compare({"title": "四川泸定发生5.1级地震 暂无人员伤亡报告"},
                                   {"title": "四川泸定发生5.1级地震 暂无人员伤亡报告！"})
    assert evidence.headline_only and not evidence.headline_alone


def test_a_body_that_only_repeats_its_headline_is_no_body():
    # a feed item whose description is its title again: two such items are two bare headlines
    comparer = _headline_comparer()
    a, b = "四川泸定发生5.1级地震 暂无人员伤亡报告", "泸定地震暂无伤亡"
    evidence, _ = comparer.compare({"title": a, "content": a + "。"}, {"title": b, "content": b})
    assert evidence.headline_only and not evidence.headline_alone
    # and one against an article is a headline alone
    evidence, _ = comparer.compare({"title": a, "content": a}, rec("b", a, "正文：" + QUAKE))
    assert evidence.headline_alone and not evidence.headline_only
