"""What the platform costs on top of the engines, measured in one run.

    python bench/tournament.py [--game duck-soup] [--bots 4] [--deals 25] [--workers 2] [--calls 500]

1. Matches/s of a round-robin of in-process random bots run by the real
   worker pool (RQ jobs, one per match, through Redis, `--workers`
   processes), against the bare engine loop playing the same schedule in
   this process (`sdk.local.play_local`, the same bots). Target ≥ 0.5×.
2. One webhook decision as the referee makes it (`WebhookDriver.ask`: sign,
   POST, size-capped read, parse) against a bare keep-alive `requests` POST
   of the same body to the same local bot (`sdk.serve`). Target ≤ 1.3×.

Both sides of each ratio run on this machine in this run, so the ratio
means more than either figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
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


def bare_loop(game: str, schedule) -> float:
    """Seconds to play every scheduled match in this process, engine and bots only."""
    started = time.perf_counter()
    for planned in schedule.matches:
        play_local(game, [RandomBot() for _ in planned.bots], seed=planned.seed)
    return time.perf_counter() - started


def through_workers(game: str, bots: int, seats: int, deals: int, workers: int, url: str) -> tuple[float, int]:
    """Seconds from enqueueing a tournament to its end with `workers` worker processes."""
    client = redis.Redis.from_url(url)
    store = Store(client, secret_key(client))
    ids = [store.create_bot("bench", f"random{i}", game, "python", entrypoint=RANDOM)[0]["id"] for i in range(bots)]
    with WorkerPool(url, n=workers, log_path="/dev/null", sweep_every_s=2.0, ladder_matches=0):
        time.sleep(1.5)  # the workers are up and waiting, as in a running deployment
        t = store.create_tournament(game, ids, seats=seats, deals=deals, duplicate=True, seed=1, options={})
        started = time.perf_counter()
        enqueue_job(client, "tournament", t["id"])
        while store.get_tournament(t["id"])["status"] != "finished":
            time.sleep(0.01)
        elapsed = time.perf_counter() - started
    total = store.tournament_progress(t["id"])["total"]
    client.close()
    return elapsed, total


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
    p.add_argument("--bots", type=int, default=4)
    p.add_argument("--deals", type=int, default=25)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--calls", type=int, default=500)
    args = p.parse_args(argv)
    seats = games.get(args.game).min_seats
    schedule = round_robin([f"b{i}" for i in range(args.bots)], seats, args.deals, True, 1)
    n = len(schedule.matches)
    print(f"{args.game}: round-robin of {args.bots} random bots, {args.deals} deals per table, "
          f"duplicate: {n} matches")
    bare_s = bare_loop(args.game, schedule)
    with EmbeddedRedis() as server:
        platform_s, total = through_workers(args.game, args.bots, seats, args.deals, args.workers, server.url)
    assert total == n
    ratio = (n / platform_s) / (n / bare_s)
    print(f"  bare engine loop, 1 process:        {n / bare_s:8.1f} matches/s ({1000 * bare_s / n:.1f} ms a match)")
    print(f"  tournament, Redis + {args.workers} workers:     {n / platform_s:8.1f} matches/s "
          f"({1000 * platform_s / n:.1f} ms a match)")
    print(f"  ratio: {ratio:.2f}x   target >= 0.5x: {'met' if ratio >= 0.5 else 'NOT MET'}")

    driver, bare = webhook_latency(args.calls)
    d50, b50 = statistics.median(driver), statistics.median(bare)
    d99, b99 = (sorted(x)[int(0.99 * len(x))] for x in (driver, bare))
    print(f"webhook decision ({args.calls} calls each, interleaved, keep-alive, duck-soup's first decision):")
    print(f"  bare requests POST:   p50 {1000 * b50:.3f} ms   p99 {1000 * b99:.3f} ms")
    print(f"  WebhookDriver.ask:    p50 {1000 * d50:.3f} ms   p99 {1000 * d99:.3f} ms")
    print(f"  ratio (p50): {d50 / b50:.2f}x   target <= 1.3x: {'met' if d50 / b50 <= 1.3 else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
