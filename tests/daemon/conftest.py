"""Real daemon processes on loopback for the daemon tests."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLAKY = Path(__file__).with_name("flaky_daemon.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Response:
    def __init__(self, status: int, headers, body: bytes):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body.decode("utf-8"))


class DaemonProc:
    def __init__(self, tmp: Path, name: str = "d", store: Path | None = None, queue: Path | None = None,
                 sets: dict | None = None, env: dict | None = None, flaky: bool = False, cwd: Path | None = None,
                 queue_with_store: bool = False):
        """``queue_with_store``: leave daemon.queue_dir unset (the queue lives in the store);
        ``cwd``: the working directory to start in (default ``tmp``)."""
        self.tmp = tmp
        self.cwd = cwd or tmp
        self.store = store or tmp / "store"
        remote = str(self.store).startswith(("http://", "https://"))
        if queue_with_store:  # where the daemon puts it: in the store directory (None: an Elasticsearch store's)
            self.queue = None if remote else Path(self.store) / "queue"
        else:
            self.queue = queue or tmp / f"queue-{name}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.sets = {"embedding.model": "none", "daemon.batch_wait_seconds": "0.05",
                     "daemon.store_retry_initial_seconds": "0.05", "daemon.store_retry_max_seconds": "0.2",
                     "daemon.shutdown_grace_seconds": "20", **(sets or {})}
        if not queue_with_store:
            self.sets.setdefault("daemon.queue_dir", str(self.queue))
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.env.pop("NEWSDEDUP_CONFIG", None)
        self.flaky = flaky
        self.log = tmp / f"{name}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, wait_ready: bool = True) -> "DaemonProc":
        entry = [str(FLAKY)] if self.flaky else ["-m", "indexer.daemon"]
        cmd = [sys.executable, *entry, "--store", str(self.store), "--port", str(self.port)]
        for k, v in self.sets.items():
            cmd += ["--set", f"{k}={v}"]
        self._logfh = open(self.log, "ab")
        self.proc = subprocess.Popen(cmd, cwd=str(self.cwd), env=self.env, stdout=self._logfh, stderr=subprocess.STDOUT)
        self.wait_up()
        if wait_ready:
            self.wait_for(lambda: self.get("/readyz").status == 200, 30, "ready")
        return self

    def wait_up(self, seconds: float = 30) -> None:
        self.wait_for(lambda: self.get("/healthz").status == 200, seconds, "listening")

    def wait_for(self, predicate, seconds: float, what: str) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(f"daemon exited ({self.proc.returncode}) waiting for {what}:\n{self.log_text()}")
            try:
                if predicate():
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}:\n{self.log_text()[-3000:]}")

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def request(self, method: str, path: str, body: bytes | str | list | dict | None = None,
                headers: dict | None = None, timeout: float = 10) -> Response:
        if isinstance(body, (list, dict)):
            body = json.dumps(body, ensure_ascii=False)
        if isinstance(body, str):
            body = body.encode("utf-8")
        headers = dict(headers or {})
        if body is not None and not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = "application/json"  # the daemon reads JSON and NDJSON bodies only
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return Response(resp.status, resp.headers, resp.read())
        except urllib.error.HTTPError as exc:
            return Response(exc.code, exc.headers, exc.read())

    def get(self, path: str) -> Response:
        return self.request("GET", path)

    def post(self, body, headers: dict | None = None) -> Response:
        return self.request("POST", "/v1/articles", body, headers)

    def metrics(self) -> dict[str, float]:
        from prometheus_client.parser import text_string_to_metric_families

        out: dict[str, float] = {}
        for fam in text_string_to_metric_families(self.get("/metrics").body.decode()):
            for s in fam.samples:
                key = s.name + ("{" + ",".join(f"{k}={v}" for k, v in sorted(s.labels.items())) + "}" if s.labels else "")
                out[key] = s.value
        return out

    def metric(self, key: str) -> float:
        return self.metrics().get(key, 0.0)

    def wait_drained(self, seconds: float = 30) -> None:
        self.wait_for(lambda: self.metric("newsdedup_queue_depth") == 0, seconds, "an empty queue")

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._logfh.close()

    def stop(self, timeout: float = 30) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout)
        self._logfh.close()
        return rc


@pytest.fixture
def daemons(tmp_path):
    made: list[DaemonProc] = []

    def make(**kwargs) -> DaemonProc:
        d = DaemonProc(tmp_path, **kwargs)
        made.append(d)
        return d

    yield make
    for d in made:
        if d.proc is not None and d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait(10)


def article(i: int, dup_of: int | None = None) -> dict:
    """A distinct Chinese article; with ``dup_of`` an exact copy of article ``dup_of``'s text."""
    base = dup_of if dup_of is not None else i
    return {
        "id": f"art-{i:04d}",
        "title": f"第{base}号新闻：城市{base}举办科技博览会",
        "content": f"本报讯 第{base}届城市科技博览会于今日开幕，来自{base * 7 % 97}个国家的企业参展，"
                   f"展会重点展示人工智能、新能源与生物医药成果。主办方表示本届展会规模为历届之最，编号{base}。",
        "url": f"https://news.example.cn/{i}.html",
        "source": "example",
    }


def read_store(store: Path) -> list:
    from indexer.features.simhash import FINGERPRINT_LAYOUT
    from indexer.store.sqlite import SqliteStore

    s = SqliteStore(store, vector_dims=None, embedding_model="none", fingerprint_layout=FINGERPRINT_LAYOUT, bands=4)
    try:
        return list(s.iter_articles())
    finally:
        s.close()


def queue_attempts(queue_dir: Path) -> list[int]:
    """The attempt count of each queued article, in queue order, read from the queue's file."""
    import sqlite3

    db = sqlite3.connect(queue_dir / "queue.sqlite3")
    try:
        return [n for (n,) in db.execute("SELECT attempts FROM items ORDER BY seq")]
    finally:
        db.close()


def queue_rows(queue_dir: Path) -> int:
    return len(queue_attempts(queue_dir))
