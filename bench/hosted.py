"""What hosting a bot in its sandbox costs, against the same bot in-process. Measured in one run.

    python bench/hosted.py [--rounds R] [--decisions N] [--starts S] [--matches M] [--game G]

Three figures, each in `--rounds` rounds (at least 3) whose sides alternate
(in-process, hosted, in-process, …), each round printed with the machine's
load, then min / median / max over the rounds:

1. **overhead per decision** — the wall time of the seat driver's `ask` for
   the same decisions (a double-carre match's, replayed), the bot
   `example_bots.random:RandomBot` (its own work negligible): in-process
   (`worker.drivers.inprocess`) against hosted (`worker.drivers.hosted`, one
   sandbox kept for the round, as a match keeps its seat's); the figure is
   the difference of the p50s. Target: <= 2 ms more.
2. **sandbox start** — `core.sandbox.Sandbox.start()` of the game's example
   heuristic (`example_bots/<game>.py`, uploaded as one file), to its ready
   report: p50 of `--starts`, wall time (target: <= 300 ms), and the CPU time
   its processes used (what a busy machine makes the wall time of); beside
   it, interleaved, the floor: the same bubblewrap running a bare interpreter
   (`python -I -S -c pass`), what any sandboxed Python start costs.
3. **ladder matches/s** — 8 bots of the example heuristic (all hosted, or
   all in-process), `--matches` matches between them (seats drawn in a
   seeded order, every rotation of each deal), played by 2 worker processes
   each running the platform's match runner on the embedded Redis, timed
   from when both are ready; with the CPU a match cost (the workers', the
   sandboxes'), and the ratio of those CPU costs. Target: hosted >= 0.5x the
   in-process rate.
"""

from __future__ import annotations

import argparse
import base64
import multiprocessing
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GAME = "double-carre"
#: each game's example heuristic: its module in example_bots, and its class
HEURISTICS = {"double-carre": ("double_carre", "DoubleCarreHeuristic"),
              "duck-soup": ("duck_soup", "DuckSoupHeuristic"),
              "double": ("double", "DoubleHeuristic"),
              "soupe-gertrude": ("soupe_gertrude", "SoupeGertrudeHeuristic")}
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

def children_cpu_ms() -> float:
    """CPU time of this process's reaped children (a sandbox's processes once killed), in ms."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


def start_round(code: str, entrypoint: str, starts: int) -> tuple[float, float, float]:
    """p50 of the starts' wall time, and of their CPU time (the sandbox's processes', as reaped:
    bubblewrap waits for the bot's process, this one for bubblewrap), and p50 of the floor's CPU
    time (the same sandbox running a bare interpreter), in ms, the two interleaved."""
    from core import hosted_code
    from core.sandbox import Sandbox

    folder = hosted_code.runnable_dir(code)
    times, cpu, floor = [], [], []
    for _ in range(starts):
        before = children_cpu_ms()
        box = Sandbox(folder, entrypoint)
        box.start()
        times.append(box.started_s * 1000)
        box.kill()
        cpu.append(children_cpu_ms() - before)
        before = children_cpu_ms()
        bare_interpreter(folder)
        floor.append(children_cpu_ms() - before)
    return statistics.median(times), statistics.median(cpu), statistics.median(floor)


def bare_interpreter(folder: str) -> None:
    """Run `python -I -S -c pass` in the sandbox a bot gets (its limits, namespaces and mounts)."""
    from core import sandbox

    info_r, info_w = os.pipe()
    words = sandbox.command(folder, None, info_w, sandbox.memory_bytes())
    words[-1] = "pass"  # without an entrypoint, the runner's bootstrap is the command's last word
    uid = sandbox.sandbox_uid()
    try:
        subprocess.run(words, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       pass_fds=(info_w,), env={"PATH": "/usr/bin:/bin"}, user=uid, group=uid,
                       extra_groups=[] if uid is not None else None, check=True, timeout=sandbox.START_S)
    finally:
        os.close(info_r)
        os.close(info_w)
        sandbox.free_uid(uid)


# -- 3. ladder matches/s ------------------------------------------------------------------

def play_matches(redis_url: str, match_ids: list[str], ready, used) -> None:
    """Play `match_ids` one after another, as a worker process does, once every worker is
    `ready` (a barrier); put the CPU they cost (this process's, its sandboxes') on `used`."""
    import redis

    from core.store import Store, secret_key
    from worker.drivers import hosted
    from worker.match_runner import MatchRunner

    client = redis.Redis.from_url(redis_url)
    store = Store(client, secret_key(client))
    ready.wait()
    own = time.process_time()
    sandboxes = children_cpu_ms()
    for mid in match_ids:
        status = MatchRunner(store, mid).run()
        assert status == "finished", (mid, status)
    hosted.stop_all()
    used.put(((time.process_time() - own) * 1000, children_cpu_ms() - sandboxes))


def ladder_round(kind: str, redis_url: str, game: str, code: str, entrypoint: str, matches: int,
                 seed: int) -> tuple[float, float, float]:
    """Matches/s of `matches` matches between 8 bots of `kind`, and the CPU a match cost (ms):
    the worker processes', their sandboxes'."""
    import redis

    import games
    from core.store import Store, secret_key

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    store = Store(client, secret_key(client))
    bots = []
    for i in range(BOTS):
        if kind == "hosted":
            bot, _ = store.create_bot("acct_bench", f"hosted{i}", game, "hosted", entrypoint=entrypoint, code=code,
                                      max_concurrent=64)
        else:
            module, cls = HEURISTICS[game]
            bot, _ = store.create_bot("acct_bench", f"python{i}", game, "python",
                                      entrypoint=f"example_bots.{module}:{cls}")
        bots.append(bot["id"])
    rng = random.Random(seed)
    seats = games.get(game).ladder_seats
    ids: list[str] = []
    deal = 0
    while len(ids) < matches:
        table = rng.sample(bots, seats)
        for turn in range(seats):  # every rotation of the deal
            ids.append(store.create_match(game, table[turn:] + table[:turn], seed * 1000 + deal, {},
                                          time_bank_ms=10000)["id"])
        deal += 1
    ready = multiprocessing.Barrier(WORKERS + 1)
    used: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=play_matches, args=(redis_url, ids[w::WORKERS], ready, used))
             for w in range(WORKERS)]
    for p in procs:
        p.start()
    ready.wait()
    began = time.perf_counter()
    costs = [used.get(timeout=600) for _ in procs]
    rate = len(ids) / (time.perf_counter() - began)
    for p in procs:
        p.join()
        assert p.exitcode == 0, p.exitcode
    return rate, sum(c[0] for c in costs) / len(ids), sum(c[1] for c in costs) / len(ids)


# -- the run ------------------------------------------------------------------------------------

def spread(values: list[float]) -> str:
    return f"min {min(values):.2f}  median {statistics.median(values):.2f}  max {max(values):.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--decisions", type=int, default=300)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--game", choices=sorted(HEURISTICS), default=GAME,
                        help="the game of figures 2 and 3, played by its example heuristic")
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
    module, cls = HEURISTICS[args.game]
    heuristic_code, heuristic_entry = stored_code(ROOT / "example_bots" / f"{module}.py", module, cls)
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

    print(f"2. sandbox start of the {args.game} heuristic: p50 of {args.starts} starts a round (ms)")
    starts, cpus, floors = [], [], []
    for r in range(args.rounds):
        wall, cpu, floor = start_round(heuristic_code, heuristic_entry, args.starts)
        starts.append(wall)
        cpus.append(cpu)
        floors.append(floor)
        print(f"   round {r + 1}: {wall:.1f} wall, {cpu:.1f} CPU, floor {floor:.1f} CPU  ({load()})")
    print(f"   start (ms, wall): {spread(starts)}  target <= 300: "
          f"{'MET' if statistics.median(starts) <= 300 else 'NOT MET'}")
    print(f"   its CPU (ms): {spread(cpus)}")
    print(f"   the floor, a bare interpreter in the same sandbox (ms of CPU): {spread(floors)}")

    print(f"3. ladder of {args.game}: {BOTS} bots, {args.matches} matches a round on {WORKERS} worker processes "
          "(matches/s; CPU a match: workers + sandboxes, ms)")
    ratios, cpu_ratios = [], []
    with EmbeddedRedis() as server:
        for r in range(args.rounds):
            inproc, in_cpu, _ = ladder_round("in-process", server.url, args.game, heuristic_code, heuristic_entry,
                                             args.matches, r + 1)
            hosted_rate, workers_cpu, boxes_cpu = ladder_round("hosted", server.url, args.game, heuristic_code,
                                                               heuristic_entry, args.matches, r + 1)
            ratios.append(hosted_rate / inproc)
            cpu_ratios.append(in_cpu / (workers_cpu + boxes_cpu))
            print(f"   round {r + 1}: in-process {inproc:.2f} ({in_cpu:.0f} ms)  hosted {hosted_rate:.2f} "
                  f"({workers_cpu:.0f} + {boxes_cpu:.0f} ms)  ratio {ratios[-1]:.2f}, by CPU {cpu_ratios[-1]:.2f}  "
                  f"({load()})")
    print(f"   hosted / in-process: {spread(ratios)}  target >= 0.5: "
          f"{'MET' if statistics.median(ratios) >= 0.5 else 'NOT MET'}")
    print(f"   by the CPU a match cost (the rate of a machine the bench has to itself, Redis aside): "
          f"{spread(cpu_ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
