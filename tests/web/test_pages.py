"""The browser view over plain HTTP: hostile text stays text, the token guards every page and
forms need their CSRF token, filters and search find what they should, corrections hold."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from tests.daemon.conftest import read_store

from .conftest import TOKEN, Browserless
from .corpus import HOSTILE_TITLE



class _Elements(HTMLParser):
    """Every element a browser would build from the page, with its attributes."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def active_markup(html: str) -> list[str]:
    """Scripts, event handlers and script URLs among the page's real elements (text is fine)."""
    parser = _Elements()
    parser.feed(html)
    bad = []
    for tag, attrs in parser.found:
        if tag in ("script", "iframe", "object", "embed") or (tag == "img" and "src" in attrs and attrs["src"] == "x"):
            bad.append(tag)
        bad += [f"{tag}[{k}]" for k in attrs if k.startswith("on")]
        bad += [f"{tag}[{k}={v}]" for k, v in attrs.items() if k in ("href", "src", "action")
                and (v or "").strip().lower().startswith(("javascript:", "data:"))]
    return bad


def _csrf(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def _cluster_ids(html: str) -> list[str]:
    return re.findall(r'<tr data-cluster="([^"]+)"', html)


def test_hostile_titles_bodies_and_urls_are_rendered_as_text(open_daemon):
    b = Browserless(open_daemon.url)
    pages = ["/ui/clusters", "/ui/clusters?q=%E5%8F%B0%E9%A3%8E", "/ui/clusters/evil", "/ui/articles/evil",
             "/ui/articles/evil-copy", "/ui/clusters/evil/compare/evil-copy", "/ui/overview"]
    for path in pages:
        status, headers, html = b.get(path)
        assert status == 200, (path, html[:300])
        assert active_markup(html) == [], path
        csp = headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp and "unsafe-inline" not in csp
        assert headers["X-Content-Type-Options"] == "nosniff"
    _, _, cluster = b.get("/ui/clusters/evil")
    assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;台风“海燕”" in cluster  # shown, as text
    assert "javascript:alert(&#39;url&#39;)" in cluster  # the URL as text, not a link
    assert 'href="https://ok.example.com/evil-copy&#34; onmouseover=&#34;alert(4)"' in cluster  # quote escaped in the attribute
    _, _, article = b.get("/ui/articles/evil")
    assert "&lt;b&gt;坏来源&lt;/b&gt;" in article
    # the comparison is of a cluster's canonical and one of its members, no other pair
    assert b.get("/ui/clusters/s01/compare/s02")[0] == 404 and b.get("/ui/clusters/s01-a/compare/s01")[0] == 404
    _, _, listing = b.get("/ui/clusters?q=%3Cscript%3E")
    assert _cluster_ids(listing) == ["evil"]
    assert HOSTILE_TITLE not in listing


def test_filters_search_sort_and_paging(open_daemon):
    b = Browserless(open_daemon.url)
    _, _, first = b.get("/ui/clusters")
    ids = _cluster_ids(first)
    assert len(ids) == 25 and ids[0] == "s01"  # largest first: s01 and its two copies
    assert "33 clusters, page 1 of 2" in first
    _, _, second = b.get("/ui/clusters?page=2")
    assert len(_cluster_ids(second)) == 8 and not set(_cluster_ids(second)) & set(ids)
    # search: a Chinese title fragment, an id, a URL
    assert _cluster_ids(b.get("/ui/clusters?q=%E7%AC%AC17%E5%B1%8A")[2]) == ["s17"]  # 第17届
    assert _cluster_ids(b.get("/ui/clusters?q=s02-a")[2]) == ["s02"]
    assert _cluster_ids(b.get("/ui/clusters?q=repost.example.com%2Fs03")[2]) == ["s03"]
    # source, reason and publish-date filters
    assert set(_cluster_ids(b.get("/ui/clusters?reason=exact")[2])) == {"s01", "s02", "s03", "evil"}
    assert _cluster_ids(b.get("/ui/clusters?reason=near")[2]) == ["s05"]
    by_source = set(_cluster_ids(b.get("/ui/clusters?source=%E6%BE%8E%E6%B9%83%E6%96%B0%E9%97%BB")[2]))  # 澎湃新闻
    assert "s01" in by_source and "s02" in by_source and "s04" not in by_source
    one_day = _cluster_ids(b.get("/ui/clusters?since=2024-03-11&until=2024-03-11")[2])
    assert one_day and all(int(cid[1:]) % 3 == 1 for cid in one_day if cid.startswith("s"))
    status, _, _ = b.get("/ui/clusters?since=yesterday")
    assert status == 400
    newest = _cluster_ids(b.get("/ui/clusters?sort=newest")[2])
    assert newest[0] in {"s02", "s05", "s08", "s11", "s14", "s17", "s20", "s23", "s26", "s29", "s32", "evil"}


def test_token_login_session_cookie_and_csrf(token_daemon):
    d = token_daemon
    b = Browserless(d.url)
    status, headers, _ = b.get("/ui/clusters/s01")
    assert status == 303 and headers["Location"].startswith("/ui/login?next=%2Fui%2Fclusters%2Fs01")
    for path in ("/ui/overview", "/ui/articles/s01", "/ui/clusters/s01/compare/s01-a"):
        assert b.get(path)[0] == 303, path
    status, _, html = b.post("/ui/login", {"token": "wrong", "next": "/ui/clusters"})
    assert status == 401 and TOKEN not in html and "wrong" not in html
    # a login link cannot send the browser to another site
    status, headers, _ = b.post("/ui/login", {"token": TOKEN, "name": "编辑 王", "next": "//evil.example/x"})
    assert status == 303 and headers["Location"] == "/ui/clusters"
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and TOKEN not in cookie
    status, _, html = b.get("/ui/clusters/s01")
    assert status == 200 and TOKEN not in html and "编辑 王" in html
    # the API still wants the bearer token: a session cookie is not enough
    assert b.get("/v1/clusters/s01")[0] == 401
    # a form without its CSRF token changes nothing
    status, _, html = b.post("/ui/clusters/s01/split", {"article_id": "s01-a"})
    assert status == 403 and "CSRF" in html
    assert {a.id: a.cluster_id for a in read_store(d.store)}["s01-a"] == "s01"
    status, headers, _ = b.post("/ui/clusters/s01/split", {"article_id": "s01-a", "csrf": _csrf(html)})
    assert status == 303 and headers["Location"] == "/ui/clusters/s01?done=split"
    assert {a.id: a.cluster_id for a in read_store(d.store)}["s01-a"] == "s01-a"
    labels = d.request("GET", "/v1/labels", headers={"Authorization": f"Bearer {TOKEN}"}).json()["labels"]
    assert [(x["a"], x["b"], x["label"], x["by"]) for x in labels] == [("s01-a", "s01", 0, "编辑 王")]
    # logging out ends the session
    _, _, page = b.get("/ui/clusters")
    assert b.post("/ui/logout", {"csrf": _csrf(page)})[0] == 303
    assert b.get("/ui/clusters")[0] == 303
    # guessing is slow: after 10 wrong tokens a minute even the right one waits
    statuses = [b.post("/ui/login", {"token": f"guess-{i}"})[0] for i in range(10)]
    assert statuses == [401] * 9 + [429]  # one wrong try above: nine more fill the window
    status, headers, html = b.post("/ui/login", {"token": TOKEN})
    assert status == 429 and int(headers["Retry-After"]) >= 1 and "Too many wrong tokens" in html
    assert TOKEN not in d.log_text()


def test_splitting_the_canonical_out_shows_the_rest_under_its_new_lead_with_its_history(open_daemon):
    b = Browserless(open_daemon.url)
    _, _, page = b.get("/ui/clusters/s01")
    status, _, _ = b.post("/ui/clusters/s01/merge", {"from": "s02", "csrf": _csrf(page)})
    assert status == 303
    # "into itself" is the same as alone (the API reads it so): the form names the canonical twice
    status, headers, _ = b.post("/ui/clusters/s01/split", {"article_id": "s01", "into": "s01", "csrf": _csrf(page)})
    # s01-a, the oldest other member, leads the rest, and the browser is taken there
    assert status == 303 and headers["Location"] == "/ui/clusters/s01-a?done=split"
    assert {a.id: a.cluster_id for a in read_store(open_daemon.store)}["s02"] == "s01-a"
    _, _, rest = b.get("/ui/clusters/s01-a")
    changes = re.search(r'<ul class="changes" id="changes">(.*?)</ul>', rest, re.S).group(1)
    assert changes.count("<li>") == 2 and "merge · s02 → s01" in changes
    assert "split · s01 → s01" in changes and "the rest led by s01-a" in changes


def test_a_correction_form_cut_short_applies_nothing(tmp_path):
    """A client that stalls mid-body is cut off after daemon.read_timeout_seconds; the part that
    arrived (here, the form without its ``into``) must not be applied as if it were the form."""
    import socket

    from tests.daemon.conftest import DaemonProc

    from .conftest import ingest

    d = DaemonProc(tmp_path, sets={"daemon.read_timeout_seconds": "1"}).start()
    try:
        ingest(d)
        b = Browserless(d.url)
        _, _, page = b.get("/ui/clusters/s01")
        cookie = "; ".join(f"{c.name}={c.value}" for c in b.jar)
        full = f"csrf={_csrf(page)}&article_id=s01-a&into=s02".encode()
        head = (f"POST /ui/clusters/s01/split HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n"
                f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(full)}\r\n\r\n").encode()
        with socket.create_connection(("127.0.0.1", d.port), timeout=30) as s:
            s.sendall(head + full[: full.index(b"&into")])
            answer = b""
            while chunk := s.recv(65536):  # the daemon closes the connection after its answer
                answer += chunk
        assert b" 400 " in answer.split(b"\r\n")[0] and b"incomplete" in answer
        assert {a.id: a.cluster_id for a in read_store(d.store)}["s01-a"] == "s01"  # not moved anywhere
    finally:
        d.stop()


def test_ids_with_a_slash_are_shown_and_corrected(open_daemon):
    """A URL is a natural article id: its "/" reaches the server as %2F, decoded before routing."""
    import json
    from urllib.parse import quote

    d = open_daemon
    story = {"title": "斜杠编号的新闻标题在这里", "content": "这是一篇编号里带斜杠的新闻正文，内容足够长，可以被索引。" * 3,
             "publish_time": "2024-03-12T08:00:00+08:00"}
    assert d.post([{**story, "id": "https://a.example/news/1"}, {**story, "id": "https://b.example/news/1"}]).status == 202
    d.wait_drained()
    one, two = (quote(x, safe="") for x in ("https://a.example/news/1", "https://b.example/news/1"))
    assert json.loads(d.get(f"/v1/articles/{two}").body)["cluster_id"] == "https://a.example/news/1"
    assert json.loads(d.get(f"/v1/clusters/{one}").body)["size"] == 2
    b = Browserless(d.url)
    for path in (f"/ui/clusters/{one}", f"/ui/articles/{two}", f"/ui/clusters/{one}/compare/{two}"):
        status, _, html = b.get(path)
        assert status == 200 and "https://b.example/news/1" in html, path
    _, _, page = b.get(f"/ui/clusters/{one}")
    status, headers, _ = b.post(f"/ui/clusters/{one}/split", {"article_id": "https://b.example/news/1", "csrf": _csrf(page)})
    assert status == 303 and headers["Location"] == f"/ui/clusters/{one}?done=split"
    assert {a.id: a.cluster_id for a in read_store(d.store)}["https://b.example/news/1"] == "https://b.example/news/1"
    assert b.get("/ui/clusters/nope/compare/x")[0] == 404 and b.get("/ui/overview")[0] == 200
    # an id holding "/compare/" is not read as a comparison
    phones = {**story, "title": "手机对比评测的新闻标题", "content": "两款新手机的对比评测结果出炉，续航和拍照各有长处。" * 3}
    assert d.post([{**phones, "id": "https://a.example/compare/phones"},
                   {**phones, "id": "https://b.example/compare/phones-copy"}]).status == 202
    d.wait_drained()
    one, two = (quote(x, safe="") for x in ("https://a.example/compare/phones", "https://b.example/compare/phones-copy"))
    status, _, html = b.get(f"/ui/clusters/{one}")
    assert status == 200 and "https://b.example/compare/phones-copy" in html
    status, _, html = b.get(f"/ui/clusters/{one}/compare/{two}")
    assert status == 200 and "Compared with the canonical" in html
