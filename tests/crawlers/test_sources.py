import pytest

from crawlers.errors import SourceConfigError
from crawlers.sources import load_sources, parse_sources

GOOD = """
[defaults]
delay = 0.5
user_agent = "bot/1.0"

[[sources]]
name = "a"
start_urls = ["https://news.example.cn/list_1.html"]
link_selector = "ul.news a"
page_url_template = "https://news.example.cn/list_{page}.html"
max_pages = 4

[[sources]]
name = "b"
type = "feed"
start_urls = "https://b.example.com/rss.xml"
delay = 2
allowed_hosts = ["*.example.com"]
"""


def test_defaults_apply_and_sources_override(tmp_path):
    path = tmp_path / "sources.toml"
    path.write_text(GOOD, encoding="utf-8")
    cfg = load_sources(path)
    a, b = cfg.sources
    assert a.delay == 0.5 and a.user_agent == "bot/1.0" and a.hosts == ("news.example.cn",)
    assert b.delay == 2.0 and b.type == "feed" and b.start_urls == ("https://b.example.com/rss.xml",)
    assert b.fetch_policy().delay == 2.0 and b.hosts == ("*.example.com",)


def test_max_total_time_and_host_entries_are_source_settings():
    cfg = parse_sources({"defaults": {"max_total_time": 30}, "sources": [
        {"name": "a", "start_urls": ["https://news.example.cn:443/list.html", "http://127.0.0.1:8080/x"]},
        {"name": "b", "start_urls": ["http://b.example/"], "max_total_time": 5.5},
    ]})
    a, b = cfg.sources
    assert a.fetch_policy().max_total_time == 30.0 and b.fetch_policy().max_total_time == 5.5
    assert a.hosts == ("news.example.cn", "127.0.0.1:8080")  # default ports left out: http and https both pass


def _one(**kw):
    return {"sources": [{"name": "s1", "start_urls": ["http://x.example/"], **kw}]}


@pytest.mark.parametrize(
    "data, key",
    [
        (_one(delay="fast"), "delay"),
        (_one(title_selectr="h1"), "title_selectr"),
        (_one(type="ftp"), "type"),
        (_one(link_selector="ul[[a"), "link_selector"),
        (_one(link_pattern="(unclosed"), "link_pattern"),
        (_one(page_url_template="http://x.example/list.html"), "page_url_template"),
        (_one(max_retries=99), "max_retries"),
        (_one(encoding="klingon"), "encoding"),
        (_one(crawler="not a path"), "crawler"),
        ({"sources": [{"name": "s1", "start_urls": ["ftp://x/"]}]}, "start_urls"),
        ({"sources": [{"name": "s1"}]}, "start_urls"),
        ({"defaults": {"nmae": "x"}, "sources": [{"name": "s1", "start_urls": ["http://x/"]}]}, "nmae"),
        (_one(max_total_time=0), "max_total_time"),
        (_one(allowed_hosts=["user@x.example"]), "allowed_hosts"),
        ({"sources": [{"name": "s1", "start_urls": ["http://u:p@x.example/"]}]}, "start_urls"),
    ],
)
def test_errors_name_the_source_and_key(data, key):
    with pytest.raises(SourceConfigError) as err:
        parse_sources(data)
    assert err.value.key == key
    assert key in str(err.value)
    if "defaults" not in data:
        assert err.value.source == "s1" and "'s1'" in str(err.value)


def test_duplicate_names_and_missing_sources():
    with pytest.raises(SourceConfigError, match="duplicate"):
        parse_sources({"sources": [{"name": "a", "start_urls": ["http://x/"]}, {"name": "a", "start_urls": ["http://y/"]}]})
    with pytest.raises(SourceConfigError, match="no \\[\\[sources\\]\\]"):
        parse_sources({"defaults": {}})


def test_bad_toml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[sources]\nname=", encoding="utf-8")
    with pytest.raises(SourceConfigError, match="not valid TOML"):
        load_sources(bad)
    with pytest.raises(SourceConfigError, match="not found"):
        load_sources(tmp_path / "nope.toml")


def test_select_unknown_source():
    cfg = parse_sources(_one())
    assert cfg.select(["s1"]).sources[0].name == "s1"
    with pytest.raises(SourceConfigError):
        cfg.select(["s2"])


def test_the_shipped_example_file_is_valid():
    from pathlib import Path

    import crawlers

    cfg = load_sources(Path(crawlers.__file__).parent / "sources.example.toml")
    assert [s.type for s in cfg.sources] == ["html", "feed", "sitemap"]
