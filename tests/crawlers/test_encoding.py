import pytest

from crawlers.encoding import decode_body, mojibake_ratio, normalize_codec

TEXT = "国家统计局今天发布数据显示，一季度国内生产总值同比增长百分之五点三，镕䶮"  # 镕/䶮 are outside GB2312
TRAD = "北京時間今天上午，中國在酒泉衛星發射中心成功發射一顆新型遙感衛星，衛星順利進入預定軌道。"


def html(charset_meta: str, body: str) -> str:
    return f'<html><head><meta http-equiv="Content-Type" content="text/html; charset={charset_meta}"></head><body><p>{body}</p></body></html>'


def test_gb2312_meta_decodes_gbk_and_gb18030_characters():
    decoded = decode_body(html("gb2312", TEXT).encode("gb18030"), "text/html")
    assert TEXT in decoded.text
    assert decoded.encoding == "gb18030" and decoded.declared == "gb2312"


def test_header_charset_is_used_without_meta():
    body = f"<p>{TEXT}</p>".encode("gb18030")
    assert TEXT in decode_body(body, "text/html; charset=GBK").text


def test_wrong_latin1_header_over_gbk_bytes_is_not_trusted():
    decoded = decode_body(html("gbk", TEXT).encode("gb18030"), "text/html; charset=ISO-8859-1")
    assert TEXT in decoded.text
    assert mojibake_ratio(decoded.text) == 0


def test_utf8_page_mislabelled_gbk_is_read_as_utf8():
    decoded = decode_body(html("gbk", TEXT).encode("utf-8"), "text/html; charset=gbk")
    assert TEXT in decoded.text and decoded.encoding == "utf-8"


def test_big5_meta():
    decoded = decode_body(html("big5", TRAD).encode("big5"), None)
    assert TRAD in decoded.text


def test_undeclared_gbk_and_big5_are_detected():
    assert TEXT[:-2] in decode_body(f"<p>{TEXT[:-2]}</p>".encode("gbk"), None).text
    assert TRAD in decode_body(f"<p>{TRAD}</p>".encode("big5"), "text/html").text


def test_source_override_wins_over_wrong_declaration():
    body = html("utf-8", TEXT).encode("gb18030")
    assert TEXT in decode_body(body, "text/html; charset=utf-8", override="gbk").text


def test_utf8_bom():
    assert decode_body("\ufeff<p>中文</p>".encode("utf-8")).text == "<p>中文</p>"


@pytest.mark.parametrize("name, codec", [("GB2312", "gb18030"), ("gbk", "gb18030"), ("x-gbk", "gb18030"), ("Big5", "big5hkscs"), ("UTF8", "utf-8"), ("nonsense", None)])
def test_codec_names_widen_to_supersets(name, codec):
    assert normalize_codec(name) == codec


def test_mojibake_ratio_flags_utf8_read_as_latin1():
    assert mojibake_ratio(TEXT.encode("utf-8").decode("latin-1")) > 0.1
    assert mojibake_ratio(TEXT) == 0
