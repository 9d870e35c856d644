"""Every cross-reference a docstring makes (``:func:`…```, ``:class:`…```, ``:mod:`…```…) names
something that exists: a module renamed or a function moved fails here, not in a reader's head."""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re
from types import ModuleType

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):`~?([A-Za-z_.][A-Za-z0-9_.]*)`")


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _dotted(name: str) -> bool:
    """Whether the module or attribute path *name* (``notewell.a.b.C.m``) exists."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if hasattr(obj, part):
                obj = getattr(obj, part)
            elif isinstance(obj, ModuleType):
                try:
                    obj = importlib.import_module(f"{obj.__name__}.{part}")
                except ImportError:
                    return False
            else:
                return False
        return True
    return False


def _resolves(target: str, module: ModuleType, package: str) -> bool:
    if target.startswith("."):  # relative to the module's package, as an import would be
        up = len(target) - len(target.lstrip("."))
        base = package.split(".")[: len(package.split(".")) - (up - 1)]
        return _dotted(".".join(base) + "." + target.lstrip("."))
    if target.startswith("notewell.") or target == "notewell":
        return _dotted(target)
    first, _, rest = target.partition(".")
    if first in vars(module):  # a name the module defines or imports
        obj = vars(module)[first]
        for part in rest.split(".") if rest else []:
            if not hasattr(obj, part):
                return False
            obj = getattr(obj, part)
        return True
    if _dotted(f"{package}.{target}"):  # a module beside it
        return True
    classes = [v for v in vars(module).values() if inspect.isclass(v) and v.__module__ == module.__name__]
    return not rest and any(hasattr(cls, first) for cls in classes)  # a method of its own class


@pytest.mark.slow
def test_every_docstring_reference_names_something_that_exists():
    dangling, checked = [], 0
    for path in sorted((SRC / "notewell").rglob("*.py")):
        targets = ROLE.findall(path.read_text())
        if not targets:
            continue
        name = _module_name(path)
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional extra this environment lacks: the other modules are still read
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        dangling += [f"{name}: {t}" for t in targets if not _resolves(t, module, package)]
        checked += 1
    assert checked > 50 and dangling == []
