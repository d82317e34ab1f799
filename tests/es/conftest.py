"""Fixtures for the Elasticsearch store tests (server handling in ``server.py``). The ``es`` mark
of the tests that use them is added by tests/conftest.py: a ``pytestmark`` here would do nothing."""

from __future__ import annotations

import pytest

from .server import drop_store, make_store, require_server


@pytest.fixture
def server():
    return require_server()


@pytest.fixture
def es_store(server, tmp_path):
    """``es_store(dims=8, model=..., **EsSettings overrides)``: a store on a fresh alias, dropped afterwards."""
    made = []

    def make(**kwargs):
        kwargs.setdefault("dead_letter_dir", str(tmp_path / "deadletter"))
        store = make_store(server, **kwargs)
        made.append(store)
        return store

    yield make
    for store in made:
        try:
            drop_store(store)
        finally:
            store.close()
