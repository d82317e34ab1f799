"""The command line, through click's runner (same process, real store on disk)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.cli import EXIT_REJECTS, main
from tests.test_pipeline import CPI, QUAKE


@pytest.fixture
def news_file(tmp_path):
    rows = [
        {"id": "a", "url": "https://a.example/1", "source": "A", "title": "10月CPI同比上涨2.1%", "content": CPI, "publish_time": "2024-03-12T10:00:00+08:00"},
        {"id": "b", "url": "https://b.example/9", "source": "B", "title": "【快讯】10月CPI同比上涨2.1%", "content": CPI + "\n责任编辑：王五", "publish_time": "2024-03-12T12:00:00+08:00"},
        {"id": "c", "url": "https://c.example/3", "source": "C", "title": "泸定5.1级地震", "content": QUAKE, "publish_time": "2024-03-05T09:00:00+08:00"},
    ]
    p = tmp_path / "news.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return p


def run(*args, **kw):
    return CliRunner().invoke(main, list(map(str, args)), catch_exceptions=False, **kw)


def test_ingest_export_clusters_and_explain(tmp_path, news_file):
    store = tmp_path / "store"
    r = run("ingest", news_file, "--store", store, "--rejects", tmp_path / "rej.jsonl")
    assert r.exit_code == 0, r.output
    assert "new: 2" in r.output and "duplicates: 1 (exact 1)" in r.output and "rejected: 0" in r.output

    out = tmp_path / "export.jsonl"
    assert run("export", "--store", store, "-o", out).exit_code == 0
    rows = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert set(rows) == {"a", "b", "c"}
    # b's row holds every field of an exact duplicate of a (merging them into the row changes nothing)
    expected_b = {"cluster_id": "a", "is_canonical": False, "dup_of": "a", "dup_reason": "exact", "score": 1.0}
    assert rows["b"] | expected_b == rows["b"], rows["b"]
    for key in ("id", "url", "source", "title", "cluster_id", "is_canonical", "dup_of", "dup_reason", "score"):
        assert key in rows["a"]

    r = run("clusters", "--store", store, "--top", "1", "--members")
    assert "3 articles in 2 clusters" in r.output and "- b [exact 1.0]" in r.output

    r = run("explain", "b", "--store", store)
    report = json.loads(r.output)
    assert report["article"]["dup_of"] == "a" and report["comparisons"][0]["verdict"] == "exact"
    assert run("explain", "zzz", "--store", store).exit_code == 1


def test_reingest_reports_a_noop(tmp_path, news_file):
    store = tmp_path / "store"
    run("ingest", news_file, "--store", store)
    r = run("ingest", news_file, "--store", store)
    assert r.exit_code == 0 and "already indexed: 3 (re-ingest: nothing added)" in r.output and "new: 0" in r.output


def test_bad_records_are_quarantined_and_the_exit_status_says_so(tmp_path, news_file):
    bad = tmp_path / "mixed.jsonl"
    bad.write_bytes(news_file.read_bytes() + b'{"title": ""}\nnot json\n\xc3\x28\n')
    rejects = tmp_path / "rej.jsonl"
    r = run("ingest", bad, "--store", tmp_path / "s", "--rejects", rejects)
    assert r.exit_code == EXIT_REJECTS
    assert "new: 2" in r.output and "rejected: 3" in r.output
    lines = [json.loads(l) for l in rejects.read_text().splitlines()]
    assert sorted(l["where"].rsplit(":", 1)[1] for l in lines) == ["4", "5", "6"]
    assert {l["reason"].split(":")[0].split(" (")[0] for l in lines} >= {"neither title nor content", "malformed JSON"}


def test_csv_input(tmp_path):
    p = tmp_path / "in.csv"
    p.write_text('url,title,content,source,publish_time\nhttps://x.example/1,地震,"' + QUAKE.replace("\n", " ") + '",X,2024-03-05 09:00\n', encoding="utf-8")
    r = run("ingest", p, "--store", tmp_path / "s")
    assert r.exit_code == 0 and "new: 1" in r.output


def test_compare_applies_the_ingest_rules(tmp_path):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in [
        {"a": {"title": "10月CPI同比上涨2.1%", "content": CPI}, "b": {"title": "【快讯】物价数据", "content": CPI}},
        {"a": {"title": "CPI", "content": CPI}, "b": {"title": "地震", "content": QUAKE}},
        {"source": "山西晋中榆次区中小学12日起陆续放假", "target": "山西晋中榆次区中小学12日起陆续放假"},
    ]) + "\n")
    lines = [json.loads(l) for l in run("compare", pairs).output.splitlines()]
    assert [l["duplicate"] for l in lines] == [True, False, True]
    assert lines[0]["reason"] == "exact" and set(lines[1]["scores"]) >= {"hamming", "cosine", "containment"}


def test_bad_settings_are_named(tmp_path, news_file):
    r = CliRunner().invoke(main, ["ingest", str(news_file), "--store", str(tmp_path / "s"), "--set", "simhash.bandz=3"])
    assert r.exit_code == 1 and "simhash.bandz" in r.output
    cfg = tmp_path / "c.toml"
    cfg.write_text("[decision]\nknn_k = 'many'\n")
    r = CliRunner().invoke(main, ["ingest", str(news_file), "--config", str(cfg)])
    assert r.exit_code == 1 and "decision.knn_k" in r.output


def test_config_prints_effective_settings(tmp_path):
    r = run("config", "--set", "decision.time_window_days=3", "--store", tmp_path / "x")
    assert "time_window_days = 3.0" in r.output and f'path = "{tmp_path / "x"}"' in r.output


def test_eval_scores_clusters_against_a_label(tmp_path):
    rows = [
        {"id": "a", "title": "10月CPI同比上涨2.1%", "content": CPI, "event": 1},
        {"id": "b", "title": "【快讯】10月CPI同比上涨2.1%", "content": CPI, "event": 1},
        {"id": "c", "title": "泸定5.1级地震", "content": QUAKE, "event": 2},
        {"id": "d", "title": "泸定地震", "content": QUAKE, "event": 3},  # labelled apart: a false merge
    ]
    p = tmp_path / "labelled.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    r = run("eval", p, "--truth", "event")
    assert "4 articles, 3 true groups, 2 clusters" in r.output
    assert "pairwise  P=0.5000 R=1.0000" in r.output
    assert "layer exact" in r.output and "false merge in cluster c" in r.output
    assert CliRunner().invoke(main, ["eval", str(p), "--truth", "nope"]).exit_code == 1


def test_tune_sweeps_thresholds_plots_and_recommends(tmp_path):
    trimmed = "\n".join(CPI.split("\n")[:3])
    pairs = [
        {"a": {"title": "10月CPI同比上涨2.1%", "content": CPI}, "b": {"title": "统计局：CPI涨2.1%", "content": trimmed}, "dup": 1},
        {"a": {"title": "泸定5.1级地震", "content": QUAKE}, "b": {"title": "【快讯】泸定地震", "content": QUAKE + "\n来源：某网"}, "dup": "1"},
        {"a": {"title": "CPI", "content": CPI}, "b": {"title": "地震", "content": QUAKE}, "dup": 0},
        {"source": "北京今日迎来降雪", "target": "上海地铁新线开通", "dup": "0"},
    ]
    p = tmp_path / "pairs.jsonl"
    p.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in pairs) + "\n", encoding="utf-8")
    png = tmp_path / "pr.png"
    r = run("tune", p, "--label", "dup", "--plot", png)
    assert r.exit_code == 0, r.output
    assert "4 pairs, 2 labelled duplicate" in r.output and "semantic / event_score" in r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "[decision]" in r.output and "event_threshold = " in r.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": {"title": "x"}, "b": {"title": "y"}}\n')
    assert CliRunner().invoke(main, ["tune", str(bad), "--label", "dup"]).exit_code == 1


def test_compare_and_tune_load_the_model_the_settings_name_on_their_device(tmp_path, monkeypatch):
    import indexer.comparer

    asked = []
    monkeypatch.setattr(indexer.comparer, "create_embedder", lambda model, device="cpu": asked.append((model, device)))
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"a": {"title": "CPI", "content": CPI}, "b": {"title": "地震", "content": QUAKE}, "dup": 0}, ensure_ascii=False) + "\n"
                     + json.dumps({"a": {"title": "CPI", "content": CPI}, "b": {"title": "CPI", "content": CPI}, "dup": 1}, ensure_ascii=False) + "\n")
    flags = ["--set", "embedding.model=some/model", "--set", "embedding.device=cuda:1"]
    assert run("compare", pairs, *flags).exit_code == 0
    assert run("tune", pairs, "--label", "dup", "--plot", tmp_path / "pr.png", *flags).exit_code == 0
    assert asked == [("some/model", "cuda:1")] * 2


def _python(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter, where the CLI's modules are imported for the first time."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=120)


@pytest.mark.parametrize("module", ["crawlers.runner", "indexer.daemon.cli", "indexer.es_cli"])
def test_a_command_module_that_fails_to_import_stops_the_cli_naming_it(module):
    # None in sys.modules makes importing the module fail, as a broken import inside it would.
    done = _python(f"import sys\nsys.modules[{module!r}] = None\nimport indexer.cli")
    assert done.returncode != 0 and module in done.stderr, done.stderr


def test_without_the_es_extra_the_es_commands_are_listed_and_say_what_to_install():
    done = _python(
        "import sys\n"
        "sys.modules['elasticsearch'] = None  # as if newsdedup[es] were not installed\n"
        "from click.testing import CliRunner\n"
        "from indexer.cli import main\n"
        "print(CliRunner().invoke(main, ['--help']).output)\n"
        "r = CliRunner().invoke(main, ['es', 'init', '--store', 'http://127.0.0.1:9', '--dims', '0'])\n"
        "print('exit', r.exit_code, r.output)\n"
    )
    assert done.returncode == 0, done.stderr
    listed = done.stdout.split("Commands:")[1]
    assert all(f"  {name} " in listed for name in ("crawl", "es", "kibana", "serve", "dead-letters"))
    assert "exit 1" in done.stdout and "pip install 'newsdedup[es]'" in done.stdout


def test_tune_names_a_side_that_is_not_an_article(tmp_path):
    p = tmp_path / "pairs.jsonl"
    p.write_text(json.dumps({"a": {"title": "CPI", "content": CPI}, "b": {"title": "", "content": ""}, "dup": 1}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["tune", str(p), "--label", "dup", "--set", "embedding.model=none"])
    assert r.exit_code == 1 and "pair 1 b: neither title nor content" in r.output, r.output


def test_the_summary_names_merged_clusters(capsys):
    from collections import Counter

    from indexer.cli import _print_summary

    _print_summary(Counter({"new": 2, "duplicate": 1, "duplicate/near": 1, "merged": 1}), 0, 1.0, "rejects.jsonl")
    out = capsys.readouterr().out
    assert "clusters merged: 1" in out
    _print_summary(Counter({"new": 2}), 0, 1.0, "rejects.jsonl")
    assert "merged" not in capsys.readouterr().out


def test_ingest_takes_the_writer_lease_and_refuses_while_another_writer_holds_it(tmp_path, news_file):
    """One writer per store: an ingest into a store a daemon (or another ingest) is writing into
    stops before it reads a record, naming the holder, and the store is left as it was; the lease
    is given back when the ingest ends."""
    from indexer.daemon.lease import FileLease

    store = tmp_path / "store"
    daemon = FileLease(store / "daemon-writer.lock", owner="host-a:4242:daemon")
    assert daemon.acquire()
    r = CliRunner().invoke(main, ["ingest", str(news_file), "--store", str(store)])
    assert r.exit_code == 1 and "being written by host-a:4242:daemon" in r.output, r.output
    assert not (store / "articles.sqlite3").exists()  # refused before the store was opened
    daemon.release()
    assert run("ingest", news_file, "--store", store).exit_code == 0
    assert daemon.acquire()  # the ingest let go of it
    daemon.release()


def test_ingest_into_a_store_path_that_cannot_be_a_directory_is_a_clear_error(tmp_path, news_file):
    r = CliRunner().invoke(main, ["ingest", str(news_file), "--store", str(news_file / "store")])
    assert r.exit_code == 1 and "writer lease of the store" in r.output and "Traceback" not in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def _write_jsonl(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_eval_scores_the_clusters_a_later_article_merged(tmp_path, monkeypatch):
    """Head and tail of one report start two clusters; the original, a batch later, bridges and
    merges them. eval scores the store's final clusters, not the one each article joined."""
    import indexer.pipeline
    from indexer.features import Featurizer
    from indexer.features.simhash import FINGERPRINT_LAYOUT
    from indexer.store.sqlite import SqliteStore
    from tests.conftest import TableEmbedder
    from tests.test_clusters import EMBEDDER, STORIES

    embedder = TableEmbedder(EMBEDDER)

    def open_with_table_embedder(settings):
        store = SqliteStore(settings.store.path, vector_dims=embedder.dims, embedding_model=embedder.name,
                            fingerprint_layout=FINGERPRINT_LAYOUT, bands=settings.simhash.bands)
        return indexer.pipeline.Indexer(settings, store, Featurizer(settings, embedder))

    monkeypatch.setattr(indexer.pipeline.Indexer, "open", staticmethod(open_with_table_embedder))
    cpi = {r["id"]: r for r in STORIES if r["id"].startswith("cpi")}
    p = _write_jsonl(tmp_path / "bridged.jsonl", [dict(cpi[i], event="cpi") for i in ("cpi-head", "cpi-tail", "cpi-orig")])
    r = run("eval", p, "--truth", "event", "--set", "input.batch_size=1")
    assert r.exit_code == 0, r.output
    assert "3 articles, 1 true groups, 1 clusters" in r.output, r.output
    assert "pairwise  P=1.0000 R=1.0000" in r.output and "missed:" not in r.output, r.output


def test_eval_names_rejected_records_and_refuses_to_score_nothing(tmp_path):
    good = {"id": "a", "title": "10月CPI同比上涨2.1%", "content": CPI, "event": 1}
    empty = {"id": "x1", "title": "", "content": "", "event": 2}  # neither title nor content: rejected
    p = _write_jsonl(tmp_path / "some.jsonl", [good, empty, "not json"])
    r = CliRunner().invoke(main, ["eval", str(p), "--truth", "event", "--set", "embedding.model=none"])
    assert r.exit_code == EXIT_REJECTS, r.output
    assert "rejected 2 records, not scored" in r.output and "x1: neither title nor content" in r.output, r.output
    assert f"{p}:3: malformed JSON" in r.output and "1 articles, 1 true groups, 1 clusters" in r.output, r.output

    p = _write_jsonl(tmp_path / "none.jsonl", [empty, dict(empty, id="x2")])
    r = CliRunner().invoke(main, ["eval", str(p), "--truth", "event", "--set", "embedding.model=none"])
    assert r.exit_code == 1 and "nothing of" in r.output and "all 2 labelled records were rejected" in r.output, r.output
    assert "P=1.0000" not in r.output and "Traceback" not in r.output and isinstance(r.exception, SystemExit)


TUNE_PAIRS = [
    {"source": "山西晋中榆次区中小学12日起陆续放假", "target": "山西晋中榆次区中小学12日起陆续放假", "dup": "1.0"},
    {"source": "北京今日迎来降雪", "target": "上海地铁新线开通", "dup": " FALSE "},
    {"source": "泸定5.1级地震", "target": "泸定发生5.1级地震", "dup": True},
]


def test_tune_reads_0_1_labels_and_refuses_others_naming_the_line(tmp_path):
    p = _write_jsonl(tmp_path / "pairs.jsonl", TUNE_PAIRS)
    r = run("tune", p, "--label", "dup", "--set", "embedding.model=none", "--plot", tmp_path / "pr.png")
    assert r.exit_code == 0 and "3 pairs, 2 labelled duplicate" in r.output, r.output
    for bad in (-1, 2, "2", None, "yes", "nan"):
        p = _write_jsonl(tmp_path / "bad.jsonl", TUNE_PAIRS[:2] + [dict(TUNE_PAIRS[2], dup=bad)])
        r = CliRunner().invoke(main, ["tune", str(p), "--label", "dup", "--set", "embedding.model=none", "--plot", str(tmp_path / "pr.png")])
        assert r.exit_code == 1 and f"{p}:3: label {bad!r} is not 0 or 1" in r.output, (bad, r.output)
        assert isinstance(r.exception, SystemExit), r.exception
    p.write_text(p.read_text().replace('"dup": "nan"', '"dup": NaN'))  # a float nan, as Python's json reads it
    r = CliRunner().invoke(main, ["tune", str(p), "--label", "dup", "--set", "embedding.model=none", "--plot", str(tmp_path / "pr.png")])
    assert r.exit_code == 1 and f"{p}:3: label nan is not 0 or 1" in r.output, r.output


def test_tune_names_each_malformed_line_counts_it_and_says_so_in_the_exit_status(tmp_path):
    p = _write_jsonl(tmp_path / "pairs.jsonl", [TUNE_PAIRS[0], '{"source": "x", ', TUNE_PAIRS[1], "[1, 2"])
    r = CliRunner().invoke(main, ["tune", str(p), "--label", "dup", "--set", "embedding.model=none", "--plot", str(tmp_path / "pr.png")])
    assert r.exit_code == EXIT_REJECTS, r.output
    assert f"rejected {p}:2: malformed JSON" in r.output and f"rejected {p}:4: malformed JSON" in r.output, r.output
    assert "2 pairs, 1 labelled duplicate, 2 lines rejected" in r.output, r.output


@pytest.mark.parametrize("command", [["export"], ["clusters"], ["explain", "a"]])
def test_read_only_commands_refuse_a_store_that_is_not_there_and_create_none(tmp_path, command):
    typo = tmp_path / "typo-store"
    r = CliRunner().invoke(main, [*command, "--store", str(typo)])
    assert r.exit_code == 1 and f"no store at {typo}" in r.output, r.output
    assert not typo.exists()
    typo.mkdir()  # a directory without the store's database in it is no store either
    r = CliRunner().invoke(main, [*command, "--store", str(typo)])
    assert r.exit_code == 1 and f"no store at {typo}" in r.output and list(typo.iterdir()) == [], r.output


def test_an_elasticsearch_url_is_left_to_the_store_to_answer():
    from indexer.cli_options import existing_store
    from indexer.settings import Settings

    settings = Settings().replace(**{"store.path": "http://127.0.0.1:9"})
    assert existing_store(settings) is settings
