"""`cardarena demo` never disturbs a platform: on the platform's Redis only when told
(`--redis-url`), and then it takes only its own jobs, sweeps only its own, and retires
its bots at the end. The platform is tests/demo_platform.py's. That by default the demo
runs on its own Redis, whatever `REDIS_URL` says, tests/test_demo.py checks on its run
with `--stay`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core import sandbox
from tests.demo_platform import platform_state

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
    """A platform's state on a Redis of its own, as `(client, store, snapshot)`."""
    with platform_state(GAME) as state:
        yield state


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
