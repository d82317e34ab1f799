"""Feeds and sitemaps crawled end to end: what a site's feed or sitemap says, decoded and held to
the rules a followed link is."""

from __future__ import annotations

import gzip
import json
import tomllib

from crawlers.runner import RunOptions, run_crawl
from crawlers.sinks import JsonlSink
from crawlers.sources import parse_sources
from crawlers.state import CrawlState

from .server import static

BODY = "国家统计局今天发布数据，一季度国内生产总值同比增长百分之五点三，经济运行开局良好。" * 2


def article(title: str, published: str | None = None) -> str:
    meta = f'<meta property="article:published_time" content="{published}">' if published else ""
    return f"<html><head>{meta}</head><body><h1>{title}</h1><div><p>{BODY}</p></div></body></html>"


def crawl(tmp_path, toml: str, state: CrawlState, sleeps, name: str = "out") -> tuple[dict, list[dict]]:
    sink = JsonlSink(tmp_path / f"{name}.jsonl")
    stats = run_crawl(parse_sources(tomllib.loads(toml)), sink, state, options=RunOptions(sleep=sleeps))
    sink.close()
    lines = (tmp_path / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return stats, [json.loads(line) for line in lines]


def source(server, path: str, kind: str, **extra: str) -> str:
    more = "".join(f"{k} = {v}\n" for k, v in extra.items())
    return f'[[sources]]\nname = "s"\ntype = "{kind}"\nstart_urls = ["{server.base}{path}"]\ndelay = 0\nobey_robots = false\n{more}'


def urlset(server, paths, lastmod: str = "") -> str:
    mod = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    return ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join(f"<url><loc>{server.base}{p}</loc>{mod}</url>" for p in paths) + "</urlset>")


def test_a_sitemap_index_is_read_again_while_its_children_change(server, tmp_path, sleeps):
    """A news sitemap changes daily under the same name while the index naming it does not: the
    index keeps no validators, so its 304 cannot hide the child's new articles."""
    server.routes["/index.xml"] = static(
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>{server.base}/news.xml</loc>'
        "</sitemap></sitemapindex>", "application/xml", etag='"index-v1"')
    for i in (1, 2):
        server.routes[f"/a/{i}.html"] = static(article(f"新闻{i}"), "text/html; charset=utf-8")
    server.routes["/news.xml"] = static(urlset(server, ["/a/1.html"]), "application/xml", etag='"news-v1"')
    with CrawlState(tmp_path / "state") as state:
        state.save_validators(f"{server.base}/index.xml", '"index-v1"', None)  # as an earlier release kept them
        _, first = crawl(tmp_path, source(server, "/index.xml", "sitemap"), state, sleeps, "first")
        server.routes["/news.xml"] = static(urlset(server, ["/a/1.html", "/a/2.html"]), "application/xml", etag='"news-v2"')
        _, second = crawl(tmp_path, source(server, "/index.xml", "sitemap"), state, sleeps, "second")
    assert [r["title"] for r in first] == ["新闻1"] and [r["title"] for r in second] == ["新闻2"]
    assert not any(r.headers.get("If-None-Match") for r in server.log if r.path == "/index.xml")


def test_lastmod_is_only_a_fallback_for_the_publish_time(server, tmp_path, sleeps):
    """<lastmod> is when the page last changed (often when the sitemap was made): the page's own
    publish time wins, and lastmod serves a page that gives none."""
    server.routes["/dated.html"] = static(article("有日期的新闻", "2021-04-05T09:12:00+08:00"), "text/html; charset=utf-8")
    server.routes["/undated.html"] = static(article("没有日期的新闻"), "text/html; charset=utf-8")
    server.routes["/sitemap.xml"] = static(urlset(server, ["/dated.html", "/undated.html"], "2025-06-01T00:00:00+08:00"), "application/xml")
    _, records = crawl(tmp_path, source(server, "/sitemap.xml", "sitemap"), CrawlState.memory(), sleeps)
    times = {r["title"]: r["publish_time"] for r in records}
    assert times == {"有日期的新闻": "2021-04-05T09:12:00+08:00", "没有日期的新闻": "2025-06-01T00:00:00+08:00"}


def test_a_gzipped_sitemap_file_is_read(server, tmp_path, sleeps):
    server.routes["/a/1.html"] = static(article("压缩站点地图里的新闻"), "text/html; charset=utf-8")
    server.routes["/sitemap.xml.gz"] = static(gzip.compress(urlset(server, ["/a/1.html"]).encode()), "application/x-gzip")
    _, records = crawl(tmp_path, source(server, "/sitemap.xml.gz", "sitemap"), CrawlState.memory(), sleeps)
    assert [r["title"] for r in records] == ["压缩站点地图里的新闻"]


def rss(items: list[tuple[str, str]], encoding: str, body: str = BODY) -> str:
    return (f'<?xml version="1.0" encoding="{encoding}"?><rss version="2.0"><channel><title>t</title>'
            + "".join(f"<item><title>{t}</title><link>{u}</link><description>{body}</description></item>" for t, u in items)
            + "</channel></rss>")


def test_feeds_are_decoded_as_pages_are(server, tmp_path, sleeps):
    """GB2312 read as its superset (玥 and 堃 are GBK only: read as GB2312 the document ends there),
    Big5 as Big5-HKSCS, and a charset given only by the HTTP header."""
    feeds = {
        "/gb.xml": (rss([("记者张玥报道", "/a/1.html"), ("第二条堃", "/a/2.html")], "gb2312").encode("gbk"), "application/rss+xml"),
        "/big5.xml": (rss([("香港𨋢邨", "/b/1.html")], "big5", "國家統計局今天發布數據，經濟運行開局良好。" * 4).encode("big5hkscs"), "application/rss+xml"),
        "/header.xml": (rss([("只在头里声明", "/c/1.html")], "gbk").replace(' encoding="gbk"', "").encode("gbk"),
                        "application/rss+xml; charset=gbk"),
    }
    titles = []
    for path, (body, ctype) in feeds.items():
        server.routes[path] = static(body, ctype)
        _, records = crawl(tmp_path, source(server, path, "feed", follow_links="false"), CrawlState.memory(), sleeps, path[1:3])
        titles += [r["title"] for r in records]
    assert titles == ["记者张玥报道", "第二条堃", "香港𨋢邨", "只在头里声明"]


def test_an_unfollowed_feed_is_held_to_the_sources_hosts_and_names_each_url_once(make_server, tmp_path, sleeps):
    """Entries taken without fetching them still pass the source's host allow-list (a feed must not
    file articles under another site's URLs, and mark them seen for that site's own source), and
    one article listed twice, with and without a tracking parameter, is one article."""
    feed, other = make_server(), make_server("127.0.0.2")
    items = [("本站新闻", f"{feed.base}/a/1.html"), ("本站新闻", f"{feed.base}/a/1.html?utm_source=rss"),
             ("冒充别站的新闻", f"{other.base}/a/1.html")]
    feed.routes["/rss.xml"] = static(rss(items, "utf-8"), "application/rss+xml")
    stats, records = crawl(tmp_path, source(feed, "/rss.xml", "feed", follow_links="false"), CrawlState.memory(), sleeps)
    assert [(r["title"], r["url"]) for r in records] == [("本站新闻", f"{feed.base}/a/1.html")]
    assert stats.for_source("s")["fetch/rejected/offsite"] == 1
