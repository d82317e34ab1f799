"""Ingest rate through the daemon (`newsdedup serve`) against the in-process indexer on the same
articles, measured in the same run.

    python bench/daemon_ingest.py [--n 3000]

* Baseline: `Indexer.index_many` on a fresh embedded store (default settings), as
  bench/ingest_speed.py measures it, after indexing two articles to load the model.
* Daemon: `python -m indexer.daemon` on a fresh store and queue and a free loopback port; once it
  is ready (its model loaded), the articles are POSTed as NDJSON in requests of 100 and the clock
  stops when its metrics count every one processed. Also printed: the daemon's CPU time per
  article and how many of the 2 cores it kept busy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import datasets  # noqa: E402
from ingest_speed import ingest_rate  # noqa: E402

PER_REQUEST = 100


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def processed(base: str) -> float:
    text = urllib.request.urlopen(f"{base}/metrics", timeout=10).read().decode()
    return sum(float(v) for v in re.findall(r"^newsdedup_indexer_articles_total\{[^}]*\} (\S+)$", text, re.M))


def wait_ready(base: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the daemon exited with status {proc.returncode}")
        try:
            if json.load(urllib.request.urlopen(f"{base}/readyz", timeout=5)).get("ready"):
                return
        except (urllib.error.URLError, ConnectionError, ValueError):
            pass
        time.sleep(0.2)
    raise SystemExit("the daemon did not become ready")


def daemon_rate(records: list[dict]) -> tuple[float, float, float]:
    """(articles/s, CPU ms per article, cores busy) of a fresh daemon ingesting ``records``."""
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "indexer.daemon", "--store", f"{tmp}/store", "--port", str(port),
             "--set", f"daemon.queue_dir={tmp}/queue"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            wait_ready(base, proc)
            # The worker loads the model on its first batch: one article, outside the timing.
            post(base, [{"id": "warm-up", "title": "预热", "content": "这是一篇预热用的文章，不在测量之内。" * 10}])
            while processed(base) < 1:
                time.sleep(0.1)
            cpu_before, started = cpu_seconds(proc.pid), time.perf_counter()
            for start in range(0, len(records), PER_REQUEST):
                post(base, records[start : start + PER_REQUEST])
            while processed(base) < len(records) + 1:
                time.sleep(0.1)
            elapsed = time.perf_counter() - started
            cpu = cpu_seconds(proc.pid) - cpu_before
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    return len(records) / elapsed, cpu / len(records) * 1e3, cpu / elapsed


def post(base: str, records: list[dict]) -> None:
    body = "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode()
    request = urllib.request.Request(f"{base}/v1/articles", data=body, headers={"Content-Type": "application/x-ndjson"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        if reply.status != 202:
            raise SystemExit(f"POST answered {reply.status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=3000, help="articles (ccf2019_inews, non-empty bodies)")
    args = parser.parse_args()
    records = [a for a in datasets.inews_articles() if a["content"].strip()][: args.n]
    print(f"{len(records)} ccf2019_inews articles, default settings, fresh embedded stores")
    baseline = ingest_rate(records, {})
    rate, cpu_ms, cores = daemon_rate(records)
    print(f"  in-process index_many (baseline)  {baseline:7.1f} articles/s   1.00x")
    print(f"  daemon, POST /v1/articles         {rate:7.1f} articles/s   {rate / baseline:.2f}x"
          f"   ({cpu_ms:.1f} ms CPU per article, {cores:.2f} cores busy)")


if __name__ == "__main__":
    main()
