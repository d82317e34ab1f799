"""The Kibana saved objects: unique ids, resolvable references, only fields the mapping has; and the
import request Kibana's saved-objects API expects."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from indexer.es_cli import KIBANA_DIR, kibana, load_saved_objects
from indexer.store.es_config import EsConfig
from indexer.store.es_schema import build_schema

META_FIELDS = {"_id", "_index", "_score", "_source"}
KQL_FIELD = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\s*:")


def _objects():
    return load_saved_objects(KIBANA_DIR, "newsdedup")


def _mapped_fields() -> set[str]:
    schema = build_schema(EsConfig(), vector_dims=8, embedding_model="m", fingerprint_layout="f", bands=4)
    props = schema.components["newsdedup-mappings"]["template"]["mappings"]["properties"]
    fields = set(props)
    for name, body in props.items():
        fields |= {f"{name}.{sub}" for sub in body.get("fields", {})}
    return fields


def _used_fields(obj) -> set[str]:
    """Every field a saved object names: time field, formats, columns, sort, aggs, KQL queries."""
    attrs, used = obj["attributes"], set()
    if attrs.get("timeFieldName"):
        used.add(attrs["timeFieldName"])
    if attrs.get("fieldFormatMap"):
        formats = json.loads(attrs["fieldFormatMap"])
        used |= set(formats)
        for fmt in formats.values():
            used |= set(KQL_FIELD.findall(fmt.get("params", {}).get("urlTemplate", "").split("query:", 2)[-1]))
    used |= set(attrs.get("columns", []))
    used |= {s[0] for s in attrs.get("sort", [])}
    if attrs.get("visState"):
        used |= {a["params"]["field"] for a in json.loads(attrs["visState"])["aggs"] if "field" in a.get("params", {})}
    source = json.loads(attrs.get("kibanaSavedObjectMeta", {}).get("searchSourceJSON", "{}"))
    used |= set(KQL_FIELD.findall(source.get("query", {}).get("query", "")))
    return used


def test_ids_are_unique_and_references_resolve():
    objects = _objects()
    keys = [(o["type"], o["id"]) for o in objects]
    assert len(keys) == len(set(keys))
    assert {t for t, _ in keys} >= {"index-pattern", "search", "visualization", "dashboard"}
    for obj in objects:
        for ref in obj.get("references", []):
            assert (ref["type"], ref["id"]) in keys, (obj["id"], ref)
        if obj["type"] == "dashboard":
            names = {p["panelRefName"] for p in json.loads(obj["attributes"]["panelsJSON"])}
            assert names == {r["name"] for r in obj["references"]}
        if "searchSourceJSON" in obj["attributes"].get("kibanaSavedObjectMeta", {}):
            source = json.loads(obj["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
            if "indexRefName" in source:
                assert source["indexRefName"] in {r["name"] for r in obj["references"]}


def test_every_field_used_exists_in_the_mapping():
    mapped = _mapped_fields()
    for obj in _objects():
        missing = _used_fields(obj) - mapped - META_FIELDS
        assert not missing, (obj["id"], missing)
    assert "vector" not in set().union(*(_used_fields(o) for o in _objects()))


def test_cluster_view_shows_members_with_reason_and_score():
    [search] = [o for o in _objects() if o["type"] == "search"]
    assert {"cluster_id", "is_canonical", "dup_reason", "score", "dup_of"} <= set(search["attributes"]["columns"])
    [view] = [o for o in _objects() if o["type"] == "index-pattern"]
    link = json.loads(view["attributes"]["fieldFormatMap"])["cluster_id"]["params"]["urlTemplate"]
    assert search["id"] in link and "cluster_id" in link


class _Kibana(BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))  # names are case-insensitive
        payload = json.dumps({"success": True, "successCount": body.count(b'"type"')}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def kibana_server():
    handler = type("K", (_Kibana,), {"received": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", handler.received
    httpd.shutdown()


def test_kibana_import_posts_multipart_with_xsrf_and_the_alias(kibana_server, monkeypatch):
    url, received = kibana_server
    monkeypatch.setenv("NEWSDEDUP_ES_INDEX", "news-zh")
    monkeypatch.setenv("NEWSDEDUP_ES_USERNAME", "elastic")
    monkeypatch.setenv("NEWSDEDUP_ES_PASSWORD", "pw-not-echoed")
    result = CliRunner().invoke(kibana, ["import", "--kibana-url", url, "--space", "news"])
    assert result.exit_code == 0, result.output
    assert "pw-not-echoed" not in result.output
    [(path, headers, body)] = received
    assert path == "/s/news/api/saved_objects/_import?overwrite=true"
    assert headers["kbn-xsrf"] == "true" and headers["content-type"].startswith("multipart/form-data; boundary=")
    assert headers["authorization"].startswith("Basic ")
    lines = [json.loads(l) for l in body.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n--", 1)[0].splitlines() if l.strip()]
    assert len(lines) == len(_objects())
    assert [o["attributes"]["title"] for o in lines if o["type"] == "index-pattern"] == ["news-zh"]
