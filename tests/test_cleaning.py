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
