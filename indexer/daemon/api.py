"""The HTTP API, on the standard library's ``ThreadingHTTPServer`` (one thread per connection).

Why no framework: the API is eight small routes whose costly work happens elsewhere (the queue
commit, the worker), so the standard server is enough, adds no dependency, and its behaviour under
``kill -9`` and SIGTERM is easy to reason about. Put a reverse proxy (TLS, access logs) in front of
it for anything beyond loopback.

Every route but ``/healthz``, ``/readyz`` and ``/metrics`` needs ``Authorization: Bearer
<daemon.auth_token>`` when a token is configured; the comparison is constant-time and the token is
never logged.

Clients are untrusted: connections are capped (``daemon.max_connections``; more are answered 503
without a thread), each request must arrive within ``daemon.request_read_seconds`` and no read
waits longer than ``daemon.read_timeout_seconds``, and request bodies in flight are bounded in
bytes (``daemon.max_inflight_body_bytes``) before they are read. See ``http_limits``.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..article import article_from_record
from ..errors import InvalidArticle, StoreError
from .http_limits import ByteBudget, ConnectionReaper
from .metrics import CONTENT_TYPE_LATEST
from .queue import QueueFull

if TYPE_CHECKING:  # pragma: no cover
    from .service import Daemon

log = logging.getLogger(__name__)

MAX_TOP = 1000
OPEN_ROUTES = frozenset({"healthz", "readyz", "metrics"})  # probes and scrapes need no token


class ApiServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: "Daemon"):
        self.app = app
        self.connection_slots = threading.BoundedSemaphore(app.d.max_connections)
        self.body_budget = ByteBudget(app.d.max_inflight_body_bytes)
        app.metrics.body_bytes_in_flight.set_function(lambda: self.body_budget.used)
        self.reaper = ConnectionReaper()
        self._close_gracefully: set[socket.socket] = set()
        self._close_lock = threading.Lock()
        super().__init__(address, Handler)
        self.reaper.start()

    def process_request(self, request, client_address) -> None:
        """One thread per connection, up to ``max_connections``; beyond it a 503 from this
        (the accepting) thread, so stalled clients cannot pile up threads."""
        if not self.connection_slots.acquire(blocking=False):
            self.app.metrics.busy.labels("connections").inc()
            retry = self.app.d.retry_after_seconds
            body = json.dumps({"error": f"busy: {self.app.d.max_connections} connections open; retry"}).encode()
            try:
                request.setblocking(False)  # a fresh socket's send buffer takes this at once
                request.send(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
                             b"Retry-After: %d\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (retry, len(body), body))
            except OSError:
                pass
            self.mark_close_gracefully(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connection_slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connection_slots.release()

    def mark_close_gracefully(self, request: socket.socket) -> None:
        """The client may still be sending (a refused or unread body): let it finish reading our
        answer instead of resetting the connection under it."""
        with self._close_lock:
            self._close_gracefully.add(request)

    def shutdown_request(self, request) -> None:
        with self._close_lock:
            graceful = request in self._close_gracefully
            self._close_gracefully.discard(request)
        if graceful:
            self.reaper.close_gracefully(request)
        else:
            super().shutdown_request(request)

    def server_close(self) -> None:
        super().server_close()
        self.reaper.stop()


class _Reply(Exception):
    def __init__(self, code: int, body: Any, headers: dict[str, str] | None = None, close: bool = False):
        self.code, self.body, self.headers, self.close = code, body, headers or {}, close


def parse_body(text: str) -> tuple[list[Any], dict[int, str]]:
    """One JSON object, a JSON array, or NDJSON. Returns the items and ``{index: error}`` for
    NDJSON lines (or array elements) that are not JSON; raises ``_Reply(400)`` when nothing is."""
    text = text.strip()
    if not text:
        raise _Reply(400, {"error": "empty body"})
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as first:  # JSONDecodeError is a ValueError
        if isinstance(first, RecursionError) and (elements := split_json_array(text)) is not None:
            return _parse_each(elements)  # one element too deep for the parser: refuse only that one
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if len(lines) < 2:
            raise _Reply(400, {"error": f"body is not JSON: {_json_error(first)}"}) from None
        items, errors = _parse_each(lines)
        if len(errors) == len(lines):
            raise _Reply(400, {"error": "body is neither JSON nor NDJSON"})
        return items, errors
    if isinstance(data, dict):
        return [data], {}
    if isinstance(data, list):
        return data, {}
    raise _Reply(400, {"error": f"expected a JSON object, an array of objects or NDJSON, got {type(data).__name__}"})


def _parse_each(texts: list[str]) -> tuple[list[Any], dict[int, str]]:
    items: list[Any] = []
    errors: dict[int, str] = {}
    for i, text in enumerate(texts):
        try:
            items.append(json.loads(text))
        except (ValueError, RecursionError) as exc:
            items.append(None)
            errors[i] = f"invalid JSON: {_json_error(exc)}"
    return items, errors


# strings (skipped whole, escapes included) and the punctuation that shapes a JSON array
_JSON_SHAPE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')


def split_json_array(text: str) -> list[str] | None:
    """The top-level elements of a JSON array as text, found without parsing them (so without
    recursion, at any depth); None when ``text`` is not one array whose brackets balance."""
    if not text.startswith("["):
        return None
    depth, start, parts = 0, 1, []
    for m in _JSON_SHAPE.finditer(text):
        mark = m.group()[0]
        if mark in "[{":
            depth += 1
        elif mark in "]}":
            depth -= 1
            if depth == 0:
                if text[m.end():].strip():
                    return None
                last = text[start : m.start()]
                if last.strip() or parts:
                    parts.append(last)
                return parts
        elif mark == "," and depth == 1:
            parts.append(text[start : m.start()])
            start = m.end()
    return None


def _json_error(exc: BaseException) -> str:
    """Why the parser gave up; it raises RecursionError for input nested deeper than it can go."""
    if isinstance(exc, RecursionError):
        return "nested too deeply to parse"
    return str(exc)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ApiServer
    server_version = "newsdedup"
    sys_version = ""

    def setup(self) -> None:
        self.timeout = self.server.app.d.read_timeout_seconds  # the socket timeout of every read and write
        super().setup()

    def handle_one_request(self) -> None:
        """The whole request (line, headers, body) must arrive by ``request_read_seconds``; the
        reaper cuts the read side of the connection when it has not. Handling is not limited."""
        self._body_reserved = 0
        self.server.reaper.arm(self.connection, self.server.app.d.request_read_seconds)
        try:
            super().handle_one_request()
        finally:
            self.server.reaper.disarm(self.connection)
            if self._body_reserved:
                self.server.body_budget.give_back(self._body_reserved)
                self._body_reserved = 0

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("%s %s", self.address_string(), format % args)

    # ---- plumbing ---------------------------------------------------------------------------------------
    def _send(self, code: int, body: Any, headers: dict[str, str] | None = None, close: bool = False,
              content_type: str = "application/json; charset=utf-8") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False, default=str).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _dispatch(self, method: str) -> None:
        app = self.server.app
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        route = "other"
        code = 500
        try:
            route, handler = self._route(method, path)
            if method != "POST":
                self.server.reaper.disarm(self.connection)  # nothing more to read
            if route not in OPEN_ROUTES and not self._authorised():
                raise _Reply(401, {"error": "missing or wrong bearer token"}, {"WWW-Authenticate": 'Bearer realm="newsdedup"'},
                             close=method == "POST")
            code, body, headers, ctype = handler(parts)
            self._send(code, body, headers, content_type=ctype)
        except _Reply as reply:
            code = reply.code
            if reply.close:
                self.server.mark_close_gracefully(self.connection)
            self._send(reply.code, reply.body, reply.headers, close=reply.close)
        except (BrokenPipeError, ConnectionResetError):
            code = 499
        except Exception:  # noqa: BLE001 - a bug in one request must not take the daemon down
            log.exception("%s %s failed", method, route)
            code = 500
            try:
                self._send(500, {"error": "internal error"}, close=True)
            except OSError:
                pass
        finally:
            app.metrics.requests.labels(route, str(code)).inc()

    def _route(self, method: str, path: str):
        segs = [unquote(s) for s in path.split("/") if s]
        table = {
            ("GET", "/healthz"): ("healthz", self._healthz),
            ("GET", "/readyz"): ("readyz", self._readyz),
            ("GET", "/metrics"): ("metrics", self._metrics),
            ("POST", "/v1/articles"): ("articles_post", self._post_articles),
            ("GET", "/v1/clusters"): ("clusters", self._clusters),
        }
        if (method, path) in table:
            return table[(method, path)]
        if method == "GET" and len(segs) == 3 and segs[:2] == ["v1", "articles"]:
            return "article", lambda parts: self._article(segs[2])
        if method == "GET" and len(segs) == 3 and segs[:2] == ["v1", "clusters"]:
            return "cluster", lambda parts: self._cluster(segs[2])
        known = {p for (_, p) in table} | ({path} if len(segs) == 3 and segs[0] == "v1" and segs[1] in ("articles", "clusters") else set())
        if path in known:
            raise _Reply(405, {"error": f"{method} not allowed on {path}"}, close=method == "POST")
        raise _Reply(404, {"error": "not found"}, close=method == "POST")

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self._dispatch("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")

    # ---- routes ---------------------------------------------------------------------------------------------
    def _healthz(self, parts):
        return 200, {"status": "ok"}, {}, "application/json; charset=utf-8"

    def _readyz(self, parts):
        app = self.server.app
        reasons = app.not_ready_reasons()
        body = {"ready": not reasons, "reasons": reasons, "queue_depth": app.queue.depth(), "lease_held": app.lease_held(),
                "dead_letters": app.queue.dead_count()}
        headers = {} if not reasons else {"Retry-After": str(app.d.retry_after_seconds)}
        return (200 if not reasons else 503), body, headers, "application/json; charset=utf-8"

    def _metrics(self, parts):
        return 200, self.server.app.metrics.render(), {}, CONTENT_TYPE_LATEST

    def _authorised(self) -> bool:
        token = self.server.app.d.auth_token
        if not token:
            return True
        header = self.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())

    def _read_body(self) -> bytearray:
        d = self.server.app.d
        if self.headers.get("Transfer-Encoding", "").lower() not in ("", "identity"):
            raise _Reply(411, {"error": "send a Content-Length (chunked bodies are not accepted)"}, close=True)
        raw_len = self.headers.get("Content-Length")
        if raw_len is None:
            raise _Reply(411, {"error": "Content-Length required"}, close=True)
        try:
            length = int(raw_len)
            if length < 0:
                raise ValueError
        except ValueError:
            raise _Reply(400, {"error": "bad Content-Length"}, close=True) from None
        if length > d.max_body_bytes:
            raise _Reply(413, {"error": f"body of {length} bytes exceeds {d.max_body_bytes}"}, close=True)
        if not self.server.body_budget.try_take(length):
            self.server.app.metrics.busy.labels("body_bytes").inc()
            raise _Reply(503, {"error": f"busy: request bodies in flight would exceed {d.max_inflight_body_bytes} bytes; retry"},
                         {"Retry-After": str(d.retry_after_seconds)}, close=True)
        self._body_reserved = length  # given back when this request is answered
        body = bytearray(length)
        view = memoryview(body)
        got = 0
        try:
            while got < length:
                n = self.rfile.readinto1(view[got:])
                if not n:
                    break  # end of file: the client stopped, or the reaper cut a request past its deadline
                got += n
        except TimeoutError:
            pass  # nothing arrived for read_timeout_seconds
        finally:
            view.release()
        self.server.reaper.disarm(self.connection)
        if got != length:
            raise _Reply(400, {"error": f"body incomplete: {got} of {length} bytes (Content-Length) arrived in time"}, close=True)
        return body

    def _post_articles(self, parts):
        app = self.server.app
        retry = {"Retry-After": str(app.d.retry_after_seconds)}
        if not app.accepting:
            raise _Reply(503, {"error": "shutting down"}, retry, close=True)
        body = self._read_body()
        if app.worker.standby:
            raise _Reply(503, {"error": "standby: another daemon holds the writer lease"}, retry)
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _Reply(400, {"error": f"body is not UTF-8: {exc}"}) from None
        items, parse_errors = parse_body(text)
        if len(items) > app.d.max_items_per_request:
            raise _Reply(413, {"error": f"{len(items)} articles exceed {app.d.max_items_per_request} per request"})
        results: list[dict] = []
        valid: list[tuple[str, dict]] = []
        tz = app.settings.default_tz
        for i, record in enumerate(items):
            if i in parse_errors:
                results.append({"index": i, "decision": "rejected", "error": parse_errors[i]})
                continue
            try:
                article = article_from_record(record, f"item {i}", tz)
            except InvalidArticle as exc:
                results.append({"index": i, "decision": "rejected", "error": exc.reason})
                continue
            valid.append((article.id, record))
            results.append({"index": i, "id": article.id, "status": "accepted", "decision": "accepted"})
        rejected = len(items) - len(valid)
        try:
            app.queue.put_many(valid, origin="http")
        except QueueFull as exc:
            raise _Reply(429, {"error": f"queue full: {exc}"}, retry) from None
        app.metrics.accepted.labels("http").inc(len(valid))
        if rejected:
            app.metrics.request_rejected.inc(rejected)
        payload = {"accepted": [aid for aid, _ in valid], "rejected": rejected, "results": results,
                   "queue_depth": app.queue.depth()}
        return (202 if valid else 422), payload, {}, "application/json; charset=utf-8"

    def _store(self):
        indexer = self.server.app.worker.indexer
        if indexer is None:
            raise _Reply(503, {"error": "the store is not open yet"}, {"Retry-After": str(self.server.app.d.retry_after_seconds)})
        return indexer.store

    def _article(self, article_id: str):
        store = self._store()
        try:
            found = store.get_many([article_id]).get(article_id)
        except StoreError as exc:
            raise _Reply(503, {"error": f"store unavailable: {exc}"}) from None
        if found is not None:
            return 200, {**found.export_record(), "status": "indexed"}, {}, "application/json; charset=utf-8"
        if self.server.app.queue.contains(article_id):
            return 202, {"id": article_id, "status": "queued"}, {}, "application/json; charset=utf-8"
        raise _Reply(404, {"error": "no such article", "id": article_id})

    def _clusters(self, parts):
        store = self._store()
        raw = parse_qs(parts.query).get("top", ["10"])[0]
        try:
            top = int(raw)
            if not 1 <= top <= MAX_TOP:
                raise ValueError
        except ValueError:
            raise _Reply(400, {"error": f"top must be an integer from 1 to {MAX_TOP}"}) from None
        try:
            rows = store.top_clusters(top)
            canon = store.get_many([cid for cid, _ in rows])
        except StoreError as exc:
            raise _Reply(503, {"error": f"store unavailable: {exc}"}) from None
        clusters = [{"cluster_id": cid, "size": size, "title": canon[cid].title if cid in canon else None} for cid, size in rows]
        return 200, {"clusters": clusters}, {}, "application/json; charset=utf-8"

    def _cluster(self, cluster_id: str):
        store = self._store()
        try:
            members = store.cluster_members(cluster_id)
        except StoreError as exc:
            raise _Reply(503, {"error": f"store unavailable: {exc}"}) from None
        if not members:
            raise _Reply(404, {"error": "no such cluster", "cluster_id": cluster_id})
        members.sort(key=lambda a: (not a.is_canonical, a.indexed_at.timestamp() if a.indexed_at else 0.0, a.id))
        return 200, {"cluster_id": cluster_id, "size": len(members),
                     "members": [m.export_record() for m in members]}, {}, "application/json; charset=utf-8"
