"""Load modules of the installed hello-agents package alone: its package ``__init__`` files import
optional extras (search, RL, protocols) that the tests neither need nor install."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PACKAGES = ("hello_agents", "hello_agents.core", "hello_agents.tools", "hello_agents.tools.builtin")


@contextmanager
def hello_agents_alone() -> Iterator[None]:
    """While open, ``import hello_agents.x.y`` runs only x/y.py (and what it imports itself)."""
    spec = importlib.util.find_spec("hello_agents")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("hello-agents is not installed")
    root = spec.submodule_search_locations[0]
    saved = {k: v for k, v in sys.modules.items() if k == "hello_agents" or k.startswith("hello_agents.")}
    for name in PACKAGES:
        package = types.ModuleType(name)
        package.__path__ = [root + name.removeprefix("hello_agents").replace(".", "/")]
        sys.modules[name] = package
    try:
        yield
    finally:
        for name in [k for k in sys.modules if k == "hello_agents" or k.startswith("hello_agents.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def load(module: str) -> types.ModuleType:
    return importlib.import_module(module)
