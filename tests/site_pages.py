"""Articles saved as whole web pages by two sites with different templates, as users' own crawlers
store them: the story inside site navigation, a hot-list sidebar of the site's other headlines,
recommendations with their leads, readers' comments, a footer and scripts.

* ``portal_page``: a portal in the old div-soup style (no HTML5 elements), comments and a related list
  under the story, a ranking sidebar on the right.
* ``modern_page``: HTML5 (header/nav, main/article, aside, footer) with JSON-LD, a "猜你喜欢" block
  with other stories' leads and a 24-hour hot list.

Used by tests/test_pages.py and bench/pages_check.py.
"""

from __future__ import annotations

import json
import random
from html import escape

PORTAL_SITE = "南方新闻网"
MODERN_SITE = "华夏头条"

CHANNELS = ("首页", "新闻", "国内", "国际", "社会", "财经", "股票", "科技", "体育", "娱乐", "汽车", "房产", "教育", "健康", "旅游", "视频", "图片")
COMMENTS = (
    "这个消息太及时了，感谢小编分享！",
    "希望有关部门尽快处理，给大家一个交代。",
    "看完心情很复杂，不知道该说什么好。",
    "支持！这样的好事应该多报道报道。",
    "我就在附近，昨天确实看到很多人在排队。",
    "有没有知情人出来说说具体情况？",
    "说得很有道理，但是落实起来恐怕没那么容易。",
    "又是这种新闻，什么时候才能真正解决问题啊。",
    "转给家里人看看，大家都注意一点。",
    "评论区的朋友们怎么看？欢迎一起讨论。",
    "价格又涨了，老百姓的日子不好过啊。",
    "为一线的工作人员点赞，辛苦了！",
)


def _paragraphs(content: str) -> list[str]:
    return [line.strip() for line in content.splitlines() if line.strip()]


def _pick(seq, k: int, seed: str) -> list:
    return random.Random(seed).sample(list(seq), min(k, len(seq)))


def _lead(content: str, chars: int = 40) -> str:
    return content.replace("\n", "")[:chars] + "…"


def portal_page(article: dict, others: list[dict]) -> str:
    """``article`` ({id, title, content, publish_time, source}) on the portal's template; ``others``:
    the site's other stories, for its hot list and related links."""
    title, when = escape(article["title"]), escape(article.get("publish_time") or "2021-04-05 09:12")
    body = "\n".join(f"    <p>{escape(p)}</p>" for p in _paragraphs(article["content"]))
    hot = "".join(f'<li><em>{i + 1}</em><a href="/n/{o["id"]}.shtml">{escape(o["title"])}</a></li>' for i, o in enumerate(others[:10]))
    related = "".join(f'<li><a href="/n/{o["id"]}.shtml">{escape(o["title"])}</a><span>04-0{i + 1}</span></li>'
                      for i, o in enumerate(_pick(others, 5, article["id"] + "related")))
    comments = "".join(f'<div class="cmt-item"><span class="user">{PORTAL_SITE}网友{random.Random(c).randint(1000, 9999)}</span>'
                       f'<p class="cmt-text">{escape(c)}</p><span class="cmt-op">点赞 {len(c)} 回复</span></div>'
                       for c in _pick(COMMENTS, 4, article["id"] + "portal"))
    channels = " | ".join(f'<a href="/{i}/">{c}</a>' for i, c in enumerate(CHANNELS))
    return f"""<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8" />
<title>{title}_{PORTAL_SITE}</title>
<meta name="keywords" content="{PORTAL_SITE},新闻,社会" />
<meta name="description" content="{escape(_lead(article['content'], 80))}" />
<link rel="stylesheet" href="/css/article.css" />
<script type="text/javascript">var ARTICLE_CONFIG = {{"id": "{article['id']}", "channel": "news", "ad": true}};
(function(){{var hm = document.createElement("script"); hm.src = "https://stats.example/hm.js"; document.head.appendChild(hm);}})();</script>
</head>
<body>
<div class="top-bar"><div class="w1000">{channels} <span class="login"><a href="/login">登录</a> <a href="/reg">注册</a></span></div></div>
<div class="logo-search w1000"><a class="logo" href="/">{PORTAL_SITE}</a>
  <input type="text" class="search" placeholder="请输入关键词" /><a class="btn-search">搜索</a></div>
<div class="crumb w1000"><a href="/">{PORTAL_SITE}</a> &gt; <a href="/news/">新闻中心</a> &gt; 正文</div>
<div class="main w1000 clearfix">
  <div class="left">
    <h1 class="main-title">{title}</h1>
    <div class="date-source"><span class="date">{when}</span> <span class="source">来源：{escape(article.get('source') or PORTAL_SITE)}</span>
      <a class="cmt-count" href="#comments">评论(4)</a></div>
    <div class="article" id="artibody">
{body}
    </div>
    <div class="show-author">责任编辑：王小明</div>
    <div class="share-bar">分享到：<a>微信</a> <a>微博</a> <a>QQ空间</a> <a>复制链接</a></div>
    <div class="related"><h3>相关阅读</h3><ul>{related}</ul></div>
    <div class="comments" id="comments"><h3>网友评论</h3><div class="cmt-list">{comments}</div>
      <div class="cmt-more"><a href="/comments/{article['id']}">查看全部评论&gt;&gt;</a></div></div>
  </div>
  <div class="right">
    <div class="hot-rank"><h3>热点排行</h3><ol>{hot}</ol></div>
    <div class="ad-box"><a href="/ad/1">广告 点击进入专题</a></div>
    <div class="app-box">下载{PORTAL_SITE}客户端，随时随地看新闻</div>
  </div>
</div>
<div class="footer"><div class="w1000">
  <p><a href="/about">关于我们</a> | <a href="/contact">联系我们</a> | <a href="/ads">广告服务</a> | <a href="/map">网站地图</a> | <a href="/jobs">招聘信息</a></p>
  <p>Copyright &copy; 2021 {PORTAL_SITE} All Rights Reserved 版权所有 未经授权禁止转载</p>
  <p>粤ICP备12345678号 违法和不良信息举报电话：020-12345678</p></div></div>
<script type="text/javascript" src="/js/jquery.min.js"></script>
<script type="text/javascript">$(function(){{ $(".cmt-item").each(function(){{ /* lazy-load avatars */ }}); }});</script>
</body></html>"""


def modern_page(article: dict, others: list[dict]) -> str:
    """``article`` on the HTML5 template; ``others``: the site's other stories."""
    title, when = escape(article["title"]), escape(article.get("publish_time") or "2021-04-05 09:12")
    body = "\n".join(f"      <p>{escape(p)}</p>" for p in _paragraphs(article["content"]))
    hot = "".join(f'<li><a href="/a/{o["id"]}">{escape(o["title"])}</a><span class="heat">{(i + 3) * 1117}热度</span></li>'
                  for i, o in enumerate(others[-10:]))
    recommend = "".join(f'<li><a href="/a/{o["id"]}"><h3>{escape(o["title"])}</h3><p>{escape(_lead(o["content"]))}</p></a></li>'
                        for o in _pick(others, 6, article["id"] + "recommend"))
    comments = "".join(f'<li class="comment"><b>用户{random.Random(c + "m").randint(100, 999)}</b><p>{escape(c)}</p>'
                       f'<span>回复</span> <span>赞</span></li>' for c in _pick(COMMENTS, 4, article["id"] + "modern"))
    nav = "".join(f'<li><a href="/c/{i}">{c}</a></li>' for i, c in enumerate(CHANNELS[:12]))
    ld = json.dumps({"@context": "https://schema.org", "@type": "NewsArticle", "headline": article["title"],
                     "datePublished": article.get("publish_time") or "2021-04-05 09:12", "publisher": {"name": MODERN_SITE}},
                    ensure_ascii=False)
    return f"""<!doctype html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - {MODERN_SITE}</title>
<meta property="og:title" content="{title}">
<script type="application/ld+json">{ld}</script>
<style>.post-body p{{line-height:1.8}} .sidebar{{width:300px}}</style>
</head>
<body class="page-article">
<header class="site-header">
  <a class="logo" href="/">{MODERN_SITE}</a>
  <nav class="channels"><ul>{nav}</ul></nav>
  <form class="search" action="/search"><input name="q" placeholder="搜索新闻"><button>搜索</button></form>
</header>
<main class="container">
  <article class="post">
    <header class="post-header">
      <h1 class="post-title">{title}</h1>
      <div class="post-meta"><time datetime="{when}">{when}</time> <span class="author">{MODERN_SITE}综合</span>
        <span class="views">阅读 {len(article['content']) * 37}</span></div>
    </header>
    <div class="post-body">
{body}
    </div>
    <footer class="post-footer"><div class="tags">标签：<a>热点</a> <a>社会</a></div>
      <p class="statement">声明：本文转载自其他媒体，仅代表作者观点，如有侵权请联系删除。</p></footer>
  </article>
  <section class="recommend"><h2>猜你喜欢</h2><ul>{recommend}</ul></section>
  <section class="comments"><h2>评论（4）</h2><ul>{comments}</ul>
    <form class="comment-form"><textarea placeholder="说点什么吧"></textarea><button>发表评论</button></form></section>
</main>
<aside class="sidebar">
  <section class="hot"><h2>24小时热榜</h2><ol>{hot}</ol></section>
  <section class="app"><p>打开{MODERN_SITE}APP，阅读体验更佳</p></section>
</aside>
<footer class="site-footer"><p>&copy; 2021 {MODERN_SITE} 版权所有</p><p>京ICP备87654321号-1 京公网安备11010502000001号</p>
  <p><a href="/about">关于我们</a> · <a href="/privacy">隐私政策</a> · <a href="/feedback">意见反馈</a></p></footer>
<script src="/static/js/app.4f2a9c.js" defer></script>
<script>window.__INITIAL_STATE__ = {{"article": {{"id": "{article['id']}"}}, "user": null}};</script>
</body>
</html>"""


def saved_pages(articles: list[dict]) -> list[dict]:
    """Input records: every article as two whole pages, one per site, with the id, url, source and
    title each site's saving crawler would record. The other stories in each page's hot list and
    recommendations are the rest of ``articles``."""
    records = []
    for article in articles:
        others = [o for o in articles if o["id"] != article["id"]]
        for site, make, title in ((PORTAL_SITE, portal_page, f"{article['title']}_{PORTAL_SITE}"),
                                  (MODERN_SITE, modern_page, f"{article['title']} - {MODERN_SITE}")):
            tag = "portal" if make is portal_page else "modern"
            records.append({"id": f"{tag}-{article['id']}", "url": f"https://{tag}.example/n/{article['id']}.html",
                            "source": site, "title": title, "content": make(article, others),
                            "publish_time": article.get("publish_time")})
    return records


def pair_scores(stories: list[str], clusters: list[str]) -> tuple[float, float, float]:
    """Pairwise precision, recall and F1 of ``clusters`` (a cluster id per record) against
    ``stories`` (the story each record is a copy of)."""
    same_story = same_cluster = both = 0
    for i in range(len(stories)):
        for j in range(i + 1, len(stories)):
            s, c = stories[i] == stories[j], clusters[i] == clusters[j]
            same_story += s
            same_cluster += c
            both += s and c
    precision = both / same_cluster if same_cluster else 1.0
    recall = both / same_story if same_story else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1
