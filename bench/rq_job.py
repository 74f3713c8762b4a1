"""What RQ's own bookkeeping costs per job: the price of running every match run as an RQ job.

    .venv/bin/python bench/rq_job.py [--jobs 300] [--rounds 3]

Each unit of a worker's work is an RQ job (core/store/jobs.py), a match's
run after each remote decision included. On a private Redis, each round
runs `--jobs` jobs of a function that does nothing, interleaved two ways:

* RQ: enqueued as the platform enqueues a run (`Queue.prepare_data` and
  `enqueue_many` in a transaction, a deterministic id, a retry, no result
  kept), then run by RQ's `SimpleWorker` loop (`work(burst=True)`);
* a bare list: the same ids pushed on a Redis list and popped by a loop
  that calls the function: no job record, registry or heartbeat.

It prints, per way, the CPU of the enqueueing side and of the worker, and
the Redis commands a job costs, min/median/max over the rounds, and the
machine's load. The difference is what a remote decision pays for RQ's
bookkeeping (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402
from rq import Queue, Retry, SimpleWorker  # noqa: E402

from core.redis_server import EmbeddedRedis  # noqa: E402


def nothing(*args) -> None:
    """The job: nothing, so only the bookkeeping around it is measured."""


def commands(r: redis.Redis) -> int:
    return sum(v["calls"] for v in r.info("commandstats").values())


def through_rq(r: redis.Redis, name: str, n: int) -> tuple[float, float, float]:
    queue = Queue(name, connection=r)
    r.config_resetstat()
    began = time.process_time()
    for i in range(n):
        data = [Queue.prepare_data("rq_job.nothing", args=(str(i), i), job_id=f"{name}-{i}-{i}", timeout=3600,
                                   retry=Retry(max=2), result_ttl=0, failure_ttl=86400, description="nothing")]
        with r.pipeline() as pipe:
            queue.enqueue_many(data, pipeline=pipe)
            pipe.execute()
    enqueued = time.process_time()
    SimpleWorker([queue], connection=r).work(burst=True, logging_level="WARNING")
    worked = time.process_time()
    return 1000 * (enqueued - began) / n, 1000 * (worked - enqueued) / n, commands(r) / n


def through_a_list(r: redis.Redis, name: str, n: int) -> tuple[float, float, float]:
    r.config_resetstat()
    began = time.process_time()
    for i in range(n):
        r.rpush(name, f"{name}-{i}-{i}")
    enqueued = time.process_time()
    while r.blpop([name], 0.01) is not None:
        nothing()
    worked = time.process_time()
    return 1000 * (enqueued - began) / n, 1000 * (worked - enqueued) / n, commands(r) / n


def spread(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # rq_job.nothing, for RQ's worker
    found: dict[str, list[tuple[float, float, float]]] = {"RQ job": [], "bare list": []}
    loads = [os.getloadavg()[0]]
    with EmbeddedRedis() as server:
        r = redis.Redis.from_url(server.url)
        for round_ in range(args.rounds):
            found["RQ job"].append(through_rq(r, f"rq{round_}", args.jobs))
            found["bare list"].append(through_a_list(r, f"list{round_}", args.jobs))
            loads.append(os.getloadavg()[0])
    print(f"{args.jobs} jobs a round, {args.rounds} rounds interleaved; load {min(loads):.2f}-{max(loads):.2f}")
    print("per job, min / median / max:")
    for way, rows in found.items():
        print(f"  {way:9s}  enqueueing CPU {spread([r[0] for r in rows])} ms   worker CPU "
              f"{spread([r[1] for r in rows])} ms   Redis commands {spread([r[2] for r in rows])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
