"""kill -9, SIGTERM, store outages and a second daemon on the same store, with real processes."""

from __future__ import annotations

import json
import signal
import time
from collections import Counter

from .conftest import article, queue_attempts, queue_rows, read_store


def _corpus(n: int) -> list[dict]:
    """n articles; every fifth is an exact copy of the one before it."""
    return [article(i, dup_of=i - 1 if i % 5 == 4 else None) for i in range(n)]


def _check_clusters(stored) -> None:
    by_cluster: dict[str, list] = {}
    for a in stored:
        by_cluster.setdefault(a.cluster_id, []).append(a)
    for cid, members in by_cluster.items():
        canon = [a for a in members if a.is_canonical]
        assert [a.id for a in canon] == [cid], f"cluster {cid} must have exactly its own canonical article"


def test_kill9_mid_processing_then_restart_indexes_everything_once(daemons):
    n = 120
    sets = {"daemon.batch_size": "8"}
    d = daemons(flaky=True, env={"NDTEST_WRITE_DELAY": "0.15"}, sets=sets).start()
    accepted: list[str] = []
    corpus = _corpus(n)
    for start in range(0, n, 30):
        r = d.post(corpus[start : start + 30])
        assert r.status == 202
        accepted += r.json()["accepted"]
    assert len(accepted) == n
    d.wait_for(lambda: d.metric("newsdedup_indexer_articles_total{decision=new}") >= 8, 20, "some batches written")
    d.kill9()
    left = queue_rows(d.queue)
    assert 0 < left < n, "killed mid-processing"

    again = daemons(queue=d.queue, sets=sets).start()
    again.wait_drained()
    m = again.metrics()
    processed = sum(v for k, v in m.items() if k.startswith("newsdedup_indexer_articles_total{"))
    assert processed >= left  # the unfinished items were taken again (some may be ALREADY_INDEXED)
    assert again.stop() == 0

    stored = read_store(d.store)
    counts = Counter(a.id for a in stored)
    assert set(counts) == set(accepted) and all(c == 1 for c in counts.values())
    assert sum(1 for a in stored if a.dup_reason == "exact") == sum(1 for i in range(n) if i % 5 == 4)
    _check_clusters(stored)
    assert queue_rows(d.queue) == 0


def test_sigterm_stops_accepting_drains_and_exits_zero(daemons):
    d = daemons(flaky=True, env={"NDTEST_WRITE_DELAY": "0.1"}, sets={"daemon.batch_size": "10"}).start()
    corpus = _corpus(60)
    assert d.post(corpus).status == 202
    d.signal(signal.SIGTERM)

    # Wait until the daemon has handled the signal (a fixed sleep raced it on a loaded machine).
    deadline = time.monotonic() + 10
    while d.proc.poll() is None and time.monotonic() < deadline:
        try:
            if "shutting down" in d.get("/readyz").json()["reasons"]:
                break
        except OSError:
            break  # the listener is closed: it is going
        time.sleep(0.02)
    try:
        late = d.post([article(500)])
        assert late.status == 503, late.body  # no longer accepting while it drains
    except OSError:
        assert d.proc.poll() is not None  # already gone: the drain was quicker than this request
    assert d.proc.wait(30) == 0
    assert queue_rows(d.queue) == 0
    stored = read_store(d.store)
    assert sorted(a.id for a in stored) == sorted(a["id"] for a in corpus)
    assert "drained" in d.log_text()


def test_store_outage_holds_the_queue_and_recovers(daemons, tmp_path):
    fault = tmp_path / "outage"
    d = daemons(flaky=True, env={"NDTEST_FAULT_FILE": str(fault)}, sets={"daemon.batch_size": "5"}).start()
    assert d.post(_corpus(10)).status == 202
    d.wait_drained()
    fault.touch()
    assert d.post([article(i) for i in range(10, 30)]).status == 202  # accepted while the store is down
    d.wait_for(lambda: d.get("/readyz").status == 503, 10, "not ready during the outage")
    d.wait_for(lambda: d.metric("newsdedup_store_errors_total") >= 3, 10, "retries")
    assert d.metric("newsdedup_queue_depth") == 20
    assert "store unavailable" in " ".join(d.get("/readyz").json()["reasons"])
    for path in ("/v1/clusters", "/v1/clusters/art-0000", "/v1/articles/art-0000", "/v1/labels"):  # reads: 503, come back later
        down = d.get(path)
        assert down.status == 503 and down.headers["Retry-After"] and "store unavailable" in down.json()["error"], path
    fault.unlink()
    d.wait_drained()
    d.wait_for(lambda: d.get("/readyz").status == 200, 10, "ready again")
    assert d.stop() == 0
    stored = read_store(d.store)
    assert sorted(a.id for a in stored) == [f"art-{i:04d}" for i in range(30)]


def test_outage_during_shutdown_keeps_items_for_the_next_start(daemons, tmp_path):
    fault = tmp_path / "outage"
    fault.touch()
    sets = {"daemon.shutdown_grace_seconds": "0.5"}
    d = daemons(flaky=True, env={"NDTEST_FAULT_FILE": str(fault)}, sets=sets).start(wait_ready=False)
    assert d.post(_corpus(7)).status == 202
    assert d.stop() == 0  # grace runs out: exits 0, nothing lost
    assert queue_rows(d.queue) == 7
    fault.unlink()
    again = daemons(queue=d.queue).start()
    again.wait_drained()
    assert again.stop() == 0
    assert len(read_store(d.store)) == 7


def test_second_daemon_on_the_same_store_is_a_standby(daemons):
    first = daemons(name="a", sets={"daemon.lease_retry_seconds": "0.1"}).start()
    second = daemons(name="b", sets={"daemon.lease_retry_seconds": "0.1"}).start(wait_ready=False)
    second.wait_for(lambda: "standby" in " ".join(second.get("/readyz").json()["reasons"]), 20, "standby")
    assert second.post([article(1)]).status == 503
    assert second.metric("newsdedup_daemon_lease_held") == 0
    assert first.metric("newsdedup_daemon_lease_held") == 1
    assert first.post([article(1)]).status == 202
    first.wait_drained()
    assert first.stop() == 0
    # the writer is gone: the standby takes the lease over and becomes ready
    second.wait_for(lambda: second.get("/readyz").status == 200, 20, "takeover")
    assert second.post([article(2)]).status == 202
    second.wait_drained()
    assert second.stop() == 0
    assert sorted(a.id for a in read_store(first.store)) == ["art-0001", "art-0002"]


def _dead_letters_cli(queue_dir, *args: str):
    from click.testing import CliRunner

    from indexer.cli import main

    return CliRunner().invoke(main, ["dead-letters", *args, "--set", f"daemon.queue_dir={queue_dir}"])


def test_poison_article_moves_to_dead_letters_others_indexed_and_requeue_brings_it_back(daemons, tmp_path):
    poison = tmp_path / "poison"
    poison.touch()
    d = daemons(flaky=True, env={"NDTEST_POISON_FILE": str(poison)}, sets={"daemon.batch_size": "10"}).start()
    corpus = _corpus(10)
    corpus[3] = dict(corpus[3], title="投毒" + corpus[3]["title"])  # FlakyStore fails any write holding it
    assert d.post(corpus).status == 202
    d.wait_drained()
    assert d.metric("newsdedup_daemon_dead_letters_total") == 1
    assert d.metric("newsdedup_queue_dead_letters") == 1
    statuses = [d.get(f"/v1/articles/{c['id']}").status for c in corpus]
    assert statuses == [200, 200, 200, 404, 200, 200, 200, 200, 200, 200]  # the nine others are indexed
    ready = d.get("/readyz")
    assert ready.status == 503 and any(r.startswith("dead letters: 1 ") for r in ready.json()["reasons"])

    listed = _dead_letters_cli(d.queue, "list")
    assert listed.exit_code == 0, listed.output
    (line,) = [json.loads(x) for x in listed.output.splitlines()]
    assert line["id"] == corpus[3]["id"] and "simulated poison article" in line["error"] and "record" not in line
    (with_record,) = [json.loads(x) for x in _dead_letters_cli(d.queue, "list", "--records").output.splitlines()]
    assert json.loads(with_record["record"]) == corpus[3]  # as it was queued
    # still poison: it comes back to the dead table, the worker goes on
    assert _dead_letters_cli(d.queue, "requeue", "--all").output.strip() == "re-queued 1 articles"
    d.wait_for(lambda: d.metric("newsdedup_daemon_dead_letters_total") == 2, 20, "buried again")
    assert _dead_letters_cli(d.queue, "requeue", "--id", "nope").exit_code != 0
    poison.unlink()  # the cause is fixed: re-queued into the running daemon, it is indexed
    assert _dead_letters_cli(d.queue, "requeue", "--id", corpus[3]["id"]).exit_code == 0
    d.wait_for(lambda: d.get(f"/v1/articles/{corpus[3]['id']}").status == 200, 20, "re-queued article indexed")
    assert d.metric("newsdedup_queue_dead_letters") == 0
    assert d.get("/readyz").status == 200
    assert _dead_letters_cli(d.queue, "list").output == ""
    assert d.stop() == 0
    assert sorted(a.id for a in read_store(d.store)) == sorted(c["id"] for c in corpus)


def test_article_that_kills_the_process_is_set_aside_after_three_stops(daemons, tmp_path):
    """No exception to catch: the process dies in the write. The queue counts the stops each
    article was in hand for; after the first, the suspects go one at a time, so only the killer's
    count grows, and at three it is set aside. Nothing else is lost or buried."""
    crash = tmp_path / "crash"
    crash.touch()
    env = {"NDTEST_CRASH_FILE": str(crash)}
    sets = {"daemon.batch_size": "10"}
    corpus = _corpus(10)
    corpus[3] = dict(corpus[3], title="投毒" + corpus[3]["title"])
    d = daemons(flaky=True, env=env, sets=sets).start()
    assert d.post(corpus).status == 202
    assert d.proc.wait(30) == 137
    for _ in range(2):  # alone in hand, the killer stops the next two starts too
        again = daemons(flaky=True, env=env, sets=sets, queue=d.queue)
        try:
            again.start(wait_ready=False)
        except AssertionError:  # it died before it listened
            pass
        assert again.proc.wait(30) == 137
    last = daemons(flaky=True, env=env, sets=sets, queue=d.queue).start(wait_ready=False)
    last.wait_drained()
    assert last.metric("newsdedup_queue_dead_letters") == 1
    assert last.stop() == 0
    assert "in hand in 3 processes that stopped without finishing it" in last.log_text()
    assert sorted(a.id for a in read_store(d.store)) == sorted(c["id"] for i, c in enumerate(corpus) if i != 3)
    (line,) = [json.loads(x) for x in _dead_letters_cli(d.queue, "list").output.splitlines()]
    assert line["id"] == corpus[3]["id"] and "stopped 3 times" in line["error"]


def test_kills_while_the_store_is_down_set_no_article_aside(daemons, tmp_path):
    """Killed three times while the worker waited for the store to take its writes: the wait is
    not the articles' doing, so when the store is back every article is written, none buried."""
    outage = tmp_path / "write-outage"
    outage.touch()
    env = {"NDTEST_WRITE_FAULT_FILE": str(outage)}
    sets = {"daemon.batch_size": "5"}
    corpus = _corpus(10)
    d = daemons(flaky=True, env=env, sets=sets).start(wait_ready=False)
    d.wait_up()
    assert d.post(corpus).status == 202
    for k in range(3):
        run = d if k == 0 else daemons(flaky=True, env=env, sets=sets, queue=d.queue, name=f"k{k}").start(wait_ready=False)
        run.wait_for(lambda: run.metric("newsdedup_store_errors_total") >= 2, 20, "the outage met")
        run.kill9()
    outage.unlink()
    last = daemons(flaky=True, env=env, sets=sets, queue=d.queue, name="last").start(wait_ready=False)
    last.wait_drained()
    assert last.metric("newsdedup_queue_dead_letters") == 0
    assert last.stop() == 0
    assert sorted(a.id for a in read_store(d.store)) == sorted(c["id"] for c in corpus)


def test_a_clean_stop_inside_a_slow_store_call_counts_against_no_article(daemons):
    """The daemon stops waiting for a worker still inside a store call (grace + 10 s) and closes
    the queue: the articles in hand are given back uncounted, as the Shutdown notes promise."""
    sets = {"daemon.batch_size": "5", "daemon.shutdown_grace_seconds": "0.5"}
    d = daemons(flaky=True, env={"NDTEST_WRITE_DELAY": "15"}, sets=sets).start()
    assert d.post(_corpus(10)).status == 202
    d.wait_for(lambda: queue_attempts(d.queue)[:1] == [1], 10, "a batch in hand")
    assert d.stop(60) == 0
    left = queue_attempts(d.queue)
    assert left and set(left) == {0}


def test_second_signal_ends_the_drain_and_keeps_the_rest_queued(daemons):
    sets = {"daemon.batch_size": "5", "daemon.shutdown_grace_seconds": "120"}
    # 20 batches of 1 s each: a drain of about 20 s, far longer than a loaded machine takes to
    # deliver two signals (with 0.3 s batches the drain sometimes finished before the second one)
    d = daemons(flaky=True, env={"NDTEST_WRITE_DELAY": "1.0"}, sets=sets).start()
    corpus = _corpus(100)
    assert d.post(corpus).status == 202
    d.signal(signal.SIGTERM)
    d.wait_for(lambda: "shutting down" in d.get("/readyz").json()["reasons"], 10, "the first signal handled")
    d.signal(signal.SIGTERM)
    assert d.proc.wait(30) == 0
    assert "second signal" in d.log_text()
    left = queue_rows(d.queue)
    assert left > 0, "the second signal must end the drain, not wait for it"
    stored = read_store(d.store)
    assert len(stored) + left >= len(corpus)  # nothing lost: what is not stored waits in the queue
    again = daemons(queue=d.queue).start()
    again.wait_drained()
    assert again.stop() == 0
    assert sorted(a.id for a in read_store(d.store)) == sorted(c["id"] for c in corpus)
