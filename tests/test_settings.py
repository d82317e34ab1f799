"""Settings validation: values that would slip past the range checks, config files that are not
UTF-8 TOML, an empty store path, and misspelt NEWSDEDUP_* variables."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from indexer.cli import main
from indexer.errors import ConfigError
from indexer.settings import load_settings


@pytest.mark.parametrize("key", ["decision.time_window_days", "daemon.shutdown_grace_seconds", "es.request_timeout"])
@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "NaN", "1e400", float("nan"), float("inf"), pytest.param(10**400, id="10**400")])
def test_non_finite_floats_are_refused_naming_the_key(key, raw):
    with pytest.raises(ConfigError, match=rf"'{key}': expected a finite float") as exc:
        load_settings(overrides={key: raw}, environ={})
    assert exc.value.key == key


def test_non_finite_floats_are_refused_from_every_source(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text("[decision]\ntime_window_days = inf\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="'decision.time_window_days'"):
        load_settings(cfg, environ={})
    with pytest.raises(ConfigError, match="'daemon.shutdown_grace_seconds'"):
        load_settings(environ={"NEWSDEDUP_DAEMON_SHUTDOWN_GRACE_SECONDS": "nan"})
    # finite values, in every spelling, still pass
    s = load_settings(overrides={"decision.time_window_days": "1e2", "decision.knn_min_cosine": -0.5}, environ={})
    assert (s.decision.time_window_days, s.decision.knn_min_cosine) == (100.0, -0.5)


def test_config_command_refuses_nan():
    r = CliRunner().invoke(main, ["config", "--set", "decision.time_window_days=nan"], env={"NEWSDEDUP_CONFIG": None})
    assert r.exit_code != 0 and "decision.time_window_days" in r.output


def test_a_config_file_in_gbk_is_refused_naming_the_file(tmp_path):
    cfg = tmp_path / "gbk.toml"
    cfg.write_bytes("# 去重设置\n[simhash]\nbands = 4\n".encode("gbk"))
    with pytest.raises(ConfigError, match="UTF-8 TOML") as exc:
        load_settings(cfg, environ={})
    assert str(cfg) in str(exc.value)


def test_an_unreadable_config_file_is_refused_naming_it(tmp_path):
    with pytest.raises(ConfigError, match="UTF-8 TOML") as exc:
        load_settings(tmp_path, environ={})  # a directory
    assert str(tmp_path) in str(exc.value)
    with pytest.raises(ConfigError, match="file not found"):
        load_settings(tmp_path / "missing.toml", environ={})


def test_a_config_file_with_a_utf8_bom_is_read(tmp_path):
    cfg = tmp_path / "bom.toml"
    cfg.write_bytes(b"\xef\xbb\xbf" + "# 去重设置\n[simhash]\nbands = 6\n".encode("utf-8"))
    assert load_settings(cfg, environ={}).simhash.bands == 6


def test_an_empty_store_path_is_refused_from_every_source(tmp_path):
    for kw in ({"environ": {"NEWSDEDUP_STORE_PATH": ""}},
               {"environ": {}, "overrides": {"store.path": ""}},
               {"environ": {}, "overrides": {"store.path": "  "}}):
        with pytest.raises(ConfigError, match="'store.path'") as exc:
            load_settings(**kw)
        assert exc.value.key == "store.path"
    cfg = tmp_path / "s.toml"
    cfg.write_text('[store]\npath = ""\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="'store.path'"):
        load_settings(cfg, environ={})
    for args in (["--set", "store.path="], ["--store", ""]):
        r = CliRunner().invoke(main, ["config", *args], env={"NEWSDEDUP_CONFIG": None})
        assert r.exit_code != 0 and "store.path" in r.output, args


@pytest.mark.parametrize("name, meant", [
    ("NEWSDEDUP_DEAMON_AUTH_TOKEN", "NEWSDEDUP_DAEMON_AUTH_TOKEN"),   # section misspelt
    ("NEWSDEDUP_SIMHSH_BANDS", "NEWSDEDUP_SIMHASH_BANDS"),
    ("NEWSDEDUP_DAEMONS_AUTH_TOKN", "NEWSDEDUP_DAEMON_AUTH_TOKEN"),  # both
    ("NEWSDEDUP_DAEMON_AUTH_TOKN", "NEWSDEDUP_DAEMON_AUTH_TOKEN"),   # key misspelt in a known section
    ("NEWSDEDUP_DECISION_KNN_KK", "NEWSDEDUP_DECISION_KNN_K"),
])
def test_a_misspelt_variable_is_refused_with_the_name_meant(name, meant):
    with pytest.raises(ConfigError, match=f"did you mean {meant}\\?") as exc:
        load_settings(environ={name: "s3cret"})
    assert exc.value.key == name and "s3cret" not in str(exc.value)


def test_other_variables_under_the_prefix_are_still_ignored():
    others = {
        # docker compose's (.env.example, exported to host commands by `set -a; . ./.env`)
        "NEWSDEDUP_AUTH_TOKEN": "t", "NEWSDEDUP_PORT": "8080", "NEWSDEDUP_MEM_LIMIT": "2g",
        "NEWSDEDUP_KIBANA_URL": "http://k", "NEWSDEDUP_PUSH_TOKEN": "t", "NEWSDEDUP_EVAL_DATA": "/d",
        "NEWSDEDUP_REQUIRE_ES": "1", "NEWSDEDUP_REQUIRE_BROWSER": "1", "NEWSDEDUP_UI_SCREENSHOTS": "/s",
        "NEWSDEDUP_TEST_ES_URL": "http://x", "NEWSDEDUP_TEST_ES_API_KEY": "k", "NEWSDEDUP_TEST_ES_USERNAME": "u",
        "NEWSDEDUP_SOMETHING_ELSE": "x", "NEWSDEDUP_": "x", "NEWSDEDUP_DAEMON": "x",
        # a near-miss section with no setting of that key: nothing to suggest (STORE_DIR is none)
        "NEWSDEDUP_STORES_DIR": "/x",
    }
    s = load_settings(environ={**others, "NEWSDEDUP_DAEMON_AUTH_TOKEN": "s3cret"})
    assert s.daemon.auth_token == "s3cret" and s.store.path == "./newsdedup-data"


def test_an_unknown_key_of_a_known_section_still_raises_without_a_close_match():
    with pytest.raises(ConfigError, match="'daemon.xyzzy'"):
        load_settings(environ={"NEWSDEDUP_DAEMON_XYZZY": "1"})
