"""The Kibana saved objects: unique ids, resolvable references, only fields the mapping has; and the
import request Kibana's saved-objects API expects."""

from __future__ import annotations

import json
import posixpath
import re
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit, urlunsplit

import pytest
from click.testing import CliRunner

from indexer.es_cli import KIBANA_DIR, kibana, load_saved_objects
from indexer.settings import EsSettings
from indexer.store.es_schema import build_schema

META_FIELDS = {"_id", "_index", "_score", "_source"}
KQL_FIELD = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\s*:")


def _objects():
    return load_saved_objects(KIBANA_DIR, "newsdedup")


def _mapped_fields() -> set[str]:
    schema = build_schema(EsSettings(), vector_dims=8, embedding_model="m", fingerprint_layout="f", bands=4)
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


def kibana_link(url: str, origin: str, base_path: str, pathname: str) -> str:
    """Where Kibana's URL field format sends a relative ``url`` (the prefix rule of its UrlFormat,
    src/plugins/field_formats/common/converters/url: '#...' is relative to the page, a url that
    starts with the base path is absolute on the origin, anything else is relative to
    ``<base path>/app/``). ``base_path`` is the browser's http.basePath: server.basePath plus
    ``/s/<space>`` in a space other than the default."""
    if url.startswith("#"):
        prefix = origin + pathname
    elif url.startswith(base_path or "/"):
        prefix = origin
    else:
        prefix = origin + base_path + "/app" + ("" if url.startswith("/") else "/")
    return _resolve(prefix + url)


def _resolve(link: str) -> str:
    """The URL a browser opens for ``link`` (dot segments removed)."""
    parts = urlsplit(link)
    return urlunsplit(parts._replace(path=posixpath.normpath(parts.path)))


@pytest.mark.parametrize("base_path", ["", "/kibana", "/s/news", "/kibana/s/news"])
@pytest.mark.parametrize("field", ["cluster_id", "dup_of"])
def test_links_open_discover_under_any_base_path_and_space(base_path, field):
    [view] = [o for o in _objects() if o["type"] == "index-pattern"]
    template = json.loads(view["attributes"]["fieldFormatMap"])[field]["params"]["urlTemplate"]
    url = template.replace("{{value}}", "art-1")
    origin = "https://kibana.example:5601"
    link = kibana_link(url, origin, base_path, f"{base_path}/app/discover")
    assert link.startswith(f"{origin}{base_path}/app/discover#/view/newsdedup-articles-by-cluster?"), link


class _Kibana(BaseHTTPRequestHandler):
    received: list = []
    require_auth = False  # answer 401 to a request without Authorization, as a secured Kibana does

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))  # names are case-insensitive
        if self.require_auth and "Authorization" not in self.headers:
            payload = json.dumps({"statusCode": 401, "error": "Unauthorized", "message": "Unauthorized"}).encode()
            self.send_response(401)
        else:
            payload = json.dumps({"success": True, "successCount": body.count(b'"type"')}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def _serve(handler, tls: ssl.SSLContext | None = None):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"{'https' if tls else 'http'}://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture
def kibana_server():
    handler = type("K", (_Kibana,), {"received": [], "require_auth": True})
    httpd, url = _serve(handler)
    yield url, handler.received
    httpd.shutdown()


@pytest.fixture
def tls_kibana(tmp_path):
    """A Kibana on https with a self-signed certificate for 127.0.0.1: ``(url, path of the certificate)``."""
    cert, key = tmp_path / "kibana.crt", tmp_path / "kibana.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    httpd, url = _serve(type("K", (_Kibana,), {"received": []}), tls)
    yield url, cert
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


def test_kibana_import_without_credentials_says_what_to_set(kibana_server, monkeypatch):
    url, received = kibana_server
    for name in ("USERNAME", "PASSWORD", "API_KEY"):
        monkeypatch.delenv(f"NEWSDEDUP_ES_{name}", raising=False)
    result = CliRunner().invoke(kibana, ["import", "--kibana-url", url])
    assert result.exit_code == 1 and "Kibana answered 401" in result.output
    assert "no credentials were sent" in result.output and "NEWSDEDUP_ES_PASSWORD" in result.output
    assert "authorization" not in received[0][1]


def test_kibana_import_verifies_an_https_kibana_with_the_es_tls_settings(tls_kibana, monkeypatch):
    url, cert = tls_kibana
    for name in ("CA_CERTS", "VERIFY_CERTS"):
        monkeypatch.delenv(f"NEWSDEDUP_ES_{name}", raising=False)
    untrusted = CliRunner().invoke(kibana, ["import", "--kibana-url", url])
    assert untrusted.exit_code == 1 and "CERTIFICATE_VERIFY_FAILED" in untrusted.output
    monkeypatch.setenv("NEWSDEDUP_ES_CA_CERTS", str(cert))
    trusted = CliRunner().invoke(kibana, ["import", "--kibana-url", url])
    assert trusted.exit_code == 0, trusted.output
    monkeypatch.delenv("NEWSDEDUP_ES_CA_CERTS")
    monkeypatch.setenv("NEWSDEDUP_ES_VERIFY_CERTS", "false")
    unverified = CliRunner().invoke(kibana, ["import", "--kibana-url", url])
    assert unverified.exit_code == 0, unverified.output
