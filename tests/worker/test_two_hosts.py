"""Two hosts sharing only Redis and the archive; one is lost whole (kill -9) mid-tournament.

Each "host" is what a machine of a deployment runs: `cardarena serve` (the API) and
`cardarena worker -n 2` (a pool: its supervisor and sweep, two workers, the dispatcher),
with a state directory of its own (`CARDARENA_HOME`) and, shared with the other host,
only the Redis URL, the secrets and the archive directory (`CARDARENA_ARCHIVE`, a volume
both mount). A tournament is created through host A's API; while its matches play on
both hosts' workers, every process of host A is killed with SIGKILL at once. Host B
finishes it: every match ends exactly once (the bots' records and the standings count
each once), every match is archived whole (no half file, no stray temporary), and host
B's API serves every one of them from the archive.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from core.store.jobs import QUEUE
from core.store.matches import archive_due_key
from tests.live import ADMIN_TOKEN
from tests.test_signals import _kill, descendants
from tests.worker.test_kill_remote import answers, wait_until
from tests.worker.test_never_waits import free_port
from tests.worker.test_worker_e2e import OUTPUT, replays_to_its_result

ROOT = Path(__file__).resolve().parents[2]
GAME = "duck-soup"


class Host:
    """One machine's processes: its API on `port` and its worker pool."""

    def __init__(self, name: str, redis_url: str, archive: Path, home: Path, log) -> None:
        self.name, self.port = name, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if k not in ("CARDARENA_QUEUE", "REDIS_URL")}
        env.update(REDIS_URL=redis_url, CARDARENA_ADMIN_TOKEN=ADMIN_TOKEN, PYTHONUNBUFFERED="1",
                   CARDARENA_SECRET_KEY="two-hosts-secret-key-0123456789", CARDARENA_LEASE_MS="1500",
                   CARDARENA_ARCHIVE=str(archive), CARDARENA_HOME=str(home))
        self.procs = [subprocess.Popen([sys.executable, "-m", "cardarena.cli", *args], cwd=ROOT, env=env,
                                       stdout=log, stderr=log, stdin=subprocess.DEVNULL)
                      for args in (["serve", "--port", str(self.port)], ["worker", "-n", "2"])]

    def everything(self) -> dict[int, str]:
        found = {}
        for proc in self.procs:
            found.update(descendants(proc.pid))
        return found

    def playing(self, client) -> bool:
        """Whether one of this host's workers is running a match now (RQ's own record)."""
        from rq import Worker

        mine = set(self.everything())
        return any(w.pid in mine and (w.get_current_job_id() or "").startswith("match-")
                   for w in Worker.all(connection=client))

    def kill(self) -> None:
        """SIGKILL to every process of the host, its supervisors first (nothing is restarted)."""
        below = self.everything()
        for proc in self.procs:
            proc.send_signal(signal.SIGKILL)
        for pid in below:
            _kill(pid)
        for proc in self.procs:
            proc.wait()

    def get(self, path: str) -> dict:
        response = requests.get(self.url + "/api/v1" + path, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                                timeout=30)
        assert response.status_code == 200, (path, response.status_code, response.text[:300])
        return response.json()

    def post(self, path: str, body: dict) -> dict:
        response = requests.post(self.url + "/api/v1" + path, json=body, timeout=30,
                                 headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert response.status_code in (201, 202), (path, response.status_code, response.text[:300])
        return response.json()


@pytest.mark.slow
def test_a_host_killed_whole_mid_tournament_loses_nothing(redis_client, redis_url, tmp_path):
    OUTPUT.mkdir(exist_ok=True)
    archive = tmp_path / "archive"
    log = open(OUTPUT / "two-hosts.log", "ab")  # noqa: SIM115 - closed below
    hosts = []
    try:
        hosts = [Host(name, redis_url, archive, tmp_path / f"home-{name}", log) for name in ("a", "b")]
        a, b = hosts
        for host in hosts:
            wait_until(lambda host=host: answers(host.url), f"host {host.name} serving")
        entrypoints = ["tests.worker.e2e_bots:Slow", "tests.worker.e2e_bots:Slow",
                       "example_bots.random:RandomBot", "example_bots.random:RandomBot"]
        bots = [a.post("/bots", {"name": f"bot{i}", "game": GAME, "kind": "python", "entrypoint": e})["id"]
                for i, e in enumerate(entrypoints)]
        tid = a.post("/tournaments", {"game": GAME, "bots": bots, "format": "round-robin", "seats": 2,
                                      "deals": 4, "duplicate": True})["id"]
        wait_until(lambda: b.get(f"/tournaments/{tid}")["progress"]["done"] >= 8, "a sixth of it played", 120)
        wait_until(lambda: a.playing(redis_client), "host a's workers in the middle of a match", 60)
        assert b.get(f"/tournaments/{tid}")["status"] == "running"
        a.kill()  # the whole machine: its API, its pool, its workers and dispatcher at once
        wait_until(lambda: b.get(f"/tournaments/{tid}")["status"] in ("finished", "aborted"), "finished by host b", 300)
        done = b.get(f"/tournaments/{tid}")
        wait_until(lambda: not redis_client.scard("jobs:active") and not redis_client.zcard(archive_due_key(QUEUE)),
                   "every follow-up done, every match archived", 60)

        assert done["status"] == "finished" and done["progress"]["done"] == done["progress"]["total"] == 48
        for bot in bots:  # every match counted once
            assert b.get(f"/bots/{bot}")["matches"] == 24
        assert sum(row["matches"] for row in done["standings"]) == 96
        ids = [m["id"] for m in b.get(f"/tournaments/{tid}/matches?limit=100")["matches"]]
        assert len(ids) == 48
        for mid in ids:
            match = b.get(f"/matches/{mid}")
            assert match["status"] == "finished" and replays_to_its_result(match)
            assert redis_client.hexists(f"match:{mid}", "archived") and not redis_client.exists(f"match:{mid}:log")
        files = sorted(archive.rglob("*.json.gz"))
        assert sorted(f.name.removesuffix(".json.gz") for f in files) == sorted(ids)  # each once
        for f in files:  # whole: each decompresses to its match
            assert json.loads(gzip.decompress(f.read_bytes()))["match"]["id"] == f.name.removesuffix(".json.gz")
        assert not list(archive.rglob(".*.tmp"))  # no half file left by the dead host
    finally:
        for host in hosts:
            recorded = host.everything()
            for proc in host.procs:
                proc.kill()
                proc.wait()
            for pid in recorded:
                _kill(pid)
        log.close()
