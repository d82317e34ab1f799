"""The daemon's commands (`serve`, `ui`, `labels export`) failing cleanly: a store that is not
there, a server thread that died, start-up errors named instead of a traceback."""

from __future__ import annotations

import json
import logging
import signal

import pytest
from click.testing import CliRunner

from indexer.cli import main
from tests.test_pipeline import CPI

SETS = ["--set", "embedding.model=none"]


@pytest.fixture
def restored_process_state():
    """`serve` and `ui` set the root log level and signal handlers for the process they run in."""
    level = logging.getLogger().level
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    logging.getLogger().setLevel(level)
    for s, h in handlers.items():
        signal.signal(s, h)


@pytest.fixture
def store(tmp_path):
    src = tmp_path / "news.jsonl"
    src.write_text(json.dumps({"id": "a", "title": "10月CPI同比上涨2.1%", "content": CPI}, ensure_ascii=False) + "\n", encoding="utf-8")
    path = tmp_path / "store"
    done = CliRunner().invoke(main, ["ingest", str(src), "--store", str(path), *SETS])
    assert done.exit_code == 0, done.output
    return path


class DeadServer:
    """An HTTP server whose thread died as soon as it started (and `ui` cannot wait on forever)."""

    address = ("127.0.0.1", 1)

    def __init__(self, ctx):
        pass

    def start(self):
        pass

    def alive(self):
        return False

    def stop(self):
        pass


@pytest.mark.parametrize("command", [["labels", "export"], ["ui", "--port", "0"]])
def test_read_only_commands_refuse_a_store_that_is_not_there_and_create_none(tmp_path, command, monkeypatch, restored_process_state):
    import indexer.daemon.http_server

    monkeypatch.setattr(indexer.daemon.http_server, "HttpServer", DeadServer)
    typo = tmp_path / "typo-store"
    r = CliRunner().invoke(main, [*command, "--store", str(typo), *SETS])
    assert r.exit_code == 1 and f"no store at {typo}" in r.output, r.output
    assert not typo.exists()


def test_ui_fails_when_its_server_thread_dies(store, monkeypatch, restored_process_state):
    import indexer.daemon.http_server

    monkeypatch.setattr(indexer.daemon.http_server, "HttpServer", DeadServer)
    r = CliRunner().invoke(main, ["ui", "--store", str(store), "--port", "0", *SETS])
    assert r.exit_code == 1 and "the HTTP server stopped unexpectedly" in r.output, r.output


def test_serve_names_a_sources_file_that_is_not_there(tmp_path, restored_process_state):
    r = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "s"), "--port", "0", *SETS,
                                  "--set", f"daemon.crawl_sources={tmp_path / 'nope.toml'}"])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.exception
    assert "daemon.crawl_sources" in r.output and "nope.toml" in r.output, r.output


def test_serve_names_a_queue_file_that_is_not_a_database(tmp_path, restored_process_state):
    queue = tmp_path / "s" / "queue" / "queue.sqlite3"
    queue.parent.mkdir(parents=True)
    queue.write_bytes(b"\x13junk, not SQLite" * 300)
    r = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "s"), "--port", "0", *SETS])
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), r.exception
    assert f"cannot read the daemon queue {queue}" in r.output and "not a database" in r.output, r.output
