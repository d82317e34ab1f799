"""Reading `newsdedup tune`'s pairs: 0/1 labels only, and cross-validation groups that keep pairs
sharing an article in one fold."""

from __future__ import annotations

import math

import pytest

from indexer.tuning import pair_from_line, pair_groups, parse_label


@pytest.mark.parametrize("value, expected", [
    (0, False), (1, True), (0.0, False), (1.0, True), (False, False), (True, True),
    ("0", False), ("1", True), ("0.0", False), ("1.0", True), ("true", True), ("false", False),
    (" TRUE ", True), ("False", False), (" 1 ", True),
])
def test_labels_read_as_0_or_1(value, expected):
    assert parse_label(value) is expected


@pytest.mark.parametrize("value", [None, -1, 2, "2", "-1", math.nan, "nan", "yes", "duplicate", "", [], {}])
def test_any_other_label_is_an_error_naming_it(value):
    with pytest.raises(ValueError, match="is not 0 or 1") as caught:
        parse_label(value)
    assert repr(value) in str(caught.value)


def test_pair_from_line_reads_its_label_so():
    assert pair_from_line({"source": "a", "target": "b", "y": "1.0"}, "y") == ({"title": "a"}, {"title": "b"}, True)
    with pytest.raises(ValueError, match="label -1 is not 0 or 1"):
        pair_from_line({"source": "a", "target": "b", "y": -1}, "y")


def test_a_storys_pairs_are_one_group_and_a_hub_article_does_not_join_every_story():
    side = lambda i: {"id": i, "title": "t"}  # noqa: E731
    pairs = [(side("a"), side("b")), (side("c"), side("d")), (side("b"), side("c")), (side("e"), side("f")),
             ({"title": "x"}, {"title": "y"}), ({"title": "x"}, {"title": "y"}), (side("f"), {"title": "z"}), (side(7), side("7"))]
    same = [True, True, True, True, True, False, True, True]
    g = pair_groups(pairs, same)
    assert g[0] == g[1] == g[2]  # a-b, c-d joined through b-c
    assert g[3] == g[6] != g[0]  # e-f and f-z share f
    assert g[4] != g[5] and len({g[4], g[5]} & set(g[:4] + g[6:])) == 0  # no ids: a group each
    assert g[7] not in (g[0], g[3])
    # Candidate pairs around one hub article: the non-duplicates do not join the stories into one
    # group (a cross-validation of one group trains on nothing).
    hub = [(side("h"), side(f"s{k}")) for k in range(20)] + [(side(f"s{k}"), side(f"s{k}~copy")) for k in range(20)]
    groups = pair_groups(hub, [False] * 20 + [True] * 20)
    assert len(set(groups)) == 21 and groups[20] == groups[20 + 0] != groups[21]


def test_cross_validation_of_one_group_is_refused():
    import numpy as np

    from indexer.compare.model import cross_validate

    x, y = np.random.default_rng(0).normal(size=(40, 3)), np.array([True, False] * 20)
    with pytest.raises(ValueError, match="two folds"):
        cross_validate(x, y, ["one"] * 40)
