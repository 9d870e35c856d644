"""Layers import only downward; the public API is explicit; `import notewell` stays light."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import notewell

PKG = pathlib.Path(notewell.__file__).parent
ORDER = ["errors", "model", "storage", "search", "services", "interfaces"]


def _layer(module: str) -> int | None:
    head = module.split(".")[0]
    return ORDER.index(head) if head in ORDER else None


def test_layers_import_only_downward():
    problems = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG).with_suffix("")
        parts = rel.parts
        if parts[0] in ("__init__", "__main__"):
            continue
        own = _layer(parts[0])
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = list(parts[:-1])[: len(parts) - node.level] if node.level > 1 else list(parts[:-1])
                target = ".".join(base + ([node.module] if node.module else []))
                if not target:
                    target = node.names[0].name
                layer = _layer(target)
                if layer is not None and own is not None and layer > own:
                    problems.append(f"{rel} imports {target}")
    assert problems == []


def test_core_has_no_interface_imports():
    banned = ("argparse", "click", "http", "urllib", "asyncio", "starlette", "mcp")
    for layer in ("model", "storage", "search", "services"):
        for path in (PKG / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    assert "interfaces" not in node.module, path
                for name in names:
                    assert name.split(".")[0] not in banned, (path, name)


def test_public_api_is_explicit():
    helpers = {"TYPE_CHECKING", "Any", "annotations", "errors", "model", "storage", "search", "services", "interfaces"}
    helpers |= {"compat"}  # a submodule, present once imported
    public = sorted(n for n in dir(notewell) if not n.startswith("_") and n not in helpers)
    assert sorted(set(notewell.__all__) - {"__version__"}) == public
    for name in notewell.__all__:
        assert getattr(notewell, name) is not None
    assert notewell.open is notewell.open_store


def test_every_error_has_a_stable_code():
    from notewell import errors

    codes = {}
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, errors.NotewellError)
        codes[cls.code] = name
    assert {
        "not_found",
        "invalid_id",
        "invalid_note",
        "too_large",
        "invalid_query",
        "invalid_argument",
        "storage",
        "busy",
    } <= set(codes)
    from notewell.interfaces.cli import EXIT_CODES

    assert set(codes) - {"error"} <= set(EXIT_CODES)


def test_import_is_light():
    code = "import sys, notewell; print([m for m in ('argparse', 'http', 'asyncio', 'numpy') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
