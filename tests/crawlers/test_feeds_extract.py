from datetime import datetime, timezone

from crawlers.extract import extract_article, extract_links, extract_next_page, parse_html
from crawlers.feeds import parse_feed, parse_sitemap

from . import stories
from .sites import MALFORMED_A, page_a, page_b

RSS = """<?xml version="1.0" encoding="gbk"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel><title>测试</title>
<item><title>第一条新闻</title><link>/a/1.html</link><pubDate>Mon, 05 Apr 2021 01:12:00 GMT</pubDate>
<content:encoded><![CDATA[<p>正文第一段</p>]]></content:encoded></item>
<item><title>只有guid</title><guid>http://h.example/a/2.html</guid></item>
<item><title>不是永久链接</title><guid isPermaLink="false">tag-123</guid></item>
</channel></rss>""".encode("gbk")

ATOM = b"""<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">
<entry><title>Atom entry</title><link rel="alternate" href="http://h.example/x"/><link rel="edit" href="http://h.example/edit"/>
<published>2021-04-05T09:12:00+08:00</published><summary>s</summary></entry></feed>"""

SITEMAP = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
<url><loc>http://h.example/n/1.html</loc><news:news><news:publication_date>2021-04-05T09:12:00+08:00</news:publication_date><news:title>新闻标题</news:title></news:news></url>
<url><loc>http://h.example/n/2.html</loc><lastmod>2021-04-06</lastmod></url>
</urlset>""".encode("utf-8")

INDEX = b"""<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://h.example/news-1.xml</loc></sitemap></sitemapindex>"""

XXE = b"""<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<rss version="2.0"><channel><item><title>&xxe;</title><link>http://h.example/1</link></item></channel></rss>"""


def test_rss_in_gbk_with_relative_links_and_guid():
    entries = parse_feed(RSS, "http://h.example/rss.xml")
    assert [e.url for e in entries] == ["http://h.example/a/1.html", "http://h.example/a/2.html"]
    assert entries[0].title == "第一条新闻" and entries[0].content == "<p>正文第一段</p>"
    assert entries[0].published == datetime(2021, 4, 5, 1, 12, tzinfo=timezone.utc)


def test_atom_uses_the_alternate_link():
    (entry,) = parse_feed(ATOM)
    assert entry.url == "http://h.example/x" and entry.published.isoformat() == "2021-04-05T09:12:00+08:00"


def test_news_sitemap_and_index():
    sm = parse_sitemap(SITEMAP)
    assert [e.url for e in sm.entries] == ["http://h.example/n/1.html", "http://h.example/n/2.html"]
    assert sm.entries[0].title == "新闻标题" and sm.entries[0].published.day == 5
    assert sm.entries[1].published is None and sm.entries[1].modified.day == 6  # lastmod: a fallback only
    assert parse_sitemap(INDEX).children == ("http://h.example/news-1.xml",)


def test_not_a_feed_and_external_entities_are_not_resolved():
    assert parse_feed(b"<html><body>not xml") == [] and parse_feed(b"") == []
    entries = parse_feed(XXE)
    assert all("root:" not in e.title for e in entries)


def test_selectors_extract_title_body_time_and_strip_noise():
    got = extract_article(page_a(stories.GDP), "http://a/1", title_selector="h1.tit", body_selector="div#content", time_selector="span.pubtime", remove_selectors=("div.share",))
    assert got.method == "selectors" and got.title == stories.GDP["title"]
    assert got.content.split("\n") == stories.GDP["paragraphs"]
    assert got.time_text == stories.GDP["time"]


def test_generic_extraction_without_selectors_skips_navigation_and_footer():
    got = extract_article(page_b(stories.LAUNCH), "http://b/1")
    assert got.method == "generic" and got.title == stories.LAUNCH["title"]
    for paragraph in stories.LAUNCH["paragraphs"]:
        assert paragraph in got.content
    for noise in ("首页", "相关阅读", "版权所有", "其他新闻标题一"):
        assert noise not in got.content
    assert got.time_text == "3小时前"


def test_malformed_html_still_yields_the_article():
    got = extract_article(MALFORMED_A, "http://a/4", title_selector="h1.tit", body_selector="div#content", time_selector="span.pubtime")
    assert got.title == stories.COMMUNITY["title"]
    assert stories.COMMUNITY["paragraphs"][1] in got.content
    assert got.time_text.startswith("2021年04月08日")


def test_missing_selector_falls_back_to_generic():
    got = extract_article(page_b(stories.EV), "http://b/2", body_selector="div#nope")
    assert got.method == "generic" and stories.EV["paragraphs"][0] in got.content


def test_links_are_absolute_filtered_and_deduplicated():
    soup = parse_html("""<ul class="l"><li><a href="/n/1.html?utm_source=x">a</a></li><li><a href="/n/1.html?utm_source=x">a</a></li>
    <li><a href="javascript:void(0)">js</a></li><li><a href="mailto:x@y">m</a></li><li><a href="/about.html">about</a></li>
    <li><a href="http://other.example/n/9.html">o</a></li></ul><a class="next" href="list_2.html">下一页</a>""")
    assert extract_links(soup, "http://h.example/list_1.html", "ul.l a") == [
        "http://h.example/n/1.html?utm_source=x", "http://h.example/about.html", "http://other.example/n/9.html"]
    assert extract_links(soup, "http://h.example/", "ul.l a", r"/n/\d+\.html") == ["http://h.example/n/1.html?utm_source=x", "http://other.example/n/9.html"]
    assert extract_next_page(soup, "http://h.example/list_1.html", "a.next") == "http://h.example/list_2.html"
    assert extract_next_page(soup, "http://h.example/", "a.missing") is None


def test_generic_extraction_reads_the_visible_text_when_no_main_content_is_found():
    """trafilatura finds no main content in a page whose only text sits in a comments block (or
    in a page served as plain text): the page's visible text is taken, sidebars still left out."""
    page = "<html><body><div class='comments'><p>市民反映小区停水三天。</p></div><aside>热门推荐</aside></body></html>"
    got = extract_article(page, "http://b/3")
    assert got.method == "generic" and got.content == "市民反映小区停水三天。"
    assert extract_article("纯文本的新闻正文。", "http://b/4").content == "纯文本的新闻正文。"


def test_relative_links_resolve_against_the_pages_base_href():
    page = parse_html('<html><head><base href="/news/2021/0405/"></head><body><a href="1.html">一</a>'
                      '<a href="/abs.html">二</a><div class="next"><a href="2.html">下一页</a></div></body></html>')
    assert extract_links(page, "http://x.com/list/0405/index.html") == [
        "http://x.com/news/2021/0405/1.html", "http://x.com/abs.html", "http://x.com/news/2021/0405/2.html"]
    assert extract_next_page(page, "http://x.com/list/0405/index.html", "div.next") == "http://x.com/news/2021/0405/2.html"
    hostile = parse_html('<base href="javascript:alert(1)"><a href="1.html">一</a>')  # not a web address: ignored
    assert extract_links(hostile, "http://x.com/list/") == ["http://x.com/list/1.html"]
