"""`newsdedup ui` serves the browser view and the corrections API for a store alone (no ingest
routes); `newsdedup labels export` writes the corrections as the pairs file `tune` reads."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from click.testing import CliRunner

from indexer.cli import main
from indexer.tuning import pair_from_line
from tests.daemon.conftest import ROOT, free_port

from .corpus import corpus

SETS = ["--set", "embedding.model=none"]


def _get(url: str, data: bytes | None = None):
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"} if data else {},
                                 method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_ui_serves_a_store_and_labels_export_feeds_tune(tmp_path):
    store = tmp_path / "store"
    src = tmp_path / "news.jsonl"
    src.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in corpus()) + "\n", encoding="utf-8")
    done = CliRunner().invoke(main, ["ingest", str(src), "--store", str(store), *SETS])
    assert done.exit_code == 0, done.output

    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", "from indexer.cli import main; main()", "ui", "--store", str(store), "--port", str(port), *SETS],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[0].decode()
            try:
                if _get(base + "/readyz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        status, html = _get(base + "/ui/clusters/s01")
        assert status == 200 and 'data-article="s01-b"' in html
        assert _get(base + "/v1/articles", b"{}")[0] == 404  # no ingest route here
        status, body = _get(base + "/v1/clusters/s01/split", json.dumps({"article_id": "s01-b"}).encode())
        assert status == 200, body
        status, body = _get(base + "/v1/clusters/merge", json.dumps({"into": "s02", "from": "s03"}).encode())
        assert status == 200, body
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=30)[0].decode()
    assert proc.returncode == 0, out
    assert f"http://127.0.0.1:{port}/ui/clusters" in out

    pairs = tmp_path / "pairs.jsonl"
    done = CliRunner().invoke(main, ["labels", "export", "--store", str(store), *SETS, "-o", str(pairs)])
    assert done.exit_code == 0, done.output
    lines = [json.loads(x) for x in pairs.read_text(encoding="utf-8").splitlines()]
    assert [(x["a"]["id"], x["b"]["id"], x["label"], x["kind"]) for x in lines] == [
        ("s01-b", "s01", 0, "split"), ("s03", "s02", 1, "merge")]
    a, b, same = pair_from_line(lines[1], "label")  # as `tune` reads it
    assert same and a["title"].startswith("第3届") and b["content"].startswith("本报讯")
