"""The referee API on loopback, run as users run it: `cardarena serve`, a process of its own.

* `served_api(redis_url, settings)`: a context manager, `cardarena serve` (server/serve.py: gevent,
  the same server settings as production) started as a subprocess on 127.0.0.1 with `redis_url`
  and `settings` in its environment — the documented variables of docs/operate.md
  (CARDARENA_RATE_LIMITS=off, CARDARENA_TOKEN_RATE_LIMIT=..., CARDARENA_SIGNUP=invite...). It
  picks a free port itself (`--port 0`) and names it in the line it prints; it is waited for
  until `GET /api/v1/health` answers, stopped with SIGTERM (`.restart()` starts it again on the
  same port); its output goes to test-output/api-<name>-*.log. The tests' toy game (tests/server/toygame.py) is served through
  CARDARENA_GAMES, as any game that is not shipped would be.
* `live_server` (session): one such server with rate limits off and the admin token
  `ADMIN_TOKEN` below; `.url`, `.api` (the `/api/v1` base), `.store` (a `Store` on the same Redis),
  `.log_since(offset)`.
* `app` (session): `create_app` in this process on the same Redis, for tests of pure API
  behaviour through Flask's `app.test_client()` (no HTTP, no server).
* `api` (function): an `ApiClient` on the live server over a freshly
  emptied database. `api.account()` → token, `api.bot(token, ...)` → the
  new bot with its `secret`, `api.get/post/delete(path, token=...)`.
* `worker_pool` (function, with `api`): the real worker pool — two RQ
  worker processes and the recovery sweep (`worker.pool.WorkerPool`),
  stopped after the test; its matchmaker is off (`ladder_matches=0`), so
  the bots a test registers play only what it schedules. The workers' log is test-output/worker.log.

Emptying the database would also drop the server key kept in Redis, which
the served API and the workers read to derive the same bot secrets; `reset_db`
puts it back, so the session's server lives through every test.
"""

from __future__ import annotations

import collections
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis as redis_lib
import requests

from core.signals import PARENT_ENV
from tests.waiting import wait_answering, wait_until

ADMIN_TOKEN = "test-admin-token-0123456789abcdef"
ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "test-output"
#: the test game every served API knows besides the shipped ones (`games.PLUGINS_ENV`)
TEST_GAMES = "tests.server.toygame"


def reset_db(redis_url: str) -> None:
    """FLUSHDB, keeping the server key so API and workers still agree."""
    from core.store import SECRET_KEY_KEY

    client = redis_lib.Redis.from_url(redis_url)
    try:
        key = client.get(SECRET_KEY_KEY)
        client.flushdb()
        if key is not None:
            client.set(SECRET_KEY_KEY, key)
    finally:
        client.close()


@pytest.fixture(scope="session")
def app(redis_url):
    from server import create_app

    return create_app({
        "REDIS_URL": redis_url,
        "ADMIN_TOKEN": ADMIN_TOKEN,
        "RATELIMIT_ENABLED": False,
        "TESTING": True,
    })


class LiveServer:
    """`cardarena serve` in a subprocess on loopback (`served_api` starts and stops it)."""

    def __init__(self, redis_url: str, settings: Mapping[str, str], connections: int | None, log: Path) -> None:
        self.redis_url, self.log = redis_url, log
        self.port = 0  # until its first start: then the one it picked
        self.env = {**os.environ, "REDIS_URL": redis_url, "CARDARENA_ADMIN_TOKEN": ADMIN_TOKEN,
                    "CARDARENA_GAMES": TEST_GAMES, PARENT_ENV: str(os.getpid()), **settings}
        self.args = ["--connections", str(connections)] if connections else []
        self.proc: subprocess.Popen | None = None
        self._store = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api(self) -> str:
        return self.url + "/api/v1"

    @property
    def store(self):
        """A `Store` on the server's Redis (bot secrets derived from the same server key)."""
        if self._store is None:
            from core.store import Store, secret_key

            client = redis_lib.Redis.from_url(self.redis_url)
            self._store = Store(client, secret_key(client))
        return self._store

    def start(self) -> None:
        """Start the server and wait until it answers: at first on a port it picks itself
        (`--port 0`, read from the line it prints), then on that port again after a `stop`."""
        began = self.log_size()
        self.spawn()
        if not self.port:
            wait_until(lambda: self.proc.poll() is not None or self.announced_port(began), what="its address")
            assert self.proc.poll() is None, f"cardarena serve exited: {self.log_since(began)}"
            self.port = self.announced_port(began)
        wait_answering(self.api + "/health", self.proc, "cardarena serve", log=self.log.read_text)

    def announced_port(self, began: int) -> int | None:
        """The port in the line `cardarena serve` prints once serving (its log after `began`)."""
        found = re.search(r"^cardarena API on http://127\.0\.0\.1:(\d+)/", self.log_since(began), re.MULTILINE)
        return int(found.group(1)) if found else None

    def spawn(self) -> None:
        with open(self.log, "ab") as log:
            log.write(f"== cardarena serve --port {self.port} {' '.join(self.args)}\n".encode())
            log.flush()
            # the kernel ends the server with this process (PARENT_ENV): a killed test run leaves none behind
            self.proc = subprocess.Popen([sys.executable, "-m", "cardarena.cli", "serve", "--port", str(self.port),
                                          *self.args], cwd=ROOT, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT)

    def stop(self) -> None:
        """SIGTERM, as a process manager stops it, and wait until it is gone."""
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise AssertionError(f"cardarena serve ignored SIGTERM; its log: {self.log}") from None
        finally:
            self.proc = None

    def restart(self, settings: Mapping[str, str]) -> None:
        """Stop, then start again on the same port with `settings` changed, as an operator would."""
        self.stop()
        self.env.update(settings)
        self.start()

    def log_size(self) -> int:
        return self.log.stat().st_size

    def log_since(self, offset: int) -> str:
        """The server's output from byte `offset` on (`log_size()` taken before)."""
        with open(self.log, "rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")

    def close(self) -> None:
        self.stop()
        if self._store is not None:
            self._store.r.close()


#: how many servers of each name this test process has started (each logs to a file of its own)
STARTED: collections.Counter[str] = collections.Counter()


def log_path(name: str) -> Path:
    """test-output/api-<name>-<xdist worker>-<n>.log, emptied: the n-th server of that name here."""
    STARTED[name] += 1
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    path = OUTPUT / f"api-{name}-{worker}-{STARTED[name]}.log"
    OUTPUT.mkdir(exist_ok=True)
    path.write_bytes(b"")
    return path


@contextmanager
def served_api(redis_url: str, settings: Mapping[str, str] | None = None, *, connections: int | None = None,
               name: str = "test") -> Iterator[LiveServer]:
    """`cardarena serve` on `redis_url` with `settings` (environment variables) added; `connections`:
    its `--connections` (half of them may wait in long-polls). Logs to test-output/api-<name>-*.log."""
    server = LiveServer(redis_url, settings or {}, connections, log_path(name))
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def live_server(redis_url):
    with served_api(redis_url, {"CARDARENA_RATE_LIMITS": "off"}, name="session") as server:
        yield server


class ApiError(AssertionError):
    pass


class ApiClient:
    """A small `requests` wrapper: paths are relative to /api/v1."""

    admin_token = ADMIN_TOKEN

    def __init__(self, live: LiveServer) -> None:
        self.live = live
        self.base = live.api
        self.session = requests.Session()
        self.store = live.store

    def request(self, method: str, path: str, token: str | None = None, **kwargs) -> requests.Response:
        headers = dict(kwargs.pop("headers", {}) or {})
        if token:
            headers["Authorization"] = f"Bearer {token}"
        kwargs.setdefault("timeout", 60)
        return self.session.request(method, self.base + path, headers=headers, **kwargs)

    def get(self, path: str, token: str | None = None, **kwargs) -> requests.Response:
        return self.request("GET", path, token, **kwargs)

    def post(self, path: str, json=None, token: str | None = None, **kwargs) -> requests.Response:
        return self.request("POST", path, token, json=json, **kwargs)

    def delete(self, path: str, token: str | None = None, **kwargs) -> requests.Response:
        return self.request("DELETE", path, token, **kwargs)

    def ok(self, response: requests.Response, status: int) -> dict:
        if response.status_code != status:
            raise ApiError(f"{response.request.method} {response.url}: expected {status}, "
                           f"got {response.status_code}: {response.text[:500]}")
        return response.json()

    def account(self, name: str = "alice") -> str:
        """A new account's token."""
        return self.ok(self.post("/accounts", {"name": name}), 201)["token"]

    def bot(self, token: str, name: str = "bot", game: str = "duck-soup", kind: str = "polling",
            **fields) -> dict:
        """Register a bot; the answer includes its `secret`."""
        body = {"name": name, "game": game, "kind": kind, **fields}
        return self.ok(self.post("/bots", body, token=token), 201)

    def match(self, token: str, game: str, bots: list[str], **fields) -> dict:
        """Challenge: POST /matches, returns {id, status, rated}."""
        return self.ok(self.post("/matches", {"game": game, "bots": bots, **fields}, token=token), 202)


@pytest.fixture()
def api(live_server, redis_url):
    reset_db(redis_url)
    client = ApiClient(live_server)
    yield client
    client.session.close()


@pytest.fixture()
def worker_pool(api, redis_url):
    """A real worker pool on the database `api` just emptied, stopped after the test.

    One pool per test, not per session: tests without it referee matches by
    hand through the store, and no worker may be listening then.
    """
    from worker.pool import WorkerPool

    OUTPUT.mkdir(exist_ok=True)
    with WorkerPool(redis_url, n=2, sweep_every_s=0.5, log_path=str(OUTPUT / "worker.log"),
                    grace_s=5.0, ladder_matches=0) as pool:  # no matchmaker: tests/worker/test_ladder.py's
        yield pool
