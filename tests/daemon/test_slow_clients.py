"""Slow and greedy clients (issue 16, findings 6 and 8): stalled and dripping connections are cut,
threads stay bounded, parallel large bodies beyond the byte budget are refused before they are read,
and a body shorter than its Content-Length gets a 400 after the read timeout."""

from __future__ import annotations

import json
import resource
import socket
import time
from pathlib import Path

import pytest

from .conftest import article


def _threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no thread count")


# The baseline may still count the readiness probe's keep-alive connection, which the daemon
# closes while the test opens its own: the stalled connections are held when the count reaches
# the baseline plus theirs, less that one.
PROBE_SLACK = 1


def _sockets(pid: int) -> int:
    """Sockets the process holds open."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += fd.readlink().name.startswith("socket:")
        except OSError:
            pass
    return count


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no RSS")


def _answer(sock: socket.socket, timeout: float = 10) -> bytes:
    """What the daemon sends until it closes (or the timeout)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def _closed_by_daemon(sock: socket.socket, timeout: float) -> bool:
    sock.settimeout(timeout)
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_stalled_and_dripping_connections_are_bounded_and_cut(daemons):
    d = daemons(sets={"daemon.max_connections": "250", "daemon.read_timeout_seconds": "5", "daemon.handler_threads": "4",
                      "daemon.request_read_seconds": "6"}).start()
    baseline = _threads(d.proc.pid)
    sockets_before = _sockets(d.proc.pid)
    stalled = []
    for i in range(300):  # 200 stall in their headers or body; the next 100 find the cap reached
        s = socket.create_connection(("127.0.0.1", d.port))
        head = b"POST /v1/articles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n" if i % 2 else b"GET /v1/clu"
        s.sendall(head)
        stalled.append(s)
        if i == 199:
            # (the stdlib server held a thread per connection; on asyncio they hold sockets only)
            d.wait_for(lambda: _sockets(d.proc.pid) >= sockets_before + 200 - PROBE_SLACK, 10,
                           "the stalled connections accepted")
            started = time.monotonic()
            assert d.request("GET", "/healthz", timeout=5).status == 200  # a free slot answers at once
            assert time.monotonic() - started < 5
    refused = [_answer(s, 5) for s in stalled[250:]]
    assert all(r.startswith(b"HTTP/1.1 503 ") and b"retry-after:" in r.lower() for r in refused)  # (header names: any case)
    assert _threads(d.proc.pid) <= baseline + 4 + 5  # the handler pool at most: no thread per connection
    # every stalled connection is closed once its read deadline passed; the threads are given back
    open_ones = [i for i, s in enumerate(stalled[:250]) if not _closed_by_daemon(s, 15)]
    assert not open_ones, open_ones
    assert _threads(d.proc.pid) <= baseline + 4 + 5
    assert d.get("/healthz").status == 200
    assert d.metric("newsdedup_daemon_http_refused_total{limit=connections}") >= 50
    # a client that drips a byte a second never hits the read timeout, only the request deadline
    drip = socket.create_connection(("127.0.0.1", d.port))
    drip.settimeout(1)
    began = time.monotonic()
    cut = False
    for byte in b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"y" * 30:
        try:
            drip.sendall(bytes([byte]))
            while drip.recv(1000):  # (a request line and headers cut short may still be answered)
                pass
            cut = True  # end of file: the daemon closed it
            break
        except TimeoutError:
            continue
        except OSError:
            cut = True
            break
    assert cut and time.monotonic() - began < 15
    for s in stalled:
        s.close()
    assert d.stop() == 0


def _raw_post(port: int, body: bytes, declared: int | None = None) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/articles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % (len(body) if declared is None else declared))
    return s


def test_parallel_large_bodies_beyond_the_byte_budget_are_refused_unread(daemons):
    # bodies larger than the sockets' buffers, so that a refusal must let the client finish sending
    bodies = [json.dumps([dict(article(i), content=article(i)["content"] + "长" * 4_000_000)], ensure_ascii=False).encode()
              for i in range(3)]
    size = max(len(b) for b in bodies)
    d = daemons(sets={"daemon.max_body_bytes": str(size), "daemon.max_inflight_body_bytes": str(size * 2 + size // 2)}).start()
    socks = [_raw_post(d.port, b) for b in bodies]  # three headers announce three bodies; two fit
    answers = {}
    for i, s in enumerate(socks):
        s.settimeout(1.0)
        try:
            answers[i] = s.recv(65536)
        except TimeoutError:
            pass  # admitted: the daemon waits for this body
    assert len(answers) == 1, answers
    (refused_at, refused), = answers.items()
    assert refused.startswith(b"HTTP/1.1 503 ") and b"retry-after: " in refused.lower() and b"request bodies in flight" in refused
    admitted = [i for i in range(3) if i != refused_at]
    for i in admitted:
        socks[i].sendall(bodies[i])
    for i in admitted:
        assert _answer(socks[i], 3).startswith(b"HTTP/1.1 202 ")  # kept alive: read until the timeout
    for s in socks:
        s.close()
    # a client that sends its whole body before it reads (urllib) still reads the 503, not a reset
    holding = [_raw_post(d.port, bodies[i]) for i in admitted]
    reserved = sum(len(bodies[i]) for i in admitted)
    d.wait_for(lambda: d.metric("newsdedup_daemon_http_body_bytes_in_flight") == reserved, 10, "two bodies announced")
    late = d.post(bodies[refused_at], {"Content-Type": "application/json"})
    assert late.status == 503 and late.headers["Retry-After"], late.body
    for s in holding:
        s.close()
    # the budget is given back: the refused body is accepted now
    d.wait_for(lambda: d.metric("newsdedup_daemon_http_body_bytes_in_flight") == 0, 10, "budget given back")
    assert d.post(bodies[refused_at], {"Content-Type": "application/json"}).status == 202
    d.wait_drained()
    assert d.metric("newsdedup_daemon_http_refused_total{limit=body_bytes}") == 2
    assert d.stop() == 0


def test_body_shorter_than_its_content_length_gets_400_after_the_read_timeout(daemons):
    d = daemons(sets={"daemon.read_timeout_seconds": "1"}).start()
    body = json.dumps(article(1), ensure_ascii=False).encode()
    s = _raw_post(d.port, body[:20], declared=len(body))
    s.sendall(body[:20])
    began = time.monotonic()
    answer = _answer(s, 30)
    assert answer.startswith(b"HTTP/1.1 400 ") and b"body incomplete: 20 of" in answer
    assert time.monotonic() - began < 15  # the read timeout, not a minute
    s.close()
    assert d.get("/healthz").status == 200
    assert d.stop() == 0


def test_two_thousand_stalled_connections_leave_healthz_answering(daemons):
    """The issue's measurement: 2,000 clients send headers and stall. The stdlib server held 2,004
    threads and 440 MB; here /healthz answers while they stall, threads stay flat and memory small."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 4500:  # 2,000 sockets here, 2,000 in the daemon (it inherits this)
        if hard != resource.RLIM_INFINITY and hard < 4500:
            pytest.skip(f"open files are limited to {hard} (ulimit -Hn); the test needs 4,500")
        resource.setrlimit(resource.RLIMIT_NOFILE, (4500, hard))
    d = daemons(sets={"daemon.request_read_seconds": "60", "daemon.read_timeout_seconds": "30",
                      "daemon.handler_threads": "4"}).start()
    baseline_threads = _threads(d.proc.pid)
    baseline_rss = _rss_mb(d.proc.pid)
    sockets_before = _sockets(d.proc.pid)
    stalled = []
    try:
        for i in range(2000):
            s = socket.create_connection(("127.0.0.1", d.port))
            s.sendall(b"POST /v1/articles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n" if i % 2
                      else b"GET /v1/clusters HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Stall: ")
            stalled.append(s)
        d.wait_for(lambda: _sockets(d.proc.pid) >= sockets_before + 2000 - PROBE_SLACK, 30, "2,000 connections accepted")
        for _ in range(3):
            # The bound is the request's timeout, far below the stalled clients' 30 s read timeout: a
            # server that queued /healthz behind them would time out here. (Not a latency figure: a
            # second-long bound failed on a busy machine, 1.1 s, while it answered.)
            assert d.request("GET", "/healthz", timeout=5).status == 200
        assert _threads(d.proc.pid) <= baseline_threads + 4 + 5  # the handler pool at most
        assert _rss_mb(d.proc.pid) - baseline_rss < 100  # a few kB a connection, not a thread stack
        assert d.metric("newsdedup_daemon_http_refused_total{limit=connections}") == 0  # all within the cap
    finally:
        for s in stalled:
            s.close()
    assert d.stop() == 0
