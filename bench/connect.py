"""How many turns a minute `sdk.connect` plays in a tournament, and what bounds it.

    .venv/bin/python bench/connect.py [--game duck-soup] [--seconds 20] [--rounds 3] [--workers 2]

Starts what a deployment runs — a private Redis, `cardarena serve` (default
limits on: 1,200 requests a minute per credential) and `cardarena worker -n
2` — registers one polling bot (`sdk.connect`, playing random legal actions)
and three in-process random bots. Each of `--rounds` rounds runs duplicate
round-robins for `--seconds` with an in-process random bot in the measured
seat (the baseline), then as long with the polling bot there. It prints,
min / median / max over the rounds, with the load after each round:

* the polling bot's turns a minute, its faults and forfeits (issue 13's
  target: ≥ 3,000 a minute, 0 faults; before, the per-minute limit stopped
  it near 600 and it forfeited);
* the baseline's: the same tournaments with the in-process random bot in
  its place (turns a minute of that seat), and the ratio of the two;
* what bounds it: no worker waits on the polling seat (a match's run ends at
  its turn and the answer starts the next), so the bot answers the decisions
  of up to `max_concurrent` (4) matches at once, and each of them moves at the
  pace of its round trip (publish → long-poll wakes → act → POST → the next
  run plays the other seats and publishes again): 4 × 60 / that round trip,
  measured per match at the bot.

Every wait (the API up, the workers registered, a tournament over) is for
the event itself, within a bound generous enough for a busy machine; a read
that times out on the way is retried, not fatal (bench/remote.py,
bench/fairshare.py and bench/compare.py start their platform here too).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402
import requests  # noqa: E402
from rq import Worker  # noqa: E402

from core.redis_server import EmbeddedRedis, free_port  # noqa: E402
from sdk import Bot, CardarenaError, Client, connect  # noqa: E402

ADMIN = "bench-admin-token-0123456789"
#: the polling bot's max_concurrent (the default) and `connect`'s concurrency: its matches at once
SLOTS = 4
RANDOM = "example_bots.random:RandomBot"
#: how long a wait for the platform may take on a busy machine before the bench gives up
PATIENCE_S = 300.0
#: the SDK clients' (connect, read) timeouts: a read outlasts a busy machine's stall
CLIENT_TIMEOUT = (10.0, 120.0)


class Timed(Bot):
    """Random legal actions; records when each decision of each match reached it (the bot's side
    of the clock)."""

    def __init__(self) -> None:
        self.rng = random.Random(1)
        self.seen: dict[str, list[float]] = {}

    def decide(self, decision):
        self.seen.setdefault(decision["match_id"], []).append(time.monotonic())
        return self.rng.choice(decision["legal_actions"])


def start(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cardarena.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        proc.kill()


def wait_up(url: str, api: subprocess.Popen) -> None:
    """Until the API answers (a refused connection or a read timeout: not yet)."""
    end = time.monotonic() + PATIENCE_S
    while time.monotonic() < end and api.poll() is None:
        try:
            requests.get(url + "/api/v1/games", timeout=10)
            return
        except requests.RequestException:
            time.sleep(0.1)
    raise RuntimeError(f"the API did not answer within {PATIENCE_S:.0f} s (exit status {api.poll()})")


def wait_workers(redis_url: str, workers: int, pool: subprocess.Popen) -> None:
    """Until `workers` RQ workers have registered (each is up and waiting for jobs)."""
    connection = redis.Redis.from_url(redis_url)
    end = time.monotonic() + PATIENCE_S
    while time.monotonic() < end and pool.poll() is None:
        if Worker.count(connection=connection) >= workers:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{workers} workers did not register within {PATIENCE_S:.0f} s")


def wait_over(client: Client, tournament: str) -> None:
    """Until the tournament is over; a request that times out or is refused is asked again."""
    end = time.monotonic() + PATIENCE_S
    while time.monotonic() < end:
        try:
            if client.tournament(tournament).over:
                return
        except CardarenaError as exc:
            if exc.status not in (None, 429, 503):  # None: no answer in time
                raise
        time.sleep(0.2)
    raise RuntimeError(f"tournament {tournament} not over within {PATIENCE_S:.0f} s")


@contextlib.contextmanager
def running_platform(workers: int) -> Iterator[tuple[str, str]]:
    """A private Redis, `cardarena serve` and `cardarena worker -n workers`, up; the API's URL
    and the Redis URL.
    Everything is stopped on the way out (bench/remote.py and bench/fairshare.py start their
    platform here too). The ladder is off (`CARDARENA_LADDER_MATCHES` 0, unless set): its
    matchmaker would pair the benches' bots — idle ones too — into matches nobody measures."""
    with EmbeddedRedis() as redis_server:
        port = free_port()
        env = {"CARDARENA_LADDER_MATCHES": "0", **os.environ, "REDIS_URL": redis_server.url,
               "CARDARENA_ADMIN_TOKEN": ADMIN}
        api = start(["serve", "--port", str(port)], env)
        pool = start(["worker", "-n", str(workers)], env)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_up(url, api)
            wait_workers(redis_server.url, workers, pool)
            yield url, redis_server.url
        finally:
            stop(pool)
            stop(api)


def play(admin: Client, owner: Client, game: str, seat_bot: str, others: list[str], seconds: float) -> tuple:
    """Round-robins until `seconds` passed; (turns of `seat_bot`, elapsed s, its log entries
    with a fault, forfeited ones included)."""
    turns, faults = 0, 0
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        t = owner.create_tournament(game, [seat_bot, *others], deals=4, move_timeout_ms=2000)
        wait_over(owner, t.id)
        for m in owner.tournament_matches(t):
            full = admin.request("GET", f"/matches/{m.id}")
            seats = [s["bot"] for s in full["seats"]]
            mine = [e for e in full["log"] if seats[e["seat"]] == seat_bot]
            turns += len(mine)
            faults += sum(1 for e in mine if "fault" in e)
    return turns, time.monotonic() - began, faults


def spread(values: list[float], digits: int = 0) -> str:
    return f"{min(values):.{digits}f} / {statistics.median(values):.{digits}f} / {max(values):.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="duck-soup")
    parser.add_argument("--seconds", type=float, default=20.0, help="each side, each round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    with running_platform(args.workers) as (url, _):
        admin = Client(url, token=ADMIN, timeout=CLIENT_TIMEOUT)
        owner = Client(url, timeout=CLIENT_TIMEOUT)
        owner.create_account("bench")
        randoms = [admin.register_bot(f"random{i}", args.game, kind="python", entrypoint=RANDOM).id
                   for i in range(4)]
        polling = owner.register_bot("poller", args.game, kind="polling", max_concurrent=SLOTS)
        bot = Timed()
        poller = connect(bot, url, secret=polling.secret, wait=25, block=False, concurrency=SLOTS)
        print(f"{args.game}, {args.workers} worker processes, {os.cpu_count()} CPUs, load {loads[0]:.2f}, "
              f"{args.rounds} rounds of ~{args.seconds:.0f} s a side", flush=True)
        base_rates, rates, ratios, all_faults, p50s = [], [], [], [], []
        try:
            for round_ in range(args.rounds):
                base_turns, base_s, _ = play(admin, owner, args.game, randoms[3], randoms[:3], args.seconds)
                bot.seen.clear()
                turns, elapsed, faults = play(admin, owner, args.game, polling.id, randoms[:3], args.seconds)
                base_rates.append(base_turns / base_s * 60)
                rates.append(turns / elapsed * 60)
                ratios.append(rates[-1] / base_rates[-1])
                all_faults.append(faults)
                gaps = [b - a for times in bot.seen.values() for a, b in zip(times, times[1:], strict=False)]
                if gaps:
                    p50s.append(statistics.median(gaps) * 1000)
                loads.append(os.getloadavg()[0])
                print(f"round {round_ + 1}: baseline {base_rates[-1]:.0f}, sdk.connect {rates[-1]:.0f} turns/min, "
                      f"faults {faults}, load {loads[-1]:.2f}", flush=True)
        finally:
            poller.stop(timeout=60)
        print("min / median / max over the rounds:", flush=True)
        print(f"baseline: in-process random seat   {spread(base_rates)} turns/min", flush=True)
        print(f"sdk.connect polling seat           {spread(rates)} turns/min   faults {sum(all_faults)}"
              f"   (x{spread(ratios, 2)} of baseline; target >= 3000/min, 0 faults)", flush=True)
        if p50s:
            print(f"  one match's decision to its next at the bot, p50 {spread(p50s, 1)} ms -> bound with "
                  f"{SLOTS} matches at once ~ {spread([SLOTS * 60_000 / p for p in p50s])} turns/min; the poller "
                  f"answered {poller.stats.answered}, refused {poller.stats.refused}, in {poller.stats.polls} polls",
                  flush=True)
        print(f"load {min(loads):.2f}-{max(loads):.2f} (start {loads[0]:.2f}, after each round "
              f"{', '.join(f'{x:.2f}' for x in loads[1:])})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
