"""What hosting a bot in its sandbox costs, against the same bot in-process. Measured in one run.

    python bench/hosted.py [--rounds R] [--decisions N] [--starts S] [--matches M]

Three figures, each in `--rounds` rounds (at least 3) whose sides alternate
(in-process, hosted, in-process, …), each round printed with the machine's
load, then min / median / max over the rounds:

1. **overhead per decision** — the wall time of the seat driver's `ask` for
   the same decisions (a double-carre match's, replayed), the bot
   `example_bots.random:RandomBot` (its own work negligible): in-process
   (`worker.drivers.inprocess`) against hosted (`worker.drivers.hosted`, one
   sandbox kept for the round, as a match keeps its seat's); the figure is
   the difference of the p50s. Target: <= 2 ms more.
2. **sandbox start** — `core.sandbox.Sandbox.start()` of the example
   heuristic (`example_bots/double_carre.py`, uploaded as one file), to its
   ready report: p50 of `--starts`, wall time (target: <= 300 ms), and the
   CPU time its processes used (what a busy machine makes the wall time of).
3. **ladder matches/s** — 8 bots of the example heuristic (all hosted, or
   all in-process), `--matches` matches between them (pairs in a seeded
   order, both rotations of each deal), played by 2 worker processes each
   running the platform's match runner on the embedded Redis. Target: hosted
   >= 0.5x the in-process rate.
"""

from __future__ import annotations

import argparse
import base64
import multiprocessing
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GAME = "double-carre"
HEURISTIC = "example_bots.double_carre:DoubleCarreHeuristic"
HEURISTIC_FILE = ROOT / "example_bots" / "double_carre.py"
RANDOM = "example_bots.random:RandomBot"
RANDOM_FILE = ROOT / "example_bots" / "random.py"
WORKERS = 2
BOTS = 8


def load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def stored_code(path: Path, module: str, cls: str) -> tuple[str, str]:
    from core import hosted_code

    files = hosted_code.files_of(base64.b64encode(path.read_bytes()).decode(), f"{module}:{cls}")
    return hosted_code.store(files), f"{module}:{cls}"


def decisions(n: int) -> list[dict]:
    """`n` decisions of double-carre matches, as the referee sends them (first legal action played)."""
    from sdk.referee import MatchReferee

    out: list[dict] = []
    seed = 0
    while len(out) < n:
        ref = MatchReferee(GAME, 2, seed, {}, 3, 2000, 0)
        while not ref.is_over and len(out) < n:
            decision = ref.decision(f"m_bench{seed}")
            out.append(decision)
            ref.record(ref.answered(decision["legal_actions"][0], 1))
        seed += 1
    return out


# -- 1. overhead per decision ----------------------------------------------------

def ask_times(driver, asked: list[dict]) -> list[float]:
    times = []
    for decision in asked:
        began = time.perf_counter()
        reply = driver.ask(decision)
        times.append((time.perf_counter() - began) * 1000)
        assert reply.fault is None, (reply.fault, reply.debug)
    return times


def overhead_round(kind: str, asked: list[dict], code: str) -> float:
    from sdk.watchdog import watchdog
    from worker.drivers.hosted import HostedDriver
    from worker.drivers.inprocess import InProcessDriver
    from worker.match_runner import Context

    if kind == "in-process":
        driver = InProcessDriver({"entrypoint": RANDOM}, Context(watchdog(), "m_bench"))
        return statistics.median(ask_times(driver, asked))
    module, _, cls = RANDOM.rpartition(":")
    driver = HostedDriver({"code": code, "entrypoint": f"random_bot:{cls}"}, "m_bench", 0)
    driver.ask(asked[0])  # its start is figure 2's
    p50 = statistics.median(ask_times(driver, asked))
    driver.match_over("m_bench", {})
    driver.close()
    return p50


# -- 2. sandbox start --------------------------------------------------------------

def start_round(code: str, entrypoint: str, starts: int) -> tuple[float, float]:
    """p50 of the starts' wall time, and of their CPU time (the sandbox's processes', as reaped:
    bubblewrap waits for the bot's process, this one for bubblewrap), in ms."""
    from core import hosted_code
    from core.sandbox import Sandbox

    folder = hosted_code.runnable_dir(code)
    times, cpu = [], []
    for _ in range(starts):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        box = Sandbox(folder, entrypoint)
        box.start()
        times.append(box.started_s * 1000)
        box.kill()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return statistics.median(times), statistics.median(cpu)


# -- 3. ladder matches/s ------------------------------------------------------------------

def play_matches(redis_url: str, match_ids: list[str]) -> None:
    import redis

    from core.store import Store, secret_key
    from worker.drivers import hosted
    from worker.match_runner import MatchRunner

    client = redis.Redis.from_url(redis_url)
    store = Store(client, secret_key(client))
    for mid in match_ids:
        status = MatchRunner(store, mid).run()
        assert status == "finished", (mid, status)
    hosted.stop_all()


def ladder_round(kind: str, redis_url: str, code: str, entrypoint: str, matches: int, seed: int) -> float:
    import redis

    from core.store import Store, secret_key

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    store = Store(client, secret_key(client))
    bots = []
    for i in range(BOTS):
        if kind == "hosted":
            bot, _ = store.create_bot("acct_bench", f"hosted{i}", GAME, "hosted", entrypoint=entrypoint, code=code,
                                      max_concurrent=64)
        else:
            bot, _ = store.create_bot("acct_bench", f"python{i}", GAME, "python", entrypoint=HEURISTIC)
        bots.append(bot["id"])
    rng = random.Random(seed)
    pairs = [(a, b) for i, a in enumerate(bots) for b in bots[i + 1:]]
    rng.shuffle(pairs)
    ids = []
    for n in range(matches // 2):
        a, b = pairs[n % len(pairs)]
        for seats in ((a, b), (b, a)):  # both rotations of the deal
            ids.append(store.create_match(GAME, list(seats), seed * 1000 + n, {}, time_bank_ms=10000)["id"])
    began = time.perf_counter()
    procs = [multiprocessing.Process(target=play_matches, args=(redis_url, ids[w::WORKERS])) for w in range(WORKERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0, p.exitcode
    return len(ids) / (time.perf_counter() - began)


# -- the run ------------------------------------------------------------------------------------

def spread(values: list[float]) -> str:
    return f"min {min(values):.2f}  median {statistics.median(values):.2f}  max {max(values):.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--matches", type=int, default=40)
    args = parser.parse_args()
    if args.rounds < 3:
        parser.error("at least 3 rounds")

    from core import sandbox
    from core.redis_server import EmbeddedRedis

    reason = sandbox.unavailable()
    if reason:
        print(f"no sandbox here: {reason}")
        return 1
    os.environ.setdefault("CARDARENA_CODE", tempfile.mkdtemp(prefix="cardarena-bench-code-"))
    os.environ["CARDARENA_ARCHIVE"] = "off"
    random_code, _ = stored_code(RANDOM_FILE, "random_bot", "RandomBot")
    heuristic_code, heuristic_entry = stored_code(HEURISTIC_FILE, "double_carre", "DoubleCarreHeuristic")
    asked = decisions(args.decisions)

    print(f"1. overhead per decision: {args.decisions} decisions a round, p50 of the driver's ask (ms)")
    extra = []
    for r in range(args.rounds):
        first = overhead_round("in-process", asked, random_code)
        hosted_p50 = overhead_round("hosted", asked, random_code)
        second = overhead_round("in-process", asked, random_code)
        base = (first + second) / 2
        extra.append(hosted_p50 - base)
        print(f"   round {r + 1}: in-process {base:.3f}  hosted {hosted_p50:.3f}  more {hosted_p50 - base:.3f}  ({load()})")
    print(f"   hosted more per decision (ms): {spread(extra)}  target <= 2: "
          f"{'MET' if statistics.median(extra) <= 2 else 'NOT MET'}")

    print(f"2. sandbox start: p50 of {args.starts} starts a round (ms)")
    starts, cpus = [], []
    for r in range(args.rounds):
        wall, cpu = start_round(heuristic_code, heuristic_entry, args.starts)
        starts.append(wall)
        cpus.append(cpu)
        print(f"   round {r + 1}: {wall:.1f} wall, {cpu:.1f} CPU  ({load()})")
    print(f"   start (ms, wall): {spread(starts)}  target <= 300: "
          f"{'MET' if statistics.median(starts) <= 300 else 'NOT MET'}")
    print(f"   its CPU (ms): {spread(cpus)}")

    print(f"3. ladder: {BOTS} bots, {args.matches} matches a round on {WORKERS} worker processes (matches/s)")
    ratios = []
    with EmbeddedRedis() as server:
        for r in range(args.rounds):
            inproc = ladder_round("in-process", server.url, heuristic_code, heuristic_entry, args.matches, r + 1)
            hosted_rate = ladder_round("hosted", server.url, heuristic_code, heuristic_entry, args.matches, r + 1)
            ratios.append(hosted_rate / inproc)
            print(f"   round {r + 1}: in-process {inproc:.2f}  hosted {hosted_rate:.2f}  "
                  f"ratio {ratios[-1]:.2f}  ({load()})")
    print(f"   hosted / in-process: {spread(ratios)}  target >= 0.5: "
          f"{'MET' if statistics.median(ratios) >= 0.5 else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
