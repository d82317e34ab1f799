"""Hostile sites against a whole crawl: what they may try, and what the stats say about it."""

from __future__ import annotations

import json
import tomllib

from crawlers.runner import RunOptions, run_crawl
from crawlers.sinks import JsonlSink
from crawlers.sources import parse_sources
from crawlers.state import CrawlState
from crawlers.stats import format_table

from . import stories
from .server import redirect, static
from .sites import page_b


def crawl(toml: str, tmp_path, sleeps, **options):
    sink = JsonlSink(tmp_path / "out.jsonl")
    stats = run_crawl(parse_sources(tomllib.loads(toml)), sink, CrawlState.memory(), options=RunOptions(sleep=sleeps, **options))
    sink.close()
    records = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    return stats, records


def sitemap(*locs: str) -> str:
    urls = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'


def test_userinfo_links_redirects_and_sitemap_locs_are_refused_and_counted(make_server, tmp_path, sleeps):
    site, internal = make_server(), make_server("127.0.0.2")
    internal.routes["/robots.txt"] = static("User-agent: *\nDisallow:\n", "text/plain")
    internal.routes["/secret"] = static(page_b(stories.EV))
    sneaky = f"http://{site.netloc}@{internal.netloc}/secret"
    site.routes["/index.html"] = static(f'<a href="/go">redirect</a> <a href="{sneaky}">link</a> <a href="/a/1.html">ok</a>')
    site.routes["/go"] = redirect(sneaky)
    site.routes["/sitemap.xml"] = static(sitemap(sneaky, site.url("/a/1.html")), "application/xml")
    site.routes["/a/1.html"] = static(page_b(stories.GDP_REPOST))
    toml = f"""
[defaults]
delay = 0
max_retries = 0

[[sources]]
name = "list"
start_urls = ["{site.base}/index.html"]

[[sources]]
name = "map"
type = "sitemap"
start_urls = ["{site.base}/sitemap.xml"]
"""
    stats, records = crawl(toml, tmp_path, sleeps)
    assert internal.log == []
    assert stats.get("list", "fetch/rejected/userinfo") == 2  # the redirect hop and the link itself
    assert stats.get("map", "fetch/rejected/userinfo") == 1
    assert {r["title"] for r in records} == {stories.GDP_REPOST["title"]}
    assert "not fetched: userinfo 2" in format_table([("list", stats.for_source("list"))])
