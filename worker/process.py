"""One worker process of the pool: an RQ worker on the cardarena queue (or `--queue`).

    python -m worker.process REDIS_URL [--fork] [--queue QUEUE]

The pool (worker/pool.py) starts N of these. By default each runs its jobs
itself (RQ's `SimpleWorker`): forking a work horse per job costs more than
most matches, and what a horse would contain is contained already — a
bot that raises or hangs costs a fault (the runner, the watchdog), a crash
of the process loses nothing (the pool starts another, the sweep re-enqueues
its match). A worker exits after `MAX_JOBS` jobs and the pool starts a fresh
one, so nothing a bot leaves in memory accumulates. `--fork` gives each job
its own horse, as RQ's default `Worker` does.

Beside RQ's queue, a worker takes the matches' next runs (core/store/jobs.py
`runs`: one each time a remote bot's turn is settled, and the first run of a
match due as another ended — its next twin, one its slots woke) and runs them itself,
with no RQ job: RQ's bookkeeping of a job costs more than such a run. It
waits on the runs list (an RQ job queued pushes a nudge there) and pops what
comes, each run taking its match's lease in its first round trip; a run that
ends waiting for a remote bot takes the next, with its lease, in the step
that gives its own lease back; and a worker looks in
RQ's queue between runs, so neither kind waits behind the other for long. A run that raises is logged
and left to the sweep (its match is active, unleased, not queued: enqueued
again; `MAX_ATTEMPTS` failed runs in a row abort it), as RQ's retries would;
kill -9 in a run is a dead worker's match, as for any job. A run counts as a
tenth of a job toward `MAX_JOBS`; with `--fork` runs too are made in the
worker process, not a horse (and only they count).
"""

from __future__ import annotations

import logging
import os
import secrets
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


#: jobs a worker runs before it exits and the pool starts a fresh one
MAX_JOBS = 1000
#: a match's next run counts as this fraction of a job: most are a few milliseconds of play
RUNS_PER_JOB = 10
#: how long a worker waits on the runs list before it looks in RQ's queue anyway (a job RQ
#: queued itself, a retry, pushes no nudge)
WAIT_S = 1.0
#: how often an idle or busy worker renews its RQ heartbeat
HEARTBEAT_S = 10.0


def runs_client(connection):
    """The client of the runs' store: `connection`'s pool, one connection of it held for good.

    A run is two or three commands, and a command through the pool takes a connection out and
    puts it back each time, checking it for unread data with two more system calls. A connection held is safe so: redis-py drops it if a command is cut off
    while it sends or reads, and no RQ job uses this client (a job, which RQ's timeout may cut
    anywhere, uses its own connection: worker/jobs.py `store_for`); the lease renewer's thread
    shares it under redis-py's lock (a wait for a run holds it up to `WAIT_S`, far within a
    lease's life)."""
    import redis

    return redis.Redis(connection_pool=connection.connection_pool, single_connection_client=True)


def worker_class(base):
    """`base` (an RQ worker class) that also takes and runs the matches' next runs."""
    import time

    from rq import SimpleWorker
    from rq.worker import WorkerStatus

    from core.store import Store, secret_key
    from worker.jobs import run_continuation
    from worker.lease import TTL_MS

    log = logging.getLogger("cardarena.worker")

    class RunsWorker(base):
        #: what it has done, in runs (an RQ job counts `RUNS_PER_JOB`, none when a horse runs it)
        done = 0
        job_runs = RUNS_PER_JOB if issubclass(base, SimpleWorker) else 0
        beat_at = 0.0
        look_in_queue = True  # whether RQ's queue may hold a job
        #: (token, `take_run`'s answer for it) when the last run took the next as it ended
        next_run: tuple[str, tuple[str | None, int] | None] | None = None
        #: `pop_run`'s answer: a run taken off the list by the wait, its lease not taken yet
        popped: tuple[str | None, int] | None = None

        def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
            if not hasattr(self, "store"):
                self.store = Store(runs_client(self.connection), secret_key(self.connection),
                                   queue=self.queues[0].name)
            self.set_state(WorkerStatus.IDLE)
            while True:
                if time.monotonic() - self.beat_at > HEARTBEAT_S:
                    self.beat_at = time.monotonic()
                    self.heartbeat()
                    if self.should_run_maintenance_tasks:
                        self.run_maintenance_tasks()
                if self.next_run is not None:  # taken already, its lease held: run whatever happens
                    (token, taken), self.next_run = self.next_run, None
                elif self.popped is not None:  # off the list already: run whatever happens, its runner
                    (token, taken), self.popped = (None, self.popped), None  # takes the lease
                elif self._stop_requested or self.done >= MAX_JOBS * RUNS_PER_JOB:
                    return None  # the pool starts a fresh worker after a retired one
                else:
                    token = secrets.token_hex(8)
                    taken = self.store.take_run(token, TTL_MS)
                if taken is not None and taken[0] is not None:
                    self.run_next(taken[0], token)
                    continue
                if taken is not None:  # a nudge (or a run another runner holds): RQ may have a job
                    self.look_in_queue = True
                if self.look_in_queue:
                    result = self.queue_class.dequeue_any(
                        self._ordered_queues, None, connection=self.connection, job_class=self.job_class,
                        serializer=self.serializer, death_penalty_class=self.death_penalty_class)
                    if result is not None:  # and after it, the queue again: a batch has one nudge
                        job, queue = result
                        self.reorder_queues(reference_queue=queue)
                        job.redis_server_version = self.get_redis_server_version()
                        self.done += self.job_runs
                        return result
                    self.look_in_queue = False
                if taken is None:  # none, just now: wait for one
                    self.popped = self.store.pop_run(WAIT_S)
                    if self.popped is None:
                        self.look_in_queue = True  # a while with no run: a job RQ queued itself (a retry)

        def run_next(self, match_id: str, token: str | None) -> None:
            """Make the run (with its lease taken for `token`, or to take: `popped`); as it ends
            waiting it takes the next (`next_run`), unless this worker is to stop or retire after
            it."""
            self._state = WorkerStatus.BUSY  # a stop signal now waits for the run's end
            last = self._stop_requested or self.done + 1 >= MAX_JOBS * RUNS_PER_JOB
            next_token = None if last else secrets.token_hex(8)
            try:
                _, runner = run_continuation(self.store, match_id, token, next_token)
                if runner.looked_next:
                    self.next_run = (next_token, runner.next_run)
            except Exception:  # the sweep enqueues it again; failed runs in a row abort it
                log.exception("a run of match %s failed", match_id)
            finally:
                self._state = WorkerStatus.IDLE
                self.done += 1

    RunsWorker.__name__ = RunsWorker.__qualname__ = f"Runs{base.__name__}"
    return RunsWorker


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m worker.process")
    parser.add_argument("redis_url")
    parser.add_argument("--fork", action="store_true")
    parser.add_argument("--queue", default=None, help="the queue (default: CARDARENA_QUEUE, else cardarena)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    import redis
    from rq import Queue, SimpleWorker, Worker

    from core.signals import die_with_parent
    from core.store.jobs import queue_name

    class HorseDiesWithWorker(Worker):
        """RQ's forking worker whose work horse dies with it (kill -9 of the worker: no orphan
        horse refereeing on, unsupervised; the sweep gives its match to another worker)."""

        def setup_work_horse_signals(self) -> None:
            super().setup_work_horse_signals()
            die_with_parent(os.getppid())

    die_with_parent()  # a pool killed with kill -9 leaves no worker behind (core/signals.py)
    preload()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    connection = redis.Redis.from_url(args.redis_url)
    worker = worker_class(HorseDiesWithWorker if args.fork else SimpleWorker)
    rq_worker = worker([Queue(queue_name(args.queue), connection=connection)], connection=connection)
    rq_worker.work(logging_level="WARNING", with_scheduler=False)  # it retires itself (`MAX_JOBS`)
    return 0


if __name__ == "__main__":
    sys.exit(main())
