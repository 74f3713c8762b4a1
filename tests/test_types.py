"""The type checker checks every module it is given, none excepted.

CI runs mypy over core, worker, sdk and games ([tool.mypy] in pyproject.toml) and fails on any
error. No module has its errors ignored: a module that is not type-clean fails CI, from its
first commit.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def mypy_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]


def test_no_module_has_its_errors_ignored():
    assert "ignore_errors" not in mypy_config()
    ignored = [o["module"] for o in mypy_config().get("overrides", []) if "ignore_errors" in o]
    assert ignored == []


def test_mypy_checks_the_four_packages():
    assert sorted(mypy_config()["files"]) == ["core", "games", "sdk", "worker"]
