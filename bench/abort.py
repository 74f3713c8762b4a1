"""Benchmark `POST /tournaments/{id}/abort` against the tournament's size: the request alone.

    .venv/bin/python bench/abort.py [--sizes 100,1000,5000] [--rounds 3]

Starts a private Redis and the API as a deployment runs it (`cardarena serve`), with no
worker: each tournament's matches are created through the store and queued as RQ jobs, so
they are all still queued when the abort comes (the worst case for a request that would end
them itself). Each round aborts one fresh tournament of every size, the sizes interleaved,
and times the request from the client (wall). The answer must be 202 "aborting" with every
match still queued: the ending is the job's (worker/jobs.py `run_tournament`), not timed here.

Prints, per size, min / median / max of the rounds in ms, with the load average
(os.getloadavg, 1 minute) before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import redis
import requests

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from core.redis_server import EmbeddedRedis, free_port  # noqa: E402
from core.store import Store, secret_key  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = "bench-admin-token-0123456789abcdef"
GAME = "duck-soup"


def start_api(redis_url: str) -> tuple[subprocess.Popen, str]:
    """`cardarena serve` on a free port, answering (bounded wait)."""
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "CARDARENA_RATE_LIMITS": "off", "CARDARENA_ADMIN_TOKEN": ADMIN}
    proc = subprocess.Popen([sys.executable, "-m", "cardarena.cli", "serve", "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            requests.get(url + "/api/v1/games", timeout=2)
            return proc, url
        except requests.RequestException:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the API did not start")


def queued_tournament(store: Store, bots: list[str], matches: int, tag: str) -> tuple[str, list[str]]:
    """A running tournament of `matches` matches, each queued as an RQ job and none played."""
    t = store.create_tournament(GAME, bots, seats=2, deals=1, duplicate=False, seed=1, options={})
    store.set_tournament(t["id"], status="running", total=matches)
    ids = []
    for index in range(matches):
        seats = [bots[index % 2], bots[1 - index % 2]]
        mid = store.create_match(GAME, seats, index, {}, tournament_id=t["id"], match_id=f"m_{tag}_{index}")["id"]
        store.add_tournament_match(t["id"], mid)
        ids.append(mid)
    store.enqueue("match", ids)
    return t["id"], ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,5000", help="matches per tournament, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        store = Store(client, secret_key(client))
        owner, _ = store.create_account("organiser")
        bots = [store.create_bot(owner["id"], f"entrant{i}", GAME, "polling")[0]["id"] for i in range(2)]
        proc, url = start_api(server.url)
        session = requests.Session()
        timings: dict[int, list[float]] = {size: [] for size in sizes}
        warm, _ = queued_tournament(store, bots, 2, "warm")  # the server's first abort loads its code
        session.post(f"{url}/api/v1/tournaments/{warm}/abort", timeout=120, headers={"Authorization": f"Bearer {ADMIN}"})
        load_before = os.getloadavg()[0]
        try:
            for rnd in range(args.rounds):
                for size in sizes:
                    tid, ids = queued_tournament(store, bots, size, f"r{rnd}s{size}")
                    start = time.perf_counter()
                    answer = session.post(f"{url}/api/v1/tournaments/{tid}/abort", timeout=120,
                                          headers={"Authorization": f"Bearer {ADMIN}"})
                    timings[size].append((time.perf_counter() - start) * 1000)
                    assert answer.status_code == 202 and answer.json()["status"] == "aborting", answer.text
                    statuses = {m["status"] for m in store.get_matches(ids, ("status",))}
                    assert statuses == {"queued"}, f"the request ended matches: {statuses}"
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        load_after = os.getloadavg()[0]
    print(f"POST /tournaments/{{id}}/abort, tournaments of queued matches, {args.rounds} rounds interleaved, "
          f"{os.cpu_count()} CPUs, load {load_before:.1f} → {load_after:.1f}")
    for size in sizes:
        ms = timings[size]
        print(f"  {size:>6,} matches: {min(ms):7.1f} / {statistics.median(ms):7.1f} / {max(ms):7.1f} ms "
              "(min / median / max)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
