"""A wall-clock deadline for one HTTP response: status line, headers and body together.

Socket timeouts bound each read, not the response: a server sending two bytes a second never
trips a 15 s read timeout, whether it drips its headers or its body, with a Content-Length,
chunks or a close at the end. So each response gets a watchdog timer, and at the deadline the
watchdog shuts the socket down, which ends a blocked read at once.

The watchdog learns the socket from the connection: ``DeadlineAdapter`` (mounted on the
session) makes urllib3 build connections that hand their socket to the watch of the request
running in their thread. Without the adapter, or through a proxy, only the read timeouts hold.
"""

from __future__ import annotations

import logging
import socket
import threading
from contextlib import contextmanager
from typing import Iterator

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

log = logging.getLogger(__name__)

_active = threading.local()  # the watch of the request this thread is making


class Watch:
    """Fires once after ``seconds`` unless cancelled; firing shuts the attached socket."""

    def __init__(self, seconds: float):
        self.fired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def attach(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._sock = sock
            late = self.fired
        if late:
            self._shut()

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
        self._shut()

    def _shut(self) -> None:
        sock = self._sock
        if sock is None:
            return
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError as exc:  # already closed: nothing left to cut
            log.debug("deadline: socket already closed: %s", exc)


@contextmanager
def response_deadline(seconds: float) -> Iterator[Watch]:
    """Within the block, the request this thread makes through a ``DeadlineAdapter`` session is
    cut off ``seconds`` from now; ``watch.fired`` tells a cut from a server that just stopped."""
    watch = Watch(max(0.0, seconds))
    _active.watch = watch
    watch._timer.start()
    try:
        yield watch
    finally:
        watch._timer.cancel()
        _active.watch = None


class _Watched:
    """Hands the connection's socket to the current thread's watch once the request is sent
    (the socket exists then, new or reused from the pool)."""

    sock: socket.socket | None

    def request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        watch = getattr(_active, "watch", None)
        super().request(*args, **kwargs)  # type: ignore[misc]
        if watch is not None:
            watch.attach(self.sock)


class _WatchedHTTPConnection(_Watched, HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, HTTPSConnection):
    pass


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class DeadlineAdapter(HTTPAdapter):
    """requests' adapter with connections a ``response_deadline`` can cut."""

    def init_poolmanager(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}


def mount_deadlines(session: requests.Session) -> None:
    """Mount ``DeadlineAdapter`` for http and https unless the session has it already."""
    for prefix in ("http://", "https://"):
        if not isinstance(session.adapters.get(prefix), DeadlineAdapter):
            session.mount(prefix, DeadlineAdapter())
