"""How far a match's platform CPU is from the least a match can cost, measured in one run.

    python bench/floor.py [--game soupe-gertrude] [--seats 4] [--bots 8] [--deals 2]
                          [--rounds 3] [--batches 8,32]

Each round plays the same duplicate round-robin of in-process random bots
(bench/tournament.py's) in turn, so the machine's load falls on all alike:

* the bare engine loop (`sdk.local.play_local`, no Redis);
* the platform: the tournament run by one RQ `SimpleWorker` in this process
  (its CPU and Redis's, from /proc);
* the floor, once per batch size in `--batches`: the least work the platform's
  guarantees ask of each match, on a real Redis, a real archive and RQ, done
  for the same matches' logs. Per batch of matches: one RQ job (enqueued,
  then run), the batch's records read in one round trip, then in one
  transaction each match's log, status and result, its 48 counts (the bots'
  records, the tournament's tallies: one `add_counts` call for the batch) and
  its event; then the archive (`Archive.write_all`: each file, one sync) and
  Redis keeping each match's summary. Per match: its record created as a
  tournament's expansion creates it. Nothing else: no lock, no start step, no
  reads of the deal's other rotations.

It prints, min / median / max over the rounds, each one's CPU a match beyond
the bare loop's and the ratio to the bare loop that CPU allows on 2 cores
(2 x bare / (bare + beyond)): what a platform doing only the floor's work,
on a machine of its own, could reach against the tournament bench's target
(>= 0.6x). The floor is a bound, not a design: it shows how much of the
platform's cost is the work a match needs and how much is its unit of work.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402
from rq import Queue, SimpleWorker  # noqa: E402

from bench.tournament import CLOCK_TICKS, RANDOM, bare_loop, load, spread  # noqa: E402
from core.redis_server import EmbeddedRedis  # noqa: E402
from core.store import Store, secret_key  # noqa: E402
from core.store.archive import Archive, document  # noqa: E402
from core.store.counts import Counts  # noqa: E402
from core.store.jobs import enqueue_job, queue_name  # noqa: E402
from core.store.keys import dump_fields, load_fields  # noqa: E402
from core.store.lua import source  # noqa: E402
from core.store.matches import kept_record  # noqa: E402
from example_bots.random import RandomBot  # noqa: E402
from sdk.local import play_local  # noqa: E402
from worker.schedules import round_robin  # noqa: E402

#: what a 4-seat conclusion adds: 4 fields of each seat's bot record, 8 of its tally
BOT_FIELDS = ("matches", "wins", "faults", "ms")
TALLY_FIELDS = ("matches", "points", "score", "won", "draws", "forfeits", "faults", "ms")


def process_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def through_one_worker(store: Store, redis_pid: int, game: str, bots: list[str], seats: int,
                       deals: int) -> tuple[float, int]:
    """(CPU seconds of this process and Redis, matches) of a tournament run whole by one
    `SimpleWorker` in this process, its matches archived."""
    t = store.create_tournament(game, bots, seats=seats, deals=deals, duplicate=True, seed=1, options={})
    enqueue_job(store.r, "tournament", t["id"])
    worker = SimpleWorker([Queue(queue_name(), connection=store.r)], connection=store.r)
    cpu, redis_cpu = time.process_time(), process_cpu_s(redis_pid)
    worker.work(burst=True, logging_level="WARNING")
    while store.archive_due_count():  # its last batch: archived by the sweep in the pool
        store.archive_due(1000)
    cpu = time.process_time() - cpu + process_cpu_s(redis_pid) - redis_cpu
    assert store.tournament_statuses([t["id"]])[t["id"]] == "finished"
    return cpu, store.tournament_progress(t["id"])["total"]


def floor(r: redis.Redis, redis_pid: int, archive: Archive, game: str, played: list, batch: int,
          tag: str) -> float:
    """CPU seconds (this process and Redis) of the floor's work (see above) for `played`'s
    matches (`play_local`'s), `batch` to a job; `tag` keeps each run's keys apart."""
    add_counts = r.register_script(source("add_counts"))
    seats = len(played[0].result["ranks"])
    queue = Queue(f"floor-{tag}", connection=r)
    cpu, redis_cpu = time.process_time(), process_cpu_s(redis_pid)
    for _ in range(0, len(played), batch):  # the batches' jobs, as an expansion queues them
        queue.enqueue("os.getpid")
    SimpleWorker([queue], connection=r).work(burst=True, logging_level="WARNING")
    for b in range(0, len(played), batch):
        ids = [f"m_{tag}_{i}" for i in range(b, min(b + batch, len(played)))]
        pipe = r.pipeline(transaction=False)  # the expansion: each record, its lists
        for i, mid in enumerate(ids, start=b):
            pipe.hset(f"match:{mid}", mapping=dump_fields({
                "id": mid, "game": game, "seats": [f"b{s}" for s in range(seats)], "seed": i, "options": {},
                "status": "queued", "tournament": f"t_{tag}", "max_faults": 3, "move_timeout_ms": 1000,
                "time_bank_ms": 0, "created": "2026-01-01T00:00:00+00:00", "twins": ids[:seats]}))
            pipe.zadd("matches", {mid: i})
            pipe.zadd(f"matches:game:{game}", {mid: i})
            for s in range(seats):
                pipe.zadd(f"bot:b{s}:matches", {mid: i})
        pipe.execute()
        pipe = r.pipeline(transaction=False)  # the batch's start: its records
        for mid in ids:
            pipe.hgetall(f"match:{mid}")
        records = {mid: load_fields(raw) for mid, raw in zip(ids, pipe.execute(), strict=True)}
        logs = {}
        pipe = r.pipeline()  # its end: one transaction
        counts = Counts()
        for mid, match in zip(ids, played[b:b + batch], strict=False):
            logs[mid] = [json.dumps(e, separators=(",", ":")).encode() for e in match.log]
            pipe.rpush(f"match:{mid}:log", *logs[mid])
            records[mid].update(status="finished", result=match.result, finished="2026-01-01T00:00:01+00:00")
            pipe.hset(f"match:{mid}", mapping=dump_fields({k: records[mid][k] for k in ("status", "result", "finished")}))
            pipe.publish(f"match:{mid}:events", "finished")
            for s in range(seats):
                for field in BOT_FIELDS:
                    counts.add(f"bot:b{s}", field, 1)
                for field in TALLY_FIELDS:
                    counts.add(f"tally:t_{tag}:b{s}", field, 1)
        counts.queue(pipe, add_counts)
        pipe.execute()
        archive.write_all({mid: document(dict(sorted(records[mid].items())), logs[mid], {}) for mid in ids})
        pipe = r.pipeline()
        for mid in ids:
            pipe.delete(f"match:{mid}", f"match:{mid}:log")
            pipe.hset(f"match:{mid}", mapping=kept_record(records[mid]))
        pipe.execute()
    return time.process_time() - cpu + process_cpu_s(redis_pid) - redis_cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="soupe-gertrude")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--deals", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", default="8,32", help="matches a job, comma-separated")
    args = parser.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    schedule = round_robin([f"b{i}" for i in range(args.bots)], args.seats, args.deals, True, 1)
    n = len(schedule.matches)
    print(f"{args.game}, {args.seats} seats: round-robin of {args.bots} random bots, {args.deals} deals a "
          f"table, duplicate: {n} matches; {args.rounds} rounds, each: bare loop, one worker, then the floor at "
          + ", ".join(f"{b} a job" for b in batches))
    played = [play_local(args.game, [RandomBot() for _ in m.bots], seed=m.seed) for m in schedule.matches]
    os.environ.setdefault("CARDARENA_ARCHIVE", tempfile.mkdtemp(prefix="cardarena-bench-archive-"))
    import worker.process

    worker.process.preload()
    bare_ms: list[float] = []
    beyond: dict[str, list[float]] = {name: [] for name in ["platform", *(f"floor, {b} a job" for b in batches)]}
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        redis_pid = int(client.info("server")["process_id"])
        store = Store(client, secret_key(client))
        archive = Archive(tempfile.mkdtemp(prefix="cardarena-bench-floor-"))
        bots = [store.create_bot("bench", f"random{i}", args.game, "python", entrypoint=RANDOM)[0]["id"]
                for i in range(args.bots)]
        through_one_worker(store, redis_pid, args.game, bots, args.seats, args.deals)  # warm: imports, scripts
        for round_no in range(1, args.rounds + 1):
            line = [f"round {round_no} ({load()}): "]
            _, bare_cpu_s = bare_loop(args.game, schedule)
            bare_ms.append(1000 * bare_cpu_s / n)
            line.append(f"bare {bare_ms[-1]:.2f} ms")
            cpu, total = through_one_worker(store, redis_pid, args.game, bots, args.seats, args.deals)
            assert total == n, (total, n)
            beyond["platform"].append(1000 * cpu / n - bare_ms[-1])
            for b in batches:
                cpu = floor(client, redis_pid, archive, args.game, played, b, f"{round_no}_{b}")
                beyond[f"floor, {b} a job"].append(1000 * cpu / n)
            line += [f"{name} +{values[-1]:.2f} ms" for name, values in beyond.items()]
            print("  " + line[0] + ", ".join(line[1:]) + f" [{load()}]", flush=True)
        client.close()
    print(f"  min / median / max over {args.rounds} rounds [{load()}]:")
    print(f"  bare engine loop: {spread(bare_ms)} ms CPU a match")
    for name, values in beyond.items():
        allows = [2 * bare / (bare + extra) for bare, extra in zip(bare_ms, values, strict=True)]
        print(f"  {name + ':':18s} {spread(values)} ms CPU a match beyond it; "
              f"ratio that allows on 2 cores {spread(allows)}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
