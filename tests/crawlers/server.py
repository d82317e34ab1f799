"""A tiny threaded HTTP server on 127.0.0.1 for fixture sites.

Routes map a path (without query) to a ``Route``; each route returns (status, headers, body) for
a request, so tests can script 503-then-200, slow answers, redirects and conditional GETs.
Every request is logged (path with query, headers) so tests can assert what was fetched.
``FixtureServer(host="127.0.0.2")`` listens on another loopback address: "another host" for the
allow-list tests. A handler may answer by itself on the raw connection and return None
(``drip_headers``), or return an iterator of byte strings as the body (``drip``): they
are written one by one as they come, for slow-drip tests.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterator
from urllib.parse import urlsplit

Response = tuple[int, dict[str, str], "bytes | Iterator[bytes]"]
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


def drip(body: bytes, every: float, framing: str, stop: threading.Event) -> Handler:
    """Sends ``body`` one byte every ``every`` seconds. ``framing``: "length" (Content-Length),
    "close" (no length, the connection closes when done) or "chunked" (one chunk per byte).
    Ends early when ``stop`` is set or the client hangs up, so a test never waits for it."""

    def pieces() -> Iterator[bytes]:
        for i in range(len(body)):
            if stop.wait(every):
                return
            byte = body[i : i + 1]
            yield b"1\r\n" + byte + b"\r\n" if framing == "chunked" else byte
        if framing == "chunked":
            yield b"0\r\n\r\n"

    def handle(req: BaseHTTPRequestHandler) -> Response:
        headers = {"Content-Type": "text/plain"}
        if framing == "length":
            headers["Content-Length"] = str(len(body))
        elif framing == "chunked":
            headers["Transfer-Encoding"] = "chunked"
        else:
            headers["Connection"] = "close"
        return 200, headers, pieces()

    return handle


def drip_headers(every: float, stop: threading.Event, for_seconds: float = 5.0) -> Handler:
    """Writes a status line and ever more header bytes, one every ``every`` seconds, on the raw
    connection, and never ends the headers; hangs up after ``for_seconds``, or sooner when
    ``stop`` is set or the client hangs up."""

    def handle(req: BaseHTTPRequestHandler) -> None:
        req.close_connection = True
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Pad: "
        try:
            req.wfile.write(head)
            req.wfile.flush()
            for _ in range(int(for_seconds / every)):
                if stop.wait(every):
                    break
                req.wfile.write(b"a")
                req.wfile.flush()
        except OSError:
            pass

    return handle


def slow(seconds: float, inner: Handler) -> Handler:
    def handle(req: BaseHTTPRequestHandler) -> Response:
        time.sleep(seconds)
        return inner(req)

    return handle


@dataclass
class FixtureServer:
    host: str = "127.0.0.1"
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
                answer = route(self) if route else (404, {"Content-Type": "text/plain"}, b"not found")
                if answer is None:  # the route wrote its answer on the raw connection
                    return
                code, headers, body = answer
                try:
                    self.send_response(code)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    if isinstance(body, bytes):
                        self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if isinstance(body, bytes):
                        self.wfile.write(body)
                        return
                    for piece in body:
                        self.wfile.write(piece)
                        self.wfile.flush()
                    if headers.get("Connection") == "close":
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def log_message(self, *args):  # keep test output clean
                pass

        class _Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):  # clients hanging up on purpose
                pass

        self._httpd = _Server((self.host, 0), _Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
