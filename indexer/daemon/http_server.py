"""uvicorn serving the app (``api.create_app`` plus the browser view) on a thread of its own.

The socket is bound when the server is made, so a port in use fails the start at once. The event
loop runs in one thread; route handlers that touch the store or the queue run in the loop's
bounded thread pool. ``stop`` closes the listener, lets answers in progress finish (a few
seconds at most) and joins the thread.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import threading

import uvicorn

from ..web import mount_web  # the API and the browser view
from .api import ServiceContext
from .http_limits import ConnectionLimits, guarded_protocol

log = logging.getLogger(__name__)

GRACEFUL_SECONDS = 5  # answers in progress at shutdown get this long


def bind(host: str, port: int) -> socket.socket:
    family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def raise_open_files_limit(wanted: int) -> None:
    """Each connection is a file descriptor: lift the soft limit towards ``wanted`` (never past
    the hard limit) and say so when it cannot reach it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft < wanted:
        log.warning("open files are limited to %d (ulimit -n): fewer than daemon.max_connections needs (%d); "
                    "connections beyond it wait in the listen backlog", soft, wanted)


class HttpServer:
    def __init__(self, ctx: ServiceContext):
        d = ctx.d
        self.ctx = ctx
        raise_open_files_limit(d.max_connections + 256)  # + the store's files, the queue, the model
        self.sock = bind(d.host, d.port)
        limits = ConnectionLimits(max_connections=d.max_connections, read_timeout=d.read_timeout_seconds,
                                  request_deadline=d.request_read_seconds, retry_after=d.retry_after_seconds,
                                  on_refused=ctx.metrics.busy.labels("connections").inc)
        config = uvicorn.Config(mount_web(ctx), http=guarded_protocol(limits), lifespan="off", log_config=None,
                                access_log=False, server_header=False, date_header=True, ws="none",
                                timeout_keep_alive=max(1, int(d.read_timeout_seconds)),
                                timeout_graceful_shutdown=GRACEFUL_SECONDS, backlog=2048,
                                h11_max_incomplete_event_size=64 * 1024)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="http", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        return self.sock.getsockname()[:2]

    async def _serve(self) -> None:
        import anyio.to_thread

        anyio.to_thread.current_default_thread_limiter().total_tokens = self.ctx.d.handler_threads
        await self.server.serve(sockets=[self.sock])

    def _run(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException:  # noqa: BLE001 - the daemon's wait loop sees the thread gone (Daemon.wait)
            log.exception("the HTTP server stopped")

    def start(self) -> None:
        self._thread.start()

    def alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(GRACEFUL_SECONDS + 5)
        if self._thread.is_alive():
            self.server.force_exit = True
            self._thread.join(5)
        try:
            self.sock.close()
        except OSError:
            pass
