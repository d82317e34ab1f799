"""A real daemon with the fixture ingested, for the browser view's tests."""

from __future__ import annotations

import http.cookiejar
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.daemon.conftest import DaemonProc

from .corpus import corpus

TOKEN = "web-view-token-7f3a"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browserless:
    """Pages over plain HTTP, with a cookie jar and no redirects followed."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)

    def request(self, method: str, path: str, form: dict | None = None, headers: dict | None = None):
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            **({"Content-Type": "application/x-www-form-urlencoded"} if data is not None else {}), **(headers or {})})
        try:
            with self.opener.open(req, timeout=30) as resp:
                return resp.status, resp.headers, resp.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read().decode("utf-8")

    def get(self, path: str):
        return self.request("GET", path)

    def post(self, path: str, form: dict):
        return self.request("POST", path, form)


def ingest(d: DaemonProc, auth: dict | None = None) -> None:
    r = d.post(corpus(), auth)
    assert r.status == 202 and r.json()["rejected"] == 0, r.body
    d.wait_drained()


@pytest.fixture
def open_daemon(tmp_path):
    d = DaemonProc(tmp_path).start()
    ingest(d)
    yield d
    d.stop()


@pytest.fixture
def token_daemon(tmp_path):
    d = DaemonProc(tmp_path, env={"NEWSDEDUP_DAEMON_AUTH_TOKEN": TOKEN}).start()
    ingest(d, {"Authorization": f"Bearer {TOKEN}"})
    yield d
    d.stop()
