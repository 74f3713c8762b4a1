"""Fixtures for a live referee API on loopback: `app`, `live_server`, `api`.

* `app` (session): `create_app` on the session's real Redis, rate limits off,
  the admin token `ADMIN_TOKEN` below.
* `live_server` (session): that app under waitress (a threaded WSGI server; `cardarena serve` runs gevent's)
  in a background thread on a free 127.0.0.1 port; `.url`, `.api` (the
  `/api/v1` base), `.app`, `.store`.
* `api` (function): an `ApiClient` on the live server over a freshly
  emptied database. `api.account()` → token, `api.bot(token, ...)` → the
  new bot with its `secret`, `api.get/post/delete(path, token=...)`.
* `worker_pool` (function, with `api`): the real worker pool — two RQ
  worker processes and the recovery sweep (`worker.pool.WorkerPool`),
  stopped after the test; its matchmaker is off (`ladder_matches=0`), so
  the bots a test registers play only what it schedules. The workers' log is test-output/worker.log.

Emptying the database would also drop the server key kept in Redis, which
the workers read to derive the same bot secrets as the API; `reset_db` puts
it back.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis as redis_lib
import requests

ADMIN_TOKEN = "test-admin-token-0123456789abcdef"


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


@dataclass
class LiveServer:
    url: str
    app: object

    @property
    def api(self) -> str:
        return self.url + "/api/v1"

    @property
    def store(self):
        return self.app.extensions["cardarena.store"]


class ThreadedServer:
    """`app` under waitress on a free loopback port, served by a background thread.

    The thread runs waitress' event loop in short steps so `close()` stops it
    at once (waitress' own `run()` only returns on a signal).
    """

    def __init__(self, app, threads: int = 32) -> None:
        from waitress.server import create_server

        self.server = create_server(app, host="127.0.0.1", port=0, threads=threads,
                                    channel_timeout=60, ident="cardarena")
        self.port = self.server.effective_port
        self.url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="waitress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        server = self.server
        while not self._stop.is_set():
            server.asyncore.loop(timeout=0.05, map=server._map, count=1)
        for channel in list(server._map.values()):
            channel.close()
        server.task_dispatcher.shutdown()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def serve_in_thread(app, threads: int = 32) -> ThreadedServer:
    """Start `app` under waitress on a free loopback port (`.url`; `.close()` stops it)."""
    return ThreadedServer(app, threads)


@pytest.fixture(scope="session")
def live_server(app):
    server = serve_in_thread(app)
    yield LiveServer(url=server.url, app=app)
    server.close()


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


OUTPUT = Path(__file__).resolve().parents[1] / "test-output"


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
