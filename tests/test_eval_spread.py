"""Scores over several runs (shuffled arrival orders): mean and range."""

import pytest

from indexer.evaluation import PRF, over_runs, spread


def test_spread_of_runs():
    s = spread([0.9, 1.0, 0.8])
    assert (round(s.mean, 6), s.low, s.high) == (0.9, 0.8, 1.0)
    assert str(s) == "0.9000 (0.8000-1.0000)"


def test_over_runs_summarises_each_score():
    runs = [PRF(1.0, 0.5, 2 / 3), PRF(0.5, 1.0, 2 / 3)]
    summary = over_runs(runs)
    assert summary["precision"].low == 0.5 and summary["precision"].high == 1.0
    assert summary["recall"].mean == 0.75
    assert summary["f1"].low == summary["f1"].high


def test_no_runs_is_an_error():
    with pytest.raises(ValueError):
        spread([])
