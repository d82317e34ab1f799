"""Text cleaning: the base of every later feature.

Everything here is a small pure function of a string. ``clean_title`` and ``clean_body`` give the
normalised text that the exact hash, SimHash, embedding and the confirmation checks all read, so two
reposts that differ only in markup, width, script (traditional or simplified characters), repost
boilerplate or bracketed tags come out equal.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from importlib import resources

from .html import has_closing_tags, html_to_text, is_whole_page, page_text

# Names what these functions make of a text. Exact keys, fingerprints and the cleaned text a store
# holds are all read from it, so it is part of the fingerprint layout a store records: a store filled
# by other cleaning would hold keys that the same text no longer gets. Raise it whenever a change
# gives text that was already cleaned a different clean form. 2: traditional characters folded to
# simplified; more repost furniture removed. 3: a whole saved page is read as its main content
# (indexer/html.py); figcaptions are lines of their own. 4: site furniture: the headlines listed under
# a related-reading header, and footer lines with registration, hotline or address numbers. 5: a page's
# comment section. 6: sites' own disclaimers, whatever the length of their sentences. 7: ads under
# their tag, font-size bars, 举报/反馈, a disclaimer's second sentence alone; headlines that are page
# chrome (点击上方蓝字关注我们) clean to nothing; stacked datelines, a lead that is furniture once its
# dateline is read off, a site name after —— in a headline. 8: a date in brackets at a headline's
# end (an edition's date) stays; a list item starts its own line in a hard-wrapped text; 点赞 is
# furniture only as a prompt. 9: a part (上, 下) or an exam paper (江苏卷) in brackets at a headline's
# end stays. 10: a headline of credit fields alone (来源:X 编辑:Y) cleans to nothing. 11: a byline
# glued to the lead without brackets (记者张三 通讯员李四 ...); page links (1 2 下一页); subscribe
# prompts (点击上方“X”关注我们), alone or glued to the lead. 12: a text that names a tag without
# closing any element is plain text; notices stop at their sentence and need their own words (a news
# sentence with 未经授权, 如有侵权 or 声明 in it is kept); a bare 【评论】 heads a commentary, not
# readers' comments; a byline name is never a role word; 通报消息 and 发布新闻消息 are no outlet's
# dateline; HTML entities in plain text are decoded; a headline's line breaks are one space;
# combining marks (Thai, Devanagari vowels) stay in the exact form. 13: a Chinese text with の (小清新の
# 生活) folds to simplified however short it is. 14: a headline that is a dateline and a byline with
# little after them is nothing. 16: a site's name after a hyphen glued to a Chinese headline (…-东方网);
# a digest's teaser of another story before the article's own headline is not its body. 17: a
# page's time stamp line (2019-12-19 16:33 来源:X) and the article's own headline opening its body
# are not its story; hard wraps are read at the width they were typeset (…… before NFKC); 凡本网注明…
# disclaimers and 全文请点击 stubs; a site's name ending in 资讯 after a headline (…_一点资讯). 18:
# 最新消息： before a headline is a tag. 19: of the body's first lines that are the article's own
# headline, the story follows the last (a page's <h1>, another story's teaser, then the headline again).
# 20: a date in brackets opening a headline names its edition and is kept, as one closing it is; the
# article's own headline in the body's first lines is where the story starts only when no more of the
# body comes before it than after it; a short page's main content is read as such.
CLEANING_VERSION = "clean20"

_VOID_TAG = re.compile(r"<\s*(?:br|img|hr)\b[^<>]*>|<!--", re.I)
_HTML_HINT = re.compile(r"<\s*(?:p|div|br|span|a|img|html|body|script|style|section|article|h[1-6]|li|ul|table|tr|td|strong|em|b|i|font|center|iframe|meta|!--)[\s>/]", re.I)

# 【快讯】 〔关注〕 [视频] （图） 「独家」 ... at the start or end of a title, and any 【…】 anywhere.
_OPENING_TAG = r"\s*[【〔［\[〖「『(（<][^】〕］\]〗」』)）>]{1,12}[】〕］\]〗」』)）>]\s*"
_LEADING_TAG = re.compile(f"^(?:{_OPENING_TAG})+")
_TRAILING_TAG = re.compile(r"(?:\s*[【〔［\[〖(（][^】〕］\]〗)）]{1,12}[】〕］\]〗)）])+\s*$")
_ANY_LENTICULAR = re.compile(r"【[^】]{1,12}】")
# 突发！ 重磅： 快讯| 独家丨 ... words a re-poster puts in front of a headline.
_HEADLINE_PREFIX = re.compile(
    r"^\s*(?:突发|重磅|快讯|独家|最新消息|最新|紧急|热点|关注|滚动|速看|刚刚|注意|提醒|официально|breaking|update)"
    r"\s*[!！:：|丨｜·\-—]+\s*",
    re.I,
)
# Site names appended to titles: "…_新浪新闻", "… - 网易新闻", "…|凤凰网", and "…-东方网" with the
# hyphen glued to a Chinese headline (not 新冠-19 or 2020-2021: the name after it is Chinese words).
_TITLE_SITE_SUFFIX = re.compile(
    r"\s*(?:(?:[_|｜丨]|\s-\s|——)\s*[^_|｜丨]{1,16}|(?<=[\u4e00-\u9fff…。！？）”.])-[\u4e00-\u9fff·]{1,16}?)"
    r"(?:网|新闻|资讯|报|频道|在线|日报|晚报|客户端|头条|贴吧|论坛|博客|News|news)\s*$")

# Repost furniture: what sites put around a story (leads, bylines, credits, disclaimers, app prompts,
# share bars, stubs) rather than the story itself. Two reposts of one story carry different furniture,
# so none of it may count as a difference. Every rule below is anchored to a whole short line, the
# start of a line (datelines) or its end (footers glued to the last paragraph): content sentences that
# merely use the same words are kept. The patterns read normalised text: simplified characters,
# half-width , : ( ) ! ? ; and lower case.

# A page's font-size bar: 字号:大 中 小, with the print and close links after it.
_FONT_SIZE_BAR = r"字号\s*[:：]?\s*(?:[大中小]\s*){2,3}(?:(?:打印|关闭|纠错|收藏|分享)\s*)*"
# Names in a byline: two to four characters each, separated by spaces or 、 (张三 李四、王五).
# Spaces only (never a line break): normalised text has no other blank. A name is never a role
# word: when names could also read the roles between them, a line of names and roles that then
# failed to match took exponential time to say so (4x per two names; hours at 190 characters).
_ROLE_AHEAD = r"(?!通讯员|实习生|记者|摄影)"
_NAMES = _ROLE_AHEAD + r"[\u4e00-\u9fff·]{2,4}(?:[ 、,]+" + _ROLE_AHEAD + r"[\u4e00-\u9fff·]{2,4}){0,5}"
_PAGE_DATE = r"(?:19|20)\d{2}\s*[年\-/.]\s*\d{1,2}\s*[月\-/.]\s*\d{1,2}\s*日?"
_PAGE_TIME = r"\d{1,2}\s*[:：]\s*\d{2}(?:\s*[:：]\s*\d{2})?"
_CREDIT_FIELD = r"(?:来源|稿源|作者|(?:责任)?编辑|责编|浏览|阅读|点击|字号)\s*[:：|丨]"
# Bullets and rules that decorate furniture lines (◎文/记者 张三, □首席记者 李四, ▲图片来源:...).
_LINE_DECORATION = re.compile(r"^[•▪►▶◦‣◎□■▲▼△▽●○◆◇★☆※→←↑↓▎▍|丨>\-—_=~*#·\s]+")
# Headers of the other stories a site lists under an article (相关阅读, 热门推荐, 猜你喜欢...): the
# headlines below one are furniture too (``_listed_headline``).
_LIST_HEADERS = (
    r"(?:相关|延伸|推荐|更多|热门|热点|精彩|今日|往期|热文|最新)(?:阅读|新闻|文章|报道|推荐|回顾|精彩|排行)|"
    r"(?:点击|阅读|热门)排行|排行榜|猜你喜欢|为(?:你|您)推荐|大家都在看|你可能(?:感兴趣|还喜欢)"
)
_LIST_HEADER = re.compile(r"^\s*[【\[]?(?:" + _LIST_HEADERS + r")[】\]]?\s*[:：>]*\s*$")
# A page's comment section: 网友评论, 热门评论 (12), 最新跟帖 ... on a line of its own. Readers' comments
# (名字：说的话 123赞) are not the story, and their like counts differ from copy to copy: read as
# figures substituted, they made the templated-report guard refuse 15 of 275 copies on a probe.
# The section runs to the next long line (BOILERPLATE_MAX_LINE) or the end.
# A bare 【评论】 heads a commentary, the story's own section, unless readers' comments follow it
# (``_opens_comments``); a word of readers (网友, 热门...), a list (评论区) or a count (评论(12))
# makes the heading a comment section's.
_COMMENTS_HEADER = re.compile(
    r"^\s*[【\[]?(?:(?:网友|热门|最新|精彩|全部|读者|用户)(?:评论|留言|跟帖)(?:区|列表)?|(?:评论|留言|跟帖)(?:区|列表)"
    r"|(?P<bare>评论|留言|跟帖))[】\]]?\s*[:：>]*\s*(?P<count>[(（]\d+[)）]|\d+条)?\s*$"
)
# One listed headline: short, not ending in a full stop (a sentence ends the list: the story may go
# on below it). A headline may hold one inside: 20岁之后，爸妈就会变温柔。_父母.
_LIST_NUMBER = re.compile(r"^(?:\d{1,2}|[a-z])\s*[.、)]\s*|^\[\d{1,2}\]\s*")
LISTED_HEADLINE_MAX = 60
# Hard wraps (``unwrapped``): the narrowest wrap width read as one, and the line ends that end a
# paragraph whatever the line's length.
WRAP_MIN_WIDTH = 15
_WRAP_STOPS = re.compile(r"[。!?;:…”\"』」)]$")
# A list item's number opening a line (1. 1、 一、 ① [1]), not a figure a wrap cut (1.5亿).
_ITEM_START = re.compile(r"^(?:\d{1,2}\s*(?:\.(?!\d)|[、)])|[一二三四五六七八九十]{1,3}、|[①-⑳]|[\[(]\d{1,2}[\])])")
# Whole lines that are furniture, not content. A prompt or stub rule stops short of a full stop: a line
# that ends a sentence is the story's (网友纷纷点赞。 更多精彩的节目将在下周播出。); share prompts end
# with ! often enough (喜欢就点个赞哦!) to let them.
_BOILERPLATE_LINE = re.compile(
    r"^\s*(?:"
    # Original title: a line of its own, a headline without a full stop. A line with sentences has
    # the story glued to it and keeps it.
    r"原标题[:：](?:[^。]{0,100}|[^。]{0,40}。)|"
    # Source and picture credits: 来源:新华社, 来源|中新经纬, 题图来源:视觉中国, 视频来自:百度贴吧
    r"(?:文章|新闻|稿件|题图|图片|配图|视频|内容|信息)?(?:来源|来自|出处|稿源)\s*[:：|丨].{0,40}|"
    r"(?:图片|配图|题图)?(?:来源于?|来自)网络.{0,20}|"
    # Editors and staff: 责任编辑:X, 责编:X, 编辑 | X, 审核:X, 文/X, 图/X, 编辑邮箱:x@y
    r"(?:责任|实习|值班|执行|特约)?(?:编辑|责编|主编|编审|美编)\s*(?:邮箱)?\s*[:：/|丨](?:[^。!?]{0,30}|[^。!?,，]{0,12}[。!])|"
    # A page's time stamp, alone or with credit fields (2019-12-19 16:33 来源:中国新闻网, 发布时间:
    # 2019年12月19日 来源:红网); a date alone, unlabelled, may close a notice, and stays.
    r"(?:(?:发布|更新|发表|录入)?(?:时间|日期)\s*[:：]\s*" + _PAGE_DATE + r"\s*(?:" + _PAGE_TIME + r")?|"
    + _PAGE_DATE + r"\s*" + _PAGE_TIME + r"|" + _PAGE_DATE + r"(?=\s*" + _CREDIT_FIELD + r"))"
    r"\s*(?:" + _CREDIT_FIELD + r".{0,60})?|"
    # (记者: is not here: interviews write their questions so.)
    r"(?:审核|审校|校对|监制|编审|终审|初审|复审|排版|制作|策划|出品|撰文|作者|文|图|摄影|视频|通讯员|统筹|投稿邮箱)\s*[:：/|丨].{0,60}|"
    # Bylines: 记者 张三 报道, 上游新闻见习记者 时婷婷, 本报记者 张三 李四 通讯员 王五
    r"(?:本报|新华社|中新社|央视网|人民网)?记者[\s\w、，,]{0,30}(?:报道|摄|采写)?\s*$|"
    r".{0,12}?(?:首席|见习|实习|特约|驻站)?(?:记者|通讯员)\s*[:：]?\s*" + _NAMES
    + r"(?:\s*(?:通讯员|实习生|记者|摄影)\s*" + _NAMES + r")*\s*(?:报道|摄影?|采写|文/图|整理)?|"
    # Read-more and expand stubs: 点击阅读全文, 展开全文, 继续阅读, 查看更多, 更多精彩:
    r".{0,20}(?:点击|阅读)[「“\"]?(?:阅读)?(?:全文|原文|更多)[」”\"]?[^。!?]{0,20}!*|"
    r".{0,6}(?:展开全文|展开全部|继续阅读|查看全文|查看更多|加载更多|更多精彩|精彩推荐|点击查看|全文请点击)[^。!?]{0,20}|"
    # Subscribe prompts over a public account's post: 点击上方“大虞发布”可以订阅哦, 点击上方蓝色字体,关注我们
    r"点击上方[^。\n]{0,40}|"
    # Share bars, follow prompts and forum chrome
    # 点赞 as a prompt (点赞 转发, 欢迎点赞), not as news (百姓点赞: a digest item's headline)
    r".{0,10}(?:分享到|分享至|转发到|扫一扫|扫码|长按识别|二维码|关注我们|关注公众号|微信公众号|点个在看"
    r"|(?<![\u4e00-\u9fff])点赞|(?:请|记得|欢迎|别忘了?|顺手|随手|动动手指|喜欢就|不错就|帮忙|转发|分享|收藏)[^。]{0,4}点赞)[^。]{0,30}|"
    # (? is an emoji an encoding lost: ?关注??转发??)
    r"\?*(?:(?:关注|分享|转发|收藏|点赞|在看|评论|举报|反馈|微信|微博|朋友圈|qq空间|qq|打印|纠错)[\s+|/、,·?]*){1,10}|"
    # A page's font-size bar, alone or after the byline or date line it ends (记者 X 字号:大 中 小 打印)
    r"(?:[^。!?]{0,40}\s)?" + _FONT_SIZE_BAR + r"|"
    r"(?:下载附件|请点击输入图片描述|您需要\s*登录|马上注册).{0,60}|"
    # App prompts: 下载XX客户端, 打开app阅读, 客户端中查看
    r"[^。!?]{0,12}(?:下载|打开|前往|前去|安装|进入)[^。!?]{0,12}(?:客户端|app|应用)[^。!?]{0,20}|"
    r"[^。!?]{0,16}(?:客户端|app)\s*(?:中|内|里)?\s*(?:查看|阅读|观看|打开)[^。!?]{0,16}|"
    # Ads: 广告:…, and an advertisement under its tag ([广告]夏季新款限时特惠,点击领取优惠券>>)
    r".{0,6}(?:广告|推广|赞助)(?:[:：].{0,40})?|"
    r"[【\[(]\s*(?:广告|推广|赞助)\s*[】\])][^。\n]{0,60}|"
    # Copyright and disclaimers: 版权声明:本文来源…, 免责声明:…, 本文仅代表作者观点…
    r"(?:免责声明|版权声明)(?:[:：].*)?|(?:声明|特别声明)(?:[:：](?=[^\n]*?(?:转载|版权|侵权|删除|观点|立场|仅供|参考|信息存储|上传|网络|原创|文责|本文|以上内容|本站|本平台))[^\n]*|[:：])?|"
    r"[^。\n]{0,6}(?:版权所有|未经(?:授权|许可|允许)[^。\n]{0,6}(?:不得|禁止|严禁|请勿)(?:任何)?[^。\n]{0,4}(?:转载|复制|摘编|镜像|转发|使用本)|版权归属[:：]|转载请注明|严禁转载|版权归[^。\n]{0,12}所有|版权归(?:属于?)?(?:原作者|原创作者|作者|本站|本网|原出处)|版权属于|all rights reserved|copyright\s*(?:©|\(c\)|\d{4}|by\b)|©).*|"
    r"[^。\n,，]{0,12}(?:如有|若有|如涉及)(?:版权|侵权)[^\n]*|"  # opening the line: a notice
    r"[^。\n]{0,20}(?:如有|若有|如涉及)(?:版权|侵权)(?=[^\n]*?(?:删除|联系|告知|处理|私信|留言|谅解|沟通))[^\n]*|"
    r"(?:本文|文章|该文|此文|以上内容|作品)[^。]{0,30}(?:仅代表|不代表|并不代表)[^。]{0,20}(?:观点|立场).*|"
    r"[^。\n]{0,40}(?:请|敬请)(?:联系|告知|通知)(?:我们|本站|本网|小编|管理员|平台)[^。]{0,12}删除.{0,20}|"
    r"[^。\n,，]{0,12}(?:联系|告知|通知)(?:我们|本站|本网|小编|管理员|平台)[^。,，]{0,12}删除[^。\n]{0,6}|"
    r"[^。\n]{0,40}(?:侵权|版权)[^。\n]{0,20}(?:联系|告知|通知)(?:我们|本站|本网|小编|管理员|平台)[^。]{0,12}删除.{0,20}|"
    # A site's own disclaimer, however long its sentences: it opens by naming the text, the site or
    # the law and speaks of reposting, copyright or removal (本文转载仅仅是出于传播信息的需要,并不意味着
    # 代表本网站观点…; 依据《信息网络传播权保护条例》…如有侵权…删除; 注:本站稿件未经许可不得转载;
    # 凡本网注明“来源:xxx(非本网)”的作品,均转载自其它媒体…); or an
    # outlet's 原创 line forbidding reposts (太仓日报原创文章,未经授权不得转载).
    r"(?:注|声明|特别提示)?[:：]?\s*(?:本文(?:转载|由|出自|来源|经由|系|未经)|本站(?!记者)|本网站|本平台|此稿|本稿|凡本[网站]"
    r"|(?:依据|根据)《信息网络传播权保护条例》)"
    r"(?=[^\n]*?(?:转载|侵权|版权|(?:如需|请)[^\n。]{0,8}删除))[^\n]{0,200}|"
    r"[^\n。]{0,16}原创[^\n。]{0,16}(?:严禁|禁止|不得|谢绝)(?:任何)?(?:转载|复制)[^\n]{0,6}|"
    # ... and the second sentence of the common 免责声明, on a line of its own (其原创性以及文中陈述文字和
    # 内容未经本站证实,…,请读者仅作参考,并请自行核实相关内容。)
    r"(?:其原创性以及)?文中陈述文字和内容未经本站证实[^\n]{0,160}|[^\n。]{0,30}请读者仅作参考[^\n]{0,40}|"
    # Comment rules and feed notes under every page of a site (华声在线提醒您:请理性评论、文明发言,勿发布…;
    # 您可以在客户端借助于支持rss的聚合工具软件…): shared by every article of the site, they made two
    # readers' complaints "copies of one report" (ccf2019_inews).
    r"[^\n。]{0,20}请[您你]?(?:理性评论|文明发言|文明评论)[^\n]{0,160}|[^\n。]{0,20}(?:理性评论|文明发言|文明评论)[^\n。]{0,160}|"
    r"[^\n。]{0,30}支持rss[^\n]{0,80}|"
    # Site footers: registration, report and hotline numbers, postcodes. Never a line with a full stop:
    # 记者拨打了该公司的举报电话,无人接听。 is the story's.
    r"[^。]{0,80}?(?:icp备|icp证|公网安备|网安备|经营许可证|许可证编号|违法和不良信息|举报(?:电话|邮箱|热线|中心)|"
    r"(?:新闻|广告|投稿|报料|爆料|服务|读者|发行)热线|邮编|邮政编码)[^。]*|"
    # Navigation and end marks
    r"(?:上一篇|下一篇|上一条|下一条|" + _LIST_HEADERS + r")[:：]?[^。]{0,60}|"
    r"(?:返回|回到)(?:顶部|首页|搜狐|网易|文章首页).{0,10}|"
    # page links: 下一页, 1 2 下一页, 未完,请点击下一页
    r"(?:未完(?:待续)?[,，]?\s*)?(?:请)?(?:点击)?(?:进入)?[\[\]\d\s]*(?:上一页|下一页)(?:[\[\]\d\s]|上一页|下一页)*|"
    r"【?(?:纠错|打印|关闭|收藏)】?(?:\s*【?(?:纠错|打印|关闭|收藏)】?)*|"
    r"(?:end|完|全文完|\(完\)|【完】)[\s\-—_=~*]*"
    r")\s*$",
    re.I,
)
# "（记者 张三）" "（编辑 李四）" "（来源：新华社）" "(责编:谷妍)" "（图片来源：视觉中国）" inside a line.
_INLINE_CREDIT = re.compile(
    r"[(（][^\S\n]*(?:"
    r"(?:记者|编辑|责任编辑|责编|通讯员|实习生|来源|原标题|摄影|供图)(?:[:：/]|[^\S\n])[^()（）\n]{0,40}|"
    r"[^()（）\n]{1,16}记者[^\S\n]*" + _NAMES + r"(?:[^\S\n]*(?:通讯员|实习生|记者|摄影)[^\S\n]*" + _NAMES + r")*|"
    r"(?:图片|配图|题图|视频|图)(?:来源|来自|由|[:：/])[^()（）\n]{0,30}|"
    r"(?:资料图片?|资料照片|网络图片|图片来自网络|图片来源于?网络|视频截图|网络配图|图源网络|受访者供图|图文无关)"
    r")[^\S\n]*[)）]"
)
# ``_NAMES`` without the comma: in a lead, what follows a comma is the story (李四 近日,…).
_BYLINE_NAMES = _ROLE_AHEAD + r"[\u4e00-\u9fff·]{2,4}(?:[ 、]+" + _ROLE_AHEAD + r"[\u4e00-\u9fff·]{2,4}){0,5}"
_LEAD_BYLINE = (
    r"(?:本报|新华社|中新社)?(?:首席|见习|实习|特约|驻站|全媒体)?(?:"
    r"记者\s*" + _BYLINE_NAMES + r"\s+(?:(?:通讯员|实习生|记者)\s*" + _BYLINE_NAMES + r"\s+)+|"
    r"记者\s+" + _BYLINE_NAMES + r"\s+)(?:报道[:：]?\s*)?(?=\S)"
)
# Leads in front of a story: 中新网12日电, 新华社北京3月5日电(记者 X), 东方网 3 月 5 日消息:, 本报讯,
# 龙虎网讯, 据英国《每日邮报》5日报道, 新华社消息, — and a 【source tag】 before them. 电, 讯 and 消息
# must end a word (电话, 讯问 and 消息称 are content), and the date must be there for unknown outlets.
_LEADING_DATELINE_SOURCE = re.compile(
    r"^\s*(?:【[^】\n]{1,40}】\s*)?(?:"
    r"本报讯|本网讯|本台讯|"
    r"据[^，,。\n]{0,20}(?:报道|消息)[，,]|"
    r"[\w·.\-]{1,24}?\s*(?:\([\w·]{1,8}\))?\s*(?:(?:\d{4}\s*年\s*)?\d{1,2}\s*月\s*)?\d{1,2}\s*日\s*(?:电|讯|消息)(?=[\s,:(]|$)|"
    # (not a verb's: 警方通报消息, 市政府发布新闻消息 open the story)
    r"[\w·\-]{1,16}?(?:网|(?<![通公汇举情预警简])报|社|台|在线|(?<!发布)新闻|头条|客户端)(?:讯|消息)(?=[\s,:(]|$)"
    r")[\s,:]*(?:\([^()\n]{1,30}\)\s*)?|"
    # a byline glued to the lead without brackets, told by its spaces or by a second role (记者张三
    # 通讯员李四 ..., 本报记者 张三 ...): a name's last character and the story's first are never
    # told apart without them (记者 刘广超 通讯员 杜聪聪交警拦下 stays)
    r"^\s*" + _LEAD_BYLINE + r"|"
    # a subscribe prompt glued to the lead: 点击上方“海外安全体系”关注我们近日,…
    r"^\s*点击上方[^。\n]{0,30}?(?:关注(?:我们|俺)?|订阅哦?)[!?。,↑\s]*(?=\S)|"
    # or a tag alone: 【快讯】, 【独家】 in front of the lead
    r"^\s*【[^】\n]{1,40}】\s*"
)
_DATELINE_HINT = re.compile(r"^\s*(?:【|本|据|记者|点击上方|.{0,40}?(?:讯|电|消息))")
# Footers glued to the end of a paragraph: sohu's 返回搜狐,查看更多 责任编辑:, (责任编辑:X), and a
# photo credit after its caption (…开业。 记者 程凌润 摄).
_TRAILING_FURNITURE = re.compile(
    r"\s*(?:"
    r"返回搜狐[,，]?\s*查看更多.{0,30}|"
    r"(?<=[。!?！？\s])(?:此稿|本稿)[^。\n]{0,80}(?:严禁|禁止|不得)(?:任何)?转载。?|"
    r"[(（【\[]?(?:责任编辑|责编)[:：][^()（）【】\[\]\n]{0,20}[)）】\]]?|"
    r"(?:首席|见习|实习|特约)?记者\s*" + _NAMES + r"\s*摄"
    r")\s*$"
)
# 来源:新华社 after the last sentence of the story.
_TRAILING_SOURCE = re.compile(r"(?<=[。!?”\"])\s*(?:来源|稿源)[:：]\s*[^,，。()（）\n]{1,20}\s*$")
# Datelines are read in the story's first lines only (a subtitle or tag line may come first): further
# down, 据报道, is the story's own attribution.
LEAD_LINES = 2
# Leads read off one line at most: 据X报道, Y讯 and a Z日电 stacked by reposts of reposts.
MAX_STACKED_DATELINES = 3
# Boilerplate lines are short; a longer line is content, whatever words it starts with.
BOILERPLATE_MAX_LINE = 200
_SPACES = re.compile(r"[ \t\u3000\xa0]+")
_INVISIBLE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b-\u200f\u2060\ufeff]")


def looks_like_html(text: str) -> bool:
    """A tag of a story's markup near the start, and elements closed (``has_closing_tags``) or a
    line break or image tag, which stand alone: not a plain text that names a tag."""
    head = text[:20000]
    first = _HTML_HINT.search(head)
    return first is not None and (has_closing_tags(head) or _VOID_TAG.search(head) is not None
                                  or _HTML_HINT.search(head, first.end()) is not None  # two tags
                                  or head.lstrip().startswith("<"))  # </p> is optional: <p>一段<p>二段


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
    text = _full_width_folded(text)
    return unicodedata.normalize("NFKC", text) if _NFKC_UNSAFE.search(text) else text


def _full_width_folded(text: str) -> str:
    """``text`` with full-width forms as their ASCII: one character for one, as NFKC folds them."""
    for wide, narrow in _COMMON_FULL_WIDTH:
        text = text.replace(wide, narrow)
    return _FULL_WIDTH.sub(_fold_full_width, text) if _FULL_WIDTH.search(text) else text


# Escape sequences left as text by double-encoded JSON ("第一段\\n第二段"): crawled pages carry
# them by the hundred, and read as the word "n" they would outweigh every real word of the text.
_LITERAL_ESCAPE = re.compile(r"\\[nrt]")


def _unescape_whitespace(match: re.Match) -> str:
    return " " if match.group() == "\\t" else "\n"


# ---- script folding ----------------------------------------------------------------------------------
# Hong Kong, Taiwan and overseas sites repost mainland news in traditional characters. Folded to
# simplified, such a copy gives the same exact key, SimHash and shingles as its original.
#
# The fold is OpenCC's s2t, then tw2s, then hk2s. s2t first turns any simplified part of a mixed text
# to traditional, so what comes out does not depend on which parts were simplified already; tw2s and
# hk2s then read the regional forms of each side (Taiwan's 著 for 着, Hong Kong's 衞 for 卫) that the
# plain t2s keeps. Measured on 3,258 ccf2019_inews articles (title and first 3,000 characters), each
# converted with s2t, s2tw and s2hk: of the 251 that hold traditional characters themselves, every s2t
# and s2hk copy folds to the same text as the article and 242 of the s2tw copies do; of the 3,007
# written in simplified throughout, 96.6% (s2t, s2hk) and 95.9% (s2tw) do. The rest differ in a
# character or two where s2t corrects a simplified word (想象 -> 想像, 好象 -> 好像) that no fold can
# tell from the correct one. (In bench/featurize.py --script-folding, 31 of 1,000 s2t copies keep another
# content key; 25 of those have a SimHash within 3 bits of the original's.)
# Text without any character the fold changes on its own is left as it is, unconverted: that is the
# simplified news nearly all of the stream is, and it costs one regex scan instead of three conversions.
# It is also safer than converting: the t2s-family converters are not the identity on simplified text
# (tw2s gives 什么 -> 什幺, t2s gives 打坏 -> 打坯).
# Japanese and Korean text is never folded: its kanji/hanja are not traditional Chinese, and the
# converters would write 访问 for 訪問 and 东京 for 東京, forms no Japanese text uses.
_FOLD_CONFIGS = ("s2t", "tw2s", "hk2s")
# Every ideograph block OpenCC's dictionaries reach (CJK ext. A, unified, compatibility, ext. B-F and
# the compatibility supplement).
_IDEOGRAPH_RANGES = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F))
# Hiragana (Japanese grammar is written in it) and hangul. Katakana alone is not counted: Chinese
# news writes Japanese brand and person names in it (「ユニクロ」).
_HIRAGANA_OR_HANGUL = re.compile("[\u3040-\u309f\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
_IDEOGRAPH = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ASTRAL_IDEOGRAPH = re.compile("[\U00020000-\U0002fa1f]")


class _ScriptFolder:
    """The converters and the set of characters that make a text worth converting."""

    def __init__(self) -> None:
        try:
            import opencc
        except ImportError as exc:  # a dependency of the package; a clear message if it is missing
            raise ImportError("script folding needs the opencc package (pip install opencc)") from exc
        self._converters = tuple(opencc.OpenCC(config) for config in _FOLD_CONFIGS)
        ideographs = [chr(c) for low, high in _IDEOGRAPH_RANGES for c in range(low, high + 1)]
        # One conversion of all ideographs, one per line: a line break ends every dictionary match,
        # so each comes back as the fold maps it alone.
        folded = self.convert("\n".join(ideographs)).split("\n")
        if len(folded) != len(ideographs):
            raise RuntimeError("opencc changed the line count of a one-ideograph-per-line text")
        changed = sorted(c for c, f in zip(ideographs, folded) if f != c)
        self.changed = frozenset(changed)
        # re matches a class of BMP characters by bitmap (2.5 us per 1,000 characters); the astral
        # ones are checked as a set, and only in text that has an astral ideograph at all.
        self._changed_bmp = re.compile("[" + "".join(c for c in changed if c <= "\uffff") + "]")
        self._changed_astral = frozenset(c for c in changed if c > "\uffff")

    def convert(self, text: str) -> str:
        for converter in self._converters:
            text = converter.convert(text)
        return text

    def needs_folding(self, text: str) -> bool:
        return self._changed_bmp.search(text) is not None or (
            _ASTRAL_IDEOGRAPH.search(text) is not None and not self._changed_astral.isdisjoint(text))


@functools.cache
def _folder() -> _ScriptFolder:
    return _ScriptFolder()


def is_japanese_or_korean(text: str) -> bool:
    """Hiragana or hangul other than の make up one in twenty of the text's script characters or
    more: Japanese and Korean sentences are far above that, even kanji-heavy Japanese headlines
    (首相、東京で会見). Chinese writes の for 的 in headlines (小清新の生活, 台湾の旅行攻略), so a
    Chinese text with it stays Chinese, however short: its traditional copy folds like the rest."""
    letters = sum(ch != "の" for ch in _HIRAGANA_OR_HANGUL.findall(text))
    return letters > 0 and letters * 20 >= len(_IDEOGRAPH.findall(text))


def fold_script(text: str) -> str:
    """Traditional Chinese characters folded to simplified (OpenCC s2t, tw2s, hk2s); text with no
    character the fold changes, and Japanese or Korean text, come back unchanged."""
    folder = _folder()
    if not folder.needs_folding(text) or (_HIRAGANA_OR_HANGUL.search(text) and is_japanese_or_korean(text)):
        return text
    return folder.convert(text)


# Taiwan and Hong Kong write some mainland words as other words (软件 -> 軟體 -> 软体, 项目 -> 专案,
# 网络 -> 网路), and a Taiwan site converting mainland news with OpenCC's s2twp changes them all. The
# fold above leaves them as they are: a word-level fold on every text would rewrite mainland text too
# (通讯员 holds the Taiwan word 通讯, 尼日 is a prefix of 尼日利亚) and break the furniture patterns.
# So the groups (indexer/data/regional_phrases.txt, from OpenCC's TWPhrases and HKPhrases, made by
# scripts/regional_phrases.py) are read only where two texts are compared word for word: a word
# substituted for its regional synonym is a rewording, not another name.
@functools.cache
def _regional_words() -> tuple[re.Pattern, dict[str, str]]:
    canonical = {}
    for line in (resources.files("indexer") / "data" / "regional_phrases.txt").read_text("utf-8").splitlines():
        first, *others = line.split("\t")
        canonical.update((word, first) for word in others)
    # Longest first: re takes the first alternative that matches at a position.
    return re.compile("|".join(map(re.escape, sorted(canonical, key=len, reverse=True)))), canonical


def fold_regional_words(text: str) -> str:
    """``text`` with each Taiwan or Hong Kong word (in simplified characters) and each mainland
    synonym of it written as one word of its group: 软体 and 软件 both as 软件."""
    pattern, canonical = _regional_words()
    return pattern.sub(lambda m: canonical[m.group()], text)


_ENTITY = re.compile(r"&(?:[a-z]{2,8}|#\d{2,6}|#x[0-9a-f]{2,5});", re.I)


def normalize(text: str) -> str:
    """NFKC (full width to half width, compatibility forms), traditional characters folded to
    simplified, literal \\n escapes as line breaks, lower case, unified spaces."""
    if "&" in text:  # &ldquo; &nbsp; &#8220; written into plain text (markup is parsed before); not a URL's &sect=2
        text = _ENTITY.sub(lambda m: html.unescape(m.group()), text)
    text = _line_breaks_unified(fold_script(_INVISIBLE.sub("", nfkc(text))))
    return _SPACES.sub(" ", text).lower()


def _line_breaks_unified(text: str) -> str:
    """``text`` with literal \\n escapes as line breaks and every line break a \\n."""
    if "\\" in text:
        text = _LITERAL_ESCAPE.sub(_unescape_whitespace, text)
    return text.replace("\r\n", "\n").replace("\r", "\n")


# A date in brackets at a headline's end names the day's edition of a bulletin, not a re-poster's
# tag: 北海便民信息（3月1日） and （2月27日） are two days' listings (a sohu tune false match, read as
# one exact headline once both dates were stripped).
_EDITION_DATE = re.compile(r"\d{1,2}月\d{1,2}[日号]|\d{1,2}[.·]\d{1,2}(?![\d.])|\d{4}[-./年]\d{1,2}|\d{8}")


# So does a part of a series or an exam's paper: 风险与技巧（上） and （下） are two articles, 高考数学试题
# (江苏卷) and (天津卷) two papers (a probe of one day's bodiless feed read them as one headline).
_PART_OR_PAPER = re.compile(r"[(（][上中下][)）]|[^()（）]{1,6}卷[^()（）]{0,3}[)）]")


def _strip_trailing_tag(match: re.Match) -> str:
    kept = _EDITION_DATE.search(match.group()) or _PART_OR_PAPER.search(match.group())
    return match.group() if kept else ""


# So does one at its start, （2月19日）申论范文：… against （2月15日）…: two days' pieces of a daily
# series (a fourth generator's never-read seed 667), not a dateline's 日电.
_ONE_LEADING_TAG = re.compile(_OPENING_TAG)


def _strip_leading_tags(match: re.Match) -> str:
    return "".join(tag.group() for tag in _ONE_LEADING_TAG.finditer(match.group())
                   if _EDITION_DATE.search(tag.group()) and "日电" not in tag.group())


def strip_title_tags(title: str) -> str:
    """Remove re-poster decorations from a headline: 【快讯】, 突发！, trailing site names."""
    previous = None
    while previous != title:
        previous = title
        title = _LEADING_TAG.sub(_strip_leading_tags, title)
        title = _TRAILING_TAG.sub(_strip_trailing_tag, title)
        title = _HEADLINE_PREFIX.sub("", title)
        title = _TITLE_SITE_SUFFIX.sub("", title)
    return _ANY_LENTICULAR.sub("", title).strip()


# Headlines that are page chrome, not a story's: a follow, share or app prompt, a font-size bar, a
# read-more stub, a share app's placeholder. An aggregator that cuts its headline from the first
# line of a copy whose first line is furniture by then writes one; read as headlines, they made
# unrelated stories "one headline" (a probe of chained reposts merged four stories under
# 点击上方蓝字关注我们). Such a title cleans to nothing, and the headline is read from the body.
_CHROME_TITLE = re.compile(
    r"(?:点击|戳)(?:上方|下方|顶部|右上角)?[^。!?]{0,8}(?:关注|订阅)[^。!?]{0,12}|关注(?:我们|公众号|本号)[^。!?]{0,8}|"
    r"(?:分享到|分享至|转发到)[:：]?\s*(?:(?:微信|朋友圈|新浪微博|腾讯微博|微博|qq空间|qq|豆瓣|复制链接)[\s、,|/]*)*|"
    + _FONT_SIZE_BAR + r"|"
    r"(?:阅读全文|展开全文|查看全文|点击查看(?:全文|更多|原文)?|查看更多)[>.…]*|"
    r"(?:下载|打开|安装)[^。!?]{0,12}(?:客户端|app)\s*[,，]?\s*(?:阅读体验更佳|体验更佳|看更多精彩新闻|看更多精彩|查看更多|阅读全文)?|"
    r"分享一篇文章|分享图片|分享视频|无标题|网页链接|"
    # credit fields alone (来源:央视新闻 编辑:芳芳 责编:岚枫 扫一扫, ▌来源:中国消防 ▌编辑:小美)
    r"(?:[▌▍▎|丨]?\s*(?:来源|稿源|转自|作者|(?:本期|责任)?编辑|责编|编审|审核|校对|监制|出品|摄影|图片)\s*[:：][^:：]{1,20}?\s*)+(?:扫一扫)?"
)

# An opening hook before it (热议!, 注意!): a re-poster's, not the page's.
_TITLE_HOOK = re.compile(r"^[^!?:。\s]{1,6}[!:]\s*")


# A headline a crawler cut from the story's lead furniture (中新网3日电 笔者X 通讯员Y 1、滴): read off
# its datelines and a byline after them as from a lead, less than this many word characters are
# left, and it is no headline. Two such headlines of different stories shared their furniture's
# grams (chain tune seed 570: title similarity 0.62, a semantic match). A headline with more left
# keeps its dateline: read off, it joined reports of one day that sohu2021 labels different events.
_TITLE_BYLINE = re.compile(
    r"^(?:本报)?(?:记者|笔者|作者|通讯员|实习生)\s*[\u4e00-\u9fff·]{2,4}"
    r"(?:\s+(?:记者|笔者|通讯员|实习生|摄影)\s*[\u4e00-\u9fff·]{2,4})*(?:\s+|$)"
)
MIN_TITLE_AFTER_LEAD = 5
_WORD_CHAR = re.compile(r"[^\W\d_]")


def _title_without_lead(title: str) -> str | None:
    """``title`` without the datelines it opens with and a byline after them; None if it opens with none."""
    text, read = title, 0
    while read < MAX_STACKED_DATELINES and (m := _LEADING_DATELINE_SOURCE.match(text)) and m.end() \
            and not m.group().lstrip().startswith("【"):  # a headline in brackets, or a tag strip_title_tags kept
        text, read = text[m.end():], read + 1
    return _TITLE_BYLINE.sub("", text, count=1).strip() if read else None


def clean_title(title: str) -> str:
    if looks_like_html(title):
        title = html_to_text(title)
    text = _SPACES.sub(" ", normalize(title).replace("\n", " "))  # a line break is one space, as typed
    stripped = strip_title_tags(text)
    bare = _LINE_DECORATION.sub("", stripped or text)
    if any(_CHROME_TITLE.fullmatch(t.strip(" !?:。")) for t in (bare, _TITLE_HOOK.sub("", bare))):
        return ""
    if _DATELINE_HINT.match(bare) and (story := _title_without_lead(bare)) is not None \
            and len(_WORD_CHAR.findall(story)) < MIN_TITLE_AFTER_LEAD:
        return ""
    # A title that is nothing but a tag keeps its text rather than becoming empty.
    return (stripped or text).strip()


# A reader's comment: a name and what they said (张三:说得好), or a like count or floor number.
_COMMENT_LINE = re.compile(r"^[^:：。!?]{1,20}[:：]\S|\d+\s*赞\s*$|^\d+\s*楼")


def _opens_comments(bare: str, source: list[str], at: int) -> bool:
    """``bare`` heads a comment section: a heading that says so (网友评论, 评论区, 评论(12)), or a
    bare 评论 heading whose next line is a reader's comment (else it heads a commentary)."""
    m = _COMMENTS_HEADER.match(bare)
    if m is None:
        return False
    if not m.group("bare") or m.group("count"):
        return True
    following = next((x.strip() for x in source[at + 1:] if x.strip()), "")
    return _COMMENT_LINE.search(following) is not None


def clean_body(content: str) -> str:
    """Body text without markup and repost furniture, one paragraph per line. A whole saved page is
    read as its main content (indexer/html.py page_text)."""
    if looks_like_html(content) or is_whole_page(content):
        content = page_text(content)
    lines, listing, comments = [], False, False
    # Hard wraps are read off the lines as they were typeset, before NFKC writes a character as
    # several (…… as ......, ⅲ as iii): wrapped lines with an ellipsis looked longer than the width,
    # and a text with a few was not unwrapped (a fourth generator's never-read seeds 328, 340: 2 /
    # 017年 read as a substituted figure). Full-width forms fold one for one; invisibles take no room.
    typeset = _line_breaks_unified(_INVISIBLE.sub("", _full_width_folded(content)))
    source = normalize("\n".join(unwrapped(typeset.split("\n")))).split("\n")
    for at, line in enumerate(source):
        text = line.strip()
        bare = _LINE_DECORATION.sub("", text)  # read by every line rule below
        if listing and bare and _listed_headline(text, bare):
            continue
        comments = _opens_comments(bare, source, at) or (comments and len(bare) <= BOILERPLATE_MAX_LINE)
        if comments:
            continue
        listing = bool(_LIST_HEADER.match(bare)) or (listing and not bare)
        line = _strip_furniture(text, bare, lead=len(lines) < LEAD_LINES)
        if line:
            lines.append(line)
    if lines:
        lines[-1] = _TRAILING_SOURCE.sub("", lines[-1])
    return "\n".join(lines)


def unwrapped(lines: list[str]) -> list[str]:
    """Lines of a hard-wrapped text (an e-paper or a PDF: every line of a paragraph cut at one
    width) joined back into paragraphs, so that a number or a name cut by the wrap (150 / 00元) is
    whole again and line rules read whole lines. A text is hard-wrapped when three or more of its
    lines have its most common length, of WRAP_MIN_WIDTH characters or more (±1: a full-width mark),
    and (almost) no line is longer: paragraphs of other texts run past any common length, while
    the short lines of a wrapped one are its furniture and paragraph ends. A line at the width joins
    the next unless it ends a sentence or either is a list item. Other texts come back as they were."""
    widths = [len(line.strip()) for line in lines if line.strip()]
    if len(widths) < 4:
        return lines
    width = max(set(widths), key=lambda w: (sum(abs(x - w) <= 1 for x in widths), w))
    at_width = sum(abs(x - width) <= 1 for x in widths)
    longer = sum(x > width + 1 for x in widths)
    if width < WRAP_MIN_WIDTH or at_width < 3 or longer > len(widths) // 20:
        return lines
    out: list[str] = []
    carry = ""  # the paragraph so far, edge spaces kept: a wrap at a space keeps its space
    for line in lines:
        text = line.strip()
        if not text:
            continue
        item = _ITEM_START.match(text)
        if item and carry:
            out.append(carry.strip())  # an item starts its own line: a digest cuts each lead at one width
            carry = ""
        carry += line
        if item or abs(len(text) - width) > 1 or _WRAP_STOPS.search(text):
            out.append(carry.strip())
            carry = ""
    if carry:
        out.append(carry.strip())
    return out


def _listed_headline(text: str, bare: str) -> bool:
    """Whether a line (``text``, stripped; ``bare``, without its decoration) under a related-reading
    header is one of the listed headlines: short, and marked as an item (a bullet, a number) or
    not ending in a full stop."""
    item = _LIST_NUMBER.sub("", bare)
    return 0 < len(item) <= LISTED_HEADLINE_MAX and (len(item) < len(text) or not item.rstrip("”’\"')）】」").endswith("。"))


def _strip_furniture(line: str, bare: str, lead: bool) -> str:
    """One line (stripped; ``bare``: without its decoration) without the furniture at its edges and
    its inline credits; empty if the whole line is furniture. ``lead``: the line opens the story,
    where a dateline may stand."""
    if not line or _all_furniture(line, bare):
        return ""
    if len(line) <= BOILERPLATE_MAX_LINE and ("返回搜狐" in line or "责" in line or "摄" in line or "转载" in line):
        line = _TRAILING_FURNITURE.sub("", line)
    # The dateline first: its byline in brackets is what tells where the lead ends. A repost of a
    # repost stacks them (据X报道,Y讯 (记者 Z) ...), and what follows may be furniture itself (a
    # copy whose story was cut away keeps its lead and a copyright line).
    if lead and _DATELINE_HINT.match(line):
        for _ in range(MAX_STACKED_DATELINES):
            stripped = _LEADING_DATELINE_SOURCE.sub("", line, count=1)
            if stripped == line:
                break
            line = stripped
            if _all_furniture(line, _LINE_DECORATION.sub("", line)):
                return ""
    if "(" in line:
        line = _INLINE_CREDIT.sub("", line)
    return _ANY_LENTICULAR.sub("", line).strip() if len(line) <= 20 else line


def _all_furniture(line: str, bare: str) -> bool:
    """Whether a whole line (``bare``: without its decoration) is furniture: short, and nothing
    but decoration or a boilerplate line."""
    return len(line) <= BOILERPLATE_MAX_LINE and (not bare or _BOILERPLATE_LINE.match(bare) is not None)


def _marks() -> str:
    """A character class body of the combining marks of the Basic Multilingual Plane (categories Mn
    and Mc), less variation selectors: the vowel signs of Thai, Devanagari and their kin are part of
    the word (กิน and กัน differ only in theirs), though ``\\W`` counts them as punctuation."""
    marks = (chr(c) for c in range(0x300, 0x10000) if unicodedata.category(chr(c)) in ("Mn", "Mc")
             and not 0xFE00 <= c <= 0xFE0F)
    return "".join(re.escape(m) for m in marks)


_NON_WORD = re.compile(r"[^\w" + _marks() + r"]+|_+", re.UNICODE)


# A digest that carries one story under another's teaser (【晚间播报】, another headline and its first
# lines, then 【this headline】 and this story): what comes before the article's own headline, set
# in its body as a line of its own, is another story's. A saved page's main content opens with the
# headline itself (its <h1>, tags and all: 〔热点〕…), which the title already holds. Read within the
# first lines only, and only for a headline long enough to be nobody else's.
OWN_HEADLINE_WITHIN_LINES = 4
OWN_HEADLINE_MIN_CHARS = 6


def story_under_own_headline(title: str, body: str) -> str:
    """A cleaned ``body`` from the line after the article's own (cleaned) headline ``title``, when
    that line opens the body or comes after another story's teaser, and at least as much follows
    as comes before it; else the whole body."""
    headline = exact_form(title)
    if len(headline) < OWN_HEADLINE_MIN_CHARS:
        return body
    lines = body.split("\n", OWN_HEADLINE_WITHIN_LINES + 1)
    # The last such line: a page's <h1> may open the body and a digest's heading of the same
    # headline follow another story's teaser (a fourth generator's never-read seed 599). A teaser is
    # shorter than the story after it; a headline repeated under a short story, before its page's
    # closing lines (特别声明…), has the story before it (a fifth generator's seeds 2, 10).
    for at in reversed(range(min(len(lines) - 1, OWN_HEADLINE_WITHIN_LINES + 1))):
        line = lines[at].strip()
        bare = line.strip("【】〔〕[]")
        # as it is, or a headline's tags (〔热点〕…) or a site's name inside brackets (【…-东方网】) less;
        # cleaned only when needed: clean_title is the dear part, and most lines are the story's
        if exact_form(line) == headline or exact_form(clean_title(line)) == headline \
                or bare != line and exact_form(clean_title(bare)) == headline:
            rest = "\n".join(lines[at + 1 :])  # the last part is the rest of the body, unsplit
            if len(rest) >= sum(map(len, lines[:at])):
                return rest
    return body


def exact_form(text: str) -> str:
    """What the exact hash reads: cleaned text with every space and punctuation mark removed,
    so re-wrapped paragraphs or swapped full/half-width punctuation still hash equal."""
    return _NON_WORD.sub("", text)
