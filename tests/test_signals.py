"""No orphans: every command that starts processes stops them all on SIGTERM and SIGINT.

Each command runs as a user runs it — a subprocess, `REDIS_URL` unset (so `serve`
and `worker` start the shared embedded Redis), `CARDARENA_HOME` in a temporary
directory (never the user's state), free ports. Once it is up, its descendants
are read from /proc (recursively, with their start times so a reused pid is not
mistaken for one of them); it is signalled, must exit, and each of them must be
gone. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis
import requests

from core.redis_server import free_port
from worker.pool import children_of

ROOT = Path(__file__).resolve().parents[1]
SIGNALS = [signal.SIGTERM, signal.SIGINT]


class Command:
    """`cardarena ARGS…` as a subprocess, its output collected by a thread."""

    def __init__(self, home: Path, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CARDARENA_QUEUE")}
        env.update(CARDARENA_HOME=str(home), COLUMNS="160", PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, "-m", "cardarena.cli", *args], cwd=ROOT, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def out(self) -> str:
        return "".join(self.lines)

    def wait_for(self, ready, what: str, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.proc.poll() is None, f"exited ({self.proc.returncode}) before {what}:\n{self.out}"
            assert time.monotonic() < deadline, f"not {what} after {timeout:.0f} s:\n{self.out}"
            time.sleep(0.1)

    def stop(self, sig: int, timeout: float = 60.0) -> int:
        self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            self.kill()
        self._reader.join(timeout=5)
        return code

    def kill(self) -> None:
        """Whatever happened, nothing of this test outlives it."""
        if self.proc.poll() is None:
            for pid in descendants(self.proc.pid):
                _kill(pid)
            self.proc.kill()
            self.proc.wait(timeout=10)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def start_time(pid: int) -> str | None:
    """The process' start time, None once it is gone (a zombie counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]


def descendants(pid: int) -> dict[int, str]:
    """Every process below `pid`, children of children included: pid -> start time."""
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child in children_of(todo.pop()):
            started = start_time(child)
            if started is not None and child not in found:
                found[child] = started
                todo.append(child)
    return found


def orphans(recorded: dict[int, str], grace: float = 5.0) -> list[str]:
    """The recorded processes still alive after a short grace (same pid, same start time),
    killed so that a failing test leaves nothing behind either: their command lines."""
    deadline = time.monotonic() + grace
    while True:
        alive = [pid for pid, started in recorded.items() if start_time(pid) == started]
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    found = []
    for pid in alive:
        try:
            found.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
        _kill(pid)
    return found


def answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code == 200
    except requests.RequestException:
        return False


def pings(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=1)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def shared_redis_url(home: Path) -> str | None:
    record = home / "redis.json"
    if not record.exists():
        return None
    return f"redis://127.0.0.1:{json.loads(record.read_text())['port']}/0"


@pytest.fixture()
def home(tmp_path):
    """The commands' CARDARENA_HOME; a shared Redis a failed test left running is stopped."""
    yield tmp_path
    record = tmp_path / "redis.json"
    if record.exists():
        info = json.loads(record.read_text())
        if info.get("started") and start_time(int(info["pid"])) == info["started"]:
            _kill(int(info["pid"]))


def check_stops_everything(command: Command, sig: int, up: dict[int, str]) -> int:
    assert up, f"the command started no process:\n{command.out}"
    code = command.stop(sig)
    assert code in (0, 130), f"exit {code}:\n{command.out}"
    assert orphans(up) == [], command.out
    return code


@pytest.mark.parametrize("sig", SIGNALS, ids=["SIGTERM", "SIGINT"])
def test_redis_in_the_foreground_stops_its_server(sig, home):
    port = free_port()
    command = Command(home, "redis", "--port", str(port), "--dir", str(home / "data"))
    try:
        command.wait_for(lambda: pings(f"redis://127.0.0.1:{port}/0"), "answering")
        up = descendants(command.proc.pid)
        check_stops_everything(command, sig, up)
        assert not pings(f"redis://127.0.0.1:{port}/0")
    finally:
        command.kill()


@pytest.mark.parametrize("sig", SIGNALS, ids=["SIGTERM", "SIGINT"])
def test_serve_stops_and_takes_the_shared_redis_it_started_with_it(sig, home):
    port = free_port()
    command = Command(home, "serve", "--port", str(port))
    try:
        command.wait_for(lambda: answers(f"http://127.0.0.1:{port}/api/v1/games"), "serving")
        url = shared_redis_url(home)
        up = descendants(command.proc.pid)
        assert url and pings(url)
        check_stops_everything(command, sig, up)
        assert not pings(url) and shared_redis_url(home) is None
    finally:
        command.kill()


@pytest.mark.parametrize("sig", SIGNALS, ids=["SIGTERM", "SIGINT"])
def test_worker_stops_its_processes_and_the_shared_redis(sig, home):
    command = Command(home, "worker", "-n", "1", "--grace", "2")
    try:
        command.wait_for(lambda: "cardarena worker:" in command.out, "started")
        command.wait_for(lambda: len(descendants(command.proc.pid)) >= 2, "running a worker and Redis")
        url = shared_redis_url(home)
        up = descendants(command.proc.pid)
        check_stops_everything(command, sig, up)
        assert not pings(url)
    finally:
        command.kill()


def a_match_played(api: str) -> bool:
    """Has a match of the tournaments the API at `api` lists been played?"""
    tournaments = requests.get(f"{api}/tournaments", timeout=10).json()["tournaments"]
    return any(requests.get(f"{api}/tournaments/{t['id']}", timeout=10).json()["progress"]["done"]
               for t in tournaments)


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS, ids=["SIGTERM", "SIGINT"])
def test_the_demo_stops_everything_mid_tournament(sig, home):
    """Ctrl-C (SIGINT) or SIGTERM once the demo's tournaments are under way: the default deals,
    still playing when it is stopped."""
    command = Command(home, "demo", "--port", "0", "--games", "duck-soup", "double-carre")
    try:
        command.wait_for(lambda: "scheduled" in command.out, "playing")
        api = re.search(r"referee API at (http://127\.0\.0\.1:\d+/api/v1)", command.out).group(1)
        command.wait_for(lambda: a_match_played(api), "a match of its tournaments played", timeout=120)
        up = descendants(command.proc.pid)
        assert len(up) >= 3  # its Redis and two workers
        assert check_stops_everything(command, sig, up) == 130
        assert "interrupted" in command.out and "stopped: no process left behind." in command.out
    finally:
        command.kill()


def test_serve_and_worker_share_one_redis_until_the_last_of_them_stops(home):
    port = free_port()
    serve = Command(home, "serve", "--port", str(port))
    worker = None
    try:
        serve.wait_for(lambda: answers(f"http://127.0.0.1:{port}/api/v1/games"), "serving")
        url = shared_redis_url(home)
        worker = Command(home, "worker", "-n", "1", "--grace", "2")
        worker.wait_for(lambda: "cardarena worker:" in worker.out, "started")
        assert url in worker.out  # the two terminals meet in one Redis
        serve.stop(signal.SIGTERM)
        assert pings(url), "the worker still uses it"
        worker.stop(signal.SIGTERM)
        deadline = time.monotonic() + 10
        while pings(url) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not pings(url) and shared_redis_url(home) is None  # the last one stopped it
    finally:
        serve.kill()
        if worker is not None:
            worker.kill()


@pytest.mark.slow
def test_serve_stopping_answers_its_waiting_long_polls_never_with_an_error(home):
    """SIGTERM while a long-poll waits: the poll ends at once with an empty, well-formed 200
    (the bot polls again, elsewhere) rather than being cut off by the stop's grace with a 500."""
    port = free_port()
    serve = Command(home, "serve", "--port", str(port))
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        serve.wait_for(lambda: answers(f"{api}/games"), "serving")
        token = requests.post(f"{api}/accounts", json={"name": "waiter"}, timeout=30).json()["token"]
        bot = requests.post(f"{api}/bots", json={"name": "w", "game": "duck-soup", "kind": "polling"},
                            headers={"Authorization": f"Bearer {token}"}, timeout=30).json()
        answer: dict = {}

        def poll() -> None:
            got = requests.get(f"{api}/bots/me/turns", params={"wait": 30},
                               headers={"Authorization": f"Bearer {bot['secret']}"}, timeout=60)
            answer.update(status=got.status_code, body=got.json())

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        # a polling bot is online while one of its long-polls is open: the poll is waiting
        serve.wait_for(lambda: requests.get(f"{api}/bots/{bot['id']}", timeout=30).json()["status"] == "online",
                       "the long-poll waiting")
        assert serve.stop(signal.SIGTERM) in (0, 130), serve.out
        poller.join(timeout=30)
        assert answer == {"status": 200, "body": {"turns": []}}, serve.out
    finally:
        serve.kill()
