"""Clear errors for an unreachable server, bad credentials and unsupported versions; secrets never
appear in messages or logs. A tiny local HTTP server plays the misbehaving cluster."""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from indexer.errors import ConfigError, StoreError, StoreUnavailable
from indexer.settings import Settings, load_settings
from indexer.store.elasticsearch import ElasticsearchStore
from indexer.settings import EsSettings
from indexer.store.es_config import es_config, redact_url

SECRET = "s3cret-Pa55"


class _FakeEs(BaseHTTPRequestHandler):
    status, body = 200, {}

    def do_GET(self):  # noqa: N802 - http.server API
        payload = json.dumps(self.body).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_es():
    def start(status, body):
        handler = type("H", (_FakeEs,), {"status": status, "body": body})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    started = []
    yield start
    for httpd in started:
        httpd.shutdown()


def _open(url: str, **cfg):
    settings = Settings().replace(**{"store.path": url})
    object.__setattr__(settings, "es", EsSettings(max_retries=0, request_timeout=2, **cfg))
    return ElasticsearchStore.from_settings(settings, vector_dims=8, embedding_model="m")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_server_is_store_unavailable_without_secrets(caplog):
    caplog.set_level(logging.DEBUG)
    url = f"http://elastic:{SECRET}@127.0.0.1:{_free_port()}"
    with pytest.raises(StoreUnavailable, match="cannot reach Elasticsearch") as info:
        _open(url, password=SECRET, username="elastic")
    assert SECRET not in str(info.value) and SECRET not in caplog.text


def test_bad_credentials_are_named(fake_es, caplog):
    caplog.set_level(logging.DEBUG)
    url = fake_es(401, {"error": {"type": "security_exception", "reason": "unable to authenticate"}, "status": 401})
    with pytest.raises(StoreError, match="refused the credentials") as info:
        _open(url, api_key=SECRET)
    assert SECRET not in str(info.value) and SECRET not in caplog.text


def test_old_server_version_is_refused(fake_es):
    url = fake_es(200, {"version": {"number": "7.17.9"}, "tagline": "You Know, for Search"})
    with pytest.raises(StoreError, match="needs 8.12"):
        _open(url)


def test_settings_fallback_reads_the_environment(monkeypatch):
    monkeypatch.setenv("NEWSDEDUP_ES_INDEX", "news-zh")
    monkeypatch.setenv("NEWSDEDUP_ES_VERIFY_CERTS", "false")
    monkeypatch.setenv("NEWSDEDUP_ES_INFLIGHT_MAX", "5")
    cfg = es_config(load_settings())
    assert (cfg.index, cfg.verify_certs, cfg.inflight_max) == ("news-zh", False, 5)
    monkeypatch.setenv("NEWSDEDUP_ES_WRITE_REFRESH", "sometimes")
    with pytest.raises(ConfigError, match="es.write_refresh"):
        load_settings()


def test_redact_url_drops_user_info():
    assert redact_url(f"https://u:{SECRET}@es.example:9243/x") == "https://es.example:9243/x"
