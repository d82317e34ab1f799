"""Limits that keep hostile or slow clients from tying up the HTTP server.

* ``ByteBudget``: request bodies (by their ``Content-Length``) handled at once. A request that does
  not fit is answered 503 before its body is read, so parallel large POSTs cannot make the
  process buffer without bound.
* ``ConnectionReaper``: one thread that (1) cuts the read side of a connection whose request has
  not fully arrived by its deadline, however slowly it drips (the socket timeout alone resets on
  every byte), and (2) closes refused connections gracefully: it sends FIN, drains what the client
  still sends for a moment, then closes, so the client reads our answer instead of a reset.
"""

from __future__ import annotations

import logging
import socket
import threading
import time

log = logging.getLogger(__name__)

# How long a refused connection may still send (its unread body, dropped as it arrives) before it
# is closed: long enough for a body of max_body_bytes on a fast link, which a client like urllib
# sends whole before it reads the answer; closing earlier resets it and the client never sees 503.
LINGER_SECONDS = 10.0
LINGER_BYTES_PER_TICK = 8 * 1024 * 1024  # per connection; a fast sender must not hold the reaper
MAX_LINGERING = 1024  # beyond this, refused connections are closed at once


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


class ConnectionReaper(threading.Thread):
    def __init__(self, tick: float = 0.05):
        super().__init__(name="http-reaper", daemon=True)
        self._tick = tick
        self._lock = threading.Lock()
        self._deadlines: dict[socket.socket, float] = {}
        self._lingering: list[tuple[socket.socket, float]] = []
        self._stop = threading.Event()

    # ---- read deadlines --------------------------------------------------------------------------
    def arm(self, sock: socket.socket, seconds: float) -> None:
        with self._lock:
            self._deadlines[sock] = time.monotonic() + seconds

    def disarm(self, sock: socket.socket) -> None:
        with self._lock:
            self._deadlines.pop(sock, None)

    # ---- graceful close ---------------------------------------------------------------------------
    def close_gracefully(self, sock: socket.socket) -> None:
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.setblocking(False)
        except OSError:
            sock.close()
            return
        with self._lock:
            if len(self._lingering) < MAX_LINGERING:
                self._lingering.append((sock, time.monotonic() + LINGER_SECONDS))
                return
        sock.close()

    def stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        while not self._stop.wait(self._tick):
            now = time.monotonic()
            with self._lock:
                late = [s for s, deadline in self._deadlines.items() if deadline <= now]
                for s in late:
                    del self._deadlines[s]
                lingering, self._lingering = self._lingering, []
            for s in late:
                try:
                    s.shutdown(socket.SHUT_RD)  # the blocked read returns end-of-file at once
                except OSError:
                    pass
            still = [(s, until) for s, until in lingering if not _drained(s, now, until)]
            with self._lock:
                self._lingering.extend(still)
        with self._lock:
            for s, _ in self._lingering:
                s.close()
            self._lingering.clear()


def _drained(sock: socket.socket, now: float, until: float) -> bool:
    """Read and drop what the client still sends; True (and closed) once it is done or time is up."""
    try:
        for _ in range(LINGER_BYTES_PER_TICK // 65536):
            if not sock.recv(65536):
                break  # the client closed: done
        else:
            if now < until:
                return False
    except (BlockingIOError, InterruptedError):
        if now < until:
            return False
    except OSError:
        pass
    sock.close()
    return True
