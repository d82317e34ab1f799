"""The URL checks of crawlers.hosts: userinfo, parser differentials, and the allow-list's
port rule (an entry without a port admits the scheme's default port only)."""

import pytest

from crawlers.errors import OffsiteURL, UnsupportedScheme, URLRejected, UserinfoInURL
from crawlers.hosts import check_target, host_allowed, host_entry_for, parse_host_entry, parse_target


def allowed(url, entries):
    return host_allowed(parse_target(url), entries)


def test_entries_by_name_port_and_subdomain():
    assert allowed("https://news.example.com/a", ["news.example.com"])
    assert allowed("HTTPS://News.Example.COM./a", ["news.example.com"])
    assert allowed("http://127.0.0.1:8080/", ["127.0.0.1:8080"])
    assert not allowed("http://127.0.0.1:8081/", ["127.0.0.1:8080"])
    assert allowed("http://a.b.example.com/", ["*.example.com"])
    assert allowed("http://example.com/", ["*.example.com"])
    assert not allowed("http://evilexample.com/", ["*.example.com"])
    assert not allowed("http://example.com.evil.net/", ["example.com"])
    assert allowed("http://[::1]:8080/", ["[::1]:8080"])
    assert allowed("http://新闻.example/", ["xn--efvy88h.example"]) and allowed("http://xn--efvy88h.example/", ["新闻.example"])


def test_an_entry_without_a_port_admits_only_the_default_port_of_the_scheme():
    entries = ["news.example.com"]
    assert allowed("http://news.example.com/", entries) and allowed("https://news.example.com/", entries)
    assert allowed("http://news.example.com:80/", entries) and allowed("https://news.example.com:443/", entries)
    for url in ("http://news.example.com:8080/", "http://news.example.com:443/", "https://news.example.com:80/"):
        assert not allowed(url, entries), url
    assert not allowed("http://127.0.0.1:6379/", ["127.0.0.1"])
    assert allowed("http://a.example.com:8443/", ["*.example.com:8443"]) and not allowed("http://a.example.com/", ["*.example.com:8443"])


def test_entries_for_start_urls_leave_out_default_ports():
    assert host_entry_for("https://News.Example.com:443/x") == "news.example.com"
    assert host_entry_for("http://127.0.0.1:8080/x") == "127.0.0.1:8080"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:x@127.0.0.2:8080/page",
        "http://user@news.example.com/",
        "http://:@news.example.com/",
        "https://news.example.com@evil.example/",
    ],
)
def test_userinfo_is_refused_whatever_the_host(url):
    with pytest.raises(UserinfoInURL) as err:
        check_target(url, None)
    assert err.value.cause == "userinfo"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1\\@127.0.0.2/",  # urllib reads 127.0.0.2, urllib3 127.0.0.1
        "http://news.example.com\\.evil.example/",
        "http://news.example.com%2eevil.example/",
        "http://news.example.com:99999/",
        "http://news.example.com:8o/",
        "http:///path-only",
    ],
)
def test_hosts_that_parsers_could_read_two_ways_are_refused(url):
    with pytest.raises(URLRejected):
        check_target(url, None)


def test_check_target_applies_the_allow_list():
    assert check_target("https://news.example.com/a", ["news.example.com"]).origin == "https://news.example.com"
    assert check_target("http://127.0.0.1:8080/a", None).origin == "http://127.0.0.1:8080"
    with pytest.raises(OffsiteURL):
        check_target("http://127.0.0.2:8080/a", ["127.0.0.1:8080"])
    with pytest.raises(UnsupportedScheme):
        check_target("file:///etc/passwd", None)


@pytest.mark.parametrize("entry", ["user@host", "host/path", "host:port", ""])
def test_unreadable_entries_are_errors(entry):
    with pytest.raises(ValueError):
        parse_host_entry(entry)
