"""The OpenAPI spec is generated from the code, and the running daemon keeps to it: schemathesis
sends generated requests to every operation (a bounded number of examples each) and checks that
no answer is a 500 and that every status, content type and body is the one the spec documents."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (content_type_conformance, not_a_server_error, response_schema_conformance,
                                 status_code_conformance)

from .conftest import DaemonProc, article

TOKEN = "spec-check-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def spec_daemon(tmp_path_factory):
    d = DaemonProc(tmp_path_factory.mktemp("spec"), env={"NEWSDEDUP_DAEMON_AUTH_TOKEN": TOKEN},
                   sets={"daemon.max_body_bytes": "65536"}).start()
    assert d.post([article(i, dup_of=1 if i == 2 else None) for i in range(1, 5)], AUTH).status == 202
    d.wait_drained()
    yield d
    assert d.stop() == 0
    assert TOKEN not in d.log_text()


def test_every_operation_keeps_to_the_spec(spec_daemon):
    schema = schemathesis.openapi.from_url(spec_daemon.url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 10
    checks = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
        def keeps_to_the_spec(case):
            case.call_and_validate(base_url=spec_daemon.url, headers=AUTH, timeout=30, checks=checks)

        keeps_to_the_spec()
    answered = {k: v for k, v in spec_daemon.metrics().items() if k.startswith("newsdedup_daemon_http_requests_total{")}
    for route in ("articles_post", "article", "cluster", "clusters", "split", "merge", "labels"):
        assert sum(v for k, v in answered.items() if f"route={route}}}" in k) >= (1 if route == "labels" else 5), (route, answered)
    assert not any("code=500" in k for k in answered), answered


def test_the_spec_names_every_route_and_the_corrections(spec_daemon):
    spec = spec_daemon.get("/openapi.json").json()
    paths = spec["paths"]
    for path in ("/healthz", "/readyz", "/metrics", "/v1/articles", "/v1/articles/{article_id}", "/v1/clusters",
                 "/v1/clusters/{cluster_id}", "/v1/clusters/{cluster_id}/split", "/v1/clusters/merge", "/v1/labels"):
        assert path in paths, path
    post = paths["/v1/articles"]["post"]
    assert {"202", "400", "401", "411", "413", "422", "429", "503"} <= set(post["responses"])
    assert "application/x-ndjson" in post["requestBody"]["content"]
    assert paths["/v1/labels"]["get"]["security"] == [{"bearer": []}] and "security" not in paths["/healthz"]["get"]
    merge = spec["components"]["schemas"]["MergeRequest"]
    assert set(merge["required"]) == {"into", "from"}
