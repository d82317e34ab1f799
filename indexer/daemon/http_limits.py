"""Limits that keep hostile or slow clients from tying up the HTTP server (uvicorn, asyncio).

A connection costs a socket and a few kilobytes of parser state, never a thread, so thousands of
stalled clients leave the server answering. What still needs a bound:

* ``ByteBudget``: request bodies (by their ``Content-Length``) handled at once. A request that does
  not fit is answered 503 before its body is read, so parallel large POSTs cannot make the
  process buffer without bound.
* ``GuardedH11Protocol``: uvicorn's h11 protocol with

  - a connection cap: beyond ``max_connections`` a connection is answered 503 with Retry-After
    at once, before it sends anything;
  - read deadlines: a request's head and body must arrive within ``request_deadline`` seconds
    however slowly they drip, and no read waits longer than ``read_timeout`` (also an idle
    keep-alive connection). When a body stops short, the application sees its end and answers
    400 for what arrived; a connection stalled in its head is closed;
  - graceful closes: when the server closes a connection the client may still be sending (a
    refused or unread body), so it sends FIN, drops what still arrives for up to
    ``LINGER_SECONDS``, then closes: the client reads the answer instead of a reset.

uvicorn takes the protocol class as its ``http`` setting; ``guarded_protocol`` makes one with the
limits bound.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

# How long a closed connection may still send (its unread body, dropped as it arrives) before it
# is cut: long enough for a body of max_body_bytes on a fast link, which a client like urllib
# sends whole before it reads the answer; cutting earlier resets it and it never sees the answer.
LINGER_SECONDS = 10.0


class ByteBudget:
    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()

    def try_take(self, n: int) -> bool:
        with self._lock:
            if self.used + n > self.limit:
                return False
            self.used += n
            return True

    def give_back(self, n: int) -> None:
        with self._lock:
            self.used -= n


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int
    read_timeout: float
    request_deadline: float
    retry_after: int
    on_refused: Callable[[], None]


def busy_answer(limits: ConnectionLimits) -> bytes:
    body = b'{"error": "busy: %d connections open; retry"}' % limits.max_connections
    return (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
            b"Retry-After: %d\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (limits.retry_after, len(body), body))


class _LingeringTransport:
    """The transport as the h11 protocol sees it: ``close`` half-closes and lingers (see module)."""

    def __init__(self, transport: asyncio.Transport, protocol: "GuardedH11Protocol"):
        self.raw = transport
        self._protocol = protocol
        self.closing = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)

    def is_closing(self) -> bool:
        return self.closing or self.raw.is_closing()

    def close(self) -> None:
        if not self.closing:
            self.closing = True
            self._protocol.linger()


class GuardedH11Protocol(H11Protocol):
    limits: ConnectionLimits  # bound by guarded_protocol

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._timer: asyncio.TimerHandle | None = None
        self._deadline: float | None = None
        self._lingering = False
        self._body_cut = False
        super().connection_made(_LingeringTransport(transport, self))  # type: ignore[arg-type]
        if len(self.connections) > self.limits.max_connections:
            self.limits.on_refused()
            self.transport.write(busy_answer(self.limits))
            self.transport.close()
            return
        self._expect_request()

    # ---- deadlines ----------------------------------------------------------------------------------
    def _expect_request(self) -> None:
        """A request may start now: its head and body must be in by the deadline."""
        self._body_cut = False
        self._deadline = self.loop.time() + self.limits.request_deadline
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        if self._deadline is not None:
            when = min(self._deadline, self.loop.time() + self.limits.read_timeout)
            self._timer = self.loop.call_at(when, self._too_slow)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _too_slow(self) -> None:
        self._timer = None
        self._deadline = None
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and cycle.more_body:
            # the head arrived and the body stopped short: end it here; the application answers
            # 400 for the part that came (and closes), later bytes are dropped
            self._body_cut = True
            cycle.more_body = False
            cycle.message_event.set()
        elif not self.transport.is_closing():
            self.transport.close()  # stalled in a request head, or idle

    def data_received(self, data: bytes) -> None:
        if self._lingering or self._body_cut:
            return
        super().data_received(data)
        cycle = self.cycle
        if cycle is not None and not cycle.more_body and not cycle.response_complete:
            self._deadline = None  # the whole request is in: handling it is not limited
            self._disarm()
        elif self._deadline is not None and not self._lingering:
            self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._expect_request()

    # ---- graceful close -------------------------------------------------------------------------------
    def linger(self) -> None:
        self._disarm()
        self._lingering = True
        self.connections.discard(self)  # a closing connection no longer takes a slot
        raw = self.transport.raw  # type: ignore[attr-defined]
        try:
            raw.write_eof()  # after what is buffered: the client reads the answer, then end of file
            raw.resume_reading()
        except (OSError, RuntimeError, AttributeError):
            raw.close()
            return
        self._timer = self.loop.call_later(LINGER_SECONDS, raw.abort)

    def eof_received(self) -> bool | None:
        return None  # the client is done sending: close (asyncio closes on a falsy answer)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        try:
            super().connection_lost(exc)
        except h11.LocalProtocolError:  # pragma: no cover - h11 refusing a close mid-body
            pass


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})
