"""Canonical URLs (indexer.urls): one spelling per article URL, whatever encoding, order and
tracking decorations the link came with."""

import pytest

from indexer.article import article_id_for
from indexer.urls import canonical_url

ENCODED_PATH = "/%E6%96%B0%E9%97%BB/2021/%E6%B1%BD%E8%BD%A6.html"


@pytest.mark.parametrize(
    "url",
    [
        "https://news.example.cn/新闻/2021/汽车.html?频道=财经&id=3",
        "https://news.example.cn" + ENCODED_PATH + "?%E9%A2%91%E9%81%93=%E8%B4%A2%E7%BB%8F&id=3",
        "https://news.example.cn" + ENCODED_PATH.lower() + "?id=3&%e9%a2%91%e9%81%93=%e8%b4%a2%e7%bb%8f",
        "HTTPS://NEWS.example.cn:443/新闻/2021/%E6%B1%BD%E8%BD%A6.html?id=3&utm_source=wx&频道=财经#comments",
    ],
)
def test_non_ascii_paths_and_queries_raw_or_encoded_give_one_url(url):
    expected = "https://news.example.cn" + ENCODED_PATH + "?id=3&%E9%A2%91%E9%81%93=%E8%B4%A2%E7%BB%8F"
    assert canonical_url(url) == expected
    assert article_id_for(url, "", "") == article_id_for(expected, "", "")


def test_query_order_tracking_parameters_and_fragments():
    assert canonical_url("HTTPS://News.Example.com:443/a/b.html?utm_source=x&id=3&spm=1#top") == "https://news.example.com/a/b.html?id=3"
    assert canonical_url("http://x.example/p?b=2&a=1") == canonical_url("http://x.example/p?a=1&b=2") == "http://x.example/p?a=1&b=2"
    assert canonical_url("http://x.example/p?UTM_Campaign=z&From=timeline&a=1&empty=") == "http://x.example/p?a=1&empty="
    assert canonical_url("http://x.example/p?q=a+b") == canonical_url("http://x.example/p?q=a%20b")


def test_default_ports_are_dropped_and_others_kept():
    assert canonical_url("http://x.example:80/p") == "http://x.example/p"
    assert canonical_url("https://x.example:443/p") == "https://x.example/p"
    assert canonical_url("http://x.example:443/p") == "http://x.example:443/p"
    assert canonical_url("https://x.example:8443/p") == "https://x.example:8443/p"


def test_hosts_userinfo_and_what_is_not_a_url():
    assert canonical_url("http://user:pw@X.Example./p") == "http://x.example/p"
    assert canonical_url("http://新闻.example/p") == "http://xn--efvy88h.example/p"
    assert canonical_url("http://x.example") == "http://x.example/"
    assert canonical_url("http://[::1]:8080/p") == "http://[::1]:8080/p"
    assert canonical_url(" not a url ") == "not a url"
    assert canonical_url("ftp://x.example/p") == "ftp://x.example/p"
    assert canonical_url("http://x.example:99999/p") == "http://x.example:99999/p"


@pytest.mark.parametrize("url", ["http://x.example/\ud800?utm_source=a#f", "http://\ud800.example/p", "http://x.example/p?q=\ud800"])
def test_urls_that_cannot_be_encoded_are_trimmed_not_raised(url):
    """canonical_url runs on every record's URL; a lone surrogate is the record validator's to
    refuse, with a clear error, not an exception from here."""
    assert "#" not in canonical_url(url) and "utm_source" not in canonical_url(url)
