"""A second repost generator, built apart from ``datasets.repost_variants`` so that a decision
tuned on the first one meets edits it has not seen.

What differs from the first generator, on purpose:

- each repost is a *recipe*: a chain of edit operators drawn per repost (the first generator
  emits a fixed list of six variants);
- reposts may be published *before* their original (a crawler meets them in any order);
- edits the first one never makes: paragraph reorders, trims from the top, teasers ending in a
  ``阅读全文`` stub, headlines taken from the lead, partial quotes (one or two paragraphs inside
  commentary), multi-story digests (a story of their own made of 3-5 other stories' leads);
- other furniture: datelines (``中新网12日电``), ``据XX报道``, bylines ``（记者 X Y）``, copyright
  and disclaimer lines, ads, share bars, app prompts, editor lines, a full HTML page around the
  body; other sites, names and synonym pairs than the first generator's.

Every function here is pure given its ``random.Random``; the sets that use real articles are in
``heldout_sets``.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from typing import Callable

SITES = ["光明网", "北青网", "红星新闻", "齐鲁晚报", "南方都市报", "新京报", "扬子晚报", "潇湘晨报", "封面新闻", "大河报", "钱江晚报", "极目新闻"]
PEOPLE = ["赵磊", "孙悦", "周敏", "吴昊", "郑佳", "冯晓", "韩雪", "曹阳", "蒋涛", "沈琳", "许诺", "邓超"]
ADS = ["品牌家电", "夏季新款女装", "进口奶粉", "理财课程", "新能源汽车", "英语网课"]
# Different pairs from the first generator's (表示/称, 目前/当前, 进行/开展, ...), replaced one
# way only, each with a chance per repost; no single characters, which would break longer words.
SYNONYMS = [("据悉", "据了解"), ("日前", "近日"), ("造成", "导致"), ("工作人员", "相关人员"), ("随即", "紧接着"),
            ("此外", "另外"), ("不过", "然而"), ("死亡", "遇难"), ("发现", "察觉"), ("要求", "提出"),
            ("迅速", "第一时间"), ("正在", "正"), ("记者", "笔者")]
TITLE_PREFIXES = ["[视频]", "转发：", "热议！", "刚刚，", "【图文】", "注意！", "关注｜"]
TITLE_SUFFIXES = ["|{site}", " - {site}", "——{site}", "（组图）", "(图)", "_{site}客户端"]

_SENTENCE_END = re.compile(r"(?<=[。！？!?])(?![”」』\"])|(?<=[。！？!?][”」』\"])")


def sentences(text: str) -> list[str]:
    """Sentences of a paragraph, each keeping its end mark and any closing quote after it."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def blocks(body: str) -> list[str]:
    """The body's paragraphs; a body written as one paragraph is cut into blocks of about three
    sentences, so operators on paragraphs (reorder, quote, trim) have something to work on."""
    paras = [p.strip() for p in re.split(r"\n+", body) if p.strip()]
    if len(paras) >= 3:
        return paras
    sents = [s for p in paras for s in sentences(p)]
    if len(sents) < 4:
        return paras
    return ["".join(sents[i : i + 3]) for i in range(0, len(sents), 3)]


class Draft:
    """A repost in the making: headline, paragraphs, furniture before and after the story, and
    whether the result is wrapped in an HTML page."""

    def __init__(self, title: str, paras: list[str]):
        self.title = title
        self.paras = list(paras)
        self.head: list[str] = []
        self.tail: list[str] = []
        self.html = False

    def render(self, site: str) -> tuple[str, str]:
        paras = [*self.head, *self.paras, *self.tail]
        if not self.html:
            return self.title, "\n".join(paras)
        body = "".join(f"<p>&emsp;&emsp;{p}</p>\n" for p in paras)
        page = (
            f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{self.title}_{site}</title>"
            "<style>.share{display:none}</style></head><body>"
            "<nav><a href='/'>首页</a> &gt; <a href='/news/'>新闻</a> &gt; 正文</nav>"
            f"<h1>{self.title}</h1><div class='info'>来源：{site}&nbsp;&nbsp;字号：大 中 小</div>"
            f"<div id='article'>\n{body}</div>"
            "<div class='share'>分享到：微信 微博 QQ空间</div>"
            "<footer>关于我们 | 联系方式 | 网站地图</footer><script>var _hmt=[];</script></body></html>"
        )
        return self.title, page


# ---- edit operators: each changes a draft in place ------------------------------------------------
def dateline(d: Draft, rng: random.Random, ctx: dict) -> None:
    """A news-agency or paper lead before the first paragraph, sometimes with a byline."""
    first = d.paras[0] if d.paras else ""
    lead = rng.choice([f"中新网{ctx['day']}日电 ", f"据{ctx['site']}报道，", f"{ctx['site']}讯 ", f"【{ctx['site']}】"])
    if rng.random() < 0.6:
        a, b = rng.sample(PEOPLE, 2)
        lead += rng.choice([f"（记者 {a} {b}）", f"（{ctx['site']}记者 {a}）", f"记者{a} 通讯员{b} "])
    if d.paras:
        d.paras[0] = lead + first
    else:
        d.paras = [lead]


def copyright_lines(d: Draft, rng: random.Random, ctx: dict) -> None:
    site = ctx["site"]
    lines = [f"版权声明：本文来源{site}，转载请注明出处。",
             "免责声明：本文仅代表作者个人观点，与本网无关。文中陈述文字和内容未经本站证实，请读者仅作参考，并请自行核实相关内容。",
             f"本文系{site}原创稿件，未经授权禁止转载，违者必究。"]
    d.tail.extend(rng.sample(lines, rng.randint(1, 2)))


def page_furniture(d: Draft, rng: random.Random, ctx: dict) -> None:
    """Ads, share bars, app prompts and editor lines around the story."""
    editor = rng.choice(PEOPLE)
    tail = [f"【广告】{rng.choice(ADS)}限时特惠，点击领取优惠券>>", "分享到：微信 朋友圈 新浪微博 复制链接",
            f"下载{ctx['site']}客户端，看更多精彩新闻", f"责任编辑：{editor}", f"（责编：{editor}）", "举报/反馈"]
    d.tail.extend(rng.sample(tail, rng.randint(2, 4)))
    if rng.random() < 0.4:
        d.head.append(rng.choice([f"打开{ctx['site']}APP，阅读体验更佳", "点击上方蓝字关注我们", "字号：大 中 小  打印"]))


def retag_title(d: Draft, rng: random.Random, ctx: dict) -> None:
    if rng.random() < 0.5:
        d.title = rng.choice(TITLE_PREFIXES) + d.title
    if rng.random() < 0.7:
        d.title += rng.choice(TITLE_SUFFIXES).format(site=ctx["site"])


def title_from_lead(d: Draft, rng: random.Random, ctx: dict) -> None:
    """A new headline cut from the lead sentence, as aggregators do."""
    lead = sentences(d.paras[0])[0] if d.paras and sentences(d.paras[0]) else d.title
    d.title = re.sub(r"[。！？!?]$", "", lead)[: rng.randint(18, 30)]


def reorder(d: Draft, rng: random.Random, ctx: dict) -> None:
    """Move paragraphs: the background paragraph brought forward, or two later ones swapped."""
    if len(d.paras) < 3:
        return
    if rng.random() < 0.5:
        d.paras.insert(1, d.paras.pop())
    else:
        i, j = rng.sample(range(1, len(d.paras)), 2)
        d.paras[i], d.paras[j] = d.paras[j], d.paras[i]


def trim_top(d: Draft, rng: random.Random, ctx: dict) -> None:
    """Drop the first paragraph (a repost that starts at the story's second paragraph)."""
    if len(d.paras) >= 4:
        d.paras = d.paras[1:]


def teaser(d: Draft, rng: random.Random, ctx: dict) -> None:
    """Keep the first 40-80% of the paragraphs (at least one) and end with a read-more stub."""
    if len(d.paras) >= 3:
        d.paras = d.paras[: max(1, round(len(d.paras) * rng.uniform(0.4, 0.8)))]
    d.tail.insert(0, rng.choice(["阅读全文>>", "展开全文", "点击查看更多", "未完，请点击下一页"]))


def drop_sentences(d: Draft, rng: random.Random, ctx: dict) -> None:
    """Remove one sentence from some paragraphs after the first."""
    for i in range(1, len(d.paras)):
        sents = sentences(d.paras[i])
        if len(sents) >= 2 and rng.random() < 0.5:
            del sents[rng.randrange(len(sents))]
            d.paras[i] = "".join(sents)


def synonyms(d: Draft, rng: random.Random, ctx: dict) -> None:
    chosen = [pair for pair in SYNONYMS if rng.random() < 0.6]
    for k, p in enumerate(d.paras):
        for a, b in chosen:
            p = p.replace(a, b)
        d.paras[k] = p


def html_page(d: Draft, rng: random.Random, ctx: dict) -> None:
    d.html = True


def spacing(d: Draft, rng: random.Random, ctx: dict) -> None:
    """Indents and blank lines of a different editor: full-width spaces, doubled line breaks."""
    d.paras = ["\u3000\u3000" + p + ("\n" if rng.random() < 0.5 else "") for p in d.paras]


OPERATORS: dict[str, Callable[[Draft, random.Random, dict], None]] = {
    "dateline": dateline, "copyright": copyright_lines, "furniture": page_furniture, "retag": retag_title,
    "title_from_lead": title_from_lead, "reorder": reorder, "trim_top": trim_top, "teaser": teaser,
    "drop_sentences": drop_sentences, "synonyms": synonyms, "html": html_page, "spacing": spacing,
}

# Recipes: the kinds of repost reported on. ``combo`` draws three operators at random.
RECIPES: dict[str, tuple[str, ...]] = {
    "dateline": ("dateline", "copyright"),
    "furniture": ("dateline", "copyright", "furniture", "retag"),
    "html_page": ("html", "retag", "furniture"),
    "reordered": ("reorder", "furniture"),
    "trim_top": ("trim_top", "dateline"),
    "teaser": ("teaser", "retag"),
    "sentences_dropped": ("drop_sentences", "copyright"),
    "synonyms": ("synonyms", "title_from_lead"),
    "spacing": ("spacing", "retag"),
}
# Order of application: edits of the story's text, then of its headline, then furniture around it,
# so a reorder never moves a dateline and a headline is never cut from a dateline.
_STAGE = {"reorder": 0, "trim_top": 0, "teaser": 0, "drop_sentences": 0, "synonyms": 0, "spacing": 0,
          "title_from_lead": 1, "retag": 2, "dateline": 2, "copyright": 2, "furniture": 2, "html": 2}
COMBO_POOL = ("dateline", "copyright", "furniture", "retag", "title_from_lead", "reorder", "trim_top",
              "teaser", "drop_sentences", "synonyms", "html", "spacing")


def make_repost(article: dict, kind: str, rng: random.Random, day: int) -> dict:
    """One repost of ``article`` ({title, content}) by recipe ``kind`` (a RECIPES key, ``combo``
    or ``partial_quote``). Returns {title, content, kind}; the caller sets id and time."""
    ctx = {"site": rng.choice(SITES), "day": day}
    if kind == "partial_quote":
        return partial_quote(article, rng, ctx["site"])
    steps = rng.sample(COMBO_POOL, 3) if kind == "combo" else RECIPES[kind]
    draft = Draft(article["title"], blocks(article["content"]))
    for name in sorted(steps, key=_STAGE.get):
        OPERATORS[name](draft, rng, ctx)
    title, content = draft.render(ctx["site"])
    return {"title": title, "content": content, "kind": kind}


def partial_quote(article: dict, rng: random.Random, site: str) -> dict:
    """Commentary around one or two consecutive paragraphs of the story: still the story (it is
    what the piece reports), but most of its text is not the original's."""
    paras = blocks(article["content"])
    start = rng.randrange(max(1, len(paras) - 1))
    quoted = paras[start : start + rng.randint(1, 2)]
    intro = rng.choice(["编者按：近日，一则消息在网上引发热议。", "最近，这条新闻刷屏了朋友圈。", "今天，小编带大家关注一件事。"])
    outro = rng.choice(["对此，不少网友留言表示关注，也有网友认为应当尽快查明情况。你怎么看？欢迎在评论区留言讨论。",
                        "事件进展如何，我们将持续关注。喜欢本文请点赞、转发，让更多人看到。"])
    body = "\n".join([intro, f"据{site}消息：", *(f"“{q}”" for q in quoted), outro])
    return {"title": rng.choice(["网友热议：", "关注！", ""]) + article["title"], "content": body, "kind": "partial_quote"}


def digest(articles: list[dict], rng: random.Random, when: datetime) -> dict:
    """One roundup made of the leads of 3-5 stories: a story of its own that must join none of
    them. Returns {title, content, kind}."""
    if not 3 <= len(articles) <= 5:
        raise ValueError(f"a digest takes 3-5 stories, not {len(articles)}")
    items = []
    for k, a in enumerate(articles, 1):
        lead = "".join(sentences(blocks(a["content"])[0])[:2])[:140] if a["content"].strip() else ""
        items.append(f"{k}. {a['title']}\n{lead}")
    title = rng.choice(["早报｜", "晚间要闻｜", "新闻早知道："]) + f"{when:%m月%d日}，{articles[0]['title'][:16]}等{len(articles)}条要闻"
    body = "\n".join([rng.choice(["今天有哪些新闻值得关注？一起来看。", "以下是今日要闻汇总。"]), *items, "以上内容综合自网络，如有疏漏请指正。"])
    return {"title": title, "content": body, "kind": "digest"}


def repost_times(when: datetime, n: int, rng: random.Random, before_hours: float = 36, after_hours: float = 72) -> list[datetime]:
    """Publish times of ``n`` reposts of a story first published at ``when``: some before it
    (a crawler may reach a repost first, or the 'original' may itself be a late copy)."""
    return [when + timedelta(hours=rng.uniform(-before_hours, after_hours)) for _ in range(n)]
