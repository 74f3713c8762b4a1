"""What the platform costs on top of the engines, measured in one run.

    python bench/tournament.py [--game duck-soup] [--seats N] [--bots 16] [--deals 2]
                               [--workers 1,2] [--rounds 3] [--calls 500]

1. A duplicate round-robin of in-process random bots, `--rounds` times, each
   round playing in turn (interleaved, so the machine's load falls on all
   alike):
   * the bare engine loop: the same schedule played in this process
     (`sdk.local.play_local`, the same bots), no Redis, no worker;
   * the platform: the tournament run by the real worker pool (RQ jobs
     through one Redis, archiving on), once per worker count in `--workers`
     (a fresh pool each time, started and registered before the clock starts).
   It prints min/median/max over the rounds of matches/s, the platform's
   ratio to the bare loop (target ≥ 0.6× on 2 workers), the platform's CPU per
   match — the worker, dispatcher and Redis processes' CPU from /proc, less the
   bare loop's CPU per match: what the platform adds to the engine (target ≤
   8 ms) — and the speed-up from the first worker count to the last (target
   ≥ 1.8× from 1 to 2), each round's ratios taken within the round. Beside the
   ratio by rate, which follows whatever else the machine runs, it prints the
   ratio the CPU a match allows: `min(workers, cores)` cores' worth of the
   platform's matches against one core's of the bare loop's, each at its CPU
   a match (what a machine the platform has to itself would reach).
2. One webhook decision as the referee makes it (`WebhookDriver.ask`: sign,
   POST, size-capped read, parse) against a bare keep-alive `requests` POST
   of the same body to the same local bot (`sdk.serve`), interleaved call by
   call. Target ≤ 1.3×. `--calls 0` skips it.

The machine's load (`os.getloadavg`) is printed with every round: on a busy
machine the ratios mean more than either side's figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402

import games  # noqa: E402
from core.redis_server import EmbeddedRedis, free_port  # noqa: E402
from core.store import Store, secret_key  # noqa: E402
from core.store.jobs import enqueue_job  # noqa: E402
from example_bots.random import RandomBot  # noqa: E402
from sdk import serve, sign  # noqa: E402
from sdk.local import play_local  # noqa: E402
from worker.pool import WorkerPool  # noqa: E402
from worker.schedules import round_robin  # noqa: E402

RANDOM = "example_bots.random:RandomBot"
#: how long a pool may take to register its workers, and a tournament to end (a bound, not a wait)
READY_S, TOURNAMENT_S = 60.0, 900.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def descendants_cpu_s(root: int) -> float:
    """CPU seconds (user + system, with their reaped children's) of every live process
    descended from `root`, `root` itself left out (Linux /proc)."""
    parent, cpu = {}, {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        pid = int(entry.parent.name)
        parent[pid] = int(fields[1])
        cpu[pid] = sum(int(f) for f in fields[11:15]) / CLOCK_TICKS  # utime stime cutime cstime
    total = 0.0
    for pid in cpu:
        up = parent.get(pid)
        while up is not None and up != root:
            up = parent.get(up)
        if up == root and pid != root:
            total += cpu[pid]
    return total


def bare_loop(game: str, schedule) -> tuple[float, float]:
    """(wall seconds, CPU seconds) to play every scheduled match in this process, engine and bots only."""
    wall, cpu = time.perf_counter(), time.process_time()
    for planned in schedule.matches:
        play_local(game, [RandomBot() for _ in planned.bots], seed=planned.seed)
    return time.perf_counter() - wall, time.process_time() - cpu


def through_workers(store: Store, url: str, game: str, bots: list[str], seats: int, deals: int,
                    workers: int) -> tuple[float, float, int]:
    """(wall seconds, platform CPU seconds, matches) from enqueueing a tournament to its end on a
    fresh pool of `workers` worker processes (up and registered before the clock starts); the
    CPU counted until its matches are archived too."""
    from rq import Queue, Worker

    with WorkerPool(url, n=workers, log_path="/dev/null", sweep_every_s=2.0, ladder_matches=0) as pool:
        queue = Queue(pool.queue, connection=store.r)
        ready_by = time.monotonic() + READY_S
        while len({w.pid for w in Worker.all(queue=queue)} & set(pool.pids)) < workers:
            if time.monotonic() > ready_by:
                raise RuntimeError(f"the pool's {workers} workers did not register in {READY_S:.0f} s")
            time.sleep(0.05)
        t = store.create_tournament(game, bots, seats=seats, deals=deals, duplicate=True, seed=1, options={})
        cpu = descendants_cpu_s(os.getpid())
        started = time.perf_counter()
        enqueue_job(store.r, "tournament", t["id"])
        end_by = time.monotonic() + TOURNAMENT_S
        while store.tournament_statuses([t["id"]])[t["id"]] != "finished":
            if time.monotonic() > end_by:
                raise RuntimeError(f"the tournament did not finish in {TOURNAMENT_S:.0f} s")
            time.sleep(0.01)
        elapsed = time.perf_counter() - started
        # its last matches' archiving (the sweep's, within seconds) is part of what it costs
        while store.archive_due_count() and time.monotonic() < end_by:
            time.sleep(0.05)
        cpu = descendants_cpu_s(os.getpid()) - cpu
    return elapsed, cpu, store.tournament_progress(t["id"])["total"]


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    """min / median / max."""
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def tournaments(args, seats: int) -> None:
    schedule = round_robin([f"b{i}" for i in range(args.bots)], seats, args.deals, True, 1)
    n = len(schedule.matches)
    counts = sorted(set(args.workers))
    print(f"{args.game}, {seats} seats: round-robin of {args.bots} random bots, {args.deals} deals a table, "
          f"duplicate: {n} matches; {args.rounds} rounds, each: bare loop, then "
          + ", then ".join(f"{w} worker{'s' * (w > 1)}" for w in counts))
    os.environ.setdefault("CARDARENA_ARCHIVE", tempfile.mkdtemp(prefix="cardarena-bench-archive-"))
    bare_rate, bare_cpu_ms = [], []
    rate: dict[int, list[float]] = {w: [] for w in counts}
    ratio: dict[int, list[float]] = {w: [] for w in counts}
    extra_ms: dict[int, list[float]] = {w: [] for w in counts}
    by_cpu: dict[int, list[float]] = {w: [] for w in counts}
    scaling: list[float] = []
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        store = Store(client, secret_key(client))
        bots = [store.create_bot("bench", f"random{i}", args.game, "python", entrypoint=RANDOM)[0]["id"]
                for i in range(args.bots)]
        for round_no in range(1, args.rounds + 1):
            bare_s, bare_cpu_s = bare_loop(args.game, schedule)
            bare_rate.append(n / bare_s)
            bare_cpu_ms.append(1000 * bare_cpu_s / n)
            line = [f"round {round_no} ({load()}): bare {n / bare_s:.0f}/s"]
            for w in counts:
                wall, cpu, total = through_workers(store, server.url, args.game, bots, seats, args.deals, w)
                assert total == n, (total, n)
                rate[w].append(n / wall)
                ratio[w].append(bare_s / wall)
                extra_ms[w].append(1000 * cpu / n - bare_cpu_ms[-1])
                by_cpu[w].append(min(w, os.cpu_count() or 1) * bare_cpu_s / cpu)
                line.append(f"{w}w {n / wall:.0f}/s ({bare_s / wall:.2f}x, +{extra_ms[w][-1]:.1f} ms CPU)")
            if len(counts) > 1:
                scaling.append(rate[counts[-1]][-1] / rate[counts[0]][-1])
            print("  " + ", ".join(line) + f" [{load()}]", flush=True)
        client.close()
    print(f"  min / median / max over {args.rounds} rounds [{load()}]:")
    print(f"  bare engine loop, 1 process:    {spread(bare_rate, '{:.0f}')} matches/s, "
          f"{spread(bare_cpu_ms)} ms CPU a match")
    for w in counts:
        met = statistics.median(ratio[w]) >= 0.6
        print(f"  platform, {w} worker{'s' * (w > 1)}:{' ' * (w < 2)}         {spread(rate[w], '{:.0f}')} matches/s, "
              f"ratio {spread(ratio[w])}x{'   target >= 0.6x: ' + ('met' if met else 'NOT MET') if w == 2 else ''}")
        print(f"    ratio the CPU a match allows ({min(w, os.cpu_count() or 1)} of {os.cpu_count()} cores): "
              f"{spread(by_cpu[w])}x")
        met = statistics.median(extra_ms[w]) <= 8
        print(f"    platform CPU a match beyond the engine's: {spread(extra_ms[w], '{:.1f}')} ms"
              f"{'   target <= 8 ms: ' + ('met' if met else 'NOT MET') if w == 2 else ''}")
    if scaling:
        met = statistics.median(scaling) >= 1.8
        print(f"  {counts[0]} -> {counts[-1]} workers: {spread(scaling)}x"
              f"{'   target >= 1.8x: ' + ('met' if met else 'NOT MET') if counts[:1] + counts[-1:] == [1, 2] else ''}")


def webhook_latency(calls: int) -> tuple[list[float], list[float]]:
    """Per-call seconds: the referee's webhook driver, and a bare keep-alive POST."""
    import requests

    from worker.drivers.webhook import WebhookDriver

    secret = "bench-secret"
    port = free_port()
    hosted = serve(RandomBot(), port=port, secret=secret, block=False)
    url = f"http://127.0.0.1:{port}/"
    state = games.get("duck-soup").new(2, 7, {})
    decision = {"type": "turn", "protocol": 1, "match_id": "m_bench", "game": "duck-soup", "turn": 0,
                "seat": state.to_act, "view": state.view(state.to_act), "legal_actions": state.legal_actions(),
                "deadline_ms": 2000}
    driver = WebhookDriver({"url": url}, secret)
    session = requests.Session()
    body = json.dumps(decision, separators=(",", ":")).encode()

    def bare():
        headers = {"Content-Type": "application/json", "X-Cardarena-Signature": sign(body, secret)}
        response = session.post(url, data=body, headers=headers, timeout=2)
        return response.json()["action"]

    def referee():
        reply = driver.ask(decision)
        assert reply.fault is None, reply.fault
        return reply.action

    out: dict[str, list[float]] = {"driver": [], "bare": []}
    try:
        for _ in range(50):  # warm both connections
            referee()
            bare()
        for _ in range(calls):  # interleaved, so load falls on both alike
            for name, call in (("driver", referee), ("bare", bare)):
                began = time.perf_counter()
                call()
                out[name].append(time.perf_counter() - began)
    finally:
        hosted.stop()
    return out["driver"], out["bare"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="duck-soup", choices=games.names())
    p.add_argument("--seats", type=int, default=None, help="seats a table (default: the game's fewest)")
    p.add_argument("--bots", type=int, default=16)
    p.add_argument("--deals", type=int, default=2)
    p.add_argument("--workers", default="1,2", help="worker counts to compare, e.g. 1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--calls", type=int, default=500, help="webhook calls each way (0: skip that part)")
    args = p.parse_args(argv)
    args.workers = [int(w) for w in args.workers.split(",")]
    if args.rounds < 1 or min(args.workers) < 1:
        p.error("--rounds and every --workers count must be at least 1")
    seats = args.seats or games.get(args.game).min_seats
    tournaments(args, seats)

    if args.calls > 0:
        driver, bare = webhook_latency(args.calls)
        d50, b50 = statistics.median(driver), statistics.median(bare)
        d99, b99 = (sorted(x)[int(0.99 * len(x))] for x in (driver, bare))
        print(f"webhook decision ({args.calls} calls each, interleaved, keep-alive, duck-soup's first decision) "
              f"[{load()}]:")
        print(f"  bare requests POST:   p50 {1000 * b50:.3f} ms   p99 {1000 * b99:.3f} ms")
        print(f"  WebhookDriver.ask:    p50 {1000 * d50:.3f} ms   p99 {1000 * d99:.3f} ms")
        print(f"  ratio (p50): {d50 / b50:.2f}x   target <= 1.3x: {'met' if d50 / b50 <= 1.3 else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
