from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from crawlers.errors import (
    ConnectionFailed,
    FetchTimeout,
    HTTPStatusError,
    OffsiteURL,
    ResponseTooLarge,
    RobotsDisallowed,
    TooManyRedirects,
    UnsupportedScheme,
)
from crawlers.fetch import Fetcher, FetchPolicy, HostRateLimiter, backoff_delay, host_allowed, parse_retry_after

from .server import redirect, sequence, slow, static, status


def policy(**kw):
    base = dict(user_agent="newsdedup-test/1.0", delay=0.0, timeout=2.0, max_retries=2, backoff_base=0.01, max_bytes=50_000, max_redirects=3)
    base.update(kw)
    return FetchPolicy(**base)


def test_503_then_200_honours_retry_after(server, sleeps):
    server.routes["/p"] = sequence(status(503, {"Retry-After": "7"}), static("<p>ok</p>"))
    counts = []
    result = Fetcher(policy(), sleep=sleeps).fetch(server.url("/p"), count=counts.append)
    assert result.status == 200 and result.body == b"<p>ok</p>"
    assert result.retries == 1
    assert 7.0 in sleeps.calls
    assert counts == ["retry/count", "retry/reason/http_503"]


def test_429_with_http_date_retry_after(server, sleeps):
    when = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    server.routes["/p"] = sequence(status(429, {"Retry-After": when}), static("ok"))
    Fetcher(policy(), sleep=sleeps).fetch(server.url("/p"))
    assert any(25 <= s <= 31 for s in sleeps.calls)


def test_retry_after_beyond_the_cap_gives_up_at_once(server, sleeps):
    server.routes["/p"] = status(503, {"Retry-After": "86400"})
    with pytest.raises(HTTPStatusError) as err:
        Fetcher(policy(max_retry_after=60), sleep=sleeps).fetch(server.url("/p"))
    assert err.value.status == 503 and err.value.cause == "http_503"
    assert server.paths().count("/p") == 1 and not sleeps.calls


def test_persistent_5xx_backs_off_exponentially_then_fails(server, sleeps):
    server.routes["/p"] = status(502)
    with pytest.raises(HTTPStatusError):
        Fetcher(policy(max_retries=3, backoff_base=1.0), sleep=sleeps).fetch(server.url("/p"))
    assert sleeps.calls == [1.0, 2.0, 4.0]
    assert server.paths().count("/p") == 4


def test_404_is_not_retried(server, sleeps):
    with pytest.raises(HTTPStatusError) as err:
        Fetcher(policy(), sleep=sleeps).fetch(server.url("/missing"))
    assert err.value.status == 404 and server.paths().count("/missing") == 1


def test_slow_page_times_out_after_retries(server, sleeps):
    server.routes["/slow"] = slow(1.0, static("late"))
    with pytest.raises(FetchTimeout) as err:
        Fetcher(policy(timeout=0.2, max_retries=1), sleep=sleeps).fetch(server.url("/slow"))
    assert err.value.cause == "timeout"
    assert isinstance(err.value.__cause__, Exception)  # the requests exception is chained
    assert server.paths().count("/slow") == 2


def test_connection_refused_is_translated(sleeps):
    with pytest.raises(ConnectionFailed):
        Fetcher(policy(max_retries=0, obey_robots=False), sleep=sleeps).fetch("http://127.0.0.1:9/")


def test_redirect_loop_is_detected(server):
    server.routes["/a"] = redirect("/b")
    server.routes["/b"] = redirect("/a")
    with pytest.raises(TooManyRedirects):
        Fetcher(policy()).fetch(server.url("/a"))
    assert server.paths().count("/a") == 1


def test_redirect_chain_longer_than_the_limit(server):
    for i in range(5):
        server.routes[f"/r{i}"] = redirect(f"/r{i + 1}")
    server.routes["/r5"] = static("end")
    with pytest.raises(TooManyRedirects):
        Fetcher(policy(max_redirects=3)).fetch(server.url("/r0"))
    assert Fetcher(policy(max_redirects=5)).fetch(server.url("/r0")).final_url == server.url("/r5")


def test_redirect_off_the_allowed_hosts_is_refused(make_server):
    a, b = make_server(), make_server()
    a.routes["/go"] = redirect(b.url("/elsewhere"))
    b.routes["/elsewhere"] = static("other site")
    with pytest.raises(OffsiteURL):
        Fetcher(policy()).fetch(a.url("/go"), allowed_hosts=[a.netloc])
    assert "/elsewhere" not in b.paths()


def test_redirect_to_a_non_http_scheme_is_refused(server):
    server.routes["/go"] = redirect("ftp://127.0.0.1/file")
    with pytest.raises(UnsupportedScheme):
        Fetcher(policy()).fetch(server.url("/go"))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)"])
def test_only_http_and_https(url):
    with pytest.raises(UnsupportedScheme):
        Fetcher(policy()).fetch(url)


def test_oversized_page_is_refused(server):
    server.routes["/big"] = static("x" * 60_000)
    server.routes["/small"] = static("x" * 40_000)
    with pytest.raises(ResponseTooLarge):
        Fetcher(policy()).fetch(server.url("/big"))
    assert len(Fetcher(policy()).fetch(server.url("/small")).body) == 40_000


def test_size_cap_holds_without_content_length(server, monkeypatch):
    """A server that lies about (or omits) Content-Length is cut off while streaming."""
    server.routes["/big"] = static("x" * 60_000)
    fetcher = Fetcher(policy())
    original = fetcher.session.get

    def get_without_length(*args, **kwargs):
        response = original(*args, **kwargs)
        response.headers.pop("Content-Length", None)
        return response

    monkeypatch.setattr(fetcher.session, "get", get_without_length)
    with pytest.raises(ResponseTooLarge):
        fetcher.fetch(server.url("/big"))


def test_robots_txt_disallow_and_user_agent(server):
    server.routes["/robots.txt"] = static("User-agent: *\nDisallow: /private/\n", "text/plain")
    server.routes["/private/x"] = static("secret")
    server.routes["/public/x"] = static("public")
    fetcher = Fetcher(policy(user_agent="newsdedup-test/1.0"))
    with pytest.raises(RobotsDisallowed):
        fetcher.fetch(server.url("/private/x"))
    fetcher.fetch(server.url("/public/x"))
    fetcher.fetch(server.url("/public/x"))
    assert "/private/x" not in server.paths()
    assert server.paths().count("/robots.txt") == 1  # cached per host
    assert all(r.headers["User-Agent"] == "newsdedup-test/1.0" for r in server.log)


def test_robots_rules_for_our_agent_and_crawl_delay(server, sleeps):
    server.routes["/robots.txt"] = static("User-agent: newsdedup-test\nDisallow: /x\nCrawl-delay: 4\n\nUser-agent: *\nDisallow:\n", "text/plain")
    server.routes["/y"] = static("y")
    fetcher = Fetcher(policy(user_agent="newsdedup-test/1.0"), sleep=sleeps)
    with pytest.raises(RobotsDisallowed):
        fetcher.fetch(server.url("/x"))
    fetcher.fetch(server.url("/y"))
    fetcher.fetch(server.url("/y"))
    assert any(3.5 < s <= 4.0 for s in sleeps.calls)  # the Crawl-delay paced the second request


def test_robots_5xx_disallows_everything_4xx_allows(make_server):
    down, missing = make_server(), make_server()
    down.routes["/robots.txt"] = status(500)
    down.routes["/p"] = static("p")
    missing.routes["/p"] = static("p")  # robots.txt -> 404
    with pytest.raises(RobotsDisallowed):
        Fetcher(policy()).fetch(down.url("/p"))
    assert Fetcher(policy()).fetch(missing.url("/p")).status == 200


def test_conditional_get_returns_not_modified(server):
    server.routes["/list"] = static("<p>list</p>", etag='"v1"')
    fetcher = Fetcher(policy())
    first = fetcher.fetch(server.url("/list"))
    assert first.etag == '"v1"' and not first.not_modified
    again = fetcher.fetch(server.url("/list"), etag=first.etag)
    assert again.not_modified and again.body == b""


def test_rate_limiter_spaces_requests_per_host():
    clock = {"t": 100.0}
    slept = []

    def sleep(s):
        slept.append(s)
        clock["t"] += s

    limiter = HostRateLimiter(sleep=sleep, clock=lambda: clock["t"])
    limiter.wait("a:80", 2.0)
    limiter.wait("b:80", 2.0)  # another host is not held back
    limiter.wait("a:80", 2.0)
    assert slept == [2.0]
    clock["t"] += 5
    limiter.wait("a:80", 2.0)
    assert slept == [2.0]


def test_same_host_requests_are_paced_through_the_fetcher(server, sleeps):
    server.routes["/p"] = static("p")
    fetcher = Fetcher(policy(delay=3.0, obey_robots=False), sleep=sleeps)
    fetcher.fetch(server.url("/p"))
    fetcher.fetch(server.url("/p"))
    assert len(sleeps.calls) == 1 and 2.0 < sleeps.calls[0] <= 3.0


def test_retry_after_and_backoff_helpers():
    now = datetime(2021, 4, 5, tzinfo=timezone.utc)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Mon, 05 Apr 2021 00:01:00 GMT", now=now) == 60.0
    assert parse_retry_after("Sun, 04 Apr 2021 00:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    assert [backoff_delay(i, 2.0, 10.0) for i in range(4)] == [2.0, 4.0, 8.0, 10.0]
    assert backoff_delay(3, 2.0, 10.0, retry_after=30.0) == 30.0


def test_host_allow_list():
    assert host_allowed("news.example.com", ["news.example.com"])
    assert host_allowed("127.0.0.1:8080", ["127.0.0.1:8080"])
    assert not host_allowed("127.0.0.1:8081", ["127.0.0.1:8080"])
    assert host_allowed("a.b.example.com", ["*.example.com"])
    assert not host_allowed("evilexample.com", ["*.example.com"])
