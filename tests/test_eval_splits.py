"""The tune/test split of the evaluation sets (bench/splits.py): deterministic, disjoint, by group."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import splits  # noqa: E402


def test_part_is_a_fixed_function_of_the_key():
    # Pinned: these parts are what published test figures were measured on; a change of the
    # hash or salt would silently move stories between tune and test.
    assert splits.part_of(splits.ecom_key(590)) == "tune"
    assert splits.part_of(splits.story_key("cec-12")) == "test"
    assert splits.part_of(splits.sohu_key("a", "b")) == "tune"
    assert [splits.part_of(f"story:{i}") for i in range(50)] == [splits.part_of(f"story:{i}") for i in range(50)]


def test_split_is_disjoint_complete_and_keeps_order():
    items = [{"id": f"a{i}", "story": f"s{i % 97}"} for i in range(2000)]
    key = lambda item: splits.story_key(item["story"])  # noqa: E731
    tune = list(splits.split(items, "tune", key))
    test = list(splits.split(items, "test", key))
    assert {i["id"] for i in tune}.isdisjoint(i["id"] for i in test)
    assert len(tune) + len(test) == len(items)
    assert tune == [i for i in items if i in tune]  # original order
    # a story never straddles the parts
    assert {i["story"] for i in tune}.isdisjoint(i["story"] for i in test)


def test_split_does_not_depend_on_the_rest_of_the_set():
    everything = [f"k{i}" for i in range(500)]
    alone = [k for k in everything[::7] if splits.part_of(k) == "test"]
    assert alone == [k for k in splits.split(everything, "test", str) if k in everything[::7]]


def test_test_share_is_about_half():
    parts = [splits.part_of(f"story:inews-{i}") for i in range(4000)]
    assert 0.45 < parts.count("test") / len(parts) < 0.55


def test_sohu_key_ignores_surrounding_spaces_and_keeps_order_of_texts():
    assert splits.sohu_key("  甲", "乙 ") == splits.sohu_key("甲", "乙")
    assert splits.sohu_key("甲", "乙") != splits.sohu_key("乙", "甲")


def test_cec_key_groups_one_kind_in_one_place():
    assert splits.cec_key("火灾", "北京", "cec-1") == splits.cec_key("火灾", "北京", "cec-2")
    assert splits.cec_key("火灾", None, "cec-1") != splits.cec_key("火灾", None, "cec-2")


def test_unknown_part_is_refused():
    with pytest.raises(ValueError, match="part must be one of"):
        list(splits.split(["a"], "dev", str))


def test_wsdm_pairs_keep_each_claim_in_one_part():
    import datasets

    if not (datasets.DATA / "wsdm2019_fakenews_pairs" / "train-small.csv").exists():
        pytest.skip(f"evaluation data not found at {datasets.DATA}")
    parts = {part: list(datasets.wsdm_pairs(part=part)) for part in splits.PARTS}
    claims = {part: {claim for claim, _, _ in pairs} for part, pairs in parts.items()}
    assert not claims["tune"] & claims["test"]
    # ... nor any headline: one rumour stands under several claim ids that share other headlines
    headlines = {part: {h for a, b, _ in pairs for h in (a, b)} for part, pairs in parts.items()}
    assert not headlines["tune"] & headlines["test"]
    assert sum(map(len, parts.values())) == len(list(datasets.wsdm_pairs())) == 2000
    assert {label for pairs in parts.values() for _, _, label in pairs} == {"agreed", "disagreed", "unrelated"}


def test_a_cec_report_is_in_one_part_whether_a_seed_or_a_hard_negative():
    """cec_news reports were split by their id as seeds and by kind and place as hard negatives, so
    one report could be a tune set's seed and a test set's negative."""
    import datasets
    import heldout_sets

    if not (datasets.DATA / "cec_news" / "cec_raw_news.jsonl").exists():
        pytest.skip(f"evaluation data not found at {datasets.DATA}")
    for part, other in (("tune", "test"), ("test", "tune")):
        seeds = {a["id"] for a in datasets.distinct_seeds(300, part=part) if a["id"].startswith("cec-")}
        negatives = {r["id"] for r in heldout_sets.cec_hard_negatives(other)}
        assert seeds and negatives and not seeds & negatives
