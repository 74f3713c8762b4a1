"""Remote bots in a tournament: matches/s against the bound the bots themselves set (issue 15).

    .venv/bin/python bench/remote.py [--game duck-soup] [--seconds 60] [--workers 2] [--think-ms 50]
                                     [--bots 16 | --webhook-bots N --polling-bots N] [--deals 1]

Starts what a deployment runs — a private Redis, `cardarena serve` and
`cardarena worker -n 2` — and 16 webhook bots (`sdk.serve`) and 16 polling
bots (`sdk.connect`), each thinking `--think-ms` a decision, with
`max_concurrent` 4, in one duplicate round-robin. After `--seconds` of play
it stops the tournament and prints, all measured in this run:

* matches/s finished during the window;
* the bound the bots set: their slots allow 32 × 4 / 2 = 64 matches at once,
  and a match takes (decisions per match) × think time at the least, so at
  most 64 / that many matches a second; target ≥ 0.9× of it (issue 28);
* the referee's overhead per decision (latency charged − think time), p50
  and p99, for webhook and polling seats, from the matches' logs;
* what the machine allows: the webhook bots called directly, with no
  referee, for 5 s before the tournament (decisions/s), and the CPU the bots'
  own process spends per decision in the tournament: if the bots alone
  cannot answer the bound's decisions/s, or would need more CPUs than the
  machine has, the bound is out of this machine's reach;
* the CPU the platform's own processes spend per remote decision (every
  entry the tournament's logs gained in the window is one): the API, the
  worker processes (with what the pool reaped of retired ones), the
  dispatcher's clock and callers, the pool, Redis — each process's
  utime + stime and its reaped children's, read from /proc (Linux), and the
  share of each; target ≤ 3 ms. `--webhook-bots 0` or `--polling-bots 0`
  measures one kind alone;
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


#: what each of the platform's processes is, from its command line (first match wins)
KINDS = (("redis-server", "Redis"), ("--part clock", "dispatcher's clock"), ("--part calls", "dispatcher's callers"),
         ("worker.process", "workers"), ("cardarena.cli worker", "pool"), ("cardarena.cli serve", "API"),
         ("server.serve", "API"))  # `cardarena serve` re-executes itself as `python -m server.serve`
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_table() -> dict[int, tuple[int, str, float, float]]:
    """Every process: pid -> (parent pid, command line, its own CPU s, its reaped children's CPU s)."""
    out = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        # after the command: state ppid ... utime(12) stime(13) cutime(14) cstime(15)
        out[int(entry.name)] = (int(fields[1]), cmd, (int(fields[11]) + int(fields[12])) / TICKS,
                                (int(fields[13]) + int(fields[14])) / TICKS)
    return out


class PlatformCpu:
    """The CPU the platform's own processes (this process's descendants: Redis, the API, the pool,
    its workers and dispatcher) spend between `start` and `stop`, by kind of process.

    A process counts its own time and its reaped children's (a worker the pool retired after
    its `MAX_JOBS`, an RQ work horse with `--fork`): a retired worker's last seconds land in the
    pool's children's time, and are counted as the workers'."""

    def __init__(self) -> None:
        self.first: dict[int, tuple[str, float, float]] = {}

    def snapshot(self) -> dict[int, tuple[str, float, float]]:
        table = proc_table()
        mine: dict[int, tuple[str, float, float]] = {}
        frontier = [os.getpid()]
        while frontier:
            parent = frontier.pop()
            for pid, (ppid, cmd, own, reaped) in table.items():
                if ppid == parent and pid not in mine:
                    kind = next((k for mark, k in KINDS if mark in cmd), None)
                    if kind is not None:
                        mine[pid] = (kind, own, reaped)
                    frontier.append(pid)
        return mine

    def start(self) -> None:
        self.first = self.snapshot()

    def stop(self) -> dict[str, float]:
        """CPU seconds by kind of process since `start`."""
        last = self.snapshot()
        spent: dict[str, float] = {}
        for pid, (kind, own, reaped) in last.items():
            was = self.first.get(pid, (kind, 0.0, 0.0))
            spent[kind] = spent.get(kind, 0.0) + own - was[1]
            children = "workers" if kind == "pool" else kind  # the pool reaps retired workers
            spent[children] = spent.get(children, 0.0) + reaped - was[2]
        for pid, (_, own, reaped) in self.first.items():
            if pid not in last:  # ended in the window: its whole life is in the pool's reaped time
                spent["workers"] = spent.get("workers", 0.0) - own - reaped
        return spent


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


def logged(redis_url: str, tid: str) -> int:
    """How many entries the logs of the tournament's matches hold (every one a remote decision),
    a finished match's read from the archive it moved to (core/store/archive.py)."""
    import redis

    from core.store import Store

    client = redis.Redis.from_url(redis_url)
    try:
        store = Store(client, b"unused")
        return sum(store.log_length(match_id) for match_id in store.tournament_matches(tid))
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
    parser.add_argument("--webhook-bots", type=int, default=None, help="webhook bots (default --bots)")
    parser.add_argument("--polling-bots", type=int, default=None, help="polling bots (default --bots)")
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
            n_hooks = args.bots if args.webhook_bots is None else args.webhook_bots
            n_polls = args.bots if args.polling_bots is None else args.polling_bots
            for i in range(n_hooks):
                hook_port = free_port()
                hook = owner.register_bot(f"hook{i}", args.game, kind="webhook",
                                          url=f"http://127.0.0.1:{hook_port}/", max_concurrent=SLOTS)
                servers.append(serve(Thinks(think_s, i, args.late_every, late_s), port=hook_port, secret=hook.secret, block=False,
                                     threads=SLOTS + 2))
                kinds[hook.id] = "webhook"
                hooks.append((f"http://127.0.0.1:{hook_port}/", hook.secret))
            for i in range(n_polls):
                polled = owner.register_bot(f"poll{i}", args.game, kind="polling", max_concurrent=SLOTS)
                pollers.append(connect(Thinks(think_s, 100 + i, args.late_every, late_s), url, secret=polled.secret, wait=25,
                                       block=False, concurrency=SLOTS))
                kinds[polled.id] = "polling"
            time.sleep(2.0)  # workers up
            print(f"{args.game}: {n_hooks} webhook + {n_polls} polling bots thinking {args.think_ms} ms, "
                  f"max_concurrent {SLOTS}; {args.workers} worker processes, {os.cpu_count()} CPUs, "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
            alone = bots_alone(hooks, args.game, 5.0) if hooks else 0.0
            print(f"the webhook bots alone, called directly with no referee ({len(hooks) * SLOTS} callers): "
                  f"{alone:.0f} decisions/s", flush=True)
            t = admin.create_tournament(args.game, list(kinds), deals=args.deals, move_timeout_ms=args.move_ms,
                                        time_bank_ms=0, max_faults=10)
            while admin.tournament(t).done == 0:
                time.sleep(0.2)
            began, done0 = time.monotonic(), admin.tournament(t).done
            cpu0, asked0 = time.process_time(), next(Thinks.answered)  # this process: the bots
            platform, logged0 = PlatformCpu(), logged(redis_url, t.id)
            platform.start()
            time.sleep(args.seconds)
            spent = platform.stop()
            decided = logged(redis_url, t.id) - logged0
            elapsed, done = time.monotonic() - began, admin.tournament(t).done - done0
            bot_cpu_ms = 1000 * (time.process_time() - cpu0) / max(1, next(Thinks.answered) - asked0)
            if admin.tournament(t).status != "running":
                print("the tournament ended inside the window: run again with more --deals", flush=True)
            # read before the tournament is stopped: on a busy machine its abort can outlast a request
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
            at_once = (n_hooks + n_polls) * SLOTS / 2
            mean_s = think_s if not args.late_every else \
                ((args.late_every - 1) * think_s + args.move_ms / 1000) / args.late_every
            bound = at_once / (per_match * mean_s)
            print(f"finished {done} matches in {elapsed:.0f} s: {rate:.2f} matches/s", flush=True)
            print(f"bound the bots set: {at_once:.0f} matches at once / ({per_match:.0f} decisions x "
                  f"{mean_s * 1000:.1f} ms, the mean think with the late ones cut at the deadline) = "
                  f"{bound:.2f} matches/s", flush=True)
            print(f"ratio: {rate / bound:.2f}x   target >= 0.9x: {'met' if rate >= 0.9 * bound else 'NOT MET'}",
                  flush=True)
            needed = bound * per_match
            print(f"the bots' own process spent {bot_cpu_ms:.2f} ms of CPU per decision it answered: at the "
                  f"bound, the bots alone would need {needed * bot_cpu_ms / 1000:.1f} of this machine's "
                  f"{os.cpu_count()} CPUs", flush=True)
            verdict = "the machine itself caps the figure below the bound" if alone < 0.9 * needed else "within reach"
            if hooks:
                print(f"the bound asks {needed:.0f} decisions/s; the webhook bots alone answered {alone:.0f}/s on this "
                      f"machine ({alone / needed:.2f}x of it): {verdict}", flush=True)
            for kind, values in overhead.items():
                if values:
                    print(f"referee overhead per {kind} decision (charged - think): p50 "
                          f"{percentile(values, 0.5):.0f} ms   p99 {percentile(values, 0.99):.0f} ms "
                          f"({len(values)} decisions)", flush=True)
            total = sum(spent.values())
            print(f"the platform's processes spent {1000 * total / max(1, decided):.2f} ms of CPU per remote "
                  f"decision ({decided} decisions logged in the window, {total / elapsed:.2f} CPUs busy): "
                  + ", ".join(f"{kind} {100 * cpu / total:.0f}%" for kind, cpu in
                              sorted(spent.items(), key=lambda item: -item[1]) if total > 0)
                  + f"   target <= 3 ms: {'met' if 1000 * total <= 3 * decided else 'NOT MET'}", flush=True)
            late = lateness(redis_url)
            if late:
                print(f"timeouts recorded after their deadline: p50 {percentile(late, 0.5):.0f} ms   p99 "
                      f"{percentile(late, 0.99):.0f} ms   max {max(late)} ms ({len(late)} timeouts)   "
                      f"target p99 <= 100 ms: {'met' if percentile(late, 0.99) <= 100 else 'NOT MET'}", flush=True)
            print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)
            admin.request("POST", f"/tournaments/{t.id}/abort")
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
