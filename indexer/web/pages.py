"""The browser view's pages: clusters, one cluster, one article, the overview, compare, login,
and the correction forms (split out, merge), which call the same functions as the API.

Crawled text is hostile: templates autoescape everything, links are written only for http(s)
URLs, and no page carries a script (the Content-Security-Policy forbids any).
"""

from __future__ import annotations

import functools
import hmac
import logging
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, quote, unquote, urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool

from ..daemon.api import ApiError, ServiceContext, apply_merge, apply_split, read_announced_body
from ..errors import StoreError
from ..store.base import StoredArticle, cluster_history
from . import charts
from .cluster_index import SORTS, ClusterFilter, ClusterIndex, duplicate_rate_per_source, duplicates_per_day, page_of
from ..labels import person_name
from .sessions import COOKIE, LoginThrottle, Session, Sessions
from .text_diff import side_by_side

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
PER_PAGE = 25
MAX_EXPLAINED = 30  # members of one cluster whose evidence the cluster page computes
CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
       "base-uri 'none'")


def safe_href(url: str | None) -> str | None:
    """The URL when a browser may follow it (http or https), else None: a crawled
    ``javascript:`` or ``data:`` URL is shown as text, never as a link."""
    if not url:
        return None
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return None
    return url.strip() if scheme in ("http", "https") else None


def fmt_time(when: datetime | str | None, tz: tzinfo | None = None) -> str:
    if isinstance(when, str):
        try:
            when = datetime.fromisoformat(when)
        except ValueError:
            return when
    if when is None:
        return "—"
    return (when.astimezone(tz) if tz is not None else when).strftime("%Y-%m-%d %H:%M")


def fmt_score(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.3f}"
    return str(x)


def environment(tz: tzinfo) -> Environment:
    """Times are shown in ``tz`` (input.default_timezone), as the input gave them."""
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters.update(safe_href=safe_href, time=lambda w: fmt_time(w, tz), score=fmt_score, q=lambda s: quote(str(s), safe=""))
    return env


def _date(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        raise ApiError(400, f"not a date (YYYY-MM-DD): {text}") from None


class WebView:
    def __init__(self, ctx: ServiceContext, sessions: Sessions):
        self.ctx, self.sessions = ctx, sessions
        self.throttle = LoginThrottle()
        self.env = environment(ctx.settings.default_tz)
        self._index: ClusterIndex | None = None
        self._index_store = None

    # ---- plumbing -------------------------------------------------------------------------------------
    def index(self) -> ClusterIndex:
        store = self.ctx.indexer().store
        if self._index is None or self._index_store is not store:
            self._index, self._index_store = ClusterIndex(store, self.ctx.settings.default_tz), store
        return self._index

    def session_of(self, request: Request) -> Session | None:
        return self.sessions.get(request.cookies.get(COOKIE))

    def user_of(self, request: Request) -> str | None:
        s = self.session_of(request)
        return s.user if s else None

    def page(self, request: Request, template: str, status: int = 200, **values: Any) -> Response:
        session = self.session_of(request)
        fresh = None
        if session is None and not self.ctx.d.auth_token:
            session = fresh = self.sessions.create("local")
        html = self.env.get_template(template).render(session=session, request_path=request.url.path,
                                                      auth=bool(self.ctx.d.auth_token), **values)
        resp = HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})
        if fresh is not None:
            set_session_cookie(resp, request, fresh)
        return resp

    def guard(self, request: Request) -> Response | None:
        """A redirect to the login page when a token is set and the browser has no session."""
        if self.ctx.d.auth_token and self.session_of(request) is None:
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"/ui/login?next={quote(target, safe='')}", status_code=303)
        return None

    async def form(self, request: Request, need_csrf: bool = True) -> dict[str, str]:
        # read as the API reads bodies: a form cut short (a client stalled past its deadline) could
        # name another article or cluster, so none of it is applied
        body = (await read_announced_body(request, self.ctx)).decode("utf-8", "replace")
        fields = {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}
        if need_csrf:
            session = self.session_of(request)
            if session is None or not session.csrf_ok(fields.get("csrf")):
                raise ApiError(403, "the form's CSRF token is missing or stale: reload the page and try again")
        return fields

    def error_page(self, request: Request, exc: ApiError) -> Response:
        return self.page(request, "error.html", status=exc.code, message=exc.body.get("error", "error"))


def set_session_cookie(resp: Response, request: Request, session: Session) -> None:
    resp.set_cookie(COOKIE, session.id, max_age=int(session.expires - datetime.now().timestamp()), httponly=True,
                    samesite="strict", secure=request.url.scheme == "https", path="/")


def add_pages(app: FastAPI, view: WebView) -> None:
    ctx = view.ctx

    def html_errors(handler):
        @functools.wraps(handler)
        async def run(request: Request, *args, **kwargs) -> Response:
            if (redirect := view.guard(request)) is not None:
                return redirect
            try:
                return await handler(request, *args, **kwargs)
            except ApiError as exc:
                return view.error_page(request, exc)
            except StoreError as exc:
                return view.error_page(request, ApiError(503, f"store unavailable: {exc}"))
        return run

    @app.get("/", include_in_schema=False)
    @app.get("/ui", include_in_schema=False)
    async def root() -> Response:
        return RedirectResponse("/ui/clusters", status_code=303)

    # ---- login ------------------------------------------------------------------------------------------
    @app.get("/ui/login", include_in_schema=False, name="ui_login")
    async def login_form(request: Request, next: str = "/ui/clusters") -> Response:  # noqa: A002
        return view.page(request, "login.html", next=_local_path(next), failed=False)

    @app.post("/ui/login", include_in_schema=False, name="ui_login")
    async def login(request: Request) -> Response:
        fields = await view.form(request, need_csrf=False)
        token = ctx.d.auth_token
        target = _local_path(fields.get("next", ""))
        client = request.client.host if request.client else ""
        if token and (wait := view.throttle.wait_seconds(client)):
            resp = view.page(request, "login.html", status=429, next=target, failed=False, wait=wait)
            resp.headers["Retry-After"] = str(wait)
            return resp
        if token and not hmac.compare_digest(fields.get("token", "").encode(), token.encode()):
            view.throttle.failed(client)
            log.info("browser login refused (wrong token)")
            return view.page(request, "login.html", status=401, next=target, failed=True)
        session = view.sessions.create(person_name(fields.get("name", ""), "browser"))
        resp = RedirectResponse(target, status_code=303)
        set_session_cookie(resp, request, session)
        return resp

    @app.post("/ui/logout", include_in_schema=False, name="ui_logout")
    @html_errors
    async def logout(request: Request) -> Response:
        await view.form(request)
        view.sessions.end(request.cookies.get(COOKIE))
        resp = RedirectResponse("/ui/login" if ctx.d.auth_token else "/ui/clusters", status_code=303)
        resp.delete_cookie(COOKIE, path="/")
        return resp

    # ---- clusters -----------------------------------------------------------------------------------------
    @app.get("/ui/clusters", include_in_schema=False, name="ui_clusters")
    @html_errors
    async def clusters(request: Request) -> Response:
        p = request.query_params
        flt = ClusterFilter(query=p.get("q", "").strip()[:200], source=p.get("source", ""), reason=p.get("reason", ""),
                            since=_date(p.get("since")), until=_date(p.get("until")))
        sort = p.get("sort", "largest") if p.get("sort") in SORTS else "largest"
        try:
            page_no = int(p.get("page", "1"))
        except ValueError:
            page_no = 1

        def load():
            listing = view.index().listing()  # one look at the store's version (its change log) per request
            return page_of(listing.clusters, flt, sort, page_no, PER_PAGE), listing.sources, listing.reasons

        page, sources, reasons = await run_in_threadpool(load)
        query = {k: v for k, v in (("q", flt.query), ("source", flt.source), ("reason", flt.reason),
                                   ("since", p.get("since", "")), ("until", p.get("until", "")), ("sort", sort)) if v}
        return view.page(request, "clusters.html", page=page, flt=flt, sort=sort, sources=sources, reasons=reasons,
                         query="&".join(f"{k}={quote(v, safe='')}" for k, v in query.items()),
                         since=p.get("since", ""), until=p.get("until", ""))

    @app.get("/ui/clusters/{cluster_id:id}/compare/{article_id:id}", include_in_schema=False, name="ui_compare")
    @html_errors
    async def compare(request: Request, cluster_id: str, article_id: str) -> Response:
        ids = _ids_in_raw_path(request, "/ui/clusters/", "/compare/")
        if ids is not None and len(ids) == 1:  # an id holding "/compare/": the cluster's own page
            return await cluster(request, ids[0])
        if ids is not None:
            cluster_id, article_id = ids

        def load():
            store = ctx.indexer().store
            found = store.get_many([cluster_id, article_id])
            if any(x not in found or found[x].cluster_id != cluster_id for x in (cluster_id, article_id)):
                raise ApiError(404, f"no article {article_id} in a cluster {cluster_id}")
            a, b = found[cluster_id], found[article_id]
            return a, b, side_by_side(a.title, b.title, min_run=2), side_by_side(a.content, b.content)

        canonical, member, titles, bodies = await run_in_threadpool(load)
        return view.page(request, "compare.html", canonical=canonical, member=member, titles=titles, bodies=bodies,
                         cluster_id=cluster_id)

    # Ids may hold "/" (a URL used as an id): links encode it as %2F, which arrives decoded, so the
    # id parameters take the rest of the path; this page after the ones its path could also end in.
    @app.get("/ui/clusters/{cluster_id:id}", include_in_schema=False, name="ui_cluster")
    @html_errors
    async def cluster(request: Request, cluster_id: str) -> Response:
        data = await run_in_threadpool(_cluster_view, ctx, cluster_id)
        return view.page(request, "cluster.html", done=request.query_params.get("done", ""), **data)

    @app.get("/ui/articles/{article_id:id}", include_in_schema=False, name="ui_article")
    @html_errors
    async def article(request: Request, article_id: str) -> Response:
        def load():
            try:
                return ctx.explain(article_id, limit=10)
            except KeyError:
                raise ApiError(404, f"no such article: {article_id}") from None

        explained = await run_in_threadpool(load)
        return view.page(request, "article.html", x=explained, a=explained["article"])

    @app.get("/ui/overview", include_in_schema=False, name="ui_overview")
    @html_errors
    async def overview(request: Request) -> Response:
        def load():
            all_clusters = view.index().listing().clusters
            per_day = charts.stacked_days(duplicates_per_day(all_clusters))
            rates = duplicate_rate_per_source(all_clusters)[:20]
            per_source = charts.horizontal([(s, d / n, f"{d}/{n} ({d / n:.0%})") for s, d, n in rates], colour=charts.PALETTE[2])
            largest = sorted(all_clusters, key=lambda c: (-c.size, c.cluster_id))[:15]
            sizes = charts.horizontal([(c.canonical.title or c.cluster_id, c.size, str(c.size)) for c in largest])
            articles = sum(c.size for c in all_clusters)
            return dict(per_day=per_day, per_source=per_source, sizes=sizes, largest=largest, articles=articles,
                        clusters=len(all_clusters), duplicates=articles - len(all_clusters))

        return view.page(request, "overview.html", **(await run_in_threadpool(load)))

    # ---- corrections --------------------------------------------------------------------------------------
    @app.post("/ui/clusters/{cluster_id:id}/split", include_in_schema=False, name="ui_split")
    @html_errors
    async def split(request: Request, cluster_id: str) -> Response:
        fields = await view.form(request)
        article_id = fields.get("article_id", "").strip()
        into = fields.get("into", "").strip() or None
        if not article_id:
            raise ApiError(400, "name the article to split out")
        reply = await run_in_threadpool(apply_split, ctx, cluster_id, article_id, into, view.user_of(request) or "browser")
        alone = into in (None, article_id)  # "into itself" is alone, as apply_split reads it
        back = cluster_id if alone else reply.cluster_id
        if alone and reply.change.get("lead"):
            back = reply.change["lead"]  # the canonical left: the rest of the story goes on under its new lead
        elif back == cluster_id and not ctx.indexer().store.cluster_members(cluster_id):
            back = reply.cluster_id
        return RedirectResponse(f"/ui/clusters/{quote(back, safe='')}?done=split", status_code=303)

    @app.post("/ui/clusters/{cluster_id:id}/merge", include_in_schema=False, name="ui_merge")
    @html_errors
    async def merge(request: Request, cluster_id: str) -> Response:
        fields = await view.form(request)
        source = fields.get("from", "").strip()
        if not source:
            raise ApiError(400, "name the cluster to merge into this one")
        await run_in_threadpool(apply_merge, ctx, cluster_id, source, view.user_of(request) or "browser")
        return RedirectResponse(f"/ui/clusters/{quote(cluster_id, safe='')}?done=merge", status_code=303)


def _ids_in_raw_path(request: Request, prefix: str, separator: str) -> list[str] | None:
    """The ids of a path as the browser sent it, where a "/" inside an id is still %2F (the
    decoded path cannot tell ``a/compare/b`` the id from ``a`` compared with ``b``): split at the
    first ``separator``; None when the server gave no raw path."""
    raw = request.scope.get("raw_path")
    if not raw or not raw.startswith(prefix.encode()):
        return None
    return [unquote(part.decode("latin-1"), encoding="utf-8") for part in raw[len(prefix):].split(separator.encode(), 1)]


def _local_path(target: str) -> str:
    """Only a path of this view: a login link cannot send the browser elsewhere."""
    if target.startswith("/ui/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/ui/clusters"


def _cluster_view(ctx: ServiceContext, cluster_id: str) -> dict:
    ix = ctx.indexer()
    members = ix.store.cluster_members(cluster_id)
    if not members:
        raise ApiError(404, f"no such cluster: {cluster_id}")
    members.sort(key=lambda m: (m.publish_time is None, m.publish_time.timestamp() if m.publish_time else 0.0, m.id))
    canonical = next((m for m in members if m.id == cluster_id), members[0])
    explained = [m for m in members[:MAX_EXPLAINED] if m.id != cluster_id]
    pairs = matched_pairs(explained, cluster_id, members, ix.store.get_many)
    evidence = {m.id: row for (m, _), row in zip(pairs, ctx.pair_evidence(pairs))}
    times = [m.publish_time for m in members if m.publish_time]
    timeline = _timeline(members, min(times), max(times), ctx.settings.default_tz) if times else []
    changes = [c.record() for c in cluster_history(ix.store, cluster_id)]
    return dict(cluster_id=cluster_id, canonical=canonical, members=members, evidence=evidence, timeline=timeline,
                changes=changes, first=min(times) if times else None, last=max(times) if times else None,
                explained_all=len(members) <= MAX_EXPLAINED)


def matched_pairs(explained: list[StoredArticle], cluster_id: str, members: list[StoredArticle],
                  get_many: Callable[[list[str]], dict[str, StoredArticle]]) -> list[tuple[StoredArticle, StoredArticle]]:
    """Each explained member with the article whose evidence its row shows, as ``explain`` picks
    it: the article it was matched to (``dup_of``) when that is stored, else the cluster's
    canonical. Articles outside the cluster are read in one call."""
    known = {m.id: m for m in members}
    missing = {x for m in explained for x in (m.dup_of, cluster_id) if x and x not in known}
    if missing:
        known.update(get_many(sorted(missing)))
    pairs = []
    for m in explained:
        partner = next((known[x] for x in (m.dup_of, cluster_id) if x and x != m.id and x in known), None)
        if partner is not None:
            pairs.append((m, partner))
    return pairs


def _timeline(members, first: datetime, last: datetime, tz: tzinfo, width: int = 720) -> list[dict]:
    span = (last - first).total_seconds() or 1.0
    out = []
    for i, m in enumerate(m for m in members if m.publish_time):
        x = 20 + (width - 40) * (m.publish_time - first).total_seconds() / span
        out.append({"x": round(x, 1), "y": 20 + (i % 4) * 12, "id": m.id, "canonical": m.is_canonical,
                    "title": f"{fmt_time(m.publish_time, tz)} {m.source}: {m.title}"})
    return out
