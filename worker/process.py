"""One worker process of the pool: an RQ worker on the cardarena queue (or `--queue`).

    python -m worker.process REDIS_URL [--fork] [--queue QUEUE]

The pool (worker/pool.py) starts N of these. Each runs RQ's own worker loop
over every job of the queue — a tournament's expansion, a comparison's
schedule, a match's first run and each run continuing a match after a
remote bot's turn (core/store/jobs.py). By default a worker runs its jobs
itself (RQ's `SimpleWorker`): forking a work horse per job costs more than
most runs, and what a horse would contain is contained already — a bot that
raises or hangs costs a fault (the runner, the watchdog), a crash of the
process loses nothing (the pool starts another, the recovery sweep enqueues
its match again). A worker exits after `MAX_JOBS` jobs and the pool starts a
fresh one, so nothing a bot leaves in memory accumulates. `--fork` gives each
job its own horse, as RQ's default `Worker` does, which dies with its worker
(worker/horses.py).
"""

from __future__ import annotations

import logging
import os
import sys


def preload() -> None:
    """Import, once in the worker, what every job needs: a forked horse then
    starts with it loaded (the SDK alone, which in-process bots import, takes
    longer to import than a whole match of most games)."""
    import importlib

    import games
    import worker.drivers.inprocess  # noqa: F401
    import worker.drivers.webhook  # noqa: F401
    import worker.jobs  # noqa: F401
    import worker.match_runner  # noqa: F401
    from core.ratings import model

    for name in games.names():  # each game and the bots it lists (module:Class), by name
        for entrypoint in games.get(name).bots.values():
            try:
                importlib.import_module(entrypoint.partition(":")[0])
            except ImportError:  # a listed bot that is not installed: found missing when asked
                logging.getLogger("cardarena.worker").warning("cannot preload %s", entrypoint)
    model()


#: jobs a worker runs before it exits and the pool starts a fresh one (most are a match's run
#: between two remote turns: a few milliseconds of play)
MAX_JOBS = 10_000


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m worker.process")
    parser.add_argument("redis_url")
    parser.add_argument("--fork", action="store_true")
    parser.add_argument("--queue", default=None, help="the queue (default: CARDARENA_QUEUE, else cardarena)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    import redis
    from rq import Queue, SimpleWorker, Worker

    import worker.horses
    from core.signals import die_with_parent
    from core.store.jobs import queue_name

    worker.horses.worker_pid = os.getpid()
    die_with_parent()  # a pool killed with kill -9 leaves no worker behind (core/signals.py)
    preload()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    connection = redis.Redis.from_url(args.redis_url)
    rq_worker = (Worker if args.fork else SimpleWorker)(
        [Queue(queue_name(args.queue), connection=connection)], connection=connection)
    rq_worker.work(logging_level="WARNING", with_scheduler=False, max_jobs=MAX_JOBS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
