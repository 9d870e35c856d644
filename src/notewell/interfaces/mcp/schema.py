"""A tool's input schema as sent to clients: what the arguments are, without pydantic's extras.

Every agent session is sent the definition of every tool it is offered, so the schema drops
what tells a caller nothing: the titles pydantic makes from names (``"title": "Created After"``
beside ``created_after``), and the null beside each optional argument's type (``anyOf
[string, null]`` with ``default: null``: an argument left out is the same). The server still
checks arguments against the full model, so a client that sends null is answered as before.
"""

from __future__ import annotations

from typing import Any

__all__ = ["lean_schema"]

_NULL = {"type": "null"}
_MAPS = ("properties", "$defs", "patternProperties")  # name -> schema: names are not keywords
_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_NODES = ("items", "additionalProperties", "not")


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """*schema* without titles, null alternatives and null defaults (a new dict)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _MAPS and isinstance(value, dict):
            out[key] = {name: lean_schema(node) if isinstance(node, dict) else node for name, node in value.items()}
        elif key in _LISTS and isinstance(value, list):
            out[key] = [lean_schema(node) if isinstance(node, dict) else node for node in value]
        elif key in _NODES and isinstance(value, dict):
            out[key] = lean_schema(value)
        else:
            out[key] = value
    if "default" in out and out["default"] is None:
        del out["default"]
    alternatives = out.get("anyOf")
    if isinstance(alternatives, list) and _NULL in alternatives:
        rest = [node for node in alternatives if node != _NULL]
        del out["anyOf"]
        if len(rest) == 1 and isinstance(rest[0], dict):
            out = {**rest[0], **out}
        elif rest:
            out["anyOf"] = rest
    return out
