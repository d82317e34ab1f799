"""An Elasticsearch-compatible server for the tests, started once per test process.

* ``NEWSDEDUP_TEST_ES_URL`` set: that cluster is used as is (credentials from
  ``NEWSDEDUP_TEST_ES_API_KEY`` or ``NEWSDEDUP_TEST_ES_USERNAME``/``_PASSWORD``, TLS from
  ``NEWSDEDUP_TEST_ES_CA_CERTS``/``_VERIFY_CERTS``); noida is not started.
* otherwise the PyPI package ``noida-db`` (an ES-8-compatible re-implementation) is started with
  ``noida-db up`` on a free loopback port and a fresh data dir, and stopped with ``noida-db down``
  (killed by pid if that fails) when the process exits.

When neither works, ``require_server`` skips the test with the reason, or fails it where the suite
is expected to run (``NEWSDEDUP_REQUIRE_ES=1``, set by ``.ci/run``): a CI run without a test
server must not pass. Every test that uses the server carries the ``es`` mark (``-m "not es"``
deselects them); ``require_server`` fails a test that lacks it, so a new one cannot forget it.
Each store a test makes gets its own index alias ``ndtest-<uuid>``, dropped afterwards.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from indexer.features.simhash import FINGERPRINT_LAYOUT
from indexer.settings import EsSettings
from indexer.store.es_config import make_client

ENV = "NEWSDEDUP_TEST_ES_"
REQUIRE_ENV = "NEWSDEDUP_REQUIRE_ES"
# The kinds of tests/store's store_factory that are Elasticsearch stores (see es_factory).
ES_STORE_KINDS = ("es", "es-refresh")


@dataclass
class Server:
    url: str
    auth: dict = field(default_factory=dict)  # EsSettings fields: api_key, username, password, ca_certs, verify_certs
    data_dir: Path | None = None
    pid: int | None = None
    real: bool = False

    def config(self, **overrides) -> EsSettings:
        if "scratch" not in _state:
            _state["scratch"] = tempfile.mkdtemp(prefix="ndtest-")
            atexit.register(shutil.rmtree, _state["scratch"], True)
        base = EsSettings(index=f"ndtest-{uuid.uuid4().hex[:12]}", replicas=0, max_retries=2, retry_backoff=0.01,
                        dead_letter_dir=os.path.join(_state["scratch"], "deadletter"), **self.auth)
        return replace(base, **overrides)

    def client(self):
        return make_client([self.url], self.config())


_state: dict = {}


def _noida_exe() -> str | None:
    beside = Path(sys.executable).parent / "noida-db"
    return str(beside) if beside.exists() else shutil.which("noida-db")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return True
        except OSError:
            time.sleep(0.1)
    return False


def _stop_noida(server: Server) -> None:
    exe = _noida_exe()
    stopped = False
    if exe:
        try:
            stopped = subprocess.run([exe, "down", "--data-dir", str(server.data_dir)], capture_output=True,
                                     timeout=30).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            stopped = False
    if not stopped and server.pid:
        try:
            os.kill(server.pid, signal.SIGKILL)
        except OSError:
            pass
    shutil.rmtree(server.data_dir, ignore_errors=True)


def _start_noida() -> Server:
    exe = _noida_exe()
    if exe is None:
        raise RuntimeError("noida-db is not installed (pip install noida-db) and NEWSDEDUP_TEST_ES_URL is not set")
    data = Path(tempfile.mkdtemp(prefix="newsdedup-noida-"))
    port = _free_port()
    try:
        proc = subprocess.run([exe, "up", "--only", "elasticsearch", "--elasticsearch-port", str(port),
                               "--data-dir", str(data)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(data, ignore_errors=True)
        raise RuntimeError(f"noida-db up failed: {exc}") from exc
    pid = None
    try:
        pid = json.loads((data / "noida.control.json").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        pass
    server = Server(url=f"http://127.0.0.1:{port}", data_dir=data, pid=pid)
    if proc.returncode != 0 or not _wait_http(server.url, 30):
        _stop_noida(server)
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise RuntimeError(f"noida-db did not start (rc={proc.returncode}): {' | '.join(tail)}")
    atexit.register(_stop_noida, server)
    return server


def _from_env() -> Server | None:
    url = os.environ.get(ENV + "URL")
    if not url:
        return None
    auth = {}
    for name in ("api_key", "username", "password", "ca_certs"):
        if os.environ.get(ENV + name.upper()):
            auth[name] = os.environ[ENV + name.upper()]
    if os.environ.get(ENV + "VERIFY_CERTS"):
        auth["verify_certs"] = os.environ[ENV + "VERIFY_CERTS"].lower() not in ("0", "false", "no")
    return Server(url=url, auth=auth, real=True)


def server_required() -> bool:
    """Whether a missing test server fails the ES tests instead of skipping them."""
    return os.environ.get(REQUIRE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def note_running_test(item: pytest.Item) -> None:
    """Called by the test session before each test's setup, so ``require_server`` can check its mark."""
    _state["test"] = item


def require_server() -> Server:
    """The shared server, started on first use. When none can run the calling test is skipped, or
    failed when ``NEWSDEDUP_REQUIRE_ES`` is set."""
    test = _state.get("test")
    if test is not None and test.get_closest_marker("es") is None:
        pytest.fail(f"{test.nodeid} uses the Elasticsearch test server but has no `es` mark "
                    "(add it in the test module or in tests/conftest.py's collection hook)", pytrace=False)
    if "server" not in _state and "error" not in _state:
        try:
            _state["server"] = _from_env() or _start_noida()
        except RuntimeError as exc:
            _state["error"] = str(exc)
    if "error" in _state:
        reason = f"no Elasticsearch for the tests: {_state['error']}"
        if server_required():
            pytest.fail(f"{reason} ({REQUIRE_ENV} is set: the ES tests must run here)", pytrace=False)
        pytest.skip(reason)
    return _state["server"]


def make_store(server: Server, *, dims: int | None = 8, model: str = "test-model", bands: int = 4, **overrides):
    from indexer.store.elasticsearch import ElasticsearchStore

    cfg = server.config(**overrides)
    client = make_client([server.url], cfg)
    try:
        return ElasticsearchStore(client, cfg, vector_dims=dims, embedding_model=model,
                                  fingerprint_layout=FINGERPRINT_LAYOUT, bands=bands, target=server.url)
    except BaseException:
        client.close()
        raise


def drop_store(store) -> None:
    """Delete the test's indices and templates through a client of its own."""
    from indexer.store.es_schema import drop

    client = make_client([store.target], store.cfg)
    try:
        drop(client, store.schema)
    finally:
        client.close()


def es_factory(kind: str):
    """``(make, made, cleanup)`` for the contract suite: ``es`` answers recent writes from the
    in-flight buffer; ``es-refresh`` has no buffer and refreshes on every write, so every lookup
    goes to the server."""
    server = require_server()
    made = []
    assert kind in ES_STORE_KINDS, kind
    extra = {"inflight_max": 0, "write_refresh": "true"} if kind == "es-refresh" else {}

    def make(dims=8, model="test-model"):
        store = make_store(server, dims=dims, model=model, **extra)
        made.append(store)
        return store

    def cleanup():
        for store in made:
            try:
                drop_store(store)
            except Exception:  # noqa: BLE001 - cleanup must not hide the test's own failure
                pass

    return make, made, cleanup
