import numpy as np
import pytest

from indexer.errors import ConfigError, FeatureError
from indexer.features.embedding import SentenceTransformerEmbedder, create_embedder


def test_default_model_separates_same_event_from_other_news(default_embedder):
    v = default_embedder.encode([
        "四川泸定发生5.1级地震，暂无人员伤亡",
        "泸定县今晨发生地震，震级5.1级，当地未报告伤亡",
        "国家统计局：10月份居民消费价格同比上涨2.1%",
    ])
    assert v.shape == (3, 512) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.1


def test_factory():
    assert create_embedder("none") is None
    assert create_embedder("use-m3").dims == 512
    assert isinstance(create_embedder("BAAI/bge-small-zh-v1.5"), SentenceTransformerEmbedder)
    with pytest.raises(ConfigError, match="embedding.model"):
        create_embedder(" ")


def test_sentence_transformers_backend_with_a_packaged_model():
    pytest.importorskip("sentence_transformers")
    emb = create_embedder("all-MiniLM-L6-v2")
    v = emb.encode(["The cat sits on the mat.", "A cat is sitting on a mat.", "Stock markets fell sharply today."])
    assert emb.dims == 384 and v.shape == (3, 384)
    assert v[0] @ v[1] > v[0] @ v[2]


def test_unloadable_model_is_a_clear_error(tmp_path):
    pytest.importorskip("sentence_transformers")
    emb = create_embedder(str(tmp_path / "no-such-model"))
    with pytest.raises(FeatureError, match="cannot load embedding model"):
        emb.encode(["x"])
