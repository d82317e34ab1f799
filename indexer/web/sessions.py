"""Browser sessions: the browser proves the daemon's token once (``/ui/login``) and gets a
random session id in an HttpOnly, SameSite=Strict cookie; each session has its own CSRF token,
which every form carries. Sessions live in memory: a restart asks people to log in again.
Without a token every browser gets a session at once (as user ``local``), so forms still carry
CSRF tokens."""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

COOKIE = "newsdedup_session"
TTL_SECONDS = 12 * 3600
MAX_SESSIONS = 10_000  # beyond it the oldest is dropped: a flood of logins cannot grow memory


@dataclass(frozen=True)
class Session:
    id: str
    user: str
    csrf: str
    expires: float

    def csrf_ok(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), self.csrf.encode())


class Sessions:
    def __init__(self, ttl: float = TTL_SECONDS, limit: int = MAX_SESSIONS):
        self._ttl, self._limit = ttl, limit
        self._by_id: dict[str, Session] = {}
        self._lock = threading.Lock()

    def create(self, user: str) -> Session:
        s = Session(secrets.token_urlsafe(32), user, secrets.token_urlsafe(32), time.time() + self._ttl)
        with self._lock:
            while len(self._by_id) >= self._limit:
                del self._by_id[next(iter(self._by_id))]
            self._by_id[s.id] = s
        return s

    def get(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        with self._lock:
            s = self._by_id.get(session_id)
            if s is not None and s.expires < time.time():
                del self._by_id[session_id]
                return None
            return s

    def end(self, session_id: str | None) -> None:
        with self._lock:
            self._by_id.pop(session_id or "", None)


class LoginThrottle:
    """Wrong tokens allowed per window and client address: beyond it that address's logins are
    refused until the window has passed, so guessing the token from a browser form is slow, and
    one client's wrong tries never lock out another (behind a proxy every client has the proxy's
    address). At most ``max_clients`` addresses are remembered, those with the newest failures."""

    def __init__(self, attempts: int = 10, window_seconds: float = 60.0, max_clients: int = 10_000):
        self._attempts, self._window, self._max_clients = attempts, window_seconds, max_clients
        self._failures: OrderedDict[str, list[float]] = OrderedDict()  # least recently failed first
        self._lock = threading.Lock()

    def wait_seconds(self, client: str) -> int:
        """0 when ``client`` may try a login now, else how long it must wait."""
        now = time.monotonic()
        with self._lock:
            recent = [t for t in self._failures.get(client, ()) if now - t < self._window]
            if not recent:
                self._failures.pop(client, None)
                return 0
            self._failures[client] = recent
            if len(recent) < self._attempts:
                return 0
            return max(1, int(self._window - (now - recent[0])) + 1)

    def failed(self, client: str) -> None:
        with self._lock:
            self._failures.setdefault(client, []).append(time.monotonic())
            self._failures.move_to_end(client)
            while len(self._failures) > self._max_clients:
                self._failures.popitem(last=False)
