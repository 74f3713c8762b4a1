"""The SDK installs alone (`cardarena-sdk`, packaging/sdk): bots play locally and on a platform.

A fresh virtualenv gets only that distribution (from a copy of this
checkout, so no build leftovers leak in either way; its two dependencies from
PyPI). There: flask and the rest of the platform are missing, `cardarena
play` runs, and a `serve` bot and a `connect` bot started from it play a
match on a platform started from the test's own environment.
"""

from __future__ import annotations

import ast
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from sdk import Client

ROOT = Path(__file__).resolve().parents[2]
SDK_PACKAGES = ("sdk", "games", "example_bots")
#: what the SDK's own modules may import beyond the standard library and themselves
DEPENDENCIES = {"requests", "waitress"}
#: optional imports and where alone they may appear (with a fallback beside them)
OPTIONAL = {"rich": {"sdk/textout.py"}}


def imports_of(path: Path) -> set[str]:
    """Top-level names of every module `path` imports, at module level or inside functions."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_sdks_packages_import_only_the_standard_library_requests_and_waitress():
    allowed = set(sys.stdlib_module_names) | set(SDK_PACKAGES) | DEPENDENCIES | {"__future__"}
    wrong = {}
    for package in SDK_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            extra = {name for name in imports_of(path) - allowed if rel not in OPTIONAL.get(name, ())}
            if extra:
                wrong[rel] = sorted(extra)
    assert not wrong, f"the SDK alone would not import these: {wrong}"


def test_the_sdk_distribution_holds_its_packages_with_two_dependencies_and_the_platforms_version():
    sdk = tomllib.loads((ROOT / "packaging" / "sdk" / "pyproject.toml").read_text())
    platform = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert sdk["project"]["name"] == "cardarena-sdk"
    assert sdk["project"]["version"] == platform["project"]["version"]
    assert sorted(d.split(">")[0] for d in sdk["project"]["dependencies"]) == sorted(DEPENDENCIES)
    assert sdk["tool"]["setuptools"]["packages"]["find"]["include"] == [f"{p}*" for p in ("games", "sdk", "example_bots")]
    assert sdk["project"]["scripts"]["cardarena"] == "sdk.cli:main"


# -- the SDK installed alone ---------------------------------------------------------

def _clean_env() -> dict[str, str]:
    """This environment without anything pointing Python at this checkout."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def _pypi_reachable(pip: Path, scratch: Path) -> bool:
    probe = subprocess.run([str(pip), "download", "--no-deps", "--no-cache-dir", "-d", str(scratch),
                            "--index-url", "https://pypi.org/simple", "waitress"],
                           capture_output=True, text=True, timeout=60, env=_clean_env())
    return probe.returncode == 0


@pytest.fixture(scope="module")
def sdk_venv(tmp_path_factory) -> Path:
    """A virtualenv holding `cardarena-sdk` and its dependencies, nothing else; its bin folder."""
    base = tmp_path_factory.mktemp("sdk-dist")
    copy = base / "src"
    for package in SDK_PACKAGES:
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "packaging" / "sdk", copy / "packaging" / "sdk",
                    ignore=shutil.ignore_patterns("build", "*.egg-info"))
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120, env=_clean_env())
    pip = venv / "bin" / "pip"
    install = subprocess.run([str(pip), "install", "--no-cache-dir", "-q", str(copy / "packaging" / "sdk")],
                             capture_output=True, text=True, timeout=300, env=_clean_env(), cwd=base)
    if install.returncode != 0:
        if os.environ.get("CI") != "true" and not _pypi_reachable(pip, base / "probe"):
            pytest.skip("pip cannot reach PyPI to install the SDK's dependencies")
        pytest.fail(f"pip install ./packaging/sdk failed:\n{install.stdout}\n{install.stderr}")
    return venv / "bin"


def run_in(bin_dir: Path, *args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=_clean_env())


@pytest.mark.slow
def test_the_sdk_alone_lacks_the_platform_and_plays_locally(sdk_venv, tmp_path):
    where = run_in(sdk_venv, "python", "-c", "import sdk, games, example_bots, requests, waitress; "
                   "print(sdk.__file__)", cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(sdk_venv.parent)), "the venv's sdk, not this checkout's"
    for platform_only in ("flask", "redis", "rq", "rich", "server", "worker", "cardarena"):
        missing = run_in(sdk_venv, "python", "-c", f"import {platform_only}", cwd=tmp_path)
        assert missing.returncode != 0 and "ModuleNotFoundError" in missing.stderr, platform_only
    played = run_in(sdk_venv, "cardarena", "play", "duck-soup", "example_bots.random:RandomBot",
                    "example_bots.duck_soup:DuckSoupHeuristic", "--deals", "3", "--seed", "1", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    lines = played.stdout.splitlines()
    assert "forfeits" in lines[1] and lines[3].split()[:3] == ["1", "example_bots.duck_soup:DuckSoupHeuristic", "6"]
    hosted = run_in(sdk_venv, "cardarena", "serve", cwd=tmp_path)  # the platform's subcommand: a hint
    assert hosted.returncode == 2 and "comes with the platform's install" in hosted.stderr
    compared = run_in(sdk_venv, "cardarena", "compare", "example_bots.duck_soup:DuckSoupHeuristic",
                      "example_bots.random:RandomBot", "--game", "duck-soup", "--option", "deal_only=true",
                      "--deals", "200", cwd=tmp_path)
    assert compared.returncode == 0 and compared.stdout.splitlines()[-1].startswith("H1: "), compared.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, process: subprocess.Popen, within_s: float = 30) -> None:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if process.poll() is not None:
            raise AssertionError(f"the bot exited: {process.communicate()[1][-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on port {port} after {within_s} s")


@pytest.mark.slow
def test_serve_and_connect_bots_from_the_sdk_alone_play_a_match_on_a_platform(sdk_venv, tmp_path, api,
                                                                              worker_pool):
    client = Client(api.live.url)
    client.create_account("sdk-author")
    port = _free_port()
    hook = client.register_bot("hosted", "duck-soup", kind="webhook", url=f"http://127.0.0.1:{port}/")
    polled = client.register_bot("polled", "duck-soup", kind="polling")
    python = str(sdk_venv / "python")
    bots = [
        subprocess.Popen([python, "-m", "example_bots.random", "--serve", str(port)], cwd=tmp_path,
                         env={**_clean_env(), "CARDARENA_BOT_SECRET": hook.secret},
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True),
        subprocess.Popen([python, "-m", "example_bots.random", "--connect", api.live.url, "--wait", "2"],
                         cwd=tmp_path, env={**_clean_env(), "CARDARENA_BOT_SECRET": polled.secret},
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True),
    ]
    try:
        _wait_listening(port, bots[0])
        match = client.wait_match(client.challenge("duck-soup", [hook, polled], seed=5), timeout=90)
    finally:
        for bot in bots:
            bot.terminate()
        for bot in bots:
            try:
                bot.wait(timeout=10)
            except subprocess.TimeoutExpired:
                bot.kill()
                bot.wait(timeout=10)
    assert match.status == "finished"
    full = api.get(f"/matches/{match.id}").json()
    assert full["log"] and not [e for e in full["log"] if "fault" in e]  # both answered every turn
    assert {e["seat"] for e in full["log"]} == {0, 1}
