"""Hosted bots on the real sandbox (bubblewrap): code stored in the session's folder (the API
and the workers share it: tests/conftest.py `code_dir`), each match refereed by the real match
runner on the session's Redis.

Where bubblewrap cannot run, these tests skip on a developer's machine and fail under CI=true
(as the browser tests do): CI always runs the sandbox."""

from __future__ import annotations

import base64
import os
import textwrap

import pytest

from core import hosted_code, sandbox
from core.store import Store, secret_key
from tests.worker.bots import ENTRY
from worker.drivers import hosted
from worker.match_runner import MatchRunner

GAME = "double-carre"
SEED = 5


@pytest.fixture(autouse=True)
def sandbox_here():
    reason = sandbox.unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI runs the sandbox: {reason}")
        pytest.skip(reason)


@pytest.fixture(autouse=True)
def _hosted_bots_stopped():
    """The hosted bots this process started, stopped after each test."""
    yield
    hosted.stop_all()


@pytest.fixture()
def store(redis_client):
    return Store(redis_client, secret_key(redis_client))


def stored(source: str, entrypoint: str = "mybot:MyBot") -> str:
    """The sha256 of `source` (one Python file) stored as a hosted bot's code."""
    code = base64.b64encode(textwrap.dedent(source).encode()).decode()
    return hosted_code.store(hosted_code.files_of(code, entrypoint))


def hosted_bot(store, source: str, name: str = "hosted") -> str:
    number = store.r.incr("test:bot-names")
    bot, _ = store.create_bot("acct_test", f"{name}{number}", GAME, "hosted", entrypoint="mybot:MyBot",
                              code=stored(source))
    return bot["id"]


def house_bot(store, cls: str = "First") -> str:
    number = store.r.incr("test:bot-names")
    bot, _ = store.create_bot("acct_test", f"house{number}", GAME, "python", entrypoint=ENTRY + cls)
    return bot["id"]


def play(store, source: str, move_timeout_ms: int = 2000, max_faults: int = 2) -> tuple[dict, list[dict]]:
    """A match of the hosted bot `source` (seat 0) against a house bot, run to its end by the match
    runner here; the finished match and its log."""
    seats = [hosted_bot(store, source), house_bot(store)]
    match = store.create_match(GAME, seats, SEED, {}, time_bank_ms=0, move_timeout_ms=move_timeout_ms,
                               max_faults=max_faults)
    status = MatchRunner(store, match["id"]).run()
    assert status == "finished"
    return store.get_match(match["id"]), store.match_log(match["id"])


def sandbox_processes() -> list[int]:
    """Pids of every process running as a uid this process gave a sandbox (it runs as root)."""
    assert os.getuid() == 0, "each sandbox has a uid of its own only when the worker runs as root"
    mine = (sandbox.UID_BASE + (os.getpid() % 4_000_000) * 1024) // 1024
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as f:
                status = f.read()
        except OSError:
            continue
        uid = int(status.split("\nUid:")[1].split()[0])
        if uid // 1024 == mine:
            found.append(int(name))
    return found
