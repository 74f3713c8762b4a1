"""`cardarena` itself: bare, it says what it can do and exits 0; `--version` says which version;
a subcommand imports its own module and no other's (the tests start hundreds of them)."""

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


def test_a_subcommand_imports_no_other_subcommands_module():
    from cardarena.cli import COMMANDS

    done = subprocess.run([sys.executable, "-c", "import sys\nfrom cardarena.cli import main\ntry:\n"
                           "    main(['redis', '--help'])\nexcept SystemExit:\n    pass\n"
                           "print(sorted(m for m in sys.modules if m.startswith(('cardarena', 'server', 'worker', 'sdk'))))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    imported = done.stdout.strip().splitlines()[-1]
    assert "'cardarena.redis_command'" in imported
    assert [m for name, m in COMMANDS.items() if name != "redis" and f"'{m}'" in imported] == []
