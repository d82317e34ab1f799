"""How the ES tests react to a missing test server: skipped by default, failed where the suite is
expected to run (``NEWSDEDUP_REQUIRE_ES``), and a test without the ``es`` mark is refused."""

from __future__ import annotations

import pytest

from . import server as es_test_server


@pytest.fixture
def no_server(monkeypatch):
    """A fresh server state in which neither a configured cluster nor noida-db is available."""
    monkeypatch.setattr(es_test_server, "_state", {})
    monkeypatch.delenv(es_test_server.ENV + "URL", raising=False)
    monkeypatch.delenv(es_test_server.REQUIRE_ENV, raising=False)

    def unavailable():
        raise RuntimeError("noida-db is not installed")

    monkeypatch.setattr(es_test_server, "_start_noida", unavailable)
    return monkeypatch


@pytest.mark.parametrize("value", [None, "", "0", "false"])
def test_a_missing_server_skips_when_not_required(no_server, value):
    if value is not None:
        no_server.setenv(es_test_server.REQUIRE_ENV, value)
    with pytest.raises(pytest.skip.Exception, match="noida-db is not installed"):
        es_test_server.require_server()


@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_a_missing_server_fails_when_required(no_server, value):
    no_server.setenv(es_test_server.REQUIRE_ENV, value)
    with pytest.raises(pytest.fail.Exception, match="noida-db is not installed.*NEWSDEDUP_REQUIRE_ES"):
        es_test_server.require_server()


def test_a_test_without_the_es_mark_may_not_use_the_server(no_server, request):
    es_test_server.note_running_test(request.node)  # this test has no `es` mark
    with pytest.raises(pytest.fail.Exception, match="has no `es` mark"):
        es_test_server.require_server()
    request.node.add_marker(pytest.mark.es)
    with pytest.raises(pytest.skip.Exception):
        es_test_server.require_server()
