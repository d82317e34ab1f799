import jieba
import rjieba
import numpy as np
import pytest

from indexer.features import text_features
from indexer.features.exact import content_key
from indexer.features.simhash import band_keys, band_layout, from_signed, hamming, simhash, to_signed
from indexer.features.tokenize import segment, weighted_tokens
from indexer.settings import Settings

PARAGRAPHS = [
    "国家统计局12日发布数据显示，10月份全国居民消费价格同比上涨2.1%，环比上涨0.3%。",
    "台风“梅花”于14日晚在浙江舟山普陀沿海登陆，登陆时中心附近最大风力有14级。",
    "中国女排在世锦赛小组赛中以3比0战胜阿根廷队，取得两连胜。iPhone 15 Pro售价7999元。",
]


@pytest.mark.parametrize("text", PARAGRAPHS)
def test_rjieba_segmentation_equals_jieba(text):
    assert segment(text) == jieba.lcut(text)


def test_words_of_other_scripts_stay_whole():
    # jieba cuts letters outside Han and ASCII one by one; they are words here.
    assert segment("вчера вечером") == ["вчера", " ", "вечером"]
    assert segment("Pokémon Go 发布") == ["Pokémon", " ", "Go", " ", "发布"]
    assert segment("안녕하세요 세계") == ["안녕하세요", " ", "세계"]
    assert segment("สวัสดีครับ") == ["สวัสดีครับ"]  # Thai vowels are marks, inside the word
    assert segment("आग लग गई। दमकल") == ["आग", " ", "लग", " ", "गई", "।", " ", "दमकल"]  # a danda ends a word
    assert segment("東京タワー") == ["東京", "タワー"]
    assert segment("COVID-19疫情 5G") == rjieba.cut("COVID-19疫情 5G")  # ASCII stays rjieba's


def test_unrelated_texts_in_cyrillic_get_unrelated_fingerprints():
    """Cut into letters, every Russian text was its alphabet: a fire and a minimum-wage law were
    1 bit apart, so unrelated articles merged as near copies."""
    fire = ("Вчера вечером на заводе по производству пластиковых изделий в Подмосковье произошел крупный пожар. "
            "По данным МЧС, площадь возгорания составила около двух тысяч квадратных метров.")
    wage = ("Кабинет министров одобрил повышение минимального размера оплаты труда по всей стране. "
            "Новые правила вступят в силу с первого января следующего года.")
    settings = Settings()
    a, b = text_features("Новости", fire, settings), text_features("Новости", wage, settings)
    assert a.token_count >= 15 and hamming(a.simhash, b.simhash) > 12


def test_weighted_tokens_drop_punctuation_and_stopwords():
    toks = weighted_tokens("", "今天，北京的天气非常好。")
    assert "，" not in toks and "的" not in toks and "北京" in toks


def test_title_words_weigh_more_than_body_words():
    w = weighted_tokens("地震", "地震 台风")
    assert w["地震"] > w["台风"]


def test_simhash_is_deterministic_and_similar_texts_are_close():
    a = weighted_tokens("", PARAGRAPHS[0] * 3)
    b = weighted_tokens("", PARAGRAPHS[0] * 3 + "另据了解，专家认为物价总体平稳。")
    c = weighted_tokens("", PARAGRAPHS[1] * 3)
    assert simhash(a) == simhash(dict(a))
    assert hamming(simhash(a), simhash(b)) < hamming(simhash(a), simhash(c))
    assert simhash({}) == 0


def test_bands_guarantee_a_shared_band_within_bands_minus_one_bits():
    rng = np.random.default_rng(1)
    for _ in range(200):
        x = int(rng.integers(0, 2**63)) * 2 + int(rng.integers(0, 2))
        flips = rng.choice(64, size=3, replace=False)
        y = x
        for bit in flips:
            y ^= 1 << int(bit)
        assert set(band_keys(x, 4)) & set(band_keys(y, 4))


def test_band_layout_covers_all_bits():
    for bands in (2, 4, 5, 6, 8):
        layout = band_layout(bands)
        assert sum(w for _, w in layout) == 64 and len(layout) == bands
    with pytest.raises(ValueError):
        band_layout(0)


def test_signed_round_trip():
    for v in (0, 1, 2**63 - 1, 2**63, 2**64 - 1):
        assert from_signed(to_signed(v)) == v and -(2**63) <= to_signed(v) < 2**63


def test_content_key_uses_body_alone_unless_it_is_too_short():
    body = "这是一段足够长的正文内容，用来判断完全重复的文章，长度超过三十个字符没有问题吧。"
    assert content_key("标题一", body) == content_key("完全不同的标题", body)
    assert content_key("标题一", "详见附件") != content_key("标题二", "详见附件")


def test_features_read_a_bounded_prefix_of_huge_bodies():
    s = Settings().replace(**{"input.feature_max_chars": 1000})
    f = text_features("标题", "新闻正文。" * 1_000_000, s)
    assert len(f.clean_body) == 1000


def test_a_repeated_junk_word_does_not_decide_the_fingerprint():
    """Two unrelated forum pages that repeat the same filler under every picture stay far apart."""
    filler = "\n下载附件 保存到相册 半小时前 上传" * 150
    a = "宁远的天气还要再作一波妖，骤降20度，降温和降雨天气都不缺席，强大的北极涡旋正在西伯利亚。" + filler
    b = "沧浪亭河断头浜年年盛开的荷花不见了，取而代之的是水环境修复船，市民希望河道早日恢复原貌。" + filler
    s = Settings()
    fa, fb = text_features("宁远天气", a, s), text_features("沧浪亭荷花", b, s)
    assert hamming(fa.simhash, fb.simhash) > s.simhash.max_distance


def test_weights_are_sublinear_in_term_frequency_and_ignore_lone_latin_letters():
    w = weighted_tokens("", "地震 " * 100 + "救援 n n n x")
    assert 4 < w["地震"] / w["救援"] < 6.5  # 1 + ln 100 = 5.6, not 100
    assert "n" not in w and "x" not in w


def test_token_caches_stay_bounded_on_an_open_vocabulary_and_answer_the_same(monkeypatch):
    """A stream brings new tokens for good (figures, names): the caches of token weights and
    hashes start over when full instead of growing with the store, and give the same answers."""
    import importlib

    from indexer.features import tokenize

    simhash_module = importlib.import_module("indexer.features.simhash")  # the package re-exports the function

    monkeypatch.setattr(tokenize, "_IDF_CACHE", {})
    monkeypatch.setattr(simhash_module, "_HASH_CACHE", {})
    monkeypatch.setattr(tokenize, "_IDF_CACHE_MAX", 50)
    monkeypatch.setattr(simhash_module, "_HASH_CACHE_MAX", 50)
    text = PARAGRAPHS[0]
    first = weighted_tokens("", text)
    fingerprint = simhash(first)
    for i in range(500):  # an article number each: 500 tokens never seen again
        weighted_tokens(f"快讯 {i}号", f"编号{i}的报道")
        simhash({f"tok{i}": 1.0})
    assert len(tokenize._IDF_CACHE) <= 50 and len(simhash_module._HASH_CACHE) <= 50
    assert weighted_tokens("", text) == first and simhash(weighted_tokens("", text)) == fingerprint
