"""Layers import only downward; the public API is explicit; `import notewell` stays light."""

from __future__ import annotations

import ast
import pathlib
import re
import subprocess
import sys

import pytest

import notewell

PKG = pathlib.Path(notewell.__file__).parent
ORDER = ["version", "errors", "settings", "model", "search", "backends", "services", "agents", "adapters", "interfaces"]
# Top-level modules that are facades over a layer: they count as that layer.
FACADES = {"compat": "interfaces", "notebook": "agents", "__main__": "interfaces"}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PKG.rglob("*.py")}


def _imports(module: str) -> dict[str, int]:
    """Every notewell module *module* imports, anywhere in it (top level, in a function, under
    TYPE_CHECKING), with the line of the first such import."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    out: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # `from .pkg import name` imports the submodule pkg.name when there is one
            targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in MODULES else origin for a in node.names]
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]  # `import notewell.x.y` names a module's attribute
            if target and target != module and target.startswith("notewell"):
                out.setdefault(target, node.lineno)
    return out


GRAPH = {m: _imports(m) for m in MODULES}


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2:
        return None  # the package itself: the facade over everything
    head = FACADES.get(parts[1], parts[1])
    return ORDER.index(head) if head in ORDER else None


def test_every_module_has_a_layer():
    assert [m for m in MODULES if m != "notewell" and _layer(m) is None] == []


def test_layers_import_only_downward():
    problems = []
    for module, targets in GRAPH.items():
        own = _layer(module)
        for target, line in targets.items():
            layer = _layer(target)
            if own is not None and layer is not None and layer > own:
                problems.append(f"{module}:{line} imports {target}")
            if target == "notewell" and module != "notewell":
                problems.append(f"{module}:{line} imports the package facade")
    assert problems == []


def _cycles() -> list[list[str]]:
    """Strongly connected sets of modules (Tarjan's algorithm), each a cycle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert _cycles() == []


def test_only_the_opening_module_names_a_backend():
    # Above the backends, code holds a NoteService and its Backend Protocol; only opening.py picks
    # SQLite or PostgreSQL, so a new backend is one package and a line there.
    concrete = ("notewell.backends.sqlite", "notewell.backends.postgres")
    found = [
        f"{module}:{line} imports {target}"
        for module, targets in GRAPH.items()
        if module.startswith(("notewell.services", "notewell.agents", "notewell.adapters"))
        and module != "notewell.services.opening"
        for target, line in targets.items()
        if target.startswith(concrete)
    ]
    assert found == []
    assert any(t.startswith(concrete) for t in GRAPH["notewell.services.opening"])  # the check sees an import


@pytest.mark.slow
def test_psycopg_is_imported_from_one_package():
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            if any(n.split(".")[0] == "psycopg" for n in names):
                found.append(module)
    assert found and all(m.startswith("notewell.backends.postgres.") for m in found), found


def test_the_checks_see_lazy_absolute_and_relative_imports():
    # An import made inside a function, an absolute one, and one under TYPE_CHECKING.
    assert "notewell.backends.postgres.backend" in GRAPH["notewell.services.opening"]
    assert "notewell.interfaces.cli.app" in GRAPH["notewell.__main__"]
    assert "notewell.services.contract" in GRAPH["notewell.interfaces.cli.server"]
    # The model importing the CLI (as a lazy import would) is caught twice: upward, and a cycle.
    GRAPH["notewell.model.slug"]["notewell.interfaces.cli.app"] = 1
    try:
        with pytest.raises(AssertionError):
            test_layers_import_only_downward()
        assert any("notewell.model.slug" in group for group in _cycles())
    finally:
        del GRAPH["notewell.model.slug"]["notewell.interfaces.cli.app"]
    assert _cycles() == []


@pytest.mark.slow
def test_core_has_no_interface_imports():
    banned = ("argparse", "click", "http", "urllib", "asyncio", "starlette", "mcp")
    for layer in ("model", "search", "backends", "services", "agents"):
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


_SQL = re.compile(r"\b(SELECT\s.+\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX))\b", re.I)


def _code_strings(path: pathlib.Path) -> list[tuple[int, str]]:
    """The string literals of a module's code (docstrings left out: they may name SQL)."""
    tree = ast.parse(path.read_text())
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


@pytest.mark.slow
@pytest.mark.parametrize("layer", ["model", "search", "services", "agents", "interfaces"])
def test_sql_lives_in_the_backends_only(layer):
    found = [
        f"{path.relative_to(PKG)}:{line}: {text[:60]!r}"
        for path in (PKG / layer).rglob("*.py")
        for line, text in _code_strings(path)
        if _SQL.search(text)
    ]
    assert not found, found


def test_the_sql_check_sees_a_statement():
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
        fh.write('"""SELECT x FROM doc is fine."""\nQ = "SELECT id FROM notes WHERE x = ?"\n')
    try:
        assert [text for _, text in _code_strings(pathlib.Path(fh.name)) if _SQL.search(text)] == [
            "SELECT id FROM notes WHERE x = ?"
        ]
    finally:
        pathlib.Path(fh.name).unlink()


def test_public_api_is_explicit():
    helpers = {"TYPE_CHECKING", "Any", "annotations", "errors", "model", "search", "services", "interfaces"}
    helpers |= {"agents", "backends", "adapters"}
    helpers |= {"version", "settings"}
    helpers |= {"compat"}  # a submodule, present once imported
    public = sorted(n for n in dir(notewell) if not n.startswith("_") and n not in helpers)
    assert sorted(set(notewell.__all__) - {"__version__"}) == public
    for name in notewell.__all__:
        assert getattr(notewell, name) is not None
    assert notewell.open is notewell.open_store


def test_every_error_has_a_stable_code():
    from notewell import errors

    codes = {}
    for name in (n for n in errors.__all__ if n.endswith("Error")):  # beside them: the table of codes
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
    from notewell.interfaces.cli.app import EXIT_CODES

    assert set(codes) - {"error"} <= set(EXIT_CODES)


def test_import_is_light():
    code = "import sys, notewell; print([m for m in ('argparse', 'http', 'asyncio', 'numpy') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.slow
def test_no_function_is_over_a_hundred_lines():
    import ast

    long = set()
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno >= 100:
                long.add(f"{path.relative_to(PKG).as_posix()}:{node.name}")
    assert long == set(), "split it by concern"
