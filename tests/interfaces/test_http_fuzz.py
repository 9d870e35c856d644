"""Property-based fuzzing of the HTTP API from its own OpenAPI document (schemathesis, bounded).

Every operation gets requests in the examples, coverage and fuzzing phases, valid and
deliberately invalid, with an owner's token: no 5xx; every answer conforms to the document
(status, content type, schema); what the document allows is accepted and what it forbids is
refused; a method it does not list answers 405 with an Allow header naming the ones it does.
Deterministic (derandomized, no example database), so a failure is a mismatch, not bad luck.
"""

from __future__ import annotations

import os
from urllib.parse import unquote

import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("uvicorn")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    allow_header_conformance,
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)
from schemathesis.generation import GenerationMode  # noqa: E402

from notewell.errors import NotewellError  # noqa: E402
from notewell.model.attempt import check_project  # noqa: E402
from notewell.model.header_edit import with_tags  # noqa: E402
from notewell.search.query import check_query_text, compile_query  # noqa: E402
from notewell.services.reports import report_window  # noqa: E402
from tests.interfaces.server_fixture import Server  # noqa: E402

CONFORMANCE = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
    unsupported_method,
    allow_header_conformance,
]
CHECKS = [*CONFORMANCE, positive_data_acceptance]
EXAMPLES = int(os.environ.get("NOTEWELL_FUZZ_EXAMPLES", "25"))


@pytest.fixture
def srv(tmp_path, monkeypatch):
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    server = Server(tmp_path / "notes", write_rate=1000.0)
    server.store.add_note("---\ntitle: seed\nkind: finding\ntags: [cache]\n---\ncache stampede", author="boss")
    # The MCP endpoint is built on a server thread that imports rich, which draws from `random`:
    # a request to /mcp waits for it, so that it never draws while Hypothesis checks its own.
    server.call("GET", "/mcp")
    yield server
    try:
        assert server.call("GET", "/healthz").status == 200  # and the server is still up
    finally:
        server.close()


@pytest.fixture
def api_schema(srv):
    schema = schemathesis.openapi.from_url(f"{srv.url}/openapi.json", timeout=10)
    schema.config.update(headers={"Authorization": f"Bearer {srv.tokens['boss']}"})
    # Coverage is the phase that sends the methods a path does not list (and OPTIONS).
    schema.config.phases.update(phases=["examples", "coverage", "fuzzing"])
    schema.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
    assert len([result.ok() for result in schema.get_all_operations()]) >= 16
    return schema


schema = schemathesis.pytest.from_fixture("api_schema")


def _refused(check, *args) -> bool:
    try:
        check(*args)
    except NotewellError:
        return True
    return False


def _breaks_a_rule_in_words(case) -> str | None:
    """Which rule of the document's descriptions (not its schemas) *case* breaks, if any.
    JSON Schema cannot say what the server slugs a name to, nor that a query needs words
    unless project or attempt_id is given; the server's own checks decide here."""
    query = case.query or {}
    body = case.body if isinstance(case.body, dict) else {}
    path_project = (case.path_parameters or {}).get("project")
    # Path parameters come percent-encoded, as they are sent; the server reads them decoded.
    names = [
        unquote(path_project) if isinstance(path_project, str) else None,
        query.get("project"),
        query.get("campaign"),
    ]
    if case.path == "/api/attempts":
        names += [body.get("project"), body.get("campaign")]
    for name in names:
        if isinstance(name, str) and _refused(check_project, name):
            return f"the name {name!r} has no slug, or too long a one"
    if isinstance(body.get("add_tags"), list) and _refused(with_tags, "x", body["add_tags"]):
        return f"the tags {body['add_tags']!r}: one has no slug or too long a one, or too many are given"
    if case.path == "/api/report" and _refused(report_window, query.get("since"), query.get("until"), query.get("tz")):
        return "since must come before until"
    if case.path == "/api/notes/search":
        if "query" in query and "q" in query:
            return "the search words are given twice (query and its alias q)"
        words = query.get("query", query.get("q", ""))
        if not isinstance(words, str):
            return None
        if not words.strip():
            return None if query.get("project") or query.get("attempt_id") else "a blank query needs a scope"
        if query.get("mode", "keyword") == "semantic":  # read by the model: words of any kind
            refused = _refused(check_query_text, words) or not any(ch.isalnum() for ch in words)
        else:
            refused = _refused(compile_query, words)
        if refused:
            return f"the query {words!r} has no words to search for"
    return None


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_its_document_says(case):
    positive = case.meta is None or case.meta.generation.mode.is_positive
    broken = _breaks_a_rule_in_words(case) if positive else None
    if broken is None:
        case.call_and_validate(checks=CHECKS, timeout=30)
        return
    # Valid by the schemas and not by the words: it must be refused, as invalid data is.
    response = case.call_and_validate(checks=CONFORMANCE, timeout=30)
    assert 400 <= response.status_code < 500, (broken, response.status_code, response.text[:300])
