"""kill -9 of every kind of process mid-tournament, with webhook and polling bots: nothing lost.

The platform runs as in production, in processes of its own on the test's Redis:
`cardarena serve` (the API the polling bots talk to) and `cardarena worker -n 2` (the
pool: its supervisor, two worker processes and the dispatcher). While bots are thinking,
one of them — a worker process, the dispatcher, the API or the pool's own process, a test
each — is killed with SIGKILL; the API is started again on its port, and a new pool beside
the old one's orphans. Every match still finishes exactly once, replays to its
result, and counts once in every record; a bot is charged nothing but timeouts (a
polling answer may find the API down past its deadline).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import sdk
from sdk.faults import FORFEITED, fault_kind
from tests.live import ADMIN_TOKEN
from tests.test_signals import _kill, descendants
from tests.waiting import wait_answering
from tests.worker.test_never_waits import GAME, Thinker, free_port
from tests.worker.test_worker_e2e import OUTPUT, matches_of, replay_mismatches, tournament, wait_finished

ROOT = Path(__file__).resolve().parents[2]


def start(args: list[str], redis_url: str, log) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "CARDARENA_QUEUE"}
    env.update(REDIS_URL=redis_url, CARDARENA_ADMIN_TOKEN=ADMIN_TOKEN, PYTHONUNBUFFERED="1",
               CARDARENA_LEASE_MS="1500")
    return subprocess.Popen([sys.executable, "-m", "cardarena.cli", *args], cwd=ROOT, env=env,
                            stdout=log, stderr=log, stdin=subprocess.DEVNULL)


def children(pool: subprocess.Popen, module: str, timeout: float = 30.0) -> list[int]:
    """The pids of the pool's processes running `python -m module`."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = []
        for pid in descendants(pool.pid):
            try:
                if module in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                    found.append(pid)
            except OSError:
                continue
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"the pool has no {module} process")


def answers(url: str) -> bool:
    import requests

    try:
        return requests.get(url + "/api/v1/games", timeout=1).ok
    except requests.RequestException:
        return False


def wait_until(ready, what: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < end, f"not {what} after {timeout:.0f} s"
        time.sleep(0.05)


#: the processes killed, one a test
VICTIMS = ("worker.process", "worker.dispatch", "api", "pool")


@pytest.mark.slow
@pytest.mark.parametrize("victim", VICTIMS)
def test_kill_9_mid_tournament_with_remote_bots_loses_nothing(api, redis_url, victim):
    OUTPUT.mkdir(exist_ok=True)
    log = open(OUTPUT / "kill-remote.log", "ab")  # noqa: SIM115 - closed below
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    processes: list[subprocess.Popen] = []
    recorded: dict[int, str] = {}
    servers, pollers = [], []
    counter = {"lock": threading.Lock(), "now": 0, "most": 0}
    try:
        serve = start(["serve", "--port", str(port)], redis_url, log)
        pool = start(["worker", "-n", "2"], redis_url, log)
        processes += [serve, pool]
        wait_answering(url + "/api/v1/games", serve, "the API", seconds=90)
        token = api.account("organiser")
        bots = []
        for i in range(2):
            hook_port = free_port()
            hook = api.bot(token, f"hook{i}", GAME, kind="webhook", url=f"http://127.0.0.1:{hook_port}/")
            servers.append(sdk.serve(Thinker(0.04, counter), port=hook_port, secret=hook["secret"], block=False))
            polled = api.bot(token, f"poll{i}", GAME, kind="polling")
            pollers.append(sdk.connect(Thinker(0.04, counter), url, secret=polled["secret"], wait=1,
                                       block=False, concurrency=4))
            bots += [hook["id"], polled["id"]]
        children(pool, "worker.dispatch")
        # the admin's, no seed, the standard clock: rated (docs/api.md §6)
        tid = tournament(api, ADMIN_TOKEN, bots, game=GAME, seats=2, deals=1, options={"deal_only": True})
        wait_until(lambda: counter["now"] > 0, "bots thinking")
        in_play = api.ok(api.get(f"/tournaments/{tid}"), 200)["progress"]  # just before the kill
        recorded.update(descendants(pool.pid))
        if victim == "api":
            serve.kill()
            serve.wait()
            serve = start(["serve", "--port", str(port)], redis_url, log)
            processes.append(serve)
            wait_answering(url + "/api/v1/games", serve, "the API started again", seconds=90)
        elif victim == "pool":
            pool.kill()  # its workers and dispatcher live on, orphaned; a new pool joins them
            pool.wait()
            pool = start(["worker", "-n", "2"], redis_url, log)
            processes.append(pool)
        elif victim == "worker.process":
            _kill(children(pool, victim)[0])
        else:
            for pid in children(pool, victim):  # the dispatcher's clock and its callers
                _kill(pid)
        done = wait_finished(api, tid, timeout=240)
    finally:
        for poller in pollers:
            poller.stop_event.set()
        for poller in pollers:
            poller.join(timeout=30)
        for server in servers:
            server.stop()
        for proc in processes:
            recorded.update(descendants(proc.pid))
            proc.kill()
            proc.wait()
        for pid in recorded:
            _kill(pid)
        log.close()
    assert in_play["done"] < in_play["total"]  # killed mid-tournament
    assert done["status"] == "finished" and done["progress"]["done"] == done["progress"]["total"] == 12
    matches = matches_of(api, tid)
    assert all(m["status"] == "finished" for m in matches)
    assert not replay_mismatches(matches), replay_mismatches(matches)
    for bot in bots:  # each match counted once: records, standings, the ladder
        assert api.ok(api.get(f"/bots/{bot}"), 200)["matches"] == 6
        assert len(api.ok(api.get(f"/bots/{bot}/ratings"), 200)["history"]) == 3  # one per deal
    assert sum(row["matches"] for row in done["standings"]) == 24
    for m in matches:  # only timeouts (the kills cost a bot its time, never a wrong or doubled turn) …
        full = api.ok(api.get(f"/matches/{m['id']}"), 200)
        timeouts: dict[int, int] = {}
        for e in full["log"]:
            kind = fault_kind(e["fault"]) if "fault" in e else None
            if kind == "timeout":
                timeouts[e["seat"]] = timeouts.get(e["seat"], 0) + 1
            else:  # … and, on a loaded machine, the forfeit their count may bring (polling bots back off
                # while the API is away): only after that seat's max_faults timeouts
                assert kind in (None, FORFEITED), (m["id"], e)
                assert kind is None or timeouts.get(e["seat"], 0) >= full["max_faults"], (m["id"], e, timeouts)
