from __future__ import annotations

import pytest

from .server import FixtureServer


@pytest.fixture
def server():
    srv = FixtureServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def make_server():
    started: list[FixtureServer] = []

    def make(host: str = "127.0.0.1") -> FixtureServer:
        srv = FixtureServer(host=host).start()
        started.append(srv)
        return srv

    yield make
    for srv in started:
        srv.stop()


class SleepRecorder:
    """Stands in for time.sleep: records the delays instead of waiting."""

    def __init__(self):
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def sleeps():
    return SleepRecorder()
