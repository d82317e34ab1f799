"""The browser view of a store: clusters, one cluster, one article, an overview, and corrections.

Served by ``newsdedup serve`` beside the API, and by ``newsdedup ui`` for a store alone. Pages are
rendered on the server (Jinja2, autoescaped); there is no script at all, and every answer carries
a Content-Security-Policy that forbids one, so crawled markup in a title or body stays text.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from .pages import CSP, WebView, add_pages
from .sessions import Sessions

STATIC = Path(__file__).parent / "static"


class SecurityHeaders:
    """CSP and friends on every answer (pages and API alike)."""

    HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
               (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY")]

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers)


def mount_web(ctx) -> FastAPI:
    """The API plus the browser view, for one ``ServiceContext``."""
    from ..daemon.api import create_app

    sessions = Sessions()
    view = WebView(ctx, sessions)
    app = create_app(ctx, session_user=view.user_of)
    add_pages(app, view)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(SecurityHeaders)
    return app
