import random
import threading
import time
import tomllib
import tracemalloc
import zlib
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path

import pytest
import urllib3

from crawlers.errors import (
    ConnectionFailed,
    FetchTimeout,
    HTTPStatusError,
    OffsiteURL,
    ResponseTooLarge,
    RobotsDisallowed,
    TooManyRedirects,
    UnsupportedScheme,
    UserinfoInURL,
)
from crawlers.fetch import Fetcher, FetchPolicy, HostRateLimiter, backoff_delay, parse_retry_after

from .server import drip, drip_headers, redirect, sequence, slow, static, status


PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


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


def test_persistent_5xx_backs_off_exponentially_with_jitter_then_fails(server, sleeps):
    server.routes["/p"] = status(502)
    with pytest.raises(HTTPStatusError):
        Fetcher(policy(max_retries=3, backoff_base=1.0), sleep=sleeps, rng=random.Random(3)).fetch(server.url("/p"))
    assert [plan / 2 <= s <= plan for s, plan in zip(sleeps.calls, [1.0, 2.0, 4.0])] == [True] * 3
    assert len(sleeps.calls) == 3 and not set(sleeps.calls) & {1.0, 2.0, 4.0}  # jittered below each plan
    assert server.paths().count("/p") == 4


def test_404_is_not_retried(server, sleeps):
    with pytest.raises(HTTPStatusError) as err:
        Fetcher(policy(), sleep=sleeps).fetch(server.url("/missing"))
    assert err.value.status == 404 and server.paths().count("/missing") == 1


def test_a_host_dns_says_does_not_exist_is_not_retried_a_resolver_failure_is(monkeypatch, sleeps):
    import socket

    from crawlers.errors import ConnectionFailed, HostNotFound

    asked = []

    def resolve(host, *args, **kwargs):
        asked.append(host)
        if host == "gone.example":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    fetcher = Fetcher(policy(obey_robots=False), sleep=sleeps)
    with pytest.raises(HostNotFound):
        fetcher.fetch("http://gone.example/a.html")
    assert asked == ["gone.example"] and sleeps.calls == []
    with pytest.raises(ConnectionFailed):
        fetcher.fetch("http://flaky-dns.example/a.html")
    assert asked.count("flaky-dns.example") == 3 and len(sleeps.calls) == 2  # max_retries=2


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


def test_a_redirect_to_a_raw_utf8_path_is_followed_as_the_server_meant_it(server):
    """http.client reads header bytes as Latin-1: a Location holding /新闻/1.html in raw UTF-8 bytes
    must not become a request for its mojibake."""

    def raw_redirect(req):
        req.close_connection = True
        req.wfile.write("HTTP/1.1 302 Found\r\nLocation: /新闻/1.html\r\nContent-Length: 0\r\n\r\n".encode("utf-8"))

    server.routes["/a"] = raw_redirect
    server.routes["/%E6%96%B0%E9%97%BB/1.html"] = static("<p>新闻</p>")
    result = Fetcher(policy()).fetch(server.url("/a"))
    assert result.status == 200 and server.paths() == ["/robots.txt", "/a", "/%E6%96%B0%E9%97%BB/1.html"]


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


def test_a_huge_robots_txt_keeps_its_first_rules_and_a_bom_hides_none(make_server):
    """Past 512 KiB only a prefix is parsed (RFC 9309), not "allow everything"; a byte-order mark
    at the start must not hide the first group's User-agent line."""
    huge, bom, exact = make_server(), make_server(), make_server()
    huge.routes["/robots.txt"] = static("User-agent: *\nDisallow: /news/\n" + "# filler\n" * 80_000 + "Allow: /\n", "text/plain")
    bom.routes["/robots.txt"] = static("\ufeffUser-agent: *\nDisallow: /news/\n".encode("utf-8"), "text/plain")
    last = "Disallow: /news/"  # the last line of a file of exactly 512 KiB, without a final newline: not cut
    filler = "User-agent: *\n" + "#" * (512 * 1024 - len("User-agent: *\n") - len(last) - 1) + "\n"
    exact.routes["/robots.txt"] = static(filler + last, "text/plain")
    for srv in (huge, bom, exact):
        srv.routes["/news/1.html"] = static("<p>新闻</p>")
        with pytest.raises(RobotsDisallowed):
            Fetcher(policy()).fetch(srv.url("/news/1.html"))
        assert "/news/1.html" not in srv.paths()


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
    rng = random.Random(5)
    waits = [backoff_delay(i, 2.0, 10.0, rng=rng) for i in range(4)]
    assert all(plan / 2 <= w <= plan for w, plan in zip(waits, [2.0, 4.0, 8.0, 10.0])) and len(set(waits)) == 4
    assert backoff_delay(3, 2.0, 10.0, retry_after=30.0) == 30.0


# ---- hostile redirects (issue: allow-list bypass through user:pass@) ---------------------------

def test_redirect_to_userinfo_on_another_host_is_refused(make_server):
    a, other = make_server(), make_server("127.0.0.2")
    other.routes["/robots.txt"] = static("User-agent: *\nDisallow:\n", "text/plain")
    other.routes["/page"] = static("internal")
    a.routes["/go"] = redirect(f"http://{a.netloc}@{other.netloc}/page")
    counts = []
    with pytest.raises(UserinfoInURL):
        Fetcher(policy()).fetch(a.url("/go"), allowed_hosts=[a.netloc], count=counts.append)
    assert other.log == []  # neither robots.txt nor the page, and so no Authorization header either


def test_robots_txt_redirects_are_checked_like_pages(make_server):
    a, other = make_server(), make_server("127.0.0.2")
    other.routes["/robots.txt"] = static("User-agent: *\nDisallow:\n", "text/plain")
    a.routes["/p"] = static("page")
    for target, cause in ((other.url("/robots.txt"), "offsite"), (f"http://{a.netloc}@{other.netloc}/robots.txt", "userinfo")):
        a.routes["/robots.txt"] = redirect(target)
        counts = []
        with pytest.raises(RobotsDisallowed):  # rules unknown: nothing is fetched from the site
            Fetcher(policy()).fetch(a.url("/p"), allowed_hosts=[a.netloc], count=counts.append)
        assert counts == [f"fetch/rejected/{cause}"]
    assert other.log == [] and "/p" not in a.paths()


def test_robots_txt_redirect_on_an_allowed_host_is_followed(server):
    server.routes["/robots.txt"] = redirect("/rules.txt")
    server.routes["/rules.txt"] = static("User-agent: *\nDisallow: /x\n", "text/plain")
    server.routes["/y"] = static("y")
    fetcher = Fetcher(policy())
    with pytest.raises(RobotsDisallowed):
        fetcher.fetch(server.url("/x"), allowed_hosts=[server.netloc])
    assert fetcher.fetch(server.url("/y"), allowed_hosts=[server.netloc]).body == b"y"


def test_a_port_less_entry_does_not_admit_another_port(server):
    server.routes["/p"] = static("p")
    with pytest.raises(OffsiteURL):
        Fetcher(policy()).fetch(server.url("/p"), allowed_hosts=["127.0.0.1"])
    assert server.log == []


# ---- robots.txt rules (Protego) -----------------------------------------------------------------

def test_robots_wildcards_and_the_longest_match(server):
    server.routes["/robots.txt"] = static("User-agent: *\nDisallow: /*.pdf$\n\nUser-agent: newsdedup-test\nDisallow: /\nAllow: /news/\n", "text/plain")
    for path in ("/news/1.html", "/a/b.pdf", "/other"):
        server.routes[path] = static("x")
    fetcher = Fetcher(policy(user_agent="newsdedup-test/1.0"))
    assert fetcher.fetch(server.url("/news/1.html")).status == 200  # Allow: /news/ is longer than Disallow: /
    with pytest.raises(RobotsDisallowed):
        fetcher.fetch(server.url("/other"))
    other_agent = Fetcher(policy(user_agent="otherbot/2.0"))
    with pytest.raises(RobotsDisallowed):
        other_agent.fetch(server.url("/a/b.pdf"))  # Disallow: /*.pdf$
    assert other_agent.fetch(server.url("/other")).status == 200
    assert server.paths().count("/a/b.pdf") == 0


# ---- wall time per response, whatever the framing --------------------------------------------

@pytest.fixture
def stop_drips():
    stop = threading.Event()
    yield stop
    stop.set()


@pytest.mark.parametrize("framing", ["length", "close", "chunked"])
def test_a_slow_drip_is_cut_at_max_total_time(server, stop_drips, framing):
    server.routes["/drip"] = drip(b"x" * 200, 0.02, framing, stop_drips)  # 4 s in all, a byte per 20 ms
    started = time.monotonic()
    with pytest.raises(FetchTimeout) as err:
        Fetcher(policy(timeout=2.0, max_total_time=0.5, max_retries=0, obey_robots=False)).fetch(server.url("/drip"))
    assert "not complete within 0.5s" in str(err.value)
    assert time.monotonic() - started < 3.0  # generous: the drip alone takes 4 s


def test_a_drip_under_the_limit_is_read_whole(server, stop_drips):
    server.routes["/drip"] = drip(b"abcdefghij", 0.01, "close", stop_drips)
    assert Fetcher(policy(max_total_time=5.0, obey_robots=False)).fetch(server.url("/drip")).body == b"abcdefghij"


def test_a_dripping_robots_txt_is_cut_too(server, stop_drips):
    server.routes["/robots.txt"] = drip(b"User-agent: *\nDisallow:\n" * 10, 0.02, "length", stop_drips)
    server.routes["/p"] = static("p")
    started = time.monotonic()
    with pytest.raises(RobotsDisallowed):  # unreachable rules: nothing fetched
        Fetcher(policy(timeout=2.0, max_total_time=0.5)).fetch(server.url("/p"))
    assert time.monotonic() - started < 3.0 and "/p" not in server.paths()


# ---- decompression bombs (urllib3 >= 2.6) ------------------------------------------------------

def gzip_stream(chunks):
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip framing
    return b"".join(packer.compress(c) for c in chunks) + packer.flush()


def test_urllib3_floor_in_pyproject_is_installed():
    """urllib3 2.5 decoded a double-gzip body in one go (2.1 GB RSS); 2.6 streams it."""
    spec = next(d for d in tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"] if d.startswith("urllib3"))
    floor = tuple(int(x) for x in spec.split(">=")[1].split(".")[:2])
    assert floor >= (2, 6)
    assert tuple(int(x) for x in urllib3.__version__.split(".")[:2]) >= floor


def test_a_double_gzip_bomb_stops_at_the_size_cap(server):
    bomb = gzip_stream([gzip_stream(b"\0" * (1 << 20) for _ in range(200))])  # 200 MiB inside
    server.routes["/bomb"] = lambda req: (200, {"Content-Type": "text/html", "Content-Encoding": "gzip, gzip"}, bomb)
    tracemalloc.start()
    try:
        with pytest.raises(ResponseTooLarge):
            Fetcher(policy(max_bytes=1 << 20, obey_robots=False)).fetch(server.url("/bomb"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(bomb) < 1 << 20 and peak < 64 << 20


def test_dripping_headers_are_cut_at_max_total_time(server, stop_drips):
    server.routes["/drip"] = drip_headers(0.02, stop_drips)  # a header byte every 20 ms, forever
    started = time.monotonic()
    with pytest.raises(FetchTimeout) as err:
        Fetcher(policy(timeout=2.0, max_total_time=0.5, max_retries=0, obey_robots=False)).fetch(server.url("/drip"))
    assert "not complete within 0.5s" in str(err.value)
    assert time.monotonic() - started < 3.0


def test_https_connections_can_be_cut_too():
    """No TLS fixture server here: check that https pools build watched connections."""
    from crawlers.deadline import DeadlineAdapter, _Watched

    pool = DeadlineAdapter().poolmanager.connection_from_url("https://news.example.com/")
    assert issubclass(pool.ConnectionCls, _Watched) and pool.ConnectionCls.__name__.endswith("HTTPSConnection")
