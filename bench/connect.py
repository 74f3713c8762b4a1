"""How many turns a minute `sdk.connect` plays in a tournament, and what bounds it.

    .venv/bin/python bench/connect.py [--game duck-soup] [--seconds 60] [--workers 2]

Starts what a deployment runs — a private Redis, `cardarena serve` (default
limits on: 1,200 requests a minute per credential) and `cardarena worker -n
2` — registers one polling bot (`sdk.connect`, playing random legal actions)
and three in-process random bots, and runs duplicate round-robins until
`--seconds` have passed. It prints:

* the polling bot's turns a minute, its faults and forfeits (issue 13's
  target: ≥ 3,000 a minute, 0 faults; before, the per-minute limit stopped
  it near 600 and it forfeited);
* the baseline, in the same run: the same tournament with an in-process
  random bot in its place (turns a minute of that seat);
* what bounds it: no worker waits on the polling seat (a match's run ends at
  its turn and the answer starts the next), so the bot answers the decisions
  of up to `max_concurrent` (4) matches at once, and each of them moves at the
  pace of its round trip (publish → long-poll wakes → act → POST → the next
  run plays the other seats and publishes again): 4 × 60 / that round trip,
  measured per match at the bot.
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

import requests  # noqa: E402

from core.redis_server import EmbeddedRedis, free_port  # noqa: E402
from sdk import Bot, Client, connect  # noqa: E402

ADMIN = "bench-admin-token-0123456789"
#: the polling bot's max_concurrent (the default) and `connect`'s concurrency: its matches at once
SLOTS = 4
RANDOM = "example_bots.random:RandomBot"


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


def wait_up(url: str) -> None:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        try:
            requests.get(url + "/api/v1/games", timeout=1)
            return
        except requests.ConnectionError:
            time.sleep(0.1)
    raise RuntimeError("the API did not start")


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
            wait_up(url)
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
        t = owner.wait_tournament(t, progress=False, timeout=600, poll=0.2)
        for m in owner.tournament_matches(t):
            full = admin.request("GET", f"/matches/{m.id}")
            seats = [s["bot"] for s in full["seats"]]
            mine = [e for e in full["log"] if seats[e["seat"]] == seat_bot]
            turns += len(mine)
            faults += sum(1 for e in mine if "fault" in e)
    return turns, time.monotonic() - began, faults


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="duck-soup")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with running_platform(args.workers) as (url, _):
        admin, owner = Client(url, token=ADMIN), Client(url)
        owner.create_account("bench")
        randoms = [admin.register_bot(f"random{i}", args.game, kind="python", entrypoint=RANDOM).id
                   for i in range(4)]
        polling = owner.register_bot("poller", args.game, kind="polling", max_concurrent=SLOTS)
        bot = Timed()
        poller = connect(bot, url, secret=polling.secret, wait=25, block=False, concurrency=SLOTS)
        time.sleep(2.0)  # workers up
        load = os.getloadavg()[0]
        print(f"{args.game}, {args.workers} worker processes, {os.cpu_count()} CPUs, load {load:.2f}, "
              f"~{args.seconds:.0f} s each", flush=True)
        base_turns, base_s, _ = play(admin, owner, args.game, randoms[3], randoms[:3], args.seconds)
        base_rate = base_turns / base_s * 60
        print(f"baseline: in-process random seat   {base_rate:9.0f} turns/min", flush=True)
        turns, elapsed, faults = play(admin, owner, args.game, polling.id, randoms[:3], args.seconds)
        poller.stop(timeout=30)
        rate = turns / elapsed * 60
        gaps = [b - a for times in bot.seen.values() for a, b in zip(times, times[1:], strict=False)]
        print(f"sdk.connect polling seat           {rate:9.0f} turns/min   faults {faults}"
              f"   (x{rate / base_rate:.2f} of baseline; target >= 3000/min, 0 faults)", flush=True)
        if gaps:
            p50 = statistics.median(gaps)
            print(f"  one match's decision to its next at the bot: p50 {p50 * 1000:.1f} ms -> bound with "
                  f"{SLOTS} matches at once ~ {SLOTS * 60 / p50:.0f} turns/min; the poller answered "
                  f"{poller.stats.answered}, refused {poller.stats.refused}, in {poller.stats.polls} polls",
                  flush=True)
        print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
