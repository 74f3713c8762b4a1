"""Remote bots in a tournament: matches/s against the bound the bots themselves set (issue 15).

    .venv/bin/python bench/remote.py [--game duck-soup] [--seconds 60] [--workers 2] [--think-ms 50]

Starts what a deployment runs — a private Redis, `cardarena serve` and
`cardarena worker -n 2` — and 16 webhook bots (`sdk.serve`) and 16 polling
bots (`sdk.connect`), each thinking `--think-ms` a decision, with
`max_concurrent` 4, in one duplicate round-robin. After `--seconds` of play
it stops the tournament and prints, all measured in this run:

* matches/s finished during the window;
* the bound the bots set: their slots allow 32 × 4 / 2 = 64 matches at once,
  and a match takes (decisions per match) × think time at the least, so at
  most 64 / that many matches a second; target ≥ 0.8× of it;
* the referee's overhead per decision (latency charged − think time), p50
  and p99, for webhook and polling seats, from the matches' logs.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from connect import ADMIN, running_platform  # noqa: E402  (bench/connect.py: the platform's processes)

from sdk import Bot, Client, connect, serve  # noqa: E402
from server.redis_server import free_port  # noqa: E402

SLOTS = 4


class Thinks(Bot):
    """A random legal action after thinking a fixed time."""

    def __init__(self, think_s: float, seed: int) -> None:
        self.think_s = think_s
        self.rng = random.Random(seed)

    def act(self, view, legal_actions):
        time.sleep(self.think_s)
        return self.rng.choice(legal_actions)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="duck-soup")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--think-ms", type=int, default=50)
    parser.add_argument("--bots", type=int, default=16, help="bots of each kind (default 16)")
    args = parser.parse_args()
    think_s = args.think_ms / 1000
    with running_platform(args.workers) as url:
        servers, pollers = [], []
        try:
            admin, owner = Client(url, token=ADMIN), Client(url)
            owner.create_account("bench")
            kinds: dict[str, str] = {}
            for i in range(args.bots):
                hook_port = free_port()
                hook = owner.register_bot(f"hook{i}", args.game, kind="webhook",
                                          url=f"http://127.0.0.1:{hook_port}/", max_concurrent=SLOTS)
                servers.append(serve(Thinks(think_s, i), port=hook_port, secret=hook.secret, block=False,
                                     threads=SLOTS + 2))
                kinds[hook.id] = "webhook"
                polled = owner.register_bot(f"poll{i}", args.game, kind="polling", max_concurrent=SLOTS)
                pollers.append(connect(Thinks(think_s, 100 + i), url, secret=polled.secret, wait=25,
                                       block=False, concurrency=SLOTS))
                kinds[polled.id] = "polling"
            time.sleep(2.0)  # workers up
            print(f"{args.game}: {args.bots} webhook + {args.bots} polling bots thinking {args.think_ms} ms, "
                  f"max_concurrent {SLOTS}; {args.workers} worker processes, {os.cpu_count()} CPUs, "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
            t = admin.create_tournament(args.game, list(kinds), deals=1, time_bank_ms=10000)
            while admin.tournament(t).done == 0:
                time.sleep(0.2)
            began, done0 = time.monotonic(), admin.tournament(t).done
            time.sleep(args.seconds)
            elapsed, done = time.monotonic() - began, admin.tournament(t).done - done0
            admin.request("POST", f"/tournaments/{t.id}/abort")
            finished = [m for m in admin.tournament_matches(t) if m.status == "finished"]
            logs = [admin.request("GET", f"/matches/{m.id}") for m in finished[:60]]
            per_match = statistics.mean(len(m["log"]) for m in logs)
            overhead: dict[str, list[float]] = {"webhook": [], "polling": []}
            for m in logs:
                seats = [s["bot"] for s in m["seats"]]
                for entry in m["log"]:
                    if "ms" in entry and "fault" not in entry:
                        overhead[kinds[seats[entry["seat"]]]].append(entry["ms"] - args.think_ms)
            rate = done / elapsed
            at_once = 2 * args.bots * SLOTS / 2
            bound = at_once / (per_match * think_s)
            print(f"finished {done} matches in {elapsed:.0f} s: {rate:.2f} matches/s", flush=True)
            print(f"bound the bots set: {at_once:.0f} matches at once / ({per_match:.0f} decisions x "
                  f"{args.think_ms} ms) = {bound:.2f} matches/s", flush=True)
            print(f"ratio: {rate / bound:.2f}x   target >= 0.8x: {'met' if rate >= 0.8 * bound else 'NOT MET'}",
                  flush=True)
            for kind, values in overhead.items():
                if values:
                    print(f"referee overhead per {kind} decision (charged - think): p50 "
                          f"{percentile(values, 0.5):.0f} ms   p99 {percentile(values, 0.99):.0f} ms "
                          f"({len(values)} decisions)", flush=True)
            print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)
        finally:
            for poller in pollers:
                poller.stop(timeout=30)
            for server in servers:
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
