"""``rules.refusal``: the one line ``explain`` gives for a pair ``judge`` does not match."""

from __future__ import annotations

import itertools

from indexer.compare.evidence import PairEvidence
from indexer.compare.rules import judge, refusal
from indexer.settings import Settings

S = Settings()
D, H = S.decision, S.simhash


def evidence(cosine=0.8, title_sim=0.3, **kw) -> PairEvidence:
    base = {"exact": False, "hamming": 30, "short": False, "containment": 0.1, "cosine": cosine, "title_sim": title_sim,
            "event_score": None if cosine is None else 0.5 * cosine + title_sim, "title_numbers_conflict": False,
            "template": None}
    return PairEvidence(**{**base, **kw})


def test_each_refusal_names_what_decided():
    assert refusal(evidence(), D, H) is None  # event score 0.70: a semantic match
    assert refusal(evidence(template="number differs: '3' vs '5'"), D, H) == "templated report: number differs: '3' vs '5'"
    assert refusal(evidence(specifics="streets differ: '中山路' vs '解放路'"), D, H).startswith("event specifics: streets differ")
    assert refusal(evidence(title_numbers_conflict=True), D, H) == "the headlines' figures conflict"
    assert refusal(evidence(roundups=1), D, H).startswith("a roundup")
    assert refusal(evidence(adverts=True), D, H).startswith("an advertisement")
    assert refusal(evidence(title_sim=0.1, shingle_ratio=0.05), D, H).startswith("the match rests on the long text's opening")
    assert refusal(evidence(cosine=0.79, title_sim=0.12, verifier_cosine=0.9), D, H) == "verifier: e5 headline cosine 0.900 < 0.92"
    assert refusal(evidence(cosine=0.55, title_sim=0.5), D, H) == "embedding cosine 0.550 < 0.6"
    assert refusal(evidence(cosine=0.7, title_sim=0.1), D, H) == "event score 0.450 < 0.5"
    assert refusal(evidence(cosine=None), D, H) == "not a copy, and no embedding to compare"
    assert refusal(evidence(), D.__class__(layers="exact,near"), H) == "not a copy, and the semantic layer is off"


def test_a_refusal_is_given_exactly_when_judge_finds_no_match():
    grid = itertools.product((True, False), (1, 30), (0.1, 0.9), (None, 0.5, 0.65, 0.9), (0.0, 0.15, 0.5),
                             (None, "number differs: '1' vs '2'"), (None, "dates differ"), (0, 1), (None, 0.85, 0.95))
    for exact, hamming, cont, cos, ts, template, specifics, roundups, ver in grid:
        ev = evidence(cosine=cos, title_sim=ts, exact=exact, hamming=hamming, containment=cont, template=template,
                      specifics=specifics, roundups=roundups, verifier_cosine=ver)
        assert (refusal(ev, D, H) is None) == (judge(ev, D, H) is not None), ev
