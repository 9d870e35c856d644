"""The routes the HTTP app answers and the paths its OpenAPI document lists are the same set."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.responses import JSONResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

import notewell  # noqa: E402
from notewell.interfaces.http import app as app_module  # noqa: E402
from notewell.interfaces.http.answers import Json  # noqa: E402
from notewell.interfaces.http.app import make_app  # noqa: E402
from notewell.interfaces.http.openapi import openapi_document  # noqa: E402
from notewell.interfaces.http.operations import Operation  # noqa: E402
from notewell.interfaces.http.routes import ROUTES  # noqa: E402
from notewell.interfaces.http.schemas import OBJECT  # noqa: E402
from notewell.search.embedders import HashEmbedder  # noqa: E402
from notewell.services.server_api import ServerAPI  # noqa: E402

# Served, and not API operations: the web page, its assets and icon, the link that signs it in
# (opened from the terminal), and the document itself.
UNDOCUMENTED = {
    ("GET", "/"),
    ("GET", "/static/{name}"),
    ("GET", "/favicon.ico"),
    ("GET", "/signin"),
    ("GET", "/openapi.json"),
}


@pytest.fixture
def api(tmp_path):
    store = notewell.open(tmp_path / "notes", embedder=HashEmbedder())
    yield ServerAPI(store)
    store.close()


def served(app) -> set[tuple[str, str]]:
    """(method, path) of every route *app* answers, read from its answers: the Allow header of
    a 405 to a method no route takes (HEAD left out, answered wherever GET is)."""
    client = TestClient(app, base_url="http://127.0.0.1")
    out = set()
    for route in app.routes:
        path = re.sub(r"\{(\w+)(?::\w+)?\}", r"{\1}", route.path)
        answer = client.request("TRACE", re.sub(r"\{\w+\}", "x", path))
        assert answer.status_code == 405, (path, answer.status_code)
        out |= {(m.strip(), path) for m in answer.headers["allow"].split(",") if m.strip() != "HEAD"}
    return out


def documented(doc) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in doc["paths"].items() for method in item}


def disagreements(app, doc) -> set[tuple[str, str]]:
    return (served(app) - UNDOCUMENTED) ^ documented(doc)


@pytest.mark.slow
def test_every_route_is_documented_and_every_documented_path_is_a_route(api):
    app = make_app(api, api.store.token_book())
    assert disagreements(app, openapi_document()) == set()
    assert UNDOCUMENTED <= served(app)
    assert ("PATCH", "/api/notes/{note_id}") in documented(openapi_document())
    served_doc = TestClient(app, base_url="http://127.0.0.1").get("/openapi.json").json()
    assert served_doc == openapi_document()


@pytest.mark.slow
def test_a_route_added_in_one_place_only_is_seen(api, monkeypatch):
    tokens = api.store.token_book()
    doc = openapi_document()

    async def extra(request):
        return JSONResponse({})

    # A route beside the table, without a document entry.
    app = make_app(api, tokens, extra_routes=[Route("/api/extra", extra, methods=["GET"])])
    assert disagreements(app, doc) == {("GET", "/api/extra")}
    # A path in the document that no route answers.
    app = make_app(api, tokens)
    longer = {**doc, "paths": {**doc["paths"], "/api/ghost": {"get": {}}}}
    assert disagreements(app, longer) == {("GET", "/api/ghost")}
    # An operation in the table that is left out of the document (no operation id).
    hidden = Operation("GET", "/api/hidden", extra, Json(OBJECT, "hidden"))
    monkeypatch.setattr(app_module, "ROUTES", (*ROUTES, hidden))
    assert disagreements(make_app(api, tokens), doc) == {("GET", "/api/hidden")}


def test_each_method_and_path_is_in_the_table_once():
    pairs = [(op.method, op.path) for op in ROUTES]
    assert len(pairs) == len(set(pairs))
    ids = [op.operation_id for op in ROUTES if op.operation_id]
    assert len(ids) == len(set(ids))
