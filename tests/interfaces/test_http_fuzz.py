"""Property-based fuzzing of the HTTP API from its own OpenAPI document (schemathesis, bounded).

Every operation gets generated requests (valid and deliberately invalid) with an owner's
token: no 5xx, and every answer conforms to the document (status, content type, schema).
"""

from __future__ import annotations

import os

import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("uvicorn")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.interfaces.server_fixture import Server  # noqa: E402

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = int(os.environ.get("NOTEWELL_FUZZ_EXAMPLES", "25"))


@pytest.fixture
def srv(tmp_path, monkeypatch):
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    server = Server(tmp_path / "notes", write_rate=1000.0)
    server.store.add_note("---\ntitle: seed\nkind: finding\ntags: [cache]\n---\ncache stampede", author="boss")
    yield server
    server.close()


def test_no_operation_answers_a_server_error_or_off_its_document(srv):
    schema = schemathesis.openapi.from_url(f"{srv.url}/openapi.json", timeout=10)
    schema.config.update(headers={"Authorization": f"Bearer {srv.tokens['boss']}"})
    schema.config.phases.update(phases=["examples", "fuzzing"])
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 13
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def run(case):
            case.call_and_validate(checks=CHECKS, timeout=30)

        run()
    assert srv.call("GET", "/healthz").status == 200  # and the server is still up
