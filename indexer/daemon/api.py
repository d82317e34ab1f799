"""The HTTP API, on FastAPI (Starlette) served by uvicorn; its OpenAPI spec is generated from
this code (``GET /openapi.json``).

Costly work happens elsewhere (the queue commit, the worker, the store), in a bounded thread pool:
the event loop only parses HTTP, so stalled clients cost sockets, not threads. The limits on
connections, read times and bodies in flight are in ``http_limits``.

Every route but ``/healthz``, ``/readyz`` and ``/metrics`` needs ``Authorization: Bearer
<daemon.auth_token>`` when a token is configured (the browser view takes a session cookie it got
for the token instead, see ``indexer.web``); the comparison is constant-time and the token is
never logged.

``newsdedup serve`` builds the app with the ingest routes (``ServiceContext.daemon`` set);
``newsdedup ui`` builds it for a store alone (reads and corrections).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
import threading
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.convertors import PathConvertor, register_url_convertor

from ..article import article_from_record
from ..compare.rules import refusal
from ..errors import InvalidArticle, StoreError, WriterBusy
from ..settings import DaemonSettings, Settings
from ..store.base import ClusterChange, StoredArticle, oldest_other_member
from .http_limits import ByteBudget
from ..labels import MERGE_REASON, labels_from_changes, person_name, split_reason
from .metrics import CONTENT_TYPE_LATEST, DaemonMetrics
from .queue import QueueFull

if TYPE_CHECKING:  # pragma: no cover
    from ..pipeline import Indexer
    from .lease import WriterLease
    from .service import Daemon

log = logging.getLogger(__name__)

MAX_TOP = 1000
MAX_SMALL_BODY = 64 * 1024  # corrections and forms: anything larger is not one


class ApiError(Exception):
    """An answer other than success: status, JSON body, headers; ``close`` ends the connection
    (its body may be unread)."""

    def __init__(self, code: int, error: str, headers: dict[str, str] | None = None, close: bool = False, **extra: Any):
        self.code, self.body, self.headers, self.close = code, {"error": error, **extra}, headers or {}, close


@dataclass
class ServiceContext:
    """What the routes need: settings, metrics, the open indexer (None while it opens), and the
    ingest daemon (None for ``newsdedup ui``)."""

    settings: Settings
    d: DaemonSettings
    metrics: DaemonMetrics
    current_indexer: Callable[[], "Indexer | None"]
    daemon: "Daemon | None" = None
    writer: "WriterLease | None" = None  # ``newsdedup ui``: the store's writer lease, taken for each correction
    body_budget: ByteBudget = field(init=False)

    def __post_init__(self) -> None:
        self.body_budget = ByteBudget(self.d.max_inflight_body_bytes)
        self.metrics.body_bytes_in_flight.set_function(lambda: self.body_budget.used)
        self._explainer: "Indexer | None" = None
        self._explain_lock = threading.Lock()

    def _explaining(self) -> "Indexer":
        """The routes' own indexer over the worker's store (its cache of text sides is not shared
        with the worker's); the caller holds ``_explain_lock``."""
        from ..pipeline import Indexer

        ix = self.indexer()
        if self._explainer is None or self._explainer.store is not ix.store:
            self._explainer = Indexer(ix.settings, ix.store, ix.featurizer)
        return self._explainer

    @contextmanager
    def correcting(self) -> Iterator[None]:
        """Where a correction may write: in a daemon, while its worker holds the writer lease (a
        daemon on standby would write beside the one that holds it); in ``newsdedup ui``, while
        the view holds the lease itself, for that correction (not while a daemon or an ingest
        writes into the store)."""
        if self.daemon is not None and not self.daemon.lease_held():
            raise ApiError(503, "this daemon does not hold the writer lease (starting, or standby while another daemon "
                                "holds it): correct in the writer's view", self.retry_after())
        with ExitStack() as held:
            if self.writer is not None:
                try:
                    held.enter_context(self.writer.held())
                except WriterBusy as exc:
                    raise ApiError(409, str(exc)) from None
            yield

    def explain(self, article_id: str, limit: int = 5) -> dict:
        """``Indexer.explain`` for the routes, one explanation at a time."""
        with self._explain_lock:
            return self._explaining().explain(article_id, limit)

    def pair_evidence(self, pairs: Sequence[tuple[StoredArticle, StoredArticle]]) -> list[dict]:
        """The rules' verdict and evidence on each pair of stored articles, as ``explain`` gives
        them for an article against its match, without the candidate search and the change-log
        read that ``explain`` makes around them (a cluster page shows one pair per member)."""
        with self._explain_lock:
            ix = self._explaining()
            rows = []
            for a, b in pairs:
                ev, verdict = ix.compare_stored(a, b)
                rows.append({"id": b.id, "verdict": verdict.reason.value if verdict else None,
                             "score": verdict.score if verdict else None,
                             "refused": refusal(ev, ix.settings.decision, ix.settings.simhash), "evidence": ev.__dict__})
            return rows

    def retry_after(self) -> dict[str, str]:
        return {"Retry-After": str(self.d.retry_after_seconds)}

    def indexer(self) -> "Indexer":
        ix = self.current_indexer()
        if ix is None:
            raise ApiError(503, "the store is not open yet", self.retry_after())
        return ix


# ---- schemas (the OpenAPI spec is made from these) ------------------------------------------------------
class ErrorBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    error: str


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    ready: bool
    reasons: list[str]
    queue_depth: int | None = None
    lease_held: bool | None = None
    dead_letters: int | None = None


class ItemResult(BaseModel):
    index: int
    decision: str = Field(description="accepted or rejected")
    id: str | None = None
    status: str | None = None
    error: str | None = None


class IngestReply(BaseModel):
    accepted: list[str]
    rejected: int
    results: list[ItemResult]
    queue_depth: int


class ArticleOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    url: str | None = None
    source: str | None = None
    title: str | None = None
    publish_time: str | None = None
    cluster_id: str | None = None
    is_canonical: bool | None = None
    dup_of: str | None = None
    dup_reason: str | None = None
    score: float | None = None
    status: str = Field(description="indexed, or queued (202: accepted, not yet indexed)")


class ClusterRow(BaseModel):
    cluster_id: str
    size: int
    title: str | None


class ClusterList(BaseModel):
    clusters: list[ClusterRow]


class ClusterOut(BaseModel):
    cluster_id: str
    size: int
    members: list[ArticleOut]


class SplitRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    article_id: str = Field(min_length=1, max_length=1000, description="the article to move out of the cluster")
    into: str | None = Field(None, min_length=1, max_length=1000,
                             description="a cluster to move it into; absent: it becomes a cluster of its own")


class MergeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    into: str = Field(min_length=1, max_length=1000, description="the cluster that stays")
    from_: str = Field(alias="from", min_length=1, max_length=1000, description="the cluster whose members join it")


class Label(BaseModel):
    a: str
    b: str
    label: int = Field(description="1: the same story, 0: different stories")
    kind: str
    by: str
    at: str | None


class CorrectionReply(BaseModel):
    change: dict[str, Any]
    labels: list[Label]
    cluster_id: str
    size: int


class LabelList(BaseModel):
    labels: list[Label]


ERR = {"model": ErrorBody}
ARTICLES_BODY = {
    "requestBody": {
        "required": True,
        "description": "One article object, a JSON array of them, or NDJSON (one object a line)",
        "content": {
            "application/json": {"schema": {"oneOf": [
                {"$ref": "#/components/schemas/ArticleIn"},
                {"type": "array", "items": {"$ref": "#/components/schemas/ArticleIn"}, "maxItems": 10000},
            ]}},
            "application/x-ndjson": {"schema": {"type": "string"}},
        },
    }
}
ARTICLE_IN_SCHEMA = {
    "type": "object",
    "description": "title or content is required; other fields are kept as extra fields",
    "properties": {
        "id": {"type": "string"}, "title": {"type": "string"}, "content": {"type": "string"},
        "url": {"type": "string"}, "source": {"type": "string"},
        "publish_time": {"type": "string", "description": "ISO 8601 or any date form the crawlers read"},
    },
    "additionalProperties": True,
}


# ---- request bodies -----------------------------------------------------------------------------------
def parse_body(text: str) -> tuple[list[Any], dict[int, str]]:
    """One JSON object, a JSON array, or NDJSON. Returns the items and ``{index: error}`` for
    NDJSON lines (or array elements) that are not JSON; raises ``ApiError(400)`` when nothing is."""
    text = text.strip()
    if not text:
        raise ApiError(400, "empty body")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as first:  # JSONDecodeError is a ValueError
        if isinstance(first, RecursionError) and (elements := split_json_array(text)) is not None:
            return _parse_each(elements)  # one element too deep for the parser: refuse only that one
        # Lines end at \n only: str.splitlines also breaks at U+2028, U+2029 and U+0085, which a
        # JSON string may hold unescaped, and would cut a valid line in two.
        lines = [ln for ln in text.split("\n") if ln.strip()]
        if len(lines) < 2:
            raise ApiError(400, f"body is not JSON: {_json_error(first)}") from None
        items, errors = _parse_each(lines)
        if len(errors) == len(lines):
            raise ApiError(400, "body is neither JSON nor NDJSON")
        return items, errors
    if isinstance(data, dict):
        return [data], {}
    if isinstance(data, list):
        return data, {}
    raise ApiError(400, f"expected a JSON object, an array of objects or NDJSON, got {type(data).__name__}")


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


def announced_length(headers: Mapping[str, str]) -> int:
    """The body length a request announces (lower-case header names); a chunked body, or a
    missing or bad Content-Length, is refused and its connection closed."""
    if headers.get("transfer-encoding", "").lower() not in ("", "identity"):
        raise ApiError(411, "send a Content-Length (chunked bodies are not accepted)", close=True)
    raw_len = headers.get("content-length")
    if raw_len is None:
        raise ApiError(411, "Content-Length required", close=True)
    try:
        length = int(raw_len)
        if length < 0:
            raise ValueError
    except ValueError:
        raise ApiError(400, "bad Content-Length", close=True) from None
    return length


async def read_announced_body(request: Request, ctx: ServiceContext) -> bytearray:
    """The body its Content-Length announces, within ``max_body_bytes`` and the byte budget. The
    caller gives ``len`` of it back to ``ctx.body_budget`` when the request is answered."""
    d = ctx.d
    length = announced_length(request.headers)
    if length > d.max_body_bytes:
        raise ApiError(413, f"body of {length} bytes exceeds {d.max_body_bytes}", close=True)
    if not ctx.body_budget.try_take(length):
        ctx.metrics.busy.labels("body_bytes").inc()
        raise ApiError(503, f"busy: request bodies in flight would exceed {d.max_inflight_body_bytes} bytes; retry",
                       ctx.retry_after(), close=True)
    request.state.body_reserved = length
    body = bytearray()
    async for chunk in request.stream():  # ends early when the client stalls past its deadline
        body += chunk
        if len(body) > length:
            break
    if len(body) != length:
        raise ApiError(400, f"body incomplete: {len(body)} of {length} bytes (Content-Length) arrived in time", close=True)
    return body


# ---- the app ---------------------------------------------------------------------------------------------
class IdConvertor(PathConvertor):
    """An article or cluster id in a route's path: one character or more, "/" included (a URL as
    id is written %2F in links, which arrives decoded before routing)."""

    regex = ".+"


register_url_convertor("id", IdConvertor())


# What POST /v1/articles reads. A browser sends text/plain, a form type, or no type at all across
# sites without asking first (a CORS "simple" request); a JSON type it does not, so another site
# cannot post articles into a daemon without a token on this machine.
ARTICLE_TYPES = frozenset({"application/json", "application/x-ndjson", "application/ndjson", "application/jsonl",
                           "application/x-jsonlines", "application/jsonlines"})


def host_name(header: str) -> str:
    """The name or address of a Host header, without its port (an IPv6 address without brackets)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    name, sep, port = header.rpartition(":")
    return name if sep and (port.isdigit() or not port) else header  # "host:" is allowed an empty port


def answers_host(header: str, settings: DaemonSettings) -> bool:
    """Whether a daemon without a token answers a request sent to ``header``. A page of another
    site that re-points its own name at this machine (DNS rebinding) sends its name: only
    localhost names, IP addresses (which no other site's page is served from) and the names in
    ``daemon.allowed_hosts`` are answered."""
    name = host_name(header).rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    allowed = {h.strip().lower().rstrip(".") for h in settings.allowed_hosts.split(",") if h.strip()}
    return "*" in allowed or name in allowed


class HostCheck:
    """421 for a request to a name this daemon does not answer (``answers_host``), when it has no
    token; with a token set, the token guards every route that reads or changes data."""

    def __init__(self, app, ctx: ServiceContext):
        self.app, self.ctx = app, ctx

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and not self.ctx.d.auth_token:
            host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
            if host is not None and not answers_host(host, self.ctx.d):
                refused = ApiError(421, f"this daemon has no auth token and does not answer the host name {host_name(host)!r}: "
                                        "add it to daemon.allowed_hosts, or set daemon.auth_token", close=True)
                await error_response(refused)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def bearer_ok(request: Request, token: str) -> bool:
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    # the header's bytes as sent (Starlette reads them as latin-1): a non-ASCII token matches when
    # the client sends it in UTF-8, as curl does and as the login form's token is read
    # (stripped as bytes: as text, \xa0 and \x85, the last bytes of some UTF-8 characters, are spaces)
    return scheme.lower() == "bearer" and hmac.compare_digest(given.encode("latin-1").strip(), token.encode())


def create_app(ctx: ServiceContext, session_user: Callable[[Request], str | None] | None = None) -> FastAPI:
    """The API (and, through ``indexer.web``, the browser view) for one context.

    ``session_user``: who a request's browser session belongs to, if it has one (the web view
    passes it; API clients use the bearer token)."""
    app = FastAPI(title="newsdedup", version="1", docs_url=None, redoc_url=None,
                  description="Ingest articles, read clusters, correct them. Every route but /healthz, /readyz, "
                              "/metrics and /openapi.json needs `Authorization: Bearer <token>` when the daemon has a token.")

    def who(request: Request) -> str:
        """The name a correction is recorded under: the session's user, else the token's holder."""
        if session_user is not None and (user := session_user(request)):
            return user
        return person_name(request.headers.get("x-newsdedup-user", ""), "api")

    async def authorised(request: Request) -> None:  # async: no thread hop for a header check
        token = ctx.d.auth_token
        if not token or bearer_ok(request, token):
            return
        raise ApiError(401, "missing or wrong bearer token", {"WWW-Authenticate": 'Bearer realm="newsdedup"'},
                       close=request.method == "POST")

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(StoreError)  # any route's store call: the store is down, come back later
    async def _store_down(request: Request, exc: StoreError) -> JSONResponse:
        return error_response(ApiError(503, f"store unavailable: {exc}", ctx.retry_after()))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return error_response(ApiError(400, f"{where}: {first.get('msg', 'invalid request')}"))

    @app.exception_handler(404)
    async def _not_found(request: Request, exc: Exception) -> JSONResponse:
        return error_response(ApiError(404, "not found", close=request.method == "POST"))

    @app.exception_handler(405)
    async def _not_allowed(request: Request, exc: Exception) -> JSONResponse:
        return error_response(ApiError(405, f"{request.method} not allowed on {request.url.path}", close=request.method == "POST"))

    app.add_middleware(RequestAccounting, ctx=ctx)
    app.add_middleware(HostCheck, ctx=ctx)  # outside the accounting: a refused name reaches no route

    open_routes = APIRouter()
    api = APIRouter(dependencies=[Depends(authorised)], responses={401: ERR})

    @open_routes.api_route("/healthz", methods=["GET", "HEAD"], name="healthz", response_model=Health)
    async def healthz() -> Health:
        return Health(status="ok")

    @open_routes.api_route("/readyz", methods=["GET", "HEAD"], name="readyz", response_model=Readiness,
                           responses={503: {"model": Readiness}})
    def readyz() -> Response:
        if ctx.daemon is None:
            reasons = [] if ctx.current_indexer() is not None else ["the store is not open yet"]
            body: dict[str, Any] = {"ready": not reasons, "reasons": reasons}
        else:
            dm = ctx.daemon
            reasons = dm.not_ready_reasons()
            body = {"ready": not reasons, "reasons": reasons, "queue_depth": dm.queue.depth(), "lease_held": dm.lease_held(),
                    "dead_letters": dm.queue.dead_count()}
        return JSONResponse(body, status_code=200 if not reasons else 503, headers={} if not reasons else ctx.retry_after())

    @open_routes.get("/metrics", name="metrics", response_class=Response,
                     responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}})
    def metrics() -> Response:
        return Response(ctx.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    if ctx.daemon is not None:
        @api.post("/v1/articles", name="articles_post", status_code=202, response_model=IngestReply,
                  responses={400: ERR, 411: ERR, 413: ERR, 415: ERR, 422: {"model": IngestReply}, 429: ERR, 503: ERR},
                  openapi_extra=ARTICLES_BODY)
        async def post_articles(request: Request) -> Response:
            return await _post_articles(request, ctx)

    @api.get("/v1/articles/{article_id:id}", name="article", response_model=ArticleOut,
             responses={202: {"model": ArticleOut}, 404: ERR, 503: ERR})
    def get_article(article_id: str) -> Response:
        found = ctx.indexer().store.get_many([article_id]).get(article_id)
        if found is not None:
            return JSONResponse({**found.export_record(), "status": "indexed"})
        if ctx.daemon is not None and ctx.daemon.queue.contains(article_id):
            return JSONResponse({"id": article_id, "status": "queued"}, status_code=202)
        raise ApiError(404, "no such article", id=article_id)

    @api.get("/v1/clusters", name="clusters", response_model=ClusterList, responses={400: ERR, 503: ERR})
    def get_clusters(top: int = Query(10, ge=1, le=MAX_TOP, description="how many of the largest clusters")) -> ClusterList:
        store = ctx.indexer().store
        rows = store.top_clusters(top)
        canon = store.get_many([cid for cid, _ in rows])
        return ClusterList(clusters=[ClusterRow(cluster_id=cid, size=size, title=canon[cid].title if cid in canon else None)
                                     for cid, size in rows])

    @api.post("/v1/clusters/merge", name="merge", response_model=CorrectionReply,
              responses={400: ERR, 404: ERR, 409: ERR, 413: ERR, 503: ERR})
    def merge(body: MergeRequest, request: Request) -> CorrectionReply:
        return apply_merge(ctx, body.into, body.from_, who(request))

    @api.get("/v1/clusters/{cluster_id:id}", name="cluster", response_model=ClusterOut, responses={404: ERR, 503: ERR})
    def get_cluster(cluster_id: str) -> JSONResponse:
        members = ctx.indexer().store.cluster_members(cluster_id)
        if not members:
            raise ApiError(404, "no such cluster", cluster_id=cluster_id)
        members.sort(key=lambda a: (not a.is_canonical, a.indexed_at.timestamp() if a.indexed_at else 0.0, a.id))
        return JSONResponse({"cluster_id": cluster_id, "size": len(members),
                             "members": [{**m.export_record(), "status": "indexed"} for m in members]})

    @api.post("/v1/clusters/{cluster_id:id}/split", name="split", response_model=CorrectionReply,
              responses={400: ERR, 404: ERR, 409: ERR, 413: ERR, 503: ERR})
    def split(cluster_id: str, body: SplitRequest, request: Request) -> CorrectionReply:
        return apply_split(ctx, cluster_id, body.article_id, body.into, who(request))

    @api.get("/v1/labels", name="labels", response_model=LabelList, responses={503: ERR})
    def labels() -> LabelList:
        changes = ctx.indexer().store.cluster_changes()
        return LabelList(labels=[Label(**lab) for lab in labels_from_changes(changes)])

    app.include_router(open_routes)
    app.include_router(api)

    def openapi() -> dict:
        if app.openapi_schema is None:
            from fastapi.openapi.utils import get_openapi

            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            components = schema.setdefault("components", {})
            components.setdefault("schemas", {})["ArticleIn"] = ARTICLE_IN_SCHEMA
            components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer",
                                                        "description": "daemon.auth_token, when one is set"}}
            for path, item in schema.get("paths", {}).items():
                for op in item.values():
                    if path not in ("/healthz", "/readyz", "/metrics"):
                        op["security"] = [{"bearer": []}]
                    # invalid parameters answer 400 (see _invalid), not FastAPI's 422
                    responses = op.get("responses", {})
                    if "HTTPValidationError" in json.dumps(responses.get("422", {})):
                        del responses["422"]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def error_response(exc: ApiError) -> JSONResponse:
    headers = {"Cache-Control": "no-store", **exc.headers}
    if exc.close:
        headers["Connection"] = "close"
    return JSONResponse(exc.body, status_code=exc.code, headers=headers)


async def _post_articles(request: Request, ctx: ServiceContext) -> Response:
    dm = ctx.daemon
    assert dm is not None
    if not dm.accepting:
        raise ApiError(503, "shutting down", ctx.retry_after(), close=True)
    media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media not in ARTICLE_TYPES:
        raise ApiError(415, f"Content-Type {media or '(none)'} is not read: send application/json or "
                            "application/x-ndjson", close=True)
    body = await read_announced_body(request, ctx)
    if dm.worker.standby:
        raise ApiError(503, "standby: another daemon holds the writer lease", ctx.retry_after())
    payload = await run_in_threadpool(_enqueue, bytes(body), ctx)
    del body
    return JSONResponse(payload, status_code=202 if payload["accepted"] else 422)


def _enqueue(body: bytes, ctx: ServiceContext) -> dict:
    dm = ctx.daemon
    assert dm is not None
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"body is not UTF-8: {exc}") from None
    items, parse_errors = parse_body(text)
    if len(items) > ctx.d.max_items_per_request:
        raise ApiError(413, f"{len(items)} articles exceed {ctx.d.max_items_per_request} per request")
    results: list[dict] = []
    valid: list[tuple[str, dict]] = []
    articles = []  # handed to the worker with the queued records: it need not parse them again
    tz = ctx.settings.default_tz
    for i, record in enumerate(items):
        if i in parse_errors:
            results.append({"index": i, "decision": "rejected", "error": parse_errors[i]})
            continue
        try:
            article = article_from_record(record, f"item {i}", tz, ctx.settings.input.max_body_bytes)
        except InvalidArticle as exc:
            results.append({"index": i, "decision": "rejected", "error": exc.reason})
            continue
        valid.append((article.id, record))
        articles.append(article)
        results.append({"index": i, "id": article.id, "status": "accepted", "decision": "accepted"})
    rejected = len(items) - len(valid)
    try:
        dm.queue.put_many(valid, origin="http", parsed=articles)
    except QueueFull as exc:
        raise ApiError(429, f"queue full: {exc}", ctx.retry_after()) from None
    ctx.metrics.accepted.labels("http").inc(len(valid))
    if rejected:
        ctx.metrics.request_rejected.inc(rejected)
    return {"accepted": [aid for aid, _ in valid], "rejected": rejected, "results": results, "queue_depth": dm.queue.depth()}


# ---- corrections ------------------------------------------------------------------------------------------
def apply_split(ctx: ServiceContext, cluster_id: str, article_id: str, into: str | None, by: str) -> CorrectionReply:
    """Move ``article_id`` out of ``cluster_id``: alone, or into cluster ``into``."""
    indexer = ctx.indexer()
    store = indexer.store
    if into == article_id:
        into = None  # "into itself": a cluster of its own
    with ctx.correcting(), indexer.exclusive():  # no batch decided between reading the cluster and changing it
        found = store.get_many([x for x in (article_id, into) if x])
        art = found.get(article_id)
        if art is None:
            raise ApiError(404, "no such article", id=article_id)
        if art.cluster_id != cluster_id:
            raise ApiError(409, f"article {article_id} is in cluster {art.cluster_id}, not {cluster_id}", cluster_id=art.cluster_id)
        if into is not None:
            target = found.get(into)
            if target is None or target.cluster_id != into:
                raise ApiError(404, "no such cluster", cluster_id=into)
            if into == cluster_id:
                raise ApiError(409, f"article {article_id} is already in cluster {into}")
        members = store.cluster_members(cluster_id)
        oldest_other = oldest_other_member(((m.id, m.publish_time) for m in members), article_id)
        if oldest_other is None:
            raise ApiError(409, f"article {article_id} is alone in its cluster already")
        # the article it is not the same story as: what it joined, else (the canonical leaves) the
        # oldest other, the member the store makes canonical of the rest
        partner = art.dup_of if art.dup_of and art.dup_of != article_id and any(m.id == art.dup_of for m in members) else (
            cluster_id if article_id != cluster_id else oldest_other)
        change = ClusterChange("split", into or article_id, cluster_id, article_id, split_reason(partner), by,
                               datetime.now(timezone.utc))
        try:
            store.split_article(change)
        except KeyError as exc:  # an article gone since it was read
            raise ApiError(404, f"no such article or cluster: {exc}") from None
        return _reply(store, change)


def apply_merge(ctx: ServiceContext, into: str, source: str, by: str) -> CorrectionReply:
    """Every member of cluster ``source`` joins cluster ``into``."""
    indexer = ctx.indexer()
    store = indexer.store
    if into == source:
        raise ApiError(409, "a cluster cannot be merged into itself")
    with ctx.correcting(), indexer.exclusive():  # no batch decided between reading the clusters and changing them
        found = store.get_many([into, source])
        for cid in (into, source):
            if cid not in found or found[cid].cluster_id != cid:
                raise ApiError(404, "no such cluster", cluster_id=cid)
        change = ClusterChange("merge", into, source, None, MERGE_REASON, by, datetime.now(timezone.utc))
        store.merge_clusters([change])
        return _reply(store, change)


def _reply(store, change: ClusterChange) -> CorrectionReply:
    """The change as the store logged it (a split of a canonical names who leads the rest), and
    the cluster it changed (``change.into``)."""
    logged = next((entry for entry in reversed(store.cluster_changes(change.into))
                   if entry.kind == change.kind and entry.article_id == change.article_id and entry.by == change.by), change)
    return CorrectionReply(change=logged.record(), labels=[Label(**x) for x in labels_from_changes([logged])],
                           cluster_id=change.into, size=len(store.cluster_members(change.into)))


# ---- accounting ----------------------------------------------------------------------------------------------
class RequestAccounting:
    """Counts every request by route name and status, gives back its body budget when it is
    answered, keeps non-ingest bodies small, and turns an unexpected error into a logged 500
    (a bug in one request must not take the daemon down)."""

    def __init__(self, app, ctx: ServiceContext):
        self.app, self.ctx = app, ctx

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = {"code": 499, "started": False}
        scope.setdefault("state", {})

        async def counting_send(message) -> None:
            if message["type"] == "http.response.start":
                status["code"], status["started"] = message["status"], True
            await send(message)

        try:
            if scope["method"] == "POST" and scope["path"] != "/v1/articles":
                small_body_check(scope)
            await self.app(scope, receive, counting_send)
        except ApiError as exc:
            if not status["started"]:
                await error_response(exc)(scope, receive, counting_send)
        except Exception:  # noqa: BLE001
            route = scope.get("route")
            log.exception("%s %s failed", scope["method"], getattr(route, "name", "other"))
            if not status["started"]:
                await error_response(ApiError(500, "internal error", close=True))(scope, receive, counting_send)
        finally:
            reserved = scope["state"].get("body_reserved", 0)
            if reserved:
                self.ctx.body_budget.give_back(reserved)
            name = getattr(scope.get("route"), "name", None) or "other"
            self.ctx.metrics.requests.labels(name, str(status["code"])).inc()


def small_body_check(scope) -> None:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
    length = announced_length({"content-length": "0", **headers})
    if length > MAX_SMALL_BODY:
        raise ApiError(413, f"body of {length} bytes exceeds {MAX_SMALL_BODY}", close=True)
