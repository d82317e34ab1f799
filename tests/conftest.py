"""Shared fixtures: one loaded default embedding model per test session (loading costs seconds);
the ``es`` mark on every test that needs the Elasticsearch test server."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexer.features import Featurizer
from indexer.features.embedding import UseM3Embedder
from indexer.pipeline import Indexer
from indexer.settings import Settings
from indexer.store.sqlite import SqliteStore
from indexer.features.simhash import FINGERPRINT_LAYOUT
from tests.es import server as es_test_server

ES_TESTS = Path(__file__).parent / "es"
# Fixtures of tests/es/conftest.py that start (or reuse) the test server.
ES_SERVER_FIXTURES = {"server", "es_store"}


def _needs_es_server(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("store_factory") in es_test_server.ES_STORE_KINDS:
        return True  # the store contract suite (tests/store) run against Elasticsearch
    return ES_TESTS in item.path.parents and not ES_SERVER_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that use the server through a fixture; tests that call ``require_server``
    themselves carry the mark in their module."""
    for item in items:
        if _needs_es_server(item):
            item.add_marker(pytest.mark.es)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    es_test_server.note_running_test(item)


@pytest.fixture(scope="session")
def default_embedder():
    return UseM3Embedder()


class TableEmbedder:
    """Deterministic embedder for rule tests: vectors looked up by a marker in the text."""

    name = "table"
    dims = 4

    def __init__(self, table: dict[str, list[float]]):
        self.table = {k: np.asarray(v, dtype=np.float32) / np.linalg.norm(v) for k, v in table.items()}

    def encode(self, texts):
        out = []
        for t in texts:
            hit = [v for k, v in self.table.items() if k in t]
            out.append(hit[0] if hit else np.asarray([0, 0, 0, 1], dtype=np.float32))
        return np.vstack(out) if out else np.zeros((0, 4), dtype=np.float32)


@pytest.fixture
def make_indexer(tmp_path, default_embedder):
    """``make_indexer(embedder=None, **settings)``: an Indexer on a fresh embedded store."""
    made = []

    def make(embedder="default", **overrides):
        emb = default_embedder if embedder == "default" else embedder
        settings = Settings().replace(**{"store.path": str(tmp_path / f"store{len(made)}"), **overrides})
        store = SqliteStore(settings.store.path, vector_dims=emb.dims if emb else None,
                            embedding_model=emb.name if emb else "none", fingerprint_layout=FINGERPRINT_LAYOUT,
                            bands=settings.simhash.bands)
        ix = Indexer(settings, store, Featurizer(settings, emb))
        made.append(ix)
        return ix

    yield make
    for ix in made:
        ix.close()
