"""Roundups (briefings gathering several stories) are stories of their own: they match their own
copies, never one of the stories they quote."""

from __future__ import annotations

import pytest

from indexer.compare.roundups import is_roundup, longest_list, longest_numbered_run, numbered_items
from indexer.pipeline import Decision
from tests.test_pipeline import CPI, QUAKE, rec

FIRE = (
    "14日下午，南京市江宁区天元东路金鹰购物中心发生火灾，现场浓烟滚滚。消防部门调集12辆消防车赶赴现场处置，"
    "明火于傍晚被扑灭。事故造成1人死亡、5人受伤。起火原因正在调查中。"
)


def lead(text: str) -> str:
    return "".join(text.split("。")[:2]) + "。"


BRIEFING_BODY = "\n".join([
    "今天有哪些新闻值得关注？一起来看。",
    "1. 10月CPI同比上涨2.1%", lead(CPI),
    "2. 四川泸定发生5.1级地震", lead(QUAKE),
    "3. 南京一购物中心突发大火", lead(FIRE),
    "以上内容综合自网络。",
])
BRIEFING = rec("brief", "早报｜10月CPI同比上涨2.1%等3条要闻", BRIEFING_BODY)
CPI_REPORT = rec("cpi", "10月CPI同比上涨2.1%", CPI)
CPI_TEASER = rec("cpi-teaser", "10月CPI同比上涨2.1%", lead(CPI) + "\n阅读全文")

# A trade flash (read on the burst tune part): its items run on without numbers or line breaks,
# its headline lists the first two. It joined a report of its first item as semantic.
FLASH_TITLE = "物流运输快讯 | 曝日本软银拟10亿美元投资满帮集团;阿里拟在泰国..."
FLASH_BODY = (
    "最新获悉，日本软银集团打算向满帮集团投资10亿美元，后者正寻求募集5亿美元到10亿美元资金以实现扩张。"
    "知情人士透露，满帮集团正寻求募集5亿美元到10亿美元的资金，以帮助该公司在中国日益增长的物流市场扩展业务，"
    "不过融资金额和参与的投资者都还没有确定。消息还称，如果满帮集团能够筹集到5亿美元，此次注资将给予公司大约50亿美元的估值。"
    "据外媒报道，泰国工业部近日表示，中国电商巨头阿里巴巴集团创始人及董事会主席马云将在3月30日访问泰国，"
    "并宣布该集团对泰国政府东部经济走廊计划的未来投资。阿里巴巴集团计划在泰国建立一个物流中心，来支撑其在整个东南亚的电商运行。"
    "德国戴姆勒公司已经在美国的公共道路上启动了卡车排队试验，并将通过配对评估其在两条全新连接的卡车挂车组合上的技术。"
)
FLASH = rec("flash", FLASH_TITLE, FLASH_BODY)

# Regional news of the day (read on the inews tune part): each item headed by its province in
# brackets, run on without line breaks or numbers.
ZHENGZHOU_BUS = (
    "据澎湃新闻报道,2月16日22时许,郑州市公安局桐柏路分局官方微博发布通报称,2月15日18时许,郑州b2路公交车上发生一起乘客抢夺方向盘事件。"
    "倪某(男,29岁)在乘坐b2路公交车时,因错过下车站点,与公交司机发生争执,两次企图抢夺方向盘,车上乘客配合司机将倪某控制并报警,无人员伤亡。"
    "目前,倪某因涉嫌危害社会公共安全罪已被刑事拘留,案件正在进一步办理中。"
)
REGIONAL_TITLE = "地方新闻精选|浙江一厅官退休15年后落马 郑州男子抢公交车方向"
REGIONAL_BODY = (
    "今日有哪些地方新闻值得关注?浙江一厅官退休15年后自首,成退休最久落马官员;郑州男子抢夺公交车方向盘,涉嫌危害社会公共安全罪被刑拘。"
    "【浙江】一厅官退休15年后自首,成退休最久落马官员据北京青年报报道,2月16日,浙江省纪委监委发布消息,浙江省绍兴市政协原副主席陈建设涉嫌严重违纪违法,"
    "主动投案自首,目前正在接受纪律审查和监察调查。"
    "【山东】烟台公益广告牌现“热爱西安”字样,官方回应据澎湃新闻报道,2月2日早,接到居民反映,在辖区青华中学东北门东侧栅栏上有一块公益广告牌,"
    "其中“烟台市市民文明公约”的内容中出现“热爱西安”字样。办事处立即安排专人到现场查看并进行拆除。"
    "【河南】郑州男子抢夺公交车方向盘,涉嫌危害社会公共安全罪被刑拘" + ZHENGZHOU_BUS
)
SOFTBANK_REPORT = rec("softbank", "传软银计划投资中国卡车物流平台满帮:金额达10亿美元", (
    "新浪科技讯北京时间3月26日晚间消息，《华尔街日报》援引消息人士的说法称，软银计划向中国的移动货运平台满帮集团投资10亿美元。"
    "满帮集团此前获得了腾讯，以及马云联合创立的一家私募股权公司的投资。满帮集团利用移动平台去匹配卡车司机和货主。"
    "消息人士称，满帮集团计划融资5亿到10亿美元，在中国快速增长的物流市场进行扩张。融资额和参投的投资方都尚未敲定。"
    "不过，如果满帮集团融资5亿美元，那么估值将达到约50亿美元。软银拒绝对此置评。"
))


@pytest.mark.parametrize("title,body", [
    ("早报｜10月CPI同比上涨2.1%等3条要闻", BRIEFING_BODY),
    ("新闻早知道：3月14日", "1、泸定发生地震\n2、南京购物中心火灾\n3、统计局发布物价数据"),
    ("今日要闻速览", "①泸定发生地震\n②南京购物中心火灾\n③统计局发布物价数据\n④股市收涨"),
    ("本周新闻汇总", "【1】泸定发生地震\n【2】南京购物中心火灾\n【3】统计局发布物价数据"),
    ("每日5条新闻", "一、泸定发生地震\n二、南京购物中心火灾\n三、统计局发布物价数据"),
    # flashes that number nothing: the headline lists the stories
    (FLASH_TITLE, FLASH_BODY),
    ("新西兰一著名景点关闭;刘谦回应春晚换壶;iphone出中国红配色", "iphone又出中国红配色。刘谦在微博上回应质疑。"),
    # items headed by labels in brackets, not numbers
    (REGIONAL_TITLE, REGIONAL_BODY),
])
def test_briefings_are_roundups(title, body):
    assert is_roundup(title, body)


@pytest.mark.parametrize("title,body", [
    # a column tag over one story
    ("早报｜泸定发生5.1级地震", QUAKE),
    # a policy numbers its points, under a headline that gathers nothing
    ("国务院发布10条措施稳定物价", "一、加强保供\n二、打击囤积\n三、完善储备\n四、强化监测"),
    # a compilation of one piece's points (a FAQ, a policy) gathers no stories
    ("2018省考，考试报名常见问题汇总", "1. 报名时间\n2. 报考条件\n3. 缴费方式\n4. 准考证打印"),
    ("新规一览：这些政策下月起施行", "一、个税调整\n二、社保变化\n三、医保报销"),
    # an outlet's name is not a roundup word
    ("扬子晚报：南京一购物中心突发大火", "1. 起火经过\n2. 伤亡情况\n3. 起火原因"),
    # items out of sequence, and figures at the start of lines
    ("要闻", "1. 一\n3. 三\n5. 五"),
    ("要闻", "1.5亿元投入改造\n2.3万户受益\n3.1公里新路"),
    ("", ""),
    # one story's headline in two clauses; a flash column's name over one story; an outlet's name
    ("火灾不分季节;两天内 萍乡连发两起火灾", "两天内萍乡连发两起火灾。"),
    ("快讯:云南昆明东川区发生森林火灾 70人正参与扑救", "东川区发生森林火灾。"),
    ("人民日报:火灾不分季节;两天内萍乡连发两起火灾", "两天内萍乡连发两起火灾。"),
    # words, not stories
    ("大风;降温;雨雪", "明日全市大风降温。"),
    # a long report heads its parts in brackets; under a column tag, two labels are not a list
    ("男子醉驾撞人案一审宣判", "【事件经过】2017年5月,胡某醉驾撞人。【法院判决】判处有期徒刑十个月。【律师说法】量刑适当。"),
    ("早报|男子醉驾撞人案一审宣判", "【事件经过】2017年5月,胡某醉驾撞人。【法院判决】判处有期徒刑十个月。"),
])
def test_single_stories_are_not_roundups(title, body):
    assert not is_roundup(title, body)


def test_item_numbers_read_each_numbering_style():
    assert [n for _, n in numbered_items("1. a\n2、b\n(3) c\n【4】d\n五、e\n⑥f\n正文 7. 不在行首")] == [1, 2, 3, 4, 5, 6]
    assert longest_numbered_run([1, 2, 1, 2, 3, 4, 9, 1]) == 4
    # one number missing (an item's headline line the cleaning dropped), the first too, keeps the
    # list; two end it
    assert longest_numbered_run([1, 3, 4]) == 3 and longest_numbered_run([1, 3, 5]) == 2
    assert longest_numbered_run([2, 3, 4]) == 3 and longest_numbered_run([2, 4, 5]) == 1
    assert longest_numbered_run([3, 4, 5]) == 0  # two missing
    # a line of an item's own text that starts with a number further ahead is passed over (a quiz's
    # 21. in a digest's second item: heldout tune seed 600); one that goes back ends the list
    assert longest_numbered_run([1, 2, 21, 3, 4, 5]) == 5 and longest_numbered_run([1, 2, 2, 3]) == 2
    # a digest's items (1. 2. 3.), the first numbering its own points (1、2、): heldout tune seed 320
    digest = "以下是今日要闻。\n1. 公务员考试减免考务费公告\n1、特困家庭\n2、低保家庭\n2. 偷电动车被电死\n3. 奚晓明受贿案"
    assert longest_numbered_run([n for _, n in numbered_items(digest)]) == 2 and longest_list(digest) == 3
    assert is_roundup("新闻早知道：05月30日，公务员考试减免考务费等3条要闻", digest)


# A digest whose second item's headline line the cleaning drops as a site's furniture (it ends in
# --兰州文明网): its items read 1, 3, 4. Read on the heldout tune part (seed 17): it was no roundup
# and joined a report of its first item as semantic (0.82).
GAPPED_BRIEFING = rec("gapped", "晚间要闻｜10月CPI同比上涨2.1%等4条要闻", "\n".join([
    "以下是今日要闻汇总。",
    "1. 10月CPI同比上涨2.1%", lead(CPI),
    "2. 城关警方二维码智慧警务助推窗口服务--兰州文明网", "为贯彻甘肃省公安厅的部署要求，城关公安分局创新工作举措，提升服务水平。",
    "3. 四川泸定发生5.1级地震", lead(QUAKE),
    "4. 南京一购物中心突发大火", lead(FIRE),
    "以上内容综合自网络，如有疏漏请指正。",
]))


def test_a_digest_missing_an_item_number_is_a_roundup(make_indexer):
    ix = make_indexer()
    side = ix.compare(GAPPED_BRIEFING, CPI_REPORT)[0]
    assert side.roundups == 1, side


def test_a_roundup_matches_none_of_its_stories(make_indexer):
    ix = make_indexer()
    evidence, verdict = ix.compare(BRIEFING, CPI_TEASER)
    # The teaser is held whole by the briefing: a trimmed copy by containment, were it not a roundup.
    assert evidence.roundups == 1 and evidence.containment >= ix.settings.decision.near_containment, evidence
    assert verdict is None
    evidence, verdict = ix.compare(BRIEFING, CPI_REPORT)
    assert evidence.roundups == 1 and verdict is None, evidence


def test_a_flash_matches_none_of_its_stories(make_indexer):
    ix = make_indexer()
    evidence, verdict = ix.compare(FLASH, SOFTBANK_REPORT)
    assert evidence.roundups == 1 and verdict is None, evidence
    copy = rec("flash-copy", "[视频]" + FLASH_TITLE + "——齐鲁晚报", "字号：大 中 小 打印\n" + FLASH_BODY)
    evidence, verdict = ix.compare(FLASH, copy)
    assert evidence.roundups == 2 and verdict is not None and verdict.reason.value in ("exact", "near"), evidence


def test_a_labelled_roundup_matches_none_of_its_stories(make_indexer):
    ix = make_indexer()
    report = rec("bus", "郑州男子抢夺公交车方向盘被刑拘", ZHENGZHOU_BUS)
    evidence, verdict = ix.compare(rec("regional", REGIONAL_TITLE, REGIONAL_BODY), report)
    assert evidence.roundups == 1 and verdict is None, evidence


def test_a_roundup_matches_its_own_copies(make_indexer):
    ix = make_indexer()
    copy = rec("brief-copy", "【转】早报｜10月CPI同比上涨2.1%等3条要闻 - 光明网", BRIEFING_BODY + "\n责任编辑：王磊")
    evidence, verdict = ix.compare(BRIEFING, copy)
    assert evidence.roundups == 2 and verdict is not None and verdict.reason.value in ("exact", "near"), evidence


def test_two_editions_of_a_digest_are_two_roundups(make_indexer):
    """Held-out tune seed 536: a digest of three stories and another day's digest of five, which
    repeats those three, were near copies by containment (0.82). Their headlines' figures
    conflict (05月24日…3条 against 05月30日…5条): two editions, not a copy and its original."""
    ix = make_indexer()
    later = rec("later", "晚间要闻｜10月31日，10月CPI同比上涨2.1%等5条要闻", "\n".join([
        "今天有哪些新闻值得关注？一起来看。", *BRIEFING_BODY.split("\n"),
        "4. 南京一购物中心突发大火", lead(FIRE), "5. 城关警方二维码智慧警务助推窗口服务", "城关公安分局创新工作举措，提升窗口服务水平。",
    ]))
    evidence, verdict = ix.compare(BRIEFING, later)
    assert evidence.roundups == 2 and evidence.containment >= ix.settings.decision.near_containment, evidence
    assert evidence.title_numbers_conflict and verdict is None, evidence
    # the same digest retitled without conflicting figures is still its copy
    copy = rec("copy", "晚间要闻｜10月CPI同比上涨2.1%等3条要闻", "\n".join(["今天有哪些新闻值得关注？一起来看。", *BRIEFING_BODY.split("\n")]))
    evidence, verdict = ix.compare(BRIEFING, copy)
    assert evidence.roundups == 2 and verdict is not None, evidence


def test_a_roundup_starts_its_own_cluster_whatever_the_order(make_indexer):
    for order in ([CPI_REPORT, CPI_TEASER, BRIEFING], [BRIEFING, CPI_TEASER, CPI_REPORT]):
        ix = make_indexer()
        out = {o.article_id: o for o in ix.index_many(order)}
        assert out["cpi-teaser"].cluster_id == out["cpi"].cluster_id
        assert out["brief"].cluster_id not in (out["cpi"].cluster_id,)
        assert out["brief"].decision is Decision.NEW


def test_a_retitled_copy_of_a_roundup_matches_it_and_its_stories_still_do_not():
    """A copy of the flash under its first item's headline is no roundup by its own headline, yet
    it is the flash: as long as the flash and contained in it, it is its near copy. A report of one
    of its items stays apart (read on a burst tune seed: the two copies' clusters stayed split)."""
    from indexer.compare.evidence import compare_sides
    from indexer.compare.rules import Reason, judge
    from indexer.compare.sides import Side
    from indexer.features import text_features
    from indexer.settings import Settings

    settings = Settings()

    def side(rid, title, body):
        return Side.of(rid, text_features(title, body, settings), None, None)

    flash = side("flash", FLASH_TITLE, FLASH_BODY)
    body = FLASH_BODY.rsplit("。", 2)[0] + "。"  # the last item's closing sentence dropped
    retitled = side("copy", "最新获悉，日本软银集团打算向满帮集团投资10亿美元", body)
    assert flash.roundup and not retitled.roundup
    ev = compare_sides(flash, retitled, settings)
    assert not ev.exact and ev.hamming > settings.simhash.max_distance  # only containment tells
    verdict = judge(ev, settings.decision, settings.simhash)
    assert verdict is not None and verdict.reason is Reason.NEAR
    report = side("softbank", SOFTBANK_REPORT["title"], SOFTBANK_REPORT["content"])
    assert judge(compare_sides(flash, report, settings), settings.decision, settings.simhash) is None
    # a story's lead held by the flash is contained in it, and much shorter: no copy
    teaser = side("teaser", "日本软银拟10亿美元投资满帮集团", FLASH_BODY.split("。")[0] + "。" + FLASH_BODY.split("。")[1] + "。")
    ev = compare_sides(flash, teaser, settings)
    assert ev.containment >= settings.decision.near_containment and ev.roundups == 1
    assert judge(ev, settings.decision, settings.simhash) is None
    # a copy holding the whole flash and more besides (read on burst tune seed 227: a roundup's
    # teaser inside a reworded copy of the full roundup) is a copy of it, whatever it adds
    longer = side("longer", "最新获悉，日本软银集团打算向满帮集团投资10亿美元", FLASH_BODY + "\n" + CPI)
    ev = compare_sides(flash, longer, settings)
    assert ev.roundups == 1 and ev.roundup_contained and ev.shingle_ratio < settings.decision.near_containment, ev
    assert ev.containment >= settings.decision.near_containment
    verdict = judge(ev, settings.decision, settings.simhash)
    assert verdict is not None and verdict.reason is Reason.NEAR


def test_a_roundup_cut_short_under_its_own_headline_is_its_copy():
    """Read on burst tune seed 265: two teasers of one 财经新闻汇总, one cut after its second item,
    so only the other was told as a roundup, and the cut one (held whole by it) was refused as one
    of its stories. A story does not carry the roundup's headline, which calls it a gathering of
    news; the cut copy does. A story under a column's tag (早报｜<its own headline>) stays apart."""
    from indexer.compare.evidence import compare_sides
    from indexer.compare.rules import Reason, judge
    from indexer.compare.sides import Side
    from indexer.features import text_features
    from indexer.settings import Settings

    settings = Settings()

    def side(rid, title, body):
        return Side.of(rid, text_features(title, body, settings), None, None)

    briefing = side("brief", BRIEFING["title"], BRIEFING_BODY)
    cut = side("cut", "转发：" + BRIEFING["title"], "\n".join(BRIEFING_BODY.split("\n")[:3]))
    assert briefing.roundup and not cut.roundup
    ev = compare_sides(briefing, cut, settings)
    assert ev.roundups == 1 and ev.roundup_cut and not ev.roundup_contained, ev
    assert ev.shingle_ratio < settings.decision.near_containment <= ev.containment
    verdict = judge(ev, settings.decision, settings.simhash)
    assert verdict is not None and verdict.reason is Reason.NEAR
    column_story = side("story", "早报｜10月CPI同比上涨2.1%", lead(CPI))
    ev = compare_sides(briefing, column_story, settings)
    assert ev.roundups == 1 and not ev.roundup_cut and ev.containment >= settings.decision.near_containment, ev
    assert judge(ev, settings.decision, settings.simhash) is None


def test_a_roundup_cut_short_that_arrived_apart_is_merged_by_a_copy_of_both(make_indexer):
    """Read on burst tune seed 501: a copy of a 财经新闻汇总 with sentences dropped led the roundup's
    cluster; its teaser (cut after the first item, under the roundup's headline) held too little of
    that copy to join it and led a cluster of its own; later full copies matched both clusters, but
    a roundup's cluster and a story's were merged only when their canonicals matched, so the
    roundup stayed split. The teaser is the roundup cut short, not one of its stories."""
    lines = BRIEFING_BODY.split("\n")
    # the opening line gone and the first item's lead cut: the teaser holds too little of it (0.78)
    dropped = rec("dropped", BRIEFING["title"], "\n".join(lines[1:2] + [lines[2][:60] + "。"] + lines[3:]))
    teaser = rec("teaser", BRIEFING["title"], "\n".join(lines[:3]) + "\n点击查看更多")
    full = rec("full", "【图文】" + BRIEFING["title"], BRIEFING_BODY)
    ix = make_indexer()
    out = {o.article_id: o for o in ix.index_many([dropped, teaser, full])}
    assert out["teaser"].decision is Decision.NEW  # it arrived apart ...
    clusters = {rid: a.cluster_id for rid, a in ix.store.get_many(list(out)).items()}
    assert len(set(clusters.values())) == 1, clusters  # ... and the full copy merged the two
    # a report of the first item, led by the briefing's copy, stays apart
    ix = make_indexer()
    ix.index_many([dropped, CPI_REPORT, full])
    stored = ix.store.get_many(["cpi", "dropped"])
    assert stored["cpi"].cluster_id != stored["dropped"].cluster_id
