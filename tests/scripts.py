"""Load one of the project's scripts (bench/*.py, docs/gen_rules.py) as a module, for its tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_script(relative: str, name: str | None = None) -> ModuleType:
    """The module `relative` (to the project's root) defines, run once under `name`."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
