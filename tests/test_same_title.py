"""The headline question: a trimmed repost whose embedding and fingerprint drifted away from its
story is still asked about, because it kept the story's headline; the rules then decide."""

from __future__ import annotations

import pytest

from indexer import pipeline
from tests.conftest import TableEmbedder
from tests.test_pipeline import QUAKE, rec

HEADLINE = "四川泸定发生5.1级地震 暂无人员伤亡"
STORY = rec("story", HEADLINE, QUAKE)
TRIMMED = rec("trimmed", HEADLINE, "\n".join(QUAKE.split("\n")[:2]), day=13)  # the last paragraph cut
# Only the whole story mentions 交通: the trimmed copy's vector is orthogonal to it (below the kNN floor).
EMBEDDER = {"交通": [1, 0, 0, 0]}


def _far_apart(ix):
    evidence = ix.compare(TRIMMED, STORY)[0]
    return evidence.cosine < ix.settings.decision.knn_min_cosine and evidence.hamming > ix.settings.simhash.max_distance


@pytest.mark.parametrize("one_batch", [False, True])
def test_a_trimmed_repost_under_its_story_s_headline_is_found_by_the_headline(make_indexer, one_batch):
    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    assert _far_apart(ix)  # neither the kNN nor the SimHash layer can find it
    outcomes = ix.index_many([STORY, TRIMMED]) if one_batch else ix.index_many([STORY]) + ix.index_many([TRIMMED])
    assert (outcomes[1].cluster_id, outcomes[1].reason) == ("story", "near"), outcomes[1]


def test_short_headlines_are_not_asked_about(make_indexer, monkeypatch):
    """A headline under SAME_TITLE_MIN_CHARS (通知, 公告) names no story: no headline question."""
    monkeypatch.setattr(pipeline, "SAME_TITLE_MIN_CHARS", len(HEADLINE) + 1)
    ix = make_indexer(embedder=TableEmbedder(EMBEDDER))
    outcomes = ix.index_many([STORY]) + ix.index_many([TRIMMED])
    assert outcomes[1].cluster_id == "trimmed"
