from indexer.cleaning import clean_body, clean_title, exact_form, html_to_text, normalize


def test_title_tags_and_prefixes_are_stripped():
    assert clean_title("【快讯】突发！北京今天下暴雨_新浪新闻") == "北京今天下暴雨"
    assert clean_title("〔关注〕重磅：央行宣布降准0.5个百分点") == "央行宣布降准0.5个百分点"
    assert clean_title("[视频]市民冒雨排队 (图)") == "市民冒雨排队"


def test_title_that_is_only_a_tag_keeps_its_text():
    assert clean_title("【快讯】") == "【快讯】"


def test_full_width_is_folded_and_case_lowered():
    assert normalize("ＡＢＣ１２３，ｘ") == "abc123,x"


def test_html_is_reduced_to_visible_text_by_block():
    html = "<div><p>第一段</p><script>var a=1;</script><style>p{}</style><p>第二段<br>第三行</p></div>"
    lines = [l.strip() for l in html_to_text(html).splitlines() if l.strip()]
    assert lines == ["第一段", "第二段", "第三行"]


def test_repost_boilerplate_lines_are_removed():
    body = (
        "原标题：旧的标题\n"
        "本报讯 昨日，市政府召开新闻发布会（记者 张三）。\n"
        "会议通报了一季度经济运行情况。\n"
        "来源：某某日报\n责任编辑：李四\n审核：王五\n点击阅读全文\n分享到微信朋友圈\n"
        "广告\n版权所有，未经授权不得转载\n"
    )
    assert clean_body(body) == "昨日,市政府召开新闻发布会。\n会议通报了一季度经济运行情况。"


def test_content_lines_that_mention_sources_are_kept():
    body = "据新华社报道，来源于海外的订单增长了三成，编辑部对此进行了分析。"
    assert "来源于海外的订单增长了三成" in clean_body(body)


def test_exact_form_ignores_spacing_and_punctuation():
    assert exact_form(clean_body("今天，北京下雨。\n明天 晴！")) == exact_form(clean_body("今天,北京下雨.明天晴!"))


def test_other_languages_pass_through():
    assert clean_body("<p>The quick brown fox.</p><p>Ça va très bien.</p>") == "the quick brown fox.\nça va très bien."


def test_fast_nfkc_equals_unicodedata():
    import unicodedata

    from indexer.cleaning import nfkc

    samples = [
        "国家统计局１２日发布：ＣＰＩ同比上涨２．１％，“环比”上涨0.3%。",
        "全角空格\u3000和〔括号〕【标签】……以及①②③ ㈱ ﬁ ｶﾀｶﾅ ½ Ⅻ 〶 〸",
        "plain ascii, nothing to do",
        "繁體字與兼容字 \uf900\ufa0e 和 \u2026 省略号",
    ]
    for s in samples:
        assert nfkc(s) == unicodedata.normalize("NFKC", s)


def test_literal_escape_sequences_become_whitespace():
    # Double-encoded JSON leaves "\n" as two characters; they must not survive as the letter n.
    assert clean_body("第一段正文内容。\\n第二段正文内容。\\t完") == "第一段正文内容。\n第二段正文内容。 完"
    assert clean_title("标题\\n副标题") == "标题 副标题"


# ---- script folding -------------------------------------------------------------------------------

import json
from pathlib import Path

import opencc
import pytest

from indexer.cleaning import fold_script

FIXTURES = Path(__file__).parent / "fixtures"


def _originals() -> list[dict]:
    with open(FIXTURES / "originals.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle][:15]


@pytest.mark.parametrize("config", ["s2t", "s2tw", "s2hk"])
def test_traditional_copies_fold_to_their_simplified_originals(config):
    from indexer.features import text_features
    from indexer.settings import Settings

    to_traditional = opencc.OpenCC(config)
    settings = Settings()
    articles = _originals()
    assert len(articles) >= 10
    changed = 0
    for article in articles:
        title, body = to_traditional.convert(article["title"]), to_traditional.convert(article["content"])
        changed += body != article["content"]
        original = text_features(article["title"], article["content"], settings)
        copy = text_features(title, body, settings)
        assert copy.clean_title == original.clean_title, article["id"]
        assert copy.clean_body == original.clean_body, article["id"]
        assert copy.content_key == original.content_key and copy.simhash == original.simhash, article["id"]
    assert changed == len(articles)  # the copies really are in traditional characters


def test_regional_variants_fold_to_the_same_characters():
    # Taiwan writes 著 where the mainland writes 着, Hong Kong 衞 for 卫: plain t2s keeps both.
    assert fold_script("他看著窗外") == "他看着窗外"
    assert fold_script("衞生署今日公布") == "卫生署今日公布"
    assert fold_script("著名作家") == "著名作家"


def test_mixed_script_text_folds_like_its_traditional_copy():
    mixed = "简体开头，這裏是繁體，什么都有。"
    assert fold_script(mixed) == fold_script(opencc.OpenCC("s2t").convert(mixed)) == "简体开头,这里是繁体,什么都有。".replace(",", "，")


def test_simplified_text_is_left_as_it_is():
    # The converters alone would rewrite these (tw2s: 什么 -> 什幺; t2s: 打坏 -> 打坯).
    for text in ("他到底想要什么", "不小心打坏了杯子", "国家统计局发布数据"):
        assert fold_script(text) == text


def test_fast_path_equals_the_full_conversion_whenever_it_converts():
    # Folding skips the converters for text without a character they change alone; for every text
    # with one it gives exactly the converters' output, and the skip covers no text they would change
    # character by character.
    from indexer.cleaning import _folder

    folder = _folder()
    s2t = opencc.OpenCC("s2t")
    for article in _originals():
        for text in (article["content"], s2t.convert(article["content"])):
            if folder.needs_folding(text):
                assert fold_script(text) == folder.convert(text)
            else:
                assert fold_script(text) == text
                assert all(folder.convert(ch) == ch for ch in set(text))
    assert folder.needs_folding("𠮷野家與國際")  # BMP and astral
    assert "國" in folder.changed and "国" not in folder.changed


@pytest.mark.parametrize("text", [
    "The quick brown fox jumps over the lazy dog.",
    "日本の首相は會社を訪問した。東京都の気温は高い。",  # kana with kanji that converters would change
    "대한민국 정부는 大韓民國 國會에서 발표했다.",  # hangul with hanja
    "Ça va très bien, merci.",
])
def test_other_languages_are_not_folded(text):
    from indexer.cleaning import _folder

    assert fold_script(text) == text
    if "國" in text or "會" in text:
        assert _folder().convert(text) != text  # the guard is what keeps it


def test_chinese_text_quoting_a_japanese_name_still_folds():
    text = "據報道，日本品牌「ユニクロ」在臺灣開設新門市，吸引大批民眾排隊購買。"
    assert fold_script(text) == "据报道，日本品牌「ユニクロ」在台湾开设新门市，吸引大批民众排队购买。"


def test_japanese_headline_and_chinese_with_a_stray_kana():
    assert fold_script("首相、東京で會見") == "首相、東京で會見"
    body = "小清新の生活" + "，這篇報導介紹了臺北市的新開張書店與咖啡館" * 5
    assert fold_script(body).startswith("小清新の生活,这篇报导介绍了台北市".replace(",", "，"))
