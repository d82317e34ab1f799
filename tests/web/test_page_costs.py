"""What a page costs the store: the clusters page reads the change log once per request, and the
cluster page explains its members pair by pair (no candidate search, one change-log read) while
showing the evidence ``explain`` gives for each member against its match."""

from __future__ import annotations

import re
import time
import urllib.request
from collections import Counter
from datetime import datetime, timezone

import pytest

from indexer.daemon.api import ServiceContext
from indexer.daemon.http_server import HttpServer
from indexer.daemon.metrics import DaemonMetrics
from indexer.pipeline import Indexer
from indexer.settings import load_settings
from indexer.store.base import ClusterChange
from indexer.web.pages import fmt_score, matched_pairs

from ..store.test_contract import art
from .corpus import corpus

COUNTED = ("cluster_changes", "find_exact", "find_band_candidates", "find_same_title", "knn", "get_many")


@pytest.fixture
def served(tmp_path, monkeypatch):
    """``(base URL, indexer, calls)``: the browser view in this process over an ingested store,
    with ``calls`` counting the store calls the pages make."""
    settings = load_settings(environ={}, overrides={"store.path": str(tmp_path / "store"), "embedding.model": "none",
                                                    "daemon.port": 0})
    ix = Indexer.open(settings)
    ix.index_many(corpus())
    calls: Counter = Counter()
    for name in COUNTED:
        real = getattr(ix.store, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(ix.store, name, counted)
    server = HttpServer(ServiceContext(settings, settings.daemon, DaemonMetrics(lambda: 0.0, lambda: 1.0, lambda: 0.0),
                                      lambda: ix))
    server.start()
    host, port = server.address
    try:
        _wait_listening(f"http://{host}:{port}/healthz")
        yield f"http://{host}:{port}", ix, calls
    finally:
        server.stop()
        ix.close()


def _wait_listening(url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url, timeout=5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as resp:
        assert resp.status == 200
        return resp.read().decode("utf-8")


def test_the_clusters_page_reads_the_change_log_once_per_request(served):
    base, ix, calls = served
    for path in ("/ui/clusters", "/ui/clusters?q=%E5%8D%9A%E8%A7%88%E4%BC%9A", "/ui/overview"):
        calls.clear()
        html = _get(base + path)
        assert calls["cluster_changes"] == 1, (path, calls)
        assert "s01" in html
    # a correction is still seen on the next request (the version includes the change log)
    ix.store.merge_clusters([ClusterChange("merge", "s01", "s02", None, "same story", "tester")])
    html = _get(base + "/ui/clusters")
    assert re.search(r'<tr data-cluster="s01"', html) and not re.search(r'<tr data-cluster="s02"', html)


def _evidence_cells(html: str) -> dict[str, str]:
    rows = re.findall(r'<tr data-article="([^"]+)".*?<td class="evidence">(.*?)</td>', html, flags=re.S)
    return {aid: " ".join(re.sub(r"<[^>]+>", " ", cell).split()) for aid, cell in rows}


def test_the_cluster_page_shows_explains_evidence_without_a_candidate_search(served):
    base, ix, calls = served
    calls.clear()
    html = _get(base + "/ui/clusters/s01")
    assert calls["find_exact"] == calls["find_band_candidates"] == calls["find_same_title"] == calls["knn"] == 0, calls
    assert calls["cluster_changes"] == 1, calls
    cells = _evidence_cells(html)
    assert set(cells) == {"s01", "s01-a", "s01-b"}
    for member in ("s01-a", "s01-b"):
        (row,) = [r for r in ix.explain(member, limit=3)["comparisons"] if r["role"] == "dup_of"]
        ev = {k: fmt_score(v) for k, v in row["evidence"].items()}
        shown = (f"{row['verdict']} : hamming {ev['hamming']}, containment {ev['containment']}, cosine {ev['cosine']}, "
                 f"title {ev['title_sim']}, event {ev['event_score']}")
        assert row["verdict"] and cells[member].startswith(shown), (cells[member], shown)
    assert "hamming" not in cells["s01"]  # the canonical is the reference, not explained


def test_each_member_is_explained_against_its_match_else_the_canonical():
    t = datetime(2024, 3, 1, tzinfo=timezone.utc)
    c = art("c", when=t)
    m1 = art("m1", cluster="c", dup_of="c", when=t)
    m2 = art("m2", cluster="c", dup_of="m1", when=t)
    m3 = art("m3", cluster="c", dup_of="gone", when=t)  # its match was deleted: the canonical
    m4 = art("m4", cluster="c", dup_of="away", when=t)  # its match was split out of the cluster since
    away = art("away", when=t)
    asked = []

    def get_many(ids):
        asked.append(list(ids))
        return {a.id: a for a in (away,) if a.id in ids}

    pairs = matched_pairs([m1, m2, m3, m4], "c", [c, m1, m2, m3, m4], get_many)
    assert [(a.id, b.id) for a, b in pairs] == [("m1", "c"), ("m2", "m1"), ("m3", "c"), ("m4", "away")]
    assert asked == [["away", "gone"]]  # one read for everything outside the cluster
    assert matched_pairs([m1], "c", [c, m1], get_many) and len(asked) == 1  # nothing outside: no read


def test_a_member_that_no_longer_matches_shows_why(served):
    """A person merged two stories: the cluster page shows the other story's canonical as no match
    today, with the rule that refuses it (``rules.refusal``), as ``explain`` names it."""
    base, ix, _ = served
    ix.store.merge_clusters([ClusterChange("merge", "s01", "s02", None, "same story", "tester")])
    cells = _evidence_cells(_get(base + "/ui/clusters/s01"))
    (row,) = [r for r in ix.explain("s02", limit=3)["comparisons"] if r["id"] == "s01"]
    assert row["verdict"] is None and row["refused"]
    assert cells["s02"].startswith(f"no match today ({row['refused']}):"), (cells["s02"], row["refused"])
