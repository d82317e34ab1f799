"""End to end: two fixture sites on 127.0.0.1 crawled into outputs, state, stats and the CLI."""

from __future__ import annotations

import csv
import json
import tomllib
from datetime import datetime
from itertools import combinations
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner

from crawlers.base import BaseNewsCrawler
from crawlers.cli import crawl
from indexer.dates import CST
from crawlers.encoding import mojibake_ratio
from crawlers.pipelines import CrawledArticle
from crawlers.runner import RunOptions, run_crawl
from crawlers.sinks import JsonlSink
from crawlers.sources import parse_sources
from crawlers.state import CrawlState

from . import stories
from .server import static
from .sites import build_site_a, build_site_b, page_b, rss_b, sources_toml

NOW = datetime(2021, 7, 10, 12, 0, tzinfo=CST)
ARTICLE_PATHS_A = {"/news/2021/0405/1001.html", "/news/2021/0612/1002.html", "/news/2021/0618/1003.html", "/news/2021/0408/1004.html", "/news/2021/0520/1005.html"}
ARTICLE_PATHS_B = {"/a/2001.html", "/a/2002.html", "/a/2003.html"}
FAILING_PATHS_A = {"/news/slow.html", "/news/loop-a.html", "/news/loop-b.html", "/news/big.html"}


@pytest.fixture
def sites(make_server):
    a, b = make_server(), make_server()
    build_site_a(a)
    build_site_b(b)
    return a, b


def crawl_to_jsonl(a, b, tmp_path, sleeps, state_dir="state", **toml_kw):
    sources = parse_sources(tomllib.loads(sources_toml(a, b, **toml_kw)))
    sink = JsonlSink(tmp_path / "out.jsonl")
    with CrawlState(tmp_path / state_dir) as state:
        stats = run_crawl(sources, sink, state, options=RunOptions(now=NOW, sleep=sleeps))
    sink.close()
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    return stats, [json.loads(line) for line in lines]


def by_path(records):
    return {urlsplit(r["url"]).path: r for r in records}


def test_both_sites_crawled_cleanly_with_failures_counted_by_cause(sites, tmp_path, sleeps):
    a, b = sites
    stats, records = crawl_to_jsonl(a, b, tmp_path, sleeps)
    got = by_path(records)
    assert set(got) == ARTICLE_PATHS_A | ARTICLE_PATHS_B
    # GBK (meta only, header only) and UTF-8 decoded without damage; titles and bodies exact.
    expected = {
        "/news/2021/0405/1001.html": stories.GDP, "/news/2021/0612/1002.html": stories.EV,
        "/news/2021/0618/1003.html": stories.FLOOD_REPOST, "/news/2021/0520/1005.html": stories.GRADUATES,
        "/a/2001.html": stories.GDP_REPOST, "/a/2002.html": stories.FLOOD, "/a/2003.html": stories.LAUNCH,
    }
    for path, story in expected.items():
        assert got[path]["title"] == story["title"]
        for paragraph in story["paragraphs"]:
            assert paragraph in got[path]["content"], (path, paragraph)
    for r in records:
        assert mojibake_ratio(r["title"] + r["content"]) == 0
        assert "utm_" not in r["url"] and "#" not in r["url"] and "spm" not in r["url"]
    assert got["/news/2021/0405/1001.html"]["publish_time"] == "2021-04-05T09:12:00+08:00"
    assert got["/a/2002.html"]["publish_time"] == "2021-06-17T23:45:00+00:00"  # the feed's date
    assert "分享到" not in got["/news/2021/0405/1001.html"]["content"]  # remove_selectors
    assert stories.COMMUNITY["paragraphs"][0] in got["/news/2021/0408/1004.html"]["content"]  # malformed HTML

    sa, sb = stats.for_source("site-a"), stats.for_source("site-b")
    assert sa["fetch/failures/timeout"] == 1 and sa["fetch/failures/redirects"] == 1 and sa["fetch/failures/too_large"] == 1
    assert sa["fetch/rejected/robots"] == 1 and sa["fetch/rejected/offsite"] == 1
    assert sa["retry/reason/http_503"] == 1 and 1.0 in sleeps.calls  # Retry-After: 1 honoured
    assert sa["lists/pages"] == 2 and sa["articles/parsed"] == 5 and sa["output/written"] == 5
    assert sb["fetch/rejected/robots"] == 1 and sb["articles/parsed"] == 3 and sb["extract/generic"] == 3
    assert "/private/2004.html" not in b.paths() and "/admin/draft.html" not in a.paths()
    assert a.paths().count("/news/2021/0405/1001.html") == 1  # linked from both list pages, fetched once


def test_second_crawl_fetches_nothing_already_seen(sites, tmp_path, sleeps):
    a, b = sites
    crawl_to_jsonl(a, b, tmp_path, sleeps)
    first_a, first_b = len(a.log), len(b.log)
    # Overnight, site B publishes one new story.
    b.routes["/a/2005.html"] = static(page_b(stories.EV), "text/html; charset=utf-8")
    items = [("/a/2005.html", stories.EV["title"], "Sat, 10 Jul 2021 03:00:00 GMT"), ("/a/2002.html", stories.FLOOD["title"], "Thu, 17 Jun 2021 23:45:00 GMT")]
    b.routes["/rss.xml"] = static(rss_b(b.base, items), "application/rss+xml; charset=utf-8", etag='"rss-v2"')

    stats, records = crawl_to_jsonl(a, b, tmp_path, sleeps)
    again_a = [r for r in a.log[first_a:]]
    again_b = [urlsplit(r.path).path for r in b.log[first_b:]]
    fetched_a = {urlsplit(r.path).path for r in again_a}
    assert not fetched_a & ARTICLE_PATHS_A  # nothing already delivered is fetched again
    assert fetched_a - {"/robots.txt", "/list_1.html", "/list_2.html"} <= FAILING_PATHS_A  # only last run's failures retried
    list2 = [r for r in again_a if r.path == "/list_2.html"]
    assert list2 and list2[0].headers.get("If-None-Match") == '"list2-v1"'  # conditional GET -> 304
    assert stats.for_source("site-a")["fetch/not_modified"] == 1
    assert again_b.count("/a/2005.html") == 1 and not set(again_b) & ARTICLE_PATHS_B
    assert len(records) == 8 + 1 and urlsplit(records[-1]["url"]).path == "/a/2005.html"
    assert stats.for_source("site-b")["articles/skipped_seen"] == 1


class OddSiteCrawler(BaseNewsCrawler):
    """Subclass hook: a site whose headline sits in a data attribute and whose body is one blob."""

    def parse_article(self, page, hint=None):
        el = page.soup.select_one("div[data-headline]")
        return CrawledArticle(url=page.url, title=el["data-headline"], content=el.get_text("\n", strip=True), source=self.source.name)


def test_subclass_hook_named_in_the_sources_file(server, tmp_path, sleeps):
    server.routes["/index.html"] = static('<a href="/s/1.html">1</a>')
    body = "".join(f"<p>{p}</p>" for p in stories.EV["paragraphs"])
    server.routes["/s/1.html"] = static(f'<div data-headline="特殊站点标题">{body}</div>')
    toml = f"""
[[sources]]
name = "odd"
start_urls = ["{server.base}/index.html"]
crawler = "tests.crawlers.test_crawl:OddSiteCrawler"
delay = 0
"""
    sink = JsonlSink(tmp_path / "odd.jsonl")
    stats = run_crawl(parse_sources(tomllib.loads(toml)), sink, CrawlState.memory(), options=RunOptions(sleep=sleeps))
    sink.close()
    (record,) = [json.loads(x) for x in (tmp_path / "odd.jsonl").read_text(encoding="utf-8").splitlines()]
    assert record["title"] == "特殊站点标题" and stories.EV["paragraphs"][2] in record["content"]
    assert stats.for_source("odd")["output/written"] == 1


def test_cli_writes_csv_and_shows_stats(sites, tmp_path):
    a, b = sites
    src = tmp_path / "sources.toml"
    src.write_text(sources_toml(a, b), encoding="utf-8")
    out = tmp_path / "raw_news_articles.csv"
    stats_file = tmp_path / "stats.json"
    result = CliRunner().invoke(crawl, ["--sources", str(src), "--output", str(out), "--state", str(tmp_path / "st"), "--stats-json", str(stats_file)])
    assert result.exit_code == 0, result.output
    assert "site-a: pages fetched" in result.output and "timeout 1" in result.output and "robots 1" in result.output
    with open(out, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 8 and list(rows[0]) == ["url", "title", "content", "source", "publish_time"]
    assert {r["source"] for r in rows} == {"site-a", "site-b"}
    assert json.loads(stats_file.read_text(encoding="utf-8"))["site-b"]["articles/parsed"] == 3


def test_cli_usage_errors(tmp_path):
    src = tmp_path / "bad.toml"
    src.write_text('[[sources]]\nname = "x"\nstart_urls = ["http://127.0.0.1:9/"]\ndelay = "fast"\n', encoding="utf-8")
    result = CliRunner().invoke(crawl, ["--sources", str(src), "--output", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2 and "source 'x', key 'delay'" in result.output
    result = CliRunner().invoke(crawl, ["--sources", str(src), "--store", "d", "--push", "http://127.0.0.1:9/v1/articles"])
    assert result.exit_code == 2 and "exclusive" in result.output


def test_cli_push_to_daemon_with_token(sites, tmp_path, make_server):
    a, b = sites
    daemon = make_server()
    daemon.routes["/v1/articles"] = static('{"accepted": true}', "application/json")
    daemon.routes["/v1/articles"] = lambda req: (202, {"Content-Type": "application/json"}, b'{"accepted": true}')
    src = tmp_path / "sources.toml"
    src.write_text(sources_toml(a, b), encoding="utf-8")
    result = CliRunner().invoke(crawl, ["--sources", str(src), "--source", "site-b", "--push", daemon.url("/v1/articles"), "--token", "tok", "--state", str(tmp_path / "st")])
    assert result.exit_code == 0, result.output
    posts = [r for r in daemon.log if r.method == "POST"]
    assert posts and all(r.headers["Authorization"] == "Bearer tok" for r in posts)
    assert sum(len(r.body.splitlines()) for r in posts) == 3


def test_cli_stops_and_marks_nothing_when_the_daemon_refuses(sites, tmp_path, make_server):
    a, b = sites
    daemon = make_server()
    daemon.routes["/v1/articles"] = lambda req: (401, {"Content-Type": "application/json"}, b'{"error": "unauthorized"}')
    src = tmp_path / "sources.toml"
    src.write_text(sources_toml(a, b), encoding="utf-8")
    result = CliRunner().invoke(crawl, ["--sources", str(src), "--source", "site-b", "--push", daemon.url("/v1/articles"), "--state", str(tmp_path / "st")])
    assert result.exit_code == 1 and "401" in result.output
    with CrawlState(tmp_path / "st") as state:
        assert state.seen_count() == 0


# ---- into the indexer --------------------------------------------------------------------------

def test_crawl_into_the_store_clusters_reposts_only(sites, tmp_path, sleeps):
    from crawlers.sinks import IndexerSink
    from indexer.settings import load_settings

    a, b = sites
    settings = load_settings(overrides={"store.path": str(tmp_path / "store")}, environ={})
    inner = IndexerSink(settings)
    clusters: dict[str, str] = {}

    class Recording:
        def send(self, records):
            deliveries = inner.send(records)
            for r, d in zip(records, deliveries):
                clusters[urlsplit(r["url"]).path] = d.cluster_id
            return deliveries

        def close(self):
            inner.close()

    sources = parse_sources(tomllib.loads(sources_toml(a, b)))
    sink = Recording()
    with CrawlState(tmp_path / "store" / "crawl-state") as state:
        stats = run_crawl(sources, sink, state, options=RunOptions(now=NOW, sleep=sleeps))
    sink.close()
    total = stats.total()
    assert total["index/new"] == 6 and total["index/duplicate"] == 2, total

    same = [("/news/2021/0405/1001.html", "/a/2001.html"), ("/news/2021/0618/1003.html", "/a/2002.html")]
    for x, y in same:
        assert clusters[x] and clusters[x] == clusters[y], (x, y)
    groups = {frozenset(p) for p in same}
    for x, y in combinations(sorted(clusters), 2):
        if frozenset((x, y)) not in groups:
            assert clusters[x] != clusters[y], (x, y)

    # Re-running through the CLI against the same store fetches no article again.
    src = tmp_path / "sources.toml"
    src.write_text(sources_toml(a, b), encoding="utf-8")
    before_a = len(a.log)
    result = CliRunner().invoke(crawl, ["--sources", str(src), "--store", str(tmp_path / "store"), "-q"])
    assert result.exit_code == 0, result.output
    assert not {urlsplit(r.path).path for r in a.log[before_a:]} & ARTICLE_PATHS_A
    assert "new 0" in result.output


def test_cli_set_reaches_the_indexer_settings(sites, tmp_path):
    """``--set`` works as for every newsdedup command: here it picks the store (and so where the
    crawl state lives) and switches the embedding model off, which the new store records."""
    import sqlite3

    from indexer.store.sqlite import DB_FILE

    a, b = sites
    src = tmp_path / "sources.toml"
    src.write_text(sources_toml(a, b), encoding="utf-8")
    store = tmp_path / "set-store"
    result = CliRunner().invoke(crawl, ["--sources", str(src), "--source", "site-b", "-q",
                                        "--set", f"store.path={store}", "--set", "embedding.model=none"])
    assert result.exit_code == 0, result.output
    assert "new 3" in result.output
    with sqlite3.connect(store / DB_FILE) as db:
        assert dict(db.execute("SELECT key, value FROM meta").fetchall())["embedding_model"] == "none"
    with CrawlState(store / "crawl-state") as state:
        assert state.seen_count() == 3

    result = CliRunner().invoke(crawl, ["--sources", str(src), "--set", "simhash.bandz=3"])
    assert result.exit_code == 1 and "simhash.bandz" in result.output
    result = CliRunner().invoke(crawl, ["--sources", str(src), "--push", "http://127.0.0.1:9/v1/articles", "--set", "decision.knn_k=3"])
    assert result.exit_code == 2 and "--set" in result.output
