"""`cardarena demo` never disturbs a platform: on its own Redis by default, whatever
`REDIS_URL` says; on the platform's Redis only when told (`--redis-url`), and then
it takes only its own jobs, sweeps only its own, and retires its bots at the end.

The "platform" is the state a running one keeps in Redis, built through the store
with no worker of its own running: a queued tournament, a match its (dead) worker
dropped — exactly what a wrong sweep would re-enqueue — its bots and its ladder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from core import sandbox
from core.redis_server import EmbeddedRedis
from core.store import Store, secret_key
from core.store.jobs import QUEUE

ROOT = Path(__file__).resolve().parents[1]
GAME = "duck-soup"


def run_demo(home: Path, *args: str, redis_url_env: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CARDARENA_QUEUE")}
    env.update(COLUMNS="160", CARDARENA_HOME=str(home))
    if redis_url_env:
        env["REDIS_URL"] = redis_url_env
    demo = subprocess.run([sys.executable, "-m", "cardarena.cli", "demo", "--port", "0", "--deals", "1",
                           "--games", GAME, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=180)
    out = demo.stdout + demo.stderr
    assert demo.returncode == 0, out
    return out


@pytest.fixture()
def platform():
    """A platform's state on a Redis of its own, as `(store, snapshot())`."""
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        store = Store(client, secret_key(client))
        bots = [store.create_bot("a_platform", name, GAME, "python",
                                 entrypoint="example_bots.random:RandomBot")[0]["id"]
                for name in ("heuristic", "random")]
        for i, bot in enumerate(bots):
            store.save_rating(GAME, bot, 30.0 - i, 5.0)
        t = store.create_tournament(GAME, bots, seats=2, deals=1, duplicate=True, seed=1, options={})
        store.enqueue("tournament", [t["id"]])
        dropped = store.create_match(GAME, bots, 2, {})
        store.enqueue("match", [dropped["id"]])
        client.lrem(f"rq:queue:{QUEUE}", 0, f"match-{dropped['id']}")  # its worker died with it

        def snapshot() -> dict:
            return {
                "queue": client.lrange(f"rq:queue:{QUEUE}", 0, -1),
                "active": sorted(store.active_jobs()),
                "tournament": store.get_tournament(t["id"])["status"],
                "dropped": store.get_match(dropped["id"])["status"],
                "bots": [store.get_bot(b) for b in bots],
                "ladder": [(r["bot"], r["rating"]) for r in store.rankings(GAME)],
            }

        client.url = server.url
        yield client, store, snapshot
        client.close()


@pytest.mark.slow
def test_by_default_the_demo_runs_on_its_own_redis_whatever_REDIS_URL_says(platform, tmp_path):
    client, _, snapshot = platform
    before, keys = snapshot(), sorted(client.keys("*"))
    out = run_demo(tmp_path, redis_url_env=client.url)
    assert "fresh embedded Redis" in out and "REDIS_URL is not used" in out
    assert snapshot() == before and sorted(client.keys("*")) == keys  # not one key written


@pytest.mark.slow
def test_with_redis_url_the_demo_leaves_the_platforms_jobs_bots_and_ladder_untouched(platform, tmp_path):
    client, store, snapshot = platform
    before = snapshot()
    out = run_demo(tmp_path, "--redis-url", client.url)
    assert f"{GAME}: tournament" in out and "(finished)" in out, out
    assert snapshot() == before  # its queued job, its dropped match, its bots and ladder
    demo_bots = [b for b in store.list_bots(GAME) if "(demo " in b["name"]]
    # heuristic, random, webhook and polling (one game: both remote kinds join it), and the one
    # submitted where a sandbox can host it; all retired
    submitted = 1 if sandbox.unavailable() is None else 0
    assert len(demo_bots) == 4 + submitted and all(b["retired"] for b in demo_bots)  # so they left the ladder
    house = [b for b in store.list_bots(GAME) if b["owner"] == "admin" and b["name"].startswith("house ")]
    assert house and all(b["ladder"] and not b["retired"] for b in house)  # the platform's house bots stay
    assert client.keys("*cardarena-demo-*") == [] and client.keys("jobs:active:*") == []  # its queue is gone
    assert str(tmp_path / "demo-workers.log") in out and str(tmp_path / "demo-server.log") in out
    assert "/tournaments/" not in out  # no URL printed once nothing answers it
