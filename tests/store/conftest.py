"""Store fixtures. ``store_factory`` is parametrised over every store implementation, so the
contract suite in this folder runs unchanged against each one."""

from __future__ import annotations

import pytest

from indexer.features.simhash import FINGERPRINT_LAYOUT
from indexer.store.sqlite import SqliteStore

DIMS = 8


def _sqlite_factory(tmp_path):
    made = []

    def make(dims=DIMS, model="test-model"):
        store = SqliteStore(tmp_path / f"store{len(made)}", vector_dims=dims, embedding_model=model,
                            fingerprint_layout=FINGERPRINT_LAYOUT, bands=4)
        made.append(store)
        return store

    return make, made


# "es": Elasticsearch store answering recent writes from its in-flight buffer; "es-refresh": no
# buffer, refresh on every write, so every lookup is answered by the server (tests/es/server.py).
STORE_KINDS = ["sqlite", "es", "es-refresh"]


@pytest.fixture(params=STORE_KINDS)
def store_factory(request, tmp_path):
    cleanup = None
    if request.param == "sqlite":
        make, made = _sqlite_factory(tmp_path)
    elif request.param in ("es", "es-refresh"):
        from tests.es.server import es_factory

        make, made, cleanup = es_factory(request.param)
    else:  # pragma: no cover - other stores register themselves in STORE_KINDS and here
        raise AssertionError(request.param)
    yield make
    if cleanup is not None:
        cleanup()
    for store in made:
        try:
            store.close()
        except Exception:
            pass
