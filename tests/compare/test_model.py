"""The learned semantic decision: fitting, calibration report, the model file, and judge using it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from indexer.cli import main
from indexer.compare.evidence import PairEvidence
from indexer.compare.model import FEATURES, PairModel, features, fit, fit_model, load_model
from indexer.compare.rules import Reason, judge
from indexer.errors import ConfigError
from indexer.settings import Settings


def evidence(cosine, title_sim, headline_only=False, template=None, **kw):
    return PairEvidence(exact=False, hamming=30, short=False, containment=0.1, cosine=cosine, title_sim=title_sim,
                        event_score=0.5 * cosine + title_sim, title_numbers_conflict=False, template=template,
                        headline_only=headline_only, **kw)


def test_fit_separates_what_the_labels_separate():
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, size=(400, len(FEATURES)))
    y = (2 * x[:, 0] + x[:, 1] > 1.6).astype(float)
    w, b = fit(x, y, l2=0.01)
    assert w[0] > 5 and w[1] > 2 and abs(w[2]) < w[0]
    p = 1 / (1 + np.exp(-(x @ w + b)))
    assert np.mean((p >= 0.5) == (y > 0)) > 0.97


def test_fit_model_reports_cross_validation_and_calibration():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, size=(600, len(FEATURES)))
    x[:, FEATURES.index("headline_only")] = rng.integers(0, 2, 600)
    y = rng.uniform(0, 1, 600) < 1 / (1 + np.exp(-(8 * x[:, 0] - 4)))
    model, report = fit_model(x, y, [str(i) for i in range(600)], min_precision=0.8, min_precision_headlines=0.7)
    assert report["article_pairs"]["precision"] >= 0.8 and report["headline_pairs"]["precision"] >= 0.7
    assert 0 < model.threshold < 1 and 0 < model.headline_threshold < 1
    # calibrated: in each well-filled bin the observed rate is near the predicted probability
    for b in report["calibration"]:
        if b["pairs"] >= 60:
            assert abs(b["predicted"] - b["observed"]) < 0.15, b


def test_model_file_round_trips_and_judge_uses_it(tmp_path):
    model = PairModel(tuple([8.0] + [0.0] * (len(FEATURES) - 1)), -6.0, threshold=0.5, headline_threshold=0.9)
    path = tmp_path / "model.json"
    model.save(path)
    loaded = load_model(str(path))
    assert loaded.weights == model.weights and loaded.headline_threshold == 0.9
    settings = Settings().replace(**{"decision.semantic_model": str(path)})
    # p(cosine 0.9) = sigmoid(1.2) = 0.77: a match for articles, not for headlines (threshold 0.9)
    verdict = judge(evidence(0.9, 0.0), settings.decision, settings.simhash)
    assert verdict is not None and verdict.reason is Reason.SEMANTIC and verdict.score == pytest.approx(0.7685, abs=1e-3)
    assert judge(evidence(0.9, 0.0, headline_only=True), settings.decision, settings.simhash) is None
    # the guards still refuse whatever the model says
    assert judge(evidence(0.99, 1.0, specifics="deaths differ: 3 vs 5"), settings.decision, settings.simhash) is None
    assert judge(evidence(0.99, 1.0, template="name differs"), settings.decision, settings.simhash) is None
    # the hand-set rules would refuse cosine 0.9 with no shared headline (event score 0.45 < 0.50)
    assert judge(evidence(0.9, 0.0), Settings().decision, Settings().simhash) is None
    # outside where the ingest pre-check and the event guards look, the model is not asked
    sure = PairModel(tuple([0.0] * len(FEATURES)), 30.0, threshold=0.5, headline_threshold=0.5)
    sure.save(path)
    load_model.cache_clear()
    assert judge(evidence(0.9, 0.0), settings.decision, settings.simhash) is not None
    assert judge(evidence(0.55, 1.0), settings.decision, settings.simhash) is None  # cosine below 0.60
    assert judge(evidence(0.7, -0.2), settings.decision, settings.simhash) is None  # event score 0.15 < 0.40


def test_a_bad_model_file_is_a_config_error_naming_the_setting(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ConfigError, match="decision.semantic_model"):
        load_model(str(bad))
    with pytest.raises(ConfigError, match="decision.semantic_model"):
        load_model(str(tmp_path / "missing.json"))


def test_builtin_model_ships_and_loads():
    model = load_model("builtin")
    assert model.names == FEATURES and "cross_validation" in model.about
    assert features(evidence(0.5, 0.5)).shape == (len(FEATURES),)


def test_tune_fit_writes_a_model_that_loads(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    rows = []
    for i in range(40):
        rows.append({"source": f"某市第{i}届读书节开幕 市民踊跃参加", "target": f"第{i}届读书节在某市开幕 市民踊跃参加", "label": 1})
        rows.append({"source": f"某市第{i}届读书节开幕", "target": f"{i}号台风登陆沿海地区 多地停课", "label": 0})
    pairs.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    out = tmp_path / "model.json"
    result = CliRunner().invoke(main, ["tune", str(pairs), "--label", "label", "--set", "embedding.model=none",
                                       "--plot", str(tmp_path / "pr.png"), "--min-precision", "0.9", "--fit", str(out)])
    assert result.exit_code == 0, result.output
    assert "headline_pairs" in result.output and "calibration" in result.output
    model = load_model(str(out))
    assert model.about["fitted_on"].startswith("pairs.jsonl: 80 pairs")


def test_fitting_leaves_out_the_pairs_judge_refuses_whatever_a_model_says():
    """Thresholds are picked among the pairs the guards let through: the same guards ``judge``
    applies before any model (``rules.refused_as_semantic``), a roundup on either side included."""
    from indexer.compare.model import refused_by_guards

    decision = Settings().decision
    inside = {"exact": False, "hamming": 30, "short": False, "containment": 0.1, "cosine": 0.8, "title_sim": 0.3,
              "event_score": 0.7, "title_numbers_conflict": False, "template": None}
    pairs = [PairEvidence(**inside), PairEvidence(**{**inside, "roundups": 1}),
             PairEvidence(**{**inside, "specifics": "date differs"}), PairEvidence(**{**inside, "cosine": 0.2})]
    assert refused_by_guards(pairs, decision).tolist() == [False, True, True, True]


def test_calibration_is_weighted_as_the_fit_is():
    """The model is fitted with per-pair weights, so it is calibrated on the weighted set: each
    bin's predicted and observed means carry the same weights."""
    from indexer.compare.model import cross_validate

    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, size=(400, len(FEATURES)))
    y = rng.uniform(0, 1, 400) < x[:, 0]
    weights = np.where(y, 4.0, 1.0)  # positives count four times, as a set balanced by weight would
    report = cross_validate(x, y, [str(i) for i in range(400)], weights=weights)
    p = report["oof"]
    differs = 0
    for b in report["calibration"]:
        lo, hi = map(float, b["bin"].split("-"))
        inside = (p >= lo) & (p < hi + (1e-9 if hi >= 1 else 0))
        assert b["pairs"] == int(inside.sum())
        assert b["observed"] == round(float(np.average(y[inside], weights=weights[inside])), 3), b
        assert b["predicted"] == round(float(np.average(p[inside], weights=weights[inside])), 3), b
        differs += b["observed"] != round(float(y[inside].mean()), 3)
    assert differs  # the weights change what is observed: the test tells weighted from not


def test_tune_fit_keeps_pairs_that_share_an_article_in_one_fold(tmp_path, monkeypatch):
    import indexer.compare.model as model_module

    seen = {}
    real = model_module.fit_model

    def spy(x, y, groups, **kw):
        seen["groups"] = list(groups)
        return real(x, y, groups, **kw)

    monkeypatch.setattr(model_module, "fit_model", spy)
    side = lambda i, title: {"id": i, "title": title}  # noqa: E731
    rows = [
        {"a": side("a", "某市读书节开幕 市民踊跃参加"), "b": side("b", "读书节在某市开幕 市民踊跃参加"), "label": 1},
        {"a": side("b", "读书节在某市开幕 市民踊跃参加"), "b": side("c", "台风登陆沿海地区 多地停课"), "label": 0},
        {"a": side("d", "台风登陆沿海地区 多地停课"), "b": side("e", "沿海多地停课 台风登陆"), "label": 1},
        {"source": "北京今日迎来降雪", "target": "上海地铁新线开通", "label": 0},
    ]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    result = CliRunner().invoke(main, ["tune", str(pairs), "--label", "label", "--set", "embedding.model=none",
                                       "--plot", str(tmp_path / "pr.png"), "--fit", str(tmp_path / "model.json")])
    assert result.exit_code == 0, result.output
    g = seen["groups"]
    assert g[0] == g[1] and len({g[0], g[2], g[3]}) == 3, g
