"""The HTTP API reference, written from the OpenAPI document the server serves and the route
table it is made from (``python -m notewell.interfaces.http.reference`` prints it;
``docs/http-api.md`` holds it, and a test fails when the two differ or a route is missing)."""

from __future__ import annotations

from typing import Any

from .openapi import openapi_document
from .operations import Operation
from .routes import ROUTES

__all__ = ["http_reference_markdown"]

# A pattern longer than this is a character class spelled out (what counts as blank, say): the
# description beside it says what it means, and the schema at /openapi.json has it whole.
_SHORT_PATTERN = 40
_LONG_ENUM = 12
_ERROR_REF = "#/components/schemas/Error"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _anchor(ref: str) -> str:
    name = ref.rsplit("/", 1)[-1]
    return f"[{name}](#{name.lower()})"


def _bounds(schema: dict[str, Any]) -> list[str]:
    said = []
    if "minimum" in schema and "maximum" in schema:
        said.append(f"{schema['minimum']} to {schema['maximum']}")
    elif "minimum" in schema:
        said.append(f"at least {schema['minimum']}")
    if "maxLength" in schema:
        said.append(f"at most {schema['maxLength']} characters")
    elif schema.get("minLength"):
        said.append("not empty")
    if "maxItems" in schema:
        said.append(f"at most {schema['maxItems']} items")
    pattern = schema.get("pattern")
    if pattern and len(pattern) <= _SHORT_PATTERN:
        said.append(f"matching `{pattern}`")
    return said


def _type(schema: dict[str, Any]) -> str:
    """A schema in a few words: `string or null, at most 1000 characters`, `list of Card`."""
    if "$ref" in schema:
        return _anchor(schema["$ref"])
    choices = schema.get("oneOf") or schema.get("anyOf")
    if choices:
        return " or ".join(dict.fromkeys(_type(s) for s in choices))
    if "enum" in schema:
        if len(schema["enum"]) > _LONG_ENUM:  # the time zones this machine knows: /openapi.json lists them
            return "a name /openapi.json lists"
        return "one of " + ", ".join(f"`{v}`" for v in schema["enum"])
    kinds = schema.get("type", "any")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    words = []
    for kind in kinds:
        if kind == "array":
            item = _type(schema.get("items", {}))
            words.append(f"list of {item}" if "," not in item else f"list of ({item})")
        elif "format" in schema:
            words.append(f"{kind} ({schema['format']})")
        else:
            words.append(str(kind))
    return ", ".join([" or ".join(words), *_bounds(schema)])


def _field_rows(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required", ()))
    rows = ["| field | type | required | what it is |", "|---|---|---|---|"]
    for name, prop in schema.get("properties", {}).items():
        yes = "yes" if name in required else "no"
        rows.append(f"| `{name}` | {_cell(_type(prop))} | {yes} | {_cell(prop.get('description', ''))} |")
    return rows


def _parameters(doc: dict[str, Any]) -> list[str]:
    params = doc.get("parameters", [])
    if not params:
        return []
    rows = ["| parameter | in | type | required | what it is |", "|---|---|---|---|---|"]
    for p in params:
        yes = "yes" if p.get("required") else "no"
        what = _cell(p.get("description", ""))
        rows.append(f"| `{p['name']}` | {p['in']} | {_cell(_type(p.get('schema', {})))} | {yes} | {what} |")
    return [*rows, ""]


def _body(doc: dict[str, Any]) -> list[str]:
    body = doc.get("requestBody")
    if body is None:
        return []
    schema = body["content"]["application/json"]["schema"]
    shapes = schema.get("oneOf", [schema])
    lines = ["Request body, JSON" + (f" (one of {len(shapes)} shapes):" if len(shapes) > 1 else ":"), ""]
    for shape in shapes:
        lines += [*_field_rows(shape), ""]
    return lines


def _content(response: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """An answer's media type and schema (('', {}) for none)."""
    content: dict[str, dict[str, Any]] = response.get("content", {})
    for media, shape in content.items():
        schema: dict[str, Any] = shape.get("schema", {})
        return media, schema
    return "", {}


def _answer(status: str, response: dict[str, Any]) -> str:
    media, schema = _content(response)
    what = f"`{status}` {response['description']}"
    if media == "application/json" and schema.get("properties"):
        fields = ", ".join(f"`{name}` ({_type(prop)})" for name, prop in schema["properties"].items())
        return f"{what}: a JSON object of {fields}"
    if media == "application/json" and schema != {"type": "object"}:
        return f"{what}: {_type(schema)}"
    every = ", ".join(response.get("content", {}))  # a document in one of several media types
    return f"{what} ({every})" if media else what


def _responses(doc: dict[str, Any]) -> list[str]:
    answers: list[str] = []
    errors: list[str] = []
    for status, response in doc["responses"].items():
        if _content(response)[1].get("$ref") == _ERROR_REF:
            errors.append(f"`{status}` {response['description']}")
        else:
            answers.append(_answer(status, response))
    lines = [f"Answers {'; '.join(answers)}."]
    if errors:
        lines.append(f"Errors ([the shape](#error)): {', '.join(errors)}.")
    return [*lines, ""]


def _security(method: str, doc: dict[str, Any]) -> str:
    schemes = [next(iter(s), None) for s in doc.get("security", [])]
    if "bearer" not in schemes:
        return "no token"
    if method != "get":
        return "a token that may write"
    return "a token, or none for public work" if None in schemes else "a token"


def _operation(method: str, path: str, doc: dict[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", "", _cell(doc.get("summary", "")), ""]
    lines += [f"Operation `{doc['operationId']}`; takes {_security(method, doc)}.", ""]
    return lines + _parameters(doc) + _body(doc) + _responses(doc)


def _shapes(document: dict[str, Any]) -> list[str]:
    lines = ["## Shapes", "", "The objects the answers above name.", ""]
    for name, schema in document["components"]["schemas"].items():
        lines += [f"### {name}", "", *_field_rows(schema), ""]
        for field, prop in schema.get("properties", {}).items():
            if prop.get("type") == "object" and prop.get("properties"):
                lines += [f"`{field}` holds:", "", *_field_rows(prop), ""]
    return lines


def _outside(routes: tuple[Operation, ...]) -> list[str]:
    """The routes the document leaves out (the page, its files, the document itself)."""
    lines = [
        "## Outside the API",
        "",
        "Served by the same server, not in the OpenAPI document:",
        "",
        "| route | what it is |",
        "|---|---|",
    ]
    for op in routes:
        if not op.operation_id:
            what = (op.handler.__doc__ or "").strip().split("\n\n")[0]
            lines.append(f"| `{op.method} {op.documented_path}` | {_cell(what)} |")
    lines.append(
        "| `/mcp` | the MCP tools, and the notes as resources, over Streamable HTTP (protocol revisions "
        "2025-11-25 and 2026-07-28), to the caller the request's token names "
        "([the MCP tools](reference.md#mcp-tools), [the MCP server](agents.md#the-mcp-server); "
        "`serve --no-mcp` leaves it out) |"
    )
    return [*lines, ""]


def _index(document: dict[str, Any]) -> list[str]:
    lines = ["## Endpoints", "", "| method and path | what it does |", "|---|---|"]
    for path, methods in document["paths"].items():
        for method, doc in methods.items():
            title = f"{method.upper()} {path}"
            anchor = "".join(c for c in title.lower().replace(" ", "-") if c.isalnum() or c in "-_")
            lines.append(f"| [`{title}`](#{anchor}) | {_cell(doc.get('summary', ''))} |")
    return [*lines, ""]


def http_reference_markdown() -> str:
    """The HTTP API reference as Markdown."""
    document = openapi_document()
    info = document["info"]
    lines = [
        "# HTTP API reference",
        "",
        "Generated from the OpenAPI document `notewell serve` answers at `/openapi.json`, and from the route",
        "table it is made from: do not edit by hand (`python -m notewell.interfaces.http.reference >",
        "docs/http-api.md`). [Servers](servers.md) says how to start a server and make tokens.",
        "",
        _cell(info["description"]),
        "",
        "A request names its caller with `Authorization: Bearer <token>`; without one it reads public work",
        'only. Every error is a JSON object `{"error": {"code", "message"}}` whose code is in',
        "[the error table](reference.md#errors).",
        "",
    ]
    lines += _index(document)
    for path, methods in document["paths"].items():
        for method, doc in methods.items():
            lines += _operation(method, path, doc)
    lines += _shapes(document) + _outside(ROUTES)
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(http_reference_markdown())
