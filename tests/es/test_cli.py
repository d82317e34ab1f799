"""``newsdedup es init`` / ``es check`` against the test server."""

from __future__ import annotations

import uuid

import pytest
from click.testing import CliRunner

from indexer.es_cli import es
from indexer.settings import EsSettings
from indexer.store.es_config import make_client
from indexer.store.es_schema import build_schema, drop

pytestmark = pytest.mark.es


@pytest.fixture
def cli_env(server, monkeypatch):
    index = f"ndtest-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("NEWSDEDUP_STORE_PATH", server.url)
    monkeypatch.setenv("NEWSDEDUP_ES_INDEX", index)
    monkeypatch.setenv("NEWSDEDUP_ES_REPLICAS", "0")
    monkeypatch.setenv("NEWSDEDUP_EMBEDDING_MODEL", "none")
    for name, value in server.auth.items():
        monkeypatch.setenv(f"NEWSDEDUP_ES_{name.upper()}", str(value))
    yield index
    cfg = EsSettings(index=index, **server.auth)
    client = make_client([server.url], cfg)
    try:
        for dims in (None, 8):
            drop(client, build_schema(cfg, vector_dims=dims, embedding_model="none", fingerprint_layout="f", bands=4))
    finally:
        client.close()


def test_init_then_check_then_init_again(cli_env):
    runner = CliRunner()
    first = runner.invoke(es, ["init"])
    assert first.exit_code == 0, first.output
    assert f"{cli_env}-000001 (created)" in first.output
    check = runner.invoke(es, ["check"])
    assert check.exit_code == 0, check.output
    assert "Elasticsearch 8." in check.output and "vector dims 0" in check.output and "0 articles" in check.output
    again = runner.invoke(es, ["init"])
    assert again.exit_code == 0 and "already there" in again.output


def test_store_and_set_flags_pick_the_cluster_and_index(cli_env, server, monkeypatch):
    monkeypatch.delenv("NEWSDEDUP_STORE_PATH")
    monkeypatch.delenv("NEWSDEDUP_ES_INDEX")
    runner = CliRunner()
    made = runner.invoke(es, ["init", "--store", server.url, "--set", f"es.index={cli_env}"])
    assert made.exit_code == 0, made.output
    assert f"{cli_env}-000001 (created)" in made.output
    checked = runner.invoke(es, ["check", "--store", server.url, "--set", f"es.index={cli_env}"])
    assert checked.exit_code == 0 and "0 articles" in checked.output
    embedded = runner.invoke(es, ["check", "--store", "./some-dir"])
    assert embedded.exit_code != 0 and "Elasticsearch URL" in embedded.output


def test_check_reports_a_missing_alias_and_a_dims_mismatch(cli_env):
    runner = CliRunner()
    missing = runner.invoke(es, ["check"])
    assert missing.exit_code == 1 and "es init" in missing.output
    assert runner.invoke(es, ["init"]).exit_code == 0
    mismatch = runner.invoke(es, ["check", "--dims", "8"])
    assert mismatch.exit_code == 1 and "dims" in mismatch.output
    refused = runner.invoke(es, ["init", "--dims", "8"])
    assert refused.exit_code == 1 and "nothing was changed" in refused.output


def test_open_store_routes_an_http_url_to_elasticsearch(cli_env, server):
    from indexer.settings import load_settings
    from indexer.store import open_store
    from indexer.store.elasticsearch import ElasticsearchStore

    store = open_store(load_settings(), vector_dims=None, embedding_model="none")
    try:
        assert isinstance(store, ElasticsearchStore) and store.alias == cli_env
        assert store.stats().articles == 0
    finally:
        store.close()


def test_es_init_makes_the_index_the_daemon_would_make(cli_env, server, monkeypatch):
    """``es init`` on the host and a store that creates its own index (the daemon, ``ingest``) build
    client and schema the same way: same mapping, same settings. Replicas follow the nodes there
    are, up to es.replicas (auto_expand_replicas), so neither leaves a single node yellow."""
    from indexer.settings import load_settings
    from indexer.store import open_store

    monkeypatch.delenv("NEWSDEDUP_ES_REPLICAS")  # the default, as on a host without settings
    assert CliRunner().invoke(es, ["init"]).exit_code == 0
    by_daemon = f"{cli_env}-daemon"
    store = open_store(load_settings(overrides={"es.index": by_daemon}), vector_dims=None, embedding_model="none")
    try:
        client = store.client

        def made(alias):
            [(_, settings)] = client.indices.get_settings(index=alias).items()
            [(_, mapping)] = client.indices.get_mapping(index=alias).items()
            index = settings["settings"]["index"]
            return {k: index.get(k) for k in ("number_of_shards", "auto_expand_replicas", "refresh_interval")}, mapping

        settings, mapping = made(cli_env)
        assert settings == {"number_of_shards": "1", "auto_expand_replicas": "0-1", "refresh_interval": "1s"}
        assert made(by_daemon) == (settings, mapping)
    finally:
        drop(store.client, store.schema)
        store.close()


def test_es_init_makes_the_change_log_index_and_check_requires_it(cli_env, server):
    """Without ``es.auto_create`` a store refuses merges and splits when ``<index>_changes`` is
    missing, so ``es init`` makes it (strict mapping of its own, the replica rule of the article
    indices, no member of the alias) and ``es check`` fails without it."""
    from indexer.store.es_changes import CHANGES_MAPPING, changes_index

    runner = CliRunner()
    first = runner.invoke(es, ["init"])
    assert first.exit_code == 0, first.output
    log_index = changes_index(cli_env)
    assert f"change log {log_index} (created)" in first.output
    client = make_client([server.url], EsSettings(index=cli_env, **server.auth))
    try:
        [(name, body)] = client.indices.get_mapping(index=log_index).items()
        assert name == log_index
        assert body["mappings"]["dynamic"] == "strict"
        assert body["mappings"]["properties"].keys() == CHANGES_MAPPING["properties"].keys()
        [(_, settings)] = client.indices.get_settings(index=log_index).items()
        assert settings["settings"]["index"]["auto_expand_replicas"] == "0-0"  # NEWSDEDUP_ES_REPLICAS=0
        assert log_index not in client.indices.get_alias(name=cli_env)
        assert "already there" in runner.invoke(es, ["init"]).output.split("change log")[1]
        checked = runner.invoke(es, ["check"])
        assert checked.exit_code == 0 and f"ok   cluster change log {log_index}" in checked.output, checked.output

        client.indices.delete(index=log_index)
        missing = runner.invoke(es, ["check"])
        assert missing.exit_code == 1 and log_index in missing.output and "es init" in missing.output
        again = runner.invoke(es, ["init"])
        assert again.exit_code == 0 and f"change log {log_index} (created)" in again.output
        assert client.indices.exists(index=log_index)
    finally:
        client.close()


def test_ingest_into_elasticsearch_takes_the_writer_lease(cli_env, server, tmp_path):
    """An ingest into a fresh index takes the lease document beside it (no index to refresh yet is
    no error) and gives it back; while a daemon holds it, the ingest is refused naming it."""
    import json

    from indexer.cli import main
    from indexer.daemon.lease import ElasticsearchLease, EsLeaseBackend, lease_index_name
    from tests.test_pipeline import CPI

    news = tmp_path / "news.jsonl"
    news.write_text(json.dumps({"id": "a", "title": "10月CPI同比上涨2.1%", "content": CPI}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    runner = CliRunner()
    first = runner.invoke(main, ["ingest", str(news), "--rejects", str(tmp_path / "rej.jsonl")])
    assert first.exit_code == 0 and "new: 1" in first.output, first.output
    client = make_client([server.url], EsSettings(index=cli_env, **server.auth))
    try:
        backend = EsLeaseBackend(client, lease_index_name(cli_env))
        assert backend.get("writer") is None  # given back
        daemon = ElasticsearchLease(backend, "writer", 30.0, owner="host-b:77:daemon")
        assert daemon.acquire()
        refused = runner.invoke(main, ["ingest", str(news)])
        assert refused.exit_code == 1 and "being written by host-b:77:daemon" in refused.output, refused.output
        daemon.release()
    finally:
        client.indices.delete(index=lease_index_name(cli_env), ignore_unavailable=True)
        client.close()
