"""Two fixture news sites with different HTML structures that repost some of the same stories.

* Site A ("南方财经网"): GBK, list pages with pagination, declared only in a <meta> tag (one page in
  the Content-Type header instead); crawled with CSS selectors. Also hosts the troublemakers:
  a 503-then-200 page with Retry-After, a slow page, a redirect loop, an oversized page and
  malformed HTML.
* Site B ("华夏快讯"): UTF-8, an RSS feed, a robots.txt disallowing /private/, no selectors (the
  generic extractor reads it), relative dates ("3小时前").
"""

from __future__ import annotations

from html import escape

from . import stories
from .server import FixtureServer, redirect, sequence, slow, static, status

GBK_HTML = "text/html"  # no charset in the header: the <meta> tag has to be found


def page_a(story: dict, extra_head: str = "") -> str:
    paragraphs = "\n".join(f"<p>{escape(p)}</p>" for p in story["paragraphs"])
    return f"""<!DOCTYPE html>
<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">{extra_head}
<title>{escape(story['title'])}_南方财经网</title></head>
<body>
<div class="topnav"><a href="/">首页</a> | <a href="/list_1.html">财经</a> | <a href="/list_1.html">社会</a></div>
<div class="wrap">
  <div class="article">
    <h1 class="tit">{escape(story['title'])}</h1>
    <div class="info"><span class="pubtime">{escape(story['time'])}</span> <span class="src">来源：南方财经网</span></div>
    <div id="content">
      {paragraphs}
      <div class="share">分享到：微信 微博 QQ空间</div>
    </div>
  </div>
  <div class="sidebar"><h3>热门推荐</h3><ul><li><a href="/news/hot1.html">热门新闻一</a></li></ul></div>
</div>
<div class="footer">版权所有 南方财经网 未经授权禁止转载</div>
</body></html>"""


def list_a(links: list[tuple[str, str]], next_href: str | None) -> str:
    items = "\n".join(f'<li><a href="{href}">{escape(title)}</a><span>04-05</span></li>' for href, title in links)
    nxt = f'<a class="next" href="{next_href}">下一页</a>' if next_href else ""
    return f"""<html><head><meta charset="gbk"><title>财经频道_南方财经网</title></head><body>
<div class="topnav"><a href="/">首页</a></div>
<ul class="newslist">
{items}
</ul>
<div class="pages"><span>1</span> {nxt}</div>
</body></html>"""


MALFORMED_A = """<html><head><meta charset="gb2312"><title>社区开设老年食堂</title>
<body><div class="article"><h1 class="tit">社区开设老年食堂 解决独居老人吃饭难</h1>
<div class="info"><span class="pubtime">2021年04月08日</div>
<div id="content"><p>近日，市区某街道在辖区内新开设一家老年食堂，每天为六十岁以上老人提供午餐和晚餐，八十岁以上独居老人还可享受送餐上门服务。
<p>食堂负责人介绍，菜品以少盐少油、软烂易嚼为主，每餐两荤两素一汤，价格比市场价低三成左右，开业一周来每天就餐人数超过两百人次。
</td></span><b><i>未闭合的标签
"""


def build_site_a(srv: FixtureServer, *, slow_seconds: float = 4.0, big_bytes: int = 300_000) -> dict[str, str]:
    """Install site A's routes; returns {story key: article path} for assertions."""
    r = srv.routes
    r["/robots.txt"] = static("User-agent: *\nDisallow: /admin/\n", "text/plain")
    r["/list_1.html"] = static(
        list_a(
            [
                ("/news/2021/0405/1001.html?utm_source=list&spm=a1#comments", stories.GDP["title"]),
                ("/news/2021/0612/1002.html", stories.EV["title"]),
                ("/news/2021/0618/1003.html", stories.FLOOD_REPOST["title"]),
                ("/news/2021/0408/1004.html", stories.COMMUNITY["title"]),
                ("/news/slow.html", "慢页面"),
                ("/news/loop-a.html", "重定向循环"),
                ("/news/big.html", "超大页面"),
                ("/admin/draft.html", "草稿"),
                ("http://offsite.invalid/news/1.html", "站外链接"),
            ],
            "/list_2.html",
        ),
        GBK_HTML,
        etag='"list1-v1"',
        encoding="gbk",
    )
    r["/list_2.html"] = static(
        list_a(
            [
                ("/news/2021/0520/1005.html", stories.GRADUATES["title"]),
                ("/news/2021/0405/1001.html", stories.GDP["title"]),  # linked again from page 2
            ],
            None,
        ),
        GBK_HTML,
        etag='"list2-v1"',
        encoding="gbk",
    )
    r["/news/2021/0405/1001.html"] = static(page_a(stories.GDP), GBK_HTML, encoding="gbk")
    # This one declares the charset in the header only (and says GBK, not gb2312).
    r["/news/2021/0612/1002.html"] = static(page_a(stories.EV).replace('<meta http-equiv="Content-Type" content="text/html; charset=gb2312">', ""), "text/html; charset=GBK", encoding="gbk")
    r["/news/2021/0618/1003.html"] = static(page_a(stories.FLOOD_REPOST), GBK_HTML, encoding="gbk")
    r["/news/2021/0408/1004.html"] = static(MALFORMED_A, GBK_HTML, encoding="gbk")
    # 503 with Retry-After, then the page.
    r["/news/2021/0520/1005.html"] = sequence(
        status(503, {"Retry-After": "1", "Content-Type": "text/plain"}, b"busy"),
        static(page_a(stories.GRADUATES), GBK_HTML, encoding="gbk"),
    )
    r["/news/slow.html"] = slow(slow_seconds, static(page_a(stories.EV), GBK_HTML, encoding="gbk"))
    r["/news/loop-a.html"] = redirect("/news/loop-b.html")
    r["/news/loop-b.html"] = redirect("/news/loop-a.html")
    r["/news/big.html"] = static(("<p>" + "很长的页面内容。" * (big_bytes // 20) + "</p>"), GBK_HTML, encoding="gbk")
    return {"GDP": "/news/2021/0405/1001.html", "EV": "/news/2021/0612/1002.html", "FLOOD_REPOST": "/news/2021/0618/1003.html", "COMMUNITY": "/news/2021/0408/1004.html", "GRADUATES": "/news/2021/0520/1005.html"}


def page_b(story: dict) -> str:
    paragraphs = "\n".join(f"<p>{escape(p)}</p>" for p in story["paragraphs"])
    return f"""<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8">
<title>{escape(story['title'])} - 华夏快讯</title>
<meta property="og:title" content="{escape(story['title'])}">
</head><body>
<header class="site-header"><nav><a href="/">首页</a><a href="/china/">国内</a><a href="/world/">国际</a><a href="/tech/">科技</a></nav></header>
<main>
<article class="story">
  <header><h2 class="headline">{escape(story['title'])}</h2>
  <p class="byline"><span class="date">{escape(story['time'])}</span> <span>华夏快讯</span></p></header>
  <section class="story-body">
  {paragraphs}
  </section>
</article>
<aside class="related"><h3>相关阅读</h3><ul><li><a href="/a/9001.html">其他新闻标题一</a></li><li><a href="/a/9002.html">其他新闻标题二</a></li></ul></aside>
</main>
<footer><p>华夏快讯 版权所有 © 2021</p><p>扫码关注我们的微信公众号</p></footer>
</body></html>"""


def rss_b(base: str, items: list[tuple[str, str, str]]) -> str:
    entries = "\n".join(
        f"<item><title>{escape(t)}</title><link>{escape(base + href)}</link><pubDate>{d}</pubDate><description>{escape(t)}</description></item>"
        for href, t, d in items
    )
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>华夏快讯</title><link>{base}/</link><description>最新新闻</description>
{entries}
</channel></rss>"""


def build_site_b(srv: FixtureServer) -> dict[str, str]:
    r = srv.routes
    r["/robots.txt"] = static("User-agent: *\nDisallow: /private/\n", "text/plain")
    items = [
        ("/a/2001.html?utm_source=rss&utm_medium=feed", stories.GDP_REPOST["title"], "Mon, 05 Apr 2021 03:00:00 GMT"),
        ("/a/2002.html", stories.FLOOD["title"], "Thu, 17 Jun 2021 23:45:00 GMT"),
        ("/a/2003.html", stories.LAUNCH["title"], "Sat, 10 Jul 2021 02:30:00 GMT"),
        ("/private/2004.html", "内部稿件", "Sat, 10 Jul 2021 02:30:00 GMT"),
    ]
    r["/rss.xml"] = static(rss_b(srv.base, items), "application/rss+xml; charset=utf-8", etag='"rss-v1"')
    r["/a/2001.html"] = static(page_b(stories.GDP_REPOST), "text/html; charset=utf-8")
    r["/a/2002.html"] = static(page_b(stories.FLOOD), "text/html; charset=utf-8")
    r["/a/2003.html"] = static(page_b(stories.LAUNCH), "text/html; charset=utf-8")
    r["/private/2004.html"] = static(page_b(stories.COMMUNITY), "text/html; charset=utf-8")
    return {"GDP_REPOST": "/a/2001.html", "FLOOD": "/a/2002.html", "LAUNCH": "/a/2003.html"}


def sources_toml(a: FixtureServer, b: FixtureServer, *, timeout: float = 1.5, max_bytes: int = 100_000) -> str:
    """The sources file for both sites, with test-sized politeness settings. The timeout leaves
    ordinary pages ample time on a loaded machine; only the slow page (4 s) reaches it."""
    return f"""
[defaults]
user_agent = "newsdedup-test/1.0"
delay = 0.0
timeout = {timeout}
max_retries = 1
backoff_base = 0.01
max_bytes = {max_bytes}
max_redirects = 3

[[sources]]
name = "site-a"
type = "html"
start_urls = ["{a.base}/list_1.html"]
next_page_selector = "a.next"
max_pages = 3
link_selector = "ul.newslist li a"
title_selector = "h1.tit"
body_selector = "div#content"
time_selector = "span.pubtime"
remove_selectors = ["div.share"]

[[sources]]
name = "site-b"
type = "feed"
start_urls = ["{b.base}/rss.xml"]
"""
