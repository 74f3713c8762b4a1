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
  and p99, for webhook and polling seats, from the matches' logs;
* what the machine allows: the webhook bots called directly, with no
  referee, for 5 s before the tournament (decisions/s), and the CPU the bots'
  own process spends per decision in the tournament: if the bots alone
  cannot answer the bound's decisions/s, or would need more CPUs than the
  machine has, the bound is out of this machine's reach;
* how late timeouts are recorded: one decision in `--late-every` sleeps past
  its deadline (`--move-ms`, no bank); the dispatcher notes how long after the
  deadline each timeout landed in the log (core/store/waits.py `lateness`),
  p50 / p99 / max; target p99 ≤ 100 ms.
"""

from __future__ import annotations

import argparse
import itertools
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

from core.redis_server import free_port  # noqa: E402
from sdk import Bot, Client, connect, serve  # noqa: E402

SLOTS = 4


class Thinks(Bot):
    """A random legal action after thinking a fixed time; one decision in `late_every` past `late_s`."""

    def __init__(self, think_s: float, seed: int, late_every: int = 0, late_s: float = 0.0) -> None:
        self.think_s, self.late_every, self.late_s = think_s, late_every, late_s
        self.rng = random.Random(seed)

    #: decisions every bot of this process answered (the bots' CPU per decision is read from it)
    answered = itertools.count()

    def act(self, view, legal_actions):
        next(Thinks.answered)
        late = self.late_every and self.rng.randrange(self.late_every) == 0
        time.sleep(self.late_s if late else self.think_s)
        return self.rng.choice(legal_actions)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def lateness(redis_url: str) -> list[int]:
    """How late the dispatcher recorded the run's timeouts (ms past their deadlines)."""
    import redis

    from core.store import Store

    client = redis.Redis.from_url(redis_url)
    try:
        store = Store(client, b"unused")
        return store.lateness() if hasattr(store, "lateness") else []  # a platform from before the dispatcher
    finally:
        client.close()


def bots_alone(hooks: list[tuple[str, str]], game: str, seconds: float) -> float:
    """Decisions/s the webhook bots answer when called directly — signed POSTs from one thread
    per slot, no referee at all: what this machine allows the bots and one HTTP call each."""
    import threading

    import games
    from core.calls import post_signed

    state = games.get(game).new(2, 1, {})
    seat = state.to_act
    decision = {"type": "turn", "protocol": 1, "match_id": "m_alone", "game": game, "turn": 0, "seat": seat,
                "view": state.view(seat), "legal_actions": state.legal_actions(), "deadline_ms": 5000}
    done = [0] * (len(hooks) * SLOTS)
    end = time.monotonic() + seconds

    def caller(i: int) -> None:
        hook_url, secret = hooks[i % len(hooks)]
        while time.monotonic() < end:
            post_signed(hook_url, secret, decision, 5.0, 64 * 1024)
            done[i] += 1

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(len(done))]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / (time.monotonic() - began)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="duck-soup")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--think-ms", type=int, default=50)
    parser.add_argument("--bots", type=int, default=16, help="bots of each kind (default 16)")
    parser.add_argument("--deals", type=int, default=1,
                        help="deals of the round-robin (enough that it outlasts the window)")
    parser.add_argument("--move-ms", type=int, default=500, help="each decision's deadline (no time bank)")
    parser.add_argument("--late-every", type=int, default=100,
                        help="one decision in this many sleeps past its deadline (0: none)")
    args = parser.parse_args()
    think_s = args.think_ms / 1000
    late_s = args.move_ms / 1000 + 0.1
    with running_platform(args.workers) as (url, redis_url):
        servers, pollers = [], []
        try:
            admin, owner = Client(url, token=ADMIN), Client(url)
            owner.create_account("bench")
            kinds: dict[str, str] = {}
            hooks: list[tuple[str, str]] = []
            for i in range(args.bots):
                hook_port = free_port()
                hook = owner.register_bot(f"hook{i}", args.game, kind="webhook",
                                          url=f"http://127.0.0.1:{hook_port}/", max_concurrent=SLOTS)
                servers.append(serve(Thinks(think_s, i, args.late_every, late_s), port=hook_port, secret=hook.secret, block=False,
                                     threads=SLOTS + 2))
                kinds[hook.id] = "webhook"
                hooks.append((f"http://127.0.0.1:{hook_port}/", hook.secret))
                polled = owner.register_bot(f"poll{i}", args.game, kind="polling", max_concurrent=SLOTS)
                pollers.append(connect(Thinks(think_s, 100 + i, args.late_every, late_s), url, secret=polled.secret, wait=25,
                                       block=False, concurrency=SLOTS))
                kinds[polled.id] = "polling"
            time.sleep(2.0)  # workers up
            print(f"{args.game}: {args.bots} webhook + {args.bots} polling bots thinking {args.think_ms} ms, "
                  f"max_concurrent {SLOTS}; {args.workers} worker processes, {os.cpu_count()} CPUs, "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
            alone = bots_alone(hooks, args.game, 5.0)
            print(f"the webhook bots alone, called directly with no referee ({len(hooks) * SLOTS} callers): "
                  f"{alone:.0f} decisions/s", flush=True)
            t = admin.create_tournament(args.game, list(kinds), deals=args.deals, move_timeout_ms=args.move_ms,
                                        time_bank_ms=0, max_faults=10)
            while admin.tournament(t).done == 0:
                time.sleep(0.2)
            began, done0 = time.monotonic(), admin.tournament(t).done
            cpu0, asked0 = time.process_time(), next(Thinks.answered)  # this process: the 32 bots
            time.sleep(args.seconds)
            elapsed, done = time.monotonic() - began, admin.tournament(t).done - done0
            bot_cpu_ms = 1000 * (time.process_time() - cpu0) / max(1, next(Thinks.answered) - asked0)
            if admin.tournament(t).status != "running":
                print("the tournament ended inside the window: run again with more --deals", flush=True)
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
            mean_s = think_s if not args.late_every else \
                ((args.late_every - 1) * think_s + args.move_ms / 1000) / args.late_every
            bound = at_once / (per_match * mean_s)
            print(f"finished {done} matches in {elapsed:.0f} s: {rate:.2f} matches/s", flush=True)
            print(f"bound the bots set: {at_once:.0f} matches at once / ({per_match:.0f} decisions x "
                  f"{mean_s * 1000:.1f} ms, the mean think with the late ones cut at the deadline) = "
                  f"{bound:.2f} matches/s", flush=True)
            print(f"ratio: {rate / bound:.2f}x   target >= 0.8x: {'met' if rate >= 0.8 * bound else 'NOT MET'}",
                  flush=True)
            needed = bound * per_match
            print(f"the bots' own process spent {bot_cpu_ms:.2f} ms of CPU per decision it answered: at the "
                  f"bound, the bots alone would need {needed * bot_cpu_ms / 1000:.1f} of this machine's "
                  f"{os.cpu_count()} CPUs", flush=True)
            verdict = "the machine itself caps the figure below the bound" if alone < 0.9 * needed else "within reach"
            print(f"the bound asks {needed:.0f} decisions/s; the webhook bots alone answered {alone:.0f}/s on this "
                  f"machine ({alone / needed:.2f}x of it): {verdict}", flush=True)
            for kind, values in overhead.items():
                if values:
                    print(f"referee overhead per {kind} decision (charged - think): p50 "
                          f"{percentile(values, 0.5):.0f} ms   p99 {percentile(values, 0.99):.0f} ms "
                          f"({len(values)} decisions)", flush=True)
            late = lateness(redis_url)
            if late:
                print(f"timeouts recorded after their deadline: p50 {percentile(late, 0.5):.0f} ms   p99 "
                      f"{percentile(late, 0.99):.0f} ms   max {max(late)} ms ({len(late)} timeouts)   "
                      f"target p99 <= 100 ms: {'met' if percentile(late, 0.99) <= 100 else 'NOT MET'}", flush=True)
            print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)
        finally:
            for poller in pollers:  # all asked at once: each ends within its long-poll
                poller.stop_event.set()
            for poller in pollers:
                poller.join(timeout=30)
            for server in servers:
                server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
