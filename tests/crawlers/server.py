"""A tiny threaded HTTP server on 127.0.0.1 for fixture sites.

Routes map a path (without query) to a ``Route``; each route returns (status, headers, body) for
a request, so tests can script 503-then-200, slow answers, redirects and conditional GETs.
Every request is logged (path with query, headers) so tests can assert what was fetched.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import urlsplit

Response = tuple[int, dict[str, str], bytes]
Handler = Callable[[BaseHTTPRequestHandler], Response]


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    method: str = "GET"
    body: bytes = b""


def static(body: bytes | str, content_type: str = "text/html", etag: str | None = None, encoding: str = "utf-8") -> Handler:
    """A fixed page; with ``etag``, answers 304 to a matching If-None-Match."""
    data = body.encode(encoding) if isinstance(body, str) else body

    def handle(req: BaseHTTPRequestHandler) -> Response:
        headers = {"Content-Type": content_type}
        if etag:
            headers["ETag"] = etag
            if req.headers.get("If-None-Match") == etag:
                return 304, headers, b""
        return 200, headers, data

    return handle


def sequence(*handlers: Handler) -> Handler:
    """Answers with each handler in turn, then keeps using the last one."""
    calls = {"n": 0}

    def handle(req: BaseHTTPRequestHandler) -> Response:
        i = min(calls["n"], len(handlers) - 1)
        calls["n"] += 1
        return handlers[i](req)

    return handle


def status(code: int, headers: dict[str, str] | None = None, body: bytes = b"") -> Handler:
    return lambda req: (code, dict(headers or {}), body)


def redirect(location: str, code: int = 302) -> Handler:
    return status(code, {"Location": location})


def slow(seconds: float, inner: Handler) -> Handler:
    def handle(req: BaseHTTPRequestHandler) -> Response:
        time.sleep(seconds)
        return inner(req)

    return handle


@dataclass
class FixtureServer:
    routes: dict[str, Handler] = field(default_factory=dict)
    log: list[Request] = field(default_factory=list)
    _httpd: ThreadingHTTPServer | None = None

    @property
    def base(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def netloc(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"{host}:{port}"

    def url(self, path: str) -> str:
        return self.base + path

    def paths(self) -> list[str]:
        return [urlsplit(r.path).path for r in self.log]

    def start(self) -> "FixtureServer":
        server = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                self.body = self.rfile.read(length)
                self._answer("POST")

            def do_GET(self):  # noqa: N802
                self.body = b""
                self._answer("GET")

            def _answer(self, method):
                server.log.append(Request(self.path, dict(self.headers), method, self.body))
                route = server.routes.get(urlsplit(self.path).path)
                code, headers, body = route(self) if route else (404, {"Content-Type": "text/plain"}, b"not found")
                try:
                    self.send_response(code)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):  # keep test output clean
                pass

        class _Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # clients hanging up on purpose
                pass

        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
