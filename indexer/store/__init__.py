"""Stores behind one protocol; ``open_store`` picks one from the settings."""

from __future__ import annotations

from ..errors import ConfigError
from ..features.simhash import FINGERPRINT_LAYOUT
from ..settings import Settings
from .base import MANUAL, MERGED, BandQuery, ClusterChange, KnnQuery, Store, StoredArticle, StoreStats, TimeWindow, TitleQuery

__all__ = ["MANUAL", "MERGED", "ClusterChange", "BandQuery", "KnnQuery", "Store", "StoredArticle", "StoreStats", "TimeWindow", "TitleQuery", "open_store", "is_remote"]


def is_remote(location: str) -> bool:
    return location.startswith(("http://", "https://"))


def open_store(settings: Settings, *, vector_dims: int | None, embedding_model: str) -> Store:
    """The embedded store for a directory, the Elasticsearch store for an http(s) URL."""
    location = settings.store.path
    if is_remote(location):
        try:
            from .elasticsearch import ElasticsearchStore
        except ImportError as exc:
            raise ConfigError(
                "store.path", f"{location} is an Elasticsearch URL, which needs: pip install 'newsdedup[es]' ({exc})"
            ) from exc
        return ElasticsearchStore.from_settings(settings, vector_dims=vector_dims, embedding_model=embedding_model)
    from .sqlite import SqliteStore

    return SqliteStore(
        location,
        vector_dims=vector_dims,
        embedding_model=embedding_model,
        fingerprint_layout=FINGERPRINT_LAYOUT,
        bands=settings.simhash.bands,
        ef_search=settings.store.ann_ef_search,
        m=settings.store.ann_m,
        ef_construction=settings.store.ann_ef_construction,
        window_cache_vectors=settings.store.window_cache_vectors,
    )
