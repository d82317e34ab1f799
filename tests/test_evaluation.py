import pytest

from indexer.evaluation import bcubed_prf, binary_prf, pairwise_prf


def test_pairwise_counts_pairs():
    truth = {"a": 1, "b": 1, "c": 1, "d": 2}
    pred = {"a": "x", "b": "x", "c": "y", "d": "y"}
    m = pairwise_prf(pred, truth)
    # true pairs ab ac bc; predicted ab cd; tp = ab
    assert (m.tp, m.fp, m.fn) == (1, 1, 2)
    assert m.precision == pytest.approx(0.5) and m.recall == pytest.approx(1 / 3)


def test_perfect_and_singletons():
    truth = {"a": 1, "b": 2}
    assert pairwise_prf({"a": 1, "b": 2}, truth).f1 == 1.0
    assert bcubed_prf({"a": 1, "b": 2}, truth).f1 == 1.0


def test_bcubed():
    truth = {"a": 1, "b": 1, "c": 2}
    pred = {"a": 0, "b": 0, "c": 0}
    m = bcubed_prf(pred, truth)
    assert m.recall == 1.0 and m.precision == pytest.approx((2 / 3 + 2 / 3 + 1 / 3) / 3)


def test_binary():
    m = binary_prf([True, True, False, False], [True, False, True, False])
    assert (m.tp, m.fp, m.fn) == (1, 1, 1) and m.f1 == 0.5


def test_nothing_to_score_is_an_error_not_a_perfect_score():
    with pytest.raises(ValueError, match="nothing to score"):
        pairwise_prf({}, {})
    with pytest.raises(ValueError, match="nothing to score"):
        bcubed_prf({"a": 1}, {"b": 1})  # no article both predicted and labelled
    with pytest.raises(ValueError, match="nothing to score"):
        binary_prf([], [])
    single = pairwise_prf({"a": 1}, {"a": 1})  # one article: nothing merged, nothing missed
    assert (single.precision, single.recall) == (1.0, 1.0)
