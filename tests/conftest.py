"""Shared fixtures: one loaded default embedding model per test session (loading costs seconds)."""

from __future__ import annotations

import numpy as np
import pytest

from indexer.features import Featurizer
from indexer.features.embedding import UseM3Embedder
from indexer.pipeline import Indexer
from indexer.settings import Settings
from indexer.store.sqlite import SqliteStore
from indexer.features.simhash import FINGERPRINT_LAYOUT


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
