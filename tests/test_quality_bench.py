"""bench/quality.py scores the clusters as they stand once every record is ingested: an outcome
names the cluster its article joined on arrival, and a later article may merge that cluster."""

from __future__ import annotations

import sys
from pathlib import Path

from indexer.features import Featurizer
from indexer.features.simhash import FINGERPRINT_LAYOUT
from indexer.pipeline import Indexer
from indexer.store.sqlite import SqliteStore
from tests.conftest import TableEmbedder
from tests.test_clusters import EMBEDDER, STORIES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import quality  # noqa: E402


def test_earlier_members_are_scored_in_the_cluster_a_later_merge_made(monkeypatch):
    embedder = TableEmbedder(EMBEDDER)

    def open_with_table_embedder(settings):
        store = SqliteStore(settings.store.path, vector_dims=embedder.dims, embedding_model=embedder.name,
                            fingerprint_layout=FINGERPRINT_LAYOUT, bands=settings.simhash.bands)
        return Indexer(settings, store, Featurizer(settings, embedder))

    monkeypatch.setattr(quality.Indexer, "open", staticmethod(open_with_table_embedder))
    cpi = {r["id"]: r for r in STORIES if r["id"].startswith("cpi")}
    # Head and tail do not match each other and start two clusters; the original, a batch later,
    # matches both and merges them.
    outcomes, _ = quality._ingest([cpi["cpi-head"], cpi["cpi-tail"], cpi["cpi-orig"]], ["input.batch_size=1"])
    assert len({o.cluster_id for o in outcomes}) == 1, [(o.article_id, o.cluster_id) for o in outcomes]
    assert outcomes[2].merged  # the original's arrival merged the two clusters
