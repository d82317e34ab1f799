"""The queue lives with the store it feeds: a daemon killed with accepted articles waiting, then
started from another working directory with the same store, indexes them; a queue recorded for
another store is refused."""

from __future__ import annotations

import subprocess
import sys

from indexer.daemon.queue_home import queue_dir_for, store_identity
from indexer.settings import load_settings

from .conftest import article, queue_rows, read_store


def test_kill9_then_restart_from_another_directory_indexes_the_waiting_articles(daemons, tmp_path):
    fault = tmp_path / "outage"
    fault.touch()  # nothing drains: the accepted articles wait in the queue
    first_cwd, second_cwd = tmp_path / "here", tmp_path / "elsewhere"
    first_cwd.mkdir()
    second_cwd.mkdir()
    d = daemons(flaky=True, queue_with_store=True, cwd=first_cwd, env={"NDTEST_FAULT_FILE": str(fault)}).start(wait_ready=False)
    corpus = [article(i) for i in range(40)]
    assert d.post(corpus).status == 202
    d.kill9()
    assert queue_rows(d.store / "queue") == 40  # in the store's directory, not the working directory
    assert not any(first_cwd.iterdir())
    fault.unlink()

    again = daemons(queue_with_store=True, cwd=second_cwd).start()
    again.wait_drained()
    assert again.stop() == 0
    assert sorted(a.id for a in read_store(d.store)) == sorted(a["id"] for a in corpus)
    assert queue_rows(d.store / "queue") == 0


def test_a_queue_of_another_store_is_refused(daemons, tmp_path):
    a = daemons(name="a", store=tmp_path / "store-a").start()
    assert a.post([article(1)]).status == 202
    a.wait_drained()
    assert a.stop() == 0
    # store B pointed at store A's queue: it must not take A's articles
    cmd = [sys.executable, "-m", "indexer.daemon", "--store", str(tmp_path / "store-b"), "--port", "0",
           "--set", "embedding.model=none", "--set", f"daemon.queue_dir={a.queue}"]
    done = subprocess.run(cmd, cwd=tmp_path, env=a.env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "belongs to store embedded:" in done.stderr and "store-a" in done.stderr
    assert not (tmp_path / "store-b" / "articles.sqlite3").exists() or read_store(tmp_path / "store-b") == []


def test_where_queues_live():
    emb = load_settings(environ={}, overrides={"store.path": "/srv/news/store"})
    assert queue_dir_for(emb).as_posix() == "/srv/news/store/queue"
    assert store_identity(emb) == "embedded:/srv/news/store"
    es = load_settings(environ={}, overrides={"store.path": "https://user:pw@es.example:9200", "es.index": "news",
                                              "daemon.queue_base": "/var/lib/newsdedup"})
    assert queue_dir_for(es).as_posix() == "/var/lib/newsdedup/news@es.example_9200"
    assert store_identity(es) == "elasticsearch:es.example:9200/news"  # no credentials
    explicit = load_settings(environ={}, overrides={"store.path": "/srv/x", "daemon.queue_dir": "/q"})
    assert queue_dir_for(explicit).as_posix() == "/q"
