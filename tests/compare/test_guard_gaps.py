"""Guards of the comparison core that held only by accident of the other tests' fixtures: each
test here fails when one guard is dropped, loosened or read one way round only (hand-run
mutation testing). A pair's verdict never depends on which article is ``a`` and which ``b``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from indexer.cleaning import clean_body, clean_title
from indexer.compare.rules import title_number_conflict
from indexer.compare.specifics import extract_specifics, specifics_conflict
from indexer.pipeline import Decision
from tests.conftest import TableEmbedder
from tests.test_pipeline import rec

CST = timezone(timedelta(hours=8))


def spec(title: str, body: str, when: datetime | None = None):
    return extract_specifics(clean_title(title), clean_body(body), when)


# ---- headline figures: a subset either way round is no conflict ----------------------------------


@pytest.mark.parametrize("fewer,more", [
    ("10月CPI上涨2.1%", "统计局：10月CPI涨2.1%，食品涨7%"),
    ("泸定5.1级地震", "泸定5.1级地震已致3人受伤"),
    ("死亡人数升至12,000人", "土耳其强震死亡人数升至12000人 救援进入第5天"),
])
def test_a_headline_adding_figures_to_the_others_conflicts_in_neither_order(fewer, more):
    """A follow-up headline keeps the figures of the first report and adds some: no conflict,
    whichever of the two is read first."""
    assert not title_number_conflict(fewer, more)
    assert not title_number_conflict(more, fewer)


def test_a_pair_s_headline_figures_conflict_in_neither_order(make_indexer):
    """The evidence of two reports is one whichever is compared first: the second headline holds
    every figure of the first and adds one."""
    ix = make_indexer(embedder=TableEmbedder({"统计局": [1, 0, 0, 0]}))
    first = rec("a", "10月CPI同比上涨2.1%", "国家统计局12日发布数据显示，10月份全国居民消费价格同比上涨2.1%，环比上涨0.3%。"
                "其中，城市上涨2.0%，农村上涨2.4%。食品价格上涨7.0%，影响CPI上涨约1.29个百分点。")
    second = rec("b", "统计局：10月CPI同比上涨2.1% 食品涨7%",
                 "国家统计局今天公布，10月全国居民消费价格同比上涨2.1%，其中食品价格上涨7.0%，猪肉价格上涨51.8%。"
                 "统计局首席统计师董莉娟解读称，食品价格有所上涨，非食品价格总体稳定。")
    for x, y in ((first, second), (second, first)):
        evidence, _ = ix.compare(x, y)
        assert not evidence.title_numbers_conflict, (x["id"], evidence)


# ---- event dates: one report mentions the other's date further down --------------------------------

FIRE = (
    "杭州余杭区一厂房发生火灾 消防紧急处置",
    "5日上午10时许，杭州市余杭区仁和街道一处塑料制品厂房突发火灾，现场浓烟滚滚。消防部门接警后调派8辆消防车、40余名指战员赶赴现场处置，"
    "明火于中午前被扑灭。据现场目击者介绍，起火时厂房内有工人正在作业，发现冒烟后立即组织撤离，并拨打了报警电话。"
    "附近多家企业也临时疏散了员工，周边道路一度实行交通管制，过往车辆绕行。"
    "消防人员在现场设置了警戒线，对厂房内残留的原料进行冷却处理，防止复燃。"
    "区应急管理局、区市场监管局等部门工作人员也第一时间赶到现场，协助开展善后工作。"
    "据了解，该厂房建成于2010年前后，主要生产塑料包装制品，平时有数十名工人在此上班。"
    "火灾发生后，当地街道组织工作人员对周边企业开展了消防安全检查，排查整改隐患。目前，起火原因正在进一步调查中。\n"
    "8日，记者从余杭区应急管理局了解到，该厂房存在违规存放易燃原料的问题，相关责任人已被依法控制。",
    datetime(2024, 3, 5, 15, tzinfo=CST),
)
FIRE_FINDINGS = (
    "余杭仁和街道厂房火灾调查结果公布 相关责任人被控制",
    "8日，杭州市余杭区应急管理局通报了仁和街道塑料制品厂房火灾的调查结果：该厂房违规存放易燃原料，相关责任人已被依法控制。",
    datetime(2024, 3, 8, 18, tzinfo=CST),
)


def test_a_lead_date_the_other_report_mentions_further_down_is_no_conflict_in_either_order():
    """The first report's lead dates the fire 5日 and its last paragraph tells what was found on
    8日; the follow-up's lead dates only the findings, 8日. Its date is mentioned by the first
    report, so the two do not conflict on dates, whichever side the check reads first."""
    first, findings = spec(*FIRE), spec(*FIRE_FINDINGS)
    assert [d.day for d in first.dates] == [5] and [d.day for d in findings.dates] == [8]  # the leads' dates differ
    assert specifics_conflict(first, findings) is None
    assert specifics_conflict(findings, first) is None


# ---- the quote rule rests on the specifics ------------------------------------------------------

STOCK = "消防部门接警后迅速调派多辆消防车赶赴现场处置，现场浓烟滚滚，周边居民已被紧急疏散。"


def test_a_shared_sentence_under_one_headline_does_not_join_two_events_whose_specifics_conflict(make_indexer):
    """Two fires in one district under one generic headline, the brigade's stock sentence word for
    word in the middle of both: what one quotes of the other. Their openings are worded apart
    (no templated frame, the same district in both leads), so only their dates and streets tell
    them apart, and those refuse the quote rule too. The table embedder keeps the embedding out."""
    ix = make_indexer(embedder=TableEmbedder({"中山路": [1, 0, 0, 0], "湖南路": [0, 1, 0, 0]}))
    first = rec("f1", "南京鼓楼区一居民楼发生火灾", "\n".join([
        "10日凌晨2时许，南京市鼓楼区中山路128号一居民楼发生火灾。", STOCK, "火灾造成3人死亡，起火原因正在调查中。"]), day=10)
    second = rec("f2", "南京鼓楼区一居民楼发生火灾", "\n".join([
        "记者从鼓楼区消防救援大队获悉，14日下午，位于湖南路的一栋老旧居民楼突然起火。", STOCK,
        "所幸无人员伤亡，具体原因有待进一步调查。"]), day=14)
    for x, y in ((first, second), (second, first)):
        evidence, verdict = ix.compare(x, y)
        assert evidence.quoted_chars >= 30 and evidence.template is None and evidence.specifics, evidence
        assert verdict is None, evidence
    assert [o.decision for o in ix.index_many([first, second])] == [Decision.NEW, Decision.NEW]


# ---- every containment-near pair is read for a templated frame --------------------------------------


def _announcement(company: str, city: str) -> str:
    return "\n".join([
        f"{company}今日发布公告称，公司于近日收到{city}市发展和改革委员会下发的项目核准批复文件，同意公司建设新能源汽车零部件智能制造基地项目。",
        "公告显示，该项目总投资额为120亿元，建设周期为两年，项目建成后预计年产值可达300亿元。",
        f"{company}表示，本次项目获得核准，有利于进一步完善公司产业布局，提升公司核心竞争力，对公司未来经营业绩将产生积极影响。",
        "公司提醒广大投资者，项目建设过程中可能面临政策、市场等方面的不确定性，敬请注意投资风险。",
    ])


def test_two_companies_announcements_in_one_frame_are_no_near_copies_without_an_embedding(make_indexer):
    """Two listed companies' announcements written from one template: the shorter text's shingles
    are 0.9 contained in the other's (a near copy by containment alone) while their fingerprints
    are far apart. Without an embedding model nothing but the frame check tells them apart, and it
    must read every pair that containment would accept, not only those above it."""
    ix = make_indexer(embedder=None)
    a = rec("catl", "宁德时代：新能源汽车零部件项目获核准", _announcement("宁德时代", "福州"))
    b = rec("byd", "比亚迪：新能源汽车零部件项目获核准", _announcement("比亚迪", "西安"))
    evidence, verdict = ix.compare(a, b)
    assert ix.settings.decision.near_containment <= evidence.containment < 0.95, evidence
    assert evidence.hamming > ix.settings.simhash.max_distance and evidence.cosine is None, evidence
    assert evidence.template and evidence.template.startswith("name differs"), evidence
    assert verdict is None
    assert [o.decision for o in ix.index_many([a, b])] == [Decision.NEW, Decision.NEW]


# ---- the lead's places: the first sentence of the body, not the headline alone ---------------------


def test_food_poisonings_in_two_cities_named_only_in_the_first_sentence_are_two_events(make_indexer):
    """Two schools' food poisonings under one placeless headline, the city named in the body's
    first sentence after the source it came from (记者从市疾控中心获悉，...). The lead reads that far
    (README: "the places named in the two leads overlap"), and 哈尔滨 and 北京 are two events
    however alike the rest reads (the table embedder puts them at cosine 1)."""
    ix = make_indexer(embedder=TableEmbedder({"食物中毒": [1, 0, 0, 0]}))
    harbin = rec("hrb", "一中学发生疑似食物中毒 多名学生送医",
                 "记者从市疾控中心获悉，3日中午，哈尔滨市一所中学多名学生在食堂就餐后出现呕吐、腹泻等症状，被陆续送往医院治疗。"
                 "目前学生情况稳定，疾控部门已对食堂留样进行检测，学校食堂已暂停营业。", day=3)
    beijing = rec("bj", "一中学发生疑似食物中毒 多名学生送医",
                  "记者从市疾控中心获悉，3日中午，北京市一所中学多名学生在食堂吃过午饭后陆续出现腹痛、呕吐症状，已被送医救治。"
                  "目前学生均无生命危险，食品安全部门已介入调查，食堂已被责令停业整顿。", day=3)
    for x, y in ((harbin, beijing), (beijing, harbin)):
        evidence, verdict = ix.compare(x, y)
        assert evidence.cosine >= ix.settings.decision.semantic_min_cosine, evidence
        assert evidence.template and evidence.template.startswith("places differ"), evidence
        assert verdict is None
    assert [o.decision for o in ix.index_many([harbin, beijing])] == [Decision.NEW, Decision.NEW]


# ---- an advert is told by its headline and its whole text ---------------------------------------

# A seller's page that solicits once in its headline (厂家直销) and once in its closing line, past
# the first few hundred characters of its body (欢迎来厂参观).
SELLER = (
    "剪刀机娃娃机厂家直销 全国发货",
    "彩悦动漫科技郑重声明：我们是源头工厂，全新机器质量有保障，杜绝市面上差货、次货！"
    "本厂机器或是主机套件，娃娃机，礼品机，抓烟机，儿童机，格斗机等，全部享有主机终身保修，同价位主机免费调换。"
    "有需要可派遣技术员上门教会调试机器，并提供场地选址、机台摆放、礼品采购等一站式开店指导。"
    "新款娃娃机采用全高清显示屏和智能防作弊主板，爪力可随意调节，出礼率由老板自行设定，后台可实时查看营收数据。"
    "另有二手翻新机出售，经过专业检测和翻新，成色九成新以上，适合小本创业的朋友。"
    "本公司在全国各地设有售后服务网点，机器出现故障可在二十四小时内响应，配件常年备货，随时可以发货。"
    "商场、超市、电影院、游乐场、奶茶店门口都是娃娃机的理想摆放位置，投资小、回本快、管理简单。"
    "长期合作是我们的目的，欢迎来厂参观。",
)


def test_an_advert_soliciting_in_its_headline_and_its_closing_line_is_an_advert(make_indexer):
    """The two soliciting phrases an advert needs may stand in its headline and at the end of a
    long body: a side reads both (README: "a text that asks the reader to call, order or come by
    with two or more different phrases")."""
    from indexer.compare.adverts import is_advert
    from indexer.comparer import PairComparer

    title, body = SELLER
    assert body.index("欢迎来厂") > 300 and not is_advert(body) and not is_advert(title)  # one phrase each
    ix = make_indexer(embedder=None)
    [side] = PairComparer(ix.settings, ix.featurizer).sides([rec("seller", title, body)])
    assert side.advert


# ---- casualty figures: an update that tells the first toll further down -----------------------------

MINE_FIRST = (
    "吕梁一煤矿发生透水事故 3人遇难",
    "6日凌晨4时许，山西省吕梁市离石区一煤矿井下发生透水事故，造成3人死亡。事故发生后，当地立即启动应急预案，组织救援力量赶赴现场。",
    datetime(2024, 3, 6, 12, tzinfo=CST),
)
MINE_UPDATE = (
    "吕梁煤矿透水事故救援结束 4人遇难",
    "记者7日从吕梁市应急管理局获悉，离石区一煤矿透水事故救援工作已经结束，事故共造成4人死亡。"
    "救援指挥部介绍，事故发生时井下共有作业人员26人，其中22人自行升井或被救出，其余人员被困井下。"
    "经过连续30多个小时的排水和搜救，救援人员先后找到被困人员，确认均已遇难。"
    "目前，善后工作正在有序进行，遇难者家属情绪稳定，相关赔偿事宜正在协商之中。"
    "当地已责令该煤矿停产整顿，并对全市煤矿开展安全隐患大排查，严厉打击违法违规生产行为。"
    "据了解，该煤矿为正常生产矿井，核定生产能力为每年60万吨，事故原因正在进一步调查中。"
    "省应急管理厅已派出工作组赶赴现场，指导督促做好事故调查和善后处置工作，并要求各地深刻吸取事故教训，切实加强汛期和雨季煤矿防治水工作。\n"
    "6日凌晨事故发生后，当地曾通报事故造成3人死亡，另有1人失联，失联人员随后被确认遇难。",
    datetime(2024, 3, 7, 15, tzinfo=CST),
)


def test_an_updated_toll_that_tells_the_first_one_further_down_is_no_conflict_in_either_order():
    """The first report's lead gives 3 deaths, the update's lead 4, and the update tells the first
    toll in its last paragraph: one event, whichever report the figure check reads first (README:
    "A specific only one side states is no conflict"; a toll is compared with all the other
    report's figures of its role)."""
    update, first = spec(*MINE_UPDATE), spec(*MINE_FIRST)
    assert {f.value for f in update.figures if f.role == "deaths"} == {4.0}  # the leads' tolls differ
    assert {f.value for f in first.figures if f.role == "deaths"} == {3.0}
    assert specifics_conflict(update, first) is None
    assert specifics_conflict(first, update) is None


# ---- a repost's self-references are no template slot ---------------------------------------------

REPORTER_STORY = [
    "本报记者在事故现场看到，多辆消防车正在进行灭火作业，周边道路已经实行交通管制，过往车辆和行人需要绕行。",
    "据本报记者了解，起火的是一栋六层居民楼，楼内居民已全部疏散，暂无人员伤亡报告，火势已经得到有效控制。",
    "消防部门表示，当天下午两点左右接到报警，随即调派五个消防站共十八辆消防车赶赴现场进行处置。",
    "附近居民介绍，起火前曾听到楼内传出异响，随后便看到浓烟从窗户冒出，大家纷纷跑到楼下避险。",
    "目前，起火原因正在进一步调查之中，相关部门已对周边楼栋开展消防安全隐患排查。",
]


def test_a_repost_writing_its_own_reporter_for_the_original_s_is_no_templated_report(make_indexer):
    """A repost hides where the story came from by swapping 本报记者 for 笔者 (twice, in two
    sentences): that is no substituted name (rules._SELF_REFERENCES), and the repost stays a near
    copy."""
    from indexer.compare.rules import story_template_difference

    original = "\n".join(REPORTER_STORY)
    repost = original.replace("本报记者", "笔者")
    assert story_template_difference("长沙一居民楼起火", original, "长沙一居民楼起火", repost) is None
    ix = make_indexer(embedder=None)
    evidence, verdict = ix.compare(rec("a", "长沙一居民楼起火", original), rec("b", "长沙一居民楼起火", repost))
    assert evidence.template is None, evidence
    assert verdict is not None and verdict.reason.value == "near", evidence
