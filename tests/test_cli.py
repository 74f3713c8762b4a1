"""`cardarena` itself: bare, it says what it can do and exits 0; `--version` says which version."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cardarena(*args: str, module: str = "cardarena.cli") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


def test_bare_cardarena_prints_its_help_and_exits_0():
    done = cardarena()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: cardarena") and "demo" in done.stdout and "serve" in done.stdout
    assert done.stderr == ""


def test_version_says_the_installed_version():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    done = cardarena("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"cardarena {version}", done
    sdk = cardarena("--version", module="sdk.cli")  # the SDK's own command says it as well
    assert sdk.returncode == 0 and sdk.stdout.startswith(f"cardarena {version}"), sdk


def test_an_unknown_command_is_still_an_error():
    done = cardarena("nonsense")
    assert done.returncode == 2 and "invalid choice" in done.stderr
