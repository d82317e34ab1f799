"""Text cleaning: the base of every later feature.

Everything here is a small pure function of a string. ``clean_title`` and ``clean_body`` give the
normalised text that the exact hash, SimHash, embedding and the confirmation checks all read, so two
reposts that differ only in markup, width, repost boilerplate or bracketed tags come out equal.
"""

from __future__ import annotations

import re
import unicodedata
import warnings

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning

_HTML_HINT = re.compile(r"<\s*(?:p|div|br|span|a|img|html|body|script|style|section|article|h[1-6]|li|ul|table|tr|td|strong|em|b|i|font|center|iframe|meta|!--)[\s>/]", re.I)
_DROP_TAGS = ("script", "style", "noscript", "iframe", "svg", "form", "button", "nav", "footer", "header", "aside", "select", "textarea")
_BLOCK_TAGS = ("p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "blockquote", "pre", "table", "ul", "ol", "dd", "dt")

# 【快讯】 〔关注〕 [视频] （图） 「独家」 ... at the start or end of a title, and any 【…】 anywhere.
_BRACKET_PAIRS = "【】〔〕［］[]〖〗「」『』《》()（）<>"
_LEADING_TAG = re.compile(r"^\s*(?:[【〔［\[〖「『(（<][^】〕］\]〗」』)）>]{1,12}[】〕］\]〗」』)）>]\s*)+")
_TRAILING_TAG = re.compile(r"(?:\s*[【〔［\[〖(（][^】〕］\]〗)）]{1,12}[】〕］\]〗)）])+\s*$")
_ANY_LENTICULAR = re.compile(r"【[^】]{1,12}】")
# 突发！ 重磅： 快讯| 独家丨 ... words a re-poster puts in front of a headline.
_HEADLINE_PREFIX = re.compile(
    r"^\s*(?:突发|重磅|快讯|独家|最新|紧急|热点|关注|滚动|速看|刚刚|注意|提醒|официально|breaking|update)"
    r"\s*[!！:：|丨｜·\-—]+\s*",
    re.I,
)
# Site names appended to titles: "…_新浪新闻", "… - 网易新闻", "…|凤凰网".
_TITLE_SITE_SUFFIX = re.compile(r"\s*(?:[_|｜丨]|\s-\s)\s*[^_|｜丨]{1,16}(?:网|新闻|报|频道|在线|日报|晚报|客户端|头条|贴吧|论坛|博客|News|news)\s*$")

# Whole lines that are repost boilerplate, not content.
_BOILERPLATE_LINE = re.compile(
    r"^\s*(?:"
    r"原标题[:：].*|"
    r"(?:文章|新闻)?来源[:：].{0,40}|"
    r"(?:责任|实习|值班)?编辑[:：].{0,30}|"
    r"(?:审核|审校|校对|监制|编审|终审|初审|复审|排版|制作|策划|出品|撰文|作者|文|图|摄影|视频|通讯员)[:：/].{0,30}|"
    r"(?:本报|新华社|中新社|央视网|人民网)?记者[\s\w、，,]{0,30}(?:报道|摄|采写)?\s*$|"
    r".{0,20}(?:点击|阅读)(?:阅读)?(?:全文|原文|更多).{0,20}|"
    r".{0,10}(?:分享到|分享至|转发到|扫一扫|扫码|长按识别|二维码|关注我们|关注公众号|微信公众号|点个在看|点赞).{0,30}|"
    r".{0,6}(?:广告|推广|赞助)(?:[:：].{0,40})?|"
    r"(?:声明|免责声明)[:：].*|"
    r".{0,6}(?:版权所有|未经授权|转载请注明|严禁转载|如有侵权).*|"
    r"(?:上一篇|下一篇|相关阅读|相关新闻|延伸阅读|推荐阅读|热门推荐)[:：]?.{0,60}|"
    r"(?:返回|回到)(?:顶部|首页|搜狐|网易).{0,10}|"
    r"【?(?:纠错|打印|关闭|收藏)】?(?:\s*【?(?:纠错|打印|关闭|收藏)】?)*"
    r")\s*$",
    re.I,
)
# "（记者 张三）" "（编辑 李四）" "（来源：新华社）" inside a line.
# Applied to the whole body at once, so it never reaches across a line break.
_INLINE_CREDIT = re.compile(r"[(（][^\S\n]*(?:记者|编辑|责任编辑|通讯员|实习生|来源|原标题)(?:[:：]|[^\S\n])[^()（）\n]{0,40}[)）]")
_LEADING_DATELINE_SOURCE = re.compile(r"^\s*(?:本报讯|本网讯|据[^，,。]{1,12}(?:报道|消息)[，,])\s*")
# Boilerplate lines are short; a longer line is content, whatever words it starts with.
BOILERPLATE_MAX_LINE = 200
_SPACES = re.compile(r"[ \t\u3000\xa0]+")
_INVISIBLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u2060\ufeff]")
_NEWLINES = re.compile(r"\n\s*\n+")


def looks_like_html(text: str) -> bool:
    return bool(_HTML_HINT.search(text[:20000]))


def html_to_text(html: str) -> str:
    """Visible text of an HTML fragment or page, one block element per line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        soup = BeautifulSoup(html, "lxml")
    for tag in soup(_DROP_TAGS):
        tag.decompose()
    for tag in soup.find_all(_BLOCK_TAGS):
        tag.insert_before("\n")
        tag.insert_after("\n")
    return soup.get_text()


_FULL_WIDTH = re.compile("[\uff01-\uff5e\u3000]")
# Characters NFKC leaves as they are: ASCII, CJK unified ideographs and common CJK/typographic
# punctuation. Text made only of these (after folding full-width forms) skips the NFKC pass.
_NFKC_UNSAFE = re.compile(
    "[^\x00-\x7f\u4e00-\u9fff\u3001-\u3003\u3008-\u3011\u3014-\u301b\u2018\u2019\u201c\u201d\u2014\u00b7]"
)


def _fold_full_width(match: re.Match) -> str:
    char = match.group()
    return " " if char == "\u3000" else chr(ord(char) - 0xFEE0)


# The full-width forms nearly every Chinese article is full of, folded by str.replace (C speed);
# the regex with its per-character callback folds the rare rest.
_COMMON_FULL_WIDTH = tuple((c, " " if c == "\u3000" else chr(ord(c) - 0xFEE0)) for c in "，：（）！？；％\u3000")


def nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, about twice as fast on typical Chinese news: full-width
    forms are folded first and the full normalisation runs only if other characters remain."""
    for wide, narrow in _COMMON_FULL_WIDTH:
        text = text.replace(wide, narrow)
    if _FULL_WIDTH.search(text):
        text = _FULL_WIDTH.sub(_fold_full_width, text)
    return unicodedata.normalize("NFKC", text) if _NFKC_UNSAFE.search(text) else text


# Escape sequences left as text by double-encoded JSON ("第一段\\n第二段"): crawled pages carry
# them by the hundred, and read as the word "n" they would outweigh every real word of the text.
_LITERAL_ESCAPE = re.compile(r"\\[nrt]")


def _unescape_whitespace(match: re.Match) -> str:
    return " " if match.group() == "\\t" else "\n"


def normalize(text: str) -> str:
    """NFKC (full width to half width, compatibility forms), literal \\n escapes as line breaks,
    lower case, unified spaces."""
    text = _INVISIBLE.sub("", nfkc(text))
    if "\\" in text:
        text = _LITERAL_ESCAPE.sub(_unescape_whitespace, text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _SPACES.sub(" ", text).lower()


def strip_title_tags(title: str) -> str:
    """Remove re-poster decorations from a headline: 【快讯】, 突发！, trailing site names."""
    previous = None
    while previous != title:
        previous = title
        title = _LEADING_TAG.sub("", title)
        title = _TRAILING_TAG.sub("", title)
        title = _HEADLINE_PREFIX.sub("", title)
        title = _TITLE_SITE_SUFFIX.sub("", title)
    return _ANY_LENTICULAR.sub("", title).strip()


def clean_title(title: str) -> str:
    if looks_like_html(title):
        title = html_to_text(title)
    text = normalize(title).replace("\n", " ")
    stripped = strip_title_tags(text)
    # A title that is nothing but a tag keeps its text rather than becoming empty.
    return (stripped or text).strip()


def clean_body(content: str) -> str:
    """Body text without markup and repost boilerplate, one paragraph per line."""
    if looks_like_html(content):
        content = html_to_text(content)
    text = _INLINE_CREDIT.sub("", normalize(content))
    lines = []
    for line in text.split("\n"):
        line = line.strip()
        if not line or (len(line) <= BOILERPLATE_MAX_LINE and _BOILERPLATE_LINE.match(line)):
            continue
        if line[0] in "本据":  # the only characters a dateline source starts with
            line = _LEADING_DATELINE_SOURCE.sub("", line)
        line = _ANY_LENTICULAR.sub("", line).strip() if len(line) <= 20 else line
        if line:
            lines.append(line)
    return "\n".join(lines)


_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def exact_form(text: str) -> str:
    """What the exact hash reads: cleaned text with every space and punctuation mark removed,
    so re-wrapped paragraphs or swapped full/half-width punctuation still hash equal."""
    return _NON_WORD.sub("", text)
