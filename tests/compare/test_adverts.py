"""Advertisements match only copies of themselves (``compare.adverts``)."""

from __future__ import annotations

from dataclasses import replace

from indexer.comparer import PairComparer
from indexer.compare.adverts import is_advert
from indexer.compare.rules import Reason, judge, refusal
from indexer.features import Featurizer
from indexer.settings import Settings
from tests.conftest import TableEmbedder

# Two claw-machine dealers' adverts (burst tune seed 647, shortened): one kind of product, two sellers.
YANCHENG = (
    "盐城市智能兑币娃娃机剪刀机电玩工厂经销商",
    "盐城市智能兑币娃娃机剪刀机电玩工厂经销商娃娃机功能最先进，价格最优！产品远销东南亚、港澳台、欧美等国！"
    "公司可以根据客户需求设计定做各种特殊型号的娃娃机，抓娃娃、抓烟、抓手表等由您决定。厂家直销，并长期提供各种配件及技术支持。"
    "凡在本公司购买任意娃娃机、礼品机、亲子机、儿童游戏机一年保修、终生维护。众多产品恕不一一介绍，详情请来电咨询！",
)
CAIYUE = (
    "郊区当地出售剪刀机娃娃机指定经销商",
    "彩悦动漫科技郑重声明：我们是厂家直销，全新质量有保障，源头供货，杜绝市面上差货、次货！为了你的售后保障请联系源头厂商！"
    "本厂机器或是主机套件，娃娃机，礼品机，抓烟机，儿童机，格斗机等，全部享有主机终身保修，同价位主机免费调换。"
    "有需要可派遣技术员教会调试机器。长期合作是我们的目的，欢迎来厂参观。",
)
# A news report that gives one hotline is no advert.
RECALL = (
    "某品牌召回部分电动自行车",
    "市场监管总局12日发布消息，某品牌将召回2019年生产的部分电动自行车，因电池存在起火隐患。"
    "消费者可拨打咨询电话了解详情，该公司将免费为用户更换电池。",
)


def _comparer() -> PairComparer:
    settings = Settings()
    # Both adverts read as one topic to the embedding (cosine 0.8), as they did to the real model.
    embedder = TableEmbedder({"盐城": [1, 0, 0, 0], "彩悦": [0.8, 0.6, 0, 0]})
    return PairComparer(settings, Featurizer(settings, embedder))


def rec(i, title_and_body, publish_time="2024-06-03T10:00:00+08:00"):
    title, body = title_and_body
    return {"id": i, "title": title, "content": body, "publish_time": publish_time}


def test_two_soliciting_phrases_make_an_advert_one_does_not():
    assert is_advert("。".join(YANCHENG)) and is_advert("。".join(CAIYUE))
    assert not is_advert("。".join(RECALL))
    assert not is_advert("欢迎来电咨询。" + "欢迎来电咨询。")  # one phrase twice is still one


def test_two_sellers_adverts_are_no_semantic_match():
    comparer = _comparer()
    ev, verdict = comparer.compare(rec("a", YANCHENG), rec("b", CAIYUE))
    assert ev.adverts and verdict is None
    assert refusal(ev, comparer.settings.decision, comparer.settings.simhash).startswith("an advertisement")
    # the same evidence between texts that are not adverts is a semantic match
    unguarded = judge(replace(ev, adverts=False), comparer.settings.decision, comparer.settings.simhash)
    assert unguarded is not None and unguarded.reason is Reason.SEMANTIC


def test_a_copy_of_an_advert_still_joins_it():
    comparer = _comparer()
    title, body = YANCHENG
    dropped = "凡在本公司购买任意娃娃机、礼品机、亲子机、儿童游戏机一年保修、终生维护。"
    ev, verdict = comparer.compare(rec("a", YANCHENG), rec("b", ("【转载】" + title, body.replace(dropped, ""))))
    assert ev.adverts and verdict is not None and verdict.reason in (Reason.EXACT, Reason.NEAR)
    # one side is enough: a teaser of an advert, cut before its soliciting lines, against another seller's
    teaser = (YANCHENG[0], YANCHENG[1][: YANCHENG[1].index("厂家直销")])
    assert not is_advert("。".join(teaser))
    ev, verdict = comparer.compare(rec("a", teaser), rec("b", CAIYUE))
    assert ev.adverts and verdict is None
    assert refusal(ev, comparer.settings.decision, comparer.settings.simhash).startswith("an advertisement")
    # two news reports are read as before
    assert not comparer.compare(rec("a", RECALL), rec("c", RECALL))[0].adverts
