"""kill -9 of `cardarena worker` leaves nothing running: its workers and dispatcher die with it,
so no process plays on unsupervised and a new pool never doubles them (docs/api.md §6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from worker.pool import children_of


def alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_for(condition, timeout: float = 60.0, what: str = "condition"):
    end = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < end, what
        time.sleep(0.05)
    return value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_kill_9_of_the_pool_kills_its_workers_and_dispatcher(redis_url, tmp_path):
    env = dict(os.environ, REDIS_URL=redis_url, CARDARENA_QUEUE="orphans")
    pool = subprocess.Popen([sys.executable, "-m", "cardarena.cli", "worker", "-n", "2"], env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    children: list[int] = []
    try:
        # two workers and the dispatcher's two parts, once each has started
        children = wait_for(lambda: (c := children_of(pool.pid)) and len(c) >= 4 and c, what="the pool's children")
        os.kill(pool.pid, signal.SIGKILL)
        pool.wait(10)
        wait_for(lambda: not any(alive(pid) for pid in children), timeout=30, what="children outlived the pool")
    finally:
        if pool.poll() is None:
            os.kill(pool.pid, signal.SIGKILL)
        for pid in children:  # never leave one behind, whatever the test found
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
