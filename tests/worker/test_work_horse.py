"""A worker that forks a work horse per job (`cardarena worker --fork`): kill -9 of the worker
takes its horse with it, so no horse referees on unsupervised while the sweep gives its match
to another worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.signals import PARENT_ENV
from core.store import Store, secret_key
from worker.pool import children_of

ROOT = Path(__file__).resolve().parents[2]
QUEUE = "horse-test"


def wait_for(predicate, what: str, timeout: float = 20.0):
    end = time.monotonic() + timeout
    while True:
        found = predicate()
        if found:
            return found
        assert time.monotonic() < end, f"not {what} after {timeout:.0f} s"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_a_work_horse_dies_with_its_worker(redis_client, redis_url):
    store = Store(redis_client, secret_key(redis_client), queue=QUEUE)
    n = store.r.incr("test:bot-names")
    bots = [store.create_bot("acct", f"spin{n}{i}", "duck-soup", "python", entrypoint="tests.worker.bots:Hangs")[0]["id"]
            for i in range(2)]
    match = store.create_match("duck-soup", bots, 1, {}, move_timeout_ms=30_000)
    store.enqueue("match", [match["id"]])
    env = {k: v for k, v in os.environ.items() if k not in ("CARDARENA_QUEUE", PARENT_ENV)}
    worker = subprocess.Popen([sys.executable, "-m", "worker.process", redis_url, "--fork", "--queue", QUEUE],
                              cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    horse = None
    try:
        # the horse is at its job once the match's lock is taken (its bots then spin up to 10 s)
        wait_for(lambda: store.lease_held("match", match["id"]), "running the match")
        horse = wait_for(lambda: children_of(worker.pid), "a horse forked")[0]
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        wait_for(lambda: not alive(horse), "the horse gone with its worker", timeout=5.0)
    finally:
        for pid in ([horse] if horse else []) + [worker.pid]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        worker.wait()
