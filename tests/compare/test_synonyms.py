from indexer.compare.rules import story_template_difference
from indexer.compare.synonyms import are_synonyms


def test_the_thesaurus_synonym_groups():
    assert are_synonyms("状况", "情况") and are_synonyms("小孩", "孩子") and are_synonyms("目前", "当前")
    # words of one kind that mean different things, and a word with itself
    assert not are_synonyms("男子", "女子") and not are_synonyms("上午", "下午") and not are_synonyms("情况", "情况")


def test_a_repost_rewritten_with_synonyms_is_no_templated_report():
    """A reposting site rewrote its copy (a fourth generator's seed 6): 小孩 became 孩子 throughout,
    which once read as two names."""
    body = "{}突然呕吐不止，家人立即报警求助。民警开道送{}到医院，{}已脱离危险。"
    assert story_template_difference("祖孙俩食物中毒警车开道", body.format(*["小孩"] * 3),
                                     "祖孙俩食物中毒警车开道", body.format(*["孩子"] * 3)) is None
    # another kind of person is still another report
    assert story_template_difference("一名男子突然倒地", "一名男子在超市门口突然倒地，一名男子被送医。",
                                     "一名女子突然倒地", "一名女子在超市门口突然倒地，一名女子被送医。") is not None


def test_the_same_characters_cut_two_ways_are_no_substitution():
    """A space inside a figure (11:3 0, a fourth generator's seed 13) cuts it into other tokens."""
    body = "2019-01-01 11:{}慈利公安。2018年12月26日23时许，派出所接到报警。"
    assert story_template_difference("男子醉酒闹事", body.format("30"), "男子醉酒闹事", body.format("3 0")) is None
