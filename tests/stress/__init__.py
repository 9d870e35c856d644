"""Quick versions of the stress/ harnesses; ``load_harness`` imports one by its file name."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

STRESS = Path(__file__).resolve().parents[2] / "stress"


def load_harness(name: str) -> ModuleType:
    """``stress/<name>.py`` as a module (stress/ is a folder of scripts, not a package)."""
    module_name = f"notewell_stress_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, STRESS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]
