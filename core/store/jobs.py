"""Jobs: what the worker pool must run, as RQ jobs, and which runner holds each one now.

Keys:
    jobs:active            set of "match:{id}", "tournament:{id}" and "comparison:{id}" still to run
                           (on the default queue; another queue Q has jobs:active:Q)
    lease:{kind}:{id}      the lock of the runner working on it (redis-py's `Lock`: its token,
                           expiring unless renewed); also the archive's and the ladder's leases
    lease:next:{id}        a match whose next run is in hand, not queued yet: the job that chained
                           it runs it next (`keep_active`), or the settler whose turn just landed
                           queues it (core/store/waits.py `settle_all`); the recovery sweep leaves
                           it alone for `NEXT_RUN_GRACE_MS` (whoever held it died, past that)
    rq:*                   RQ's own keys for the queue (see `queue_name`): its jobs, registries,
                           workers, read and written only through RQ's API

Every unit of work a worker does is an RQ job on the queue, run by RQ's own
worker loop: a tournament's expansion ("tournament-{id}"), a comparison's
schedule ("comparison-{id}"), a match's first run ("match-{id}") and each
run that continues a match after a remote bot's turn k was settled
("match-{id}-{k+1}": its log then holds k+1 entries; core/store/waits.py
`settle` enqueues it as the entry lands). The ids are deterministic, so a
job can be found again from what it runs (`job_ident`), and a continuation
enqueued twice is the same job. A tournament's matches are queued
`MATCHES_PER_JOB` to a job ("match-{a}-and-{b}-and-…": `batch_job_id`), which runs
them in turn, each locked, logged and ended on its own: one job's
bookkeeping for several matches (RQ's is most of an in-process match's).
One exception: the first run of a match
woken from its bots' waiting queues gets an id of its own
("match-{id}-w{token}": `Jobs.enqueue_woken`), since the run that made it
wait may still be ending under "match-{id}", and RQ deletes a job's record
under its id as it ends.

Why locks: a worker can die at any moment (a crash, `kill -9`, a lost
machine), and a job can be enqueued twice (a settling and the recovery sweep
both enqueueing a continuation). A runner takes its match's lock before it
touches the match and renews it while it works (worker/locks.py); a second
runner finds it taken and leaves. A dead worker's job stays in RQ's
StartedJobRegistry with nobody renewing its lock: the pool's recovery sweep
(worker/recovery.py) enqueues it again once its lock is gone, and RQ's own
cleanup of the registry retries what it finds abandoned. Since a match is an
event log, whoever runs it next resumes where the dead one stopped, and a
turn lands only once.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Sequence

import redis
from redis.commands.core import Script

from core.store.keys import text
from core.store.lua import args, source

#: the RQ queue the server and workers share unless told otherwise
QUEUE = "cardarena"
#: the environment variable naming another queue
QUEUE_ENV = "CARDARENA_QUEUE"
_QUEUE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: what each kind of job calls, and how long RQ lets it run
JOB_FUNCS = {"match": "worker.jobs.run_match", "tournament": "worker.jobs.run_tournament",
             "comparison": "worker.jobs.run_comparison"}
JOB_TIMEOUTS = {"match": 4 * 3600, "tournament": 3600, "comparison": 600}
#: RQ keeps no finished job: nothing reads a job's return value (what a job did is in the
#: store), so its hash and result go as it ends, not an hour later (1.9 + 4.7 KB a match)
RESULT_TTL = 0
#: a failed job (an exception a retry did not cure: a bug) is kept a day to be looked at
#: (rq-dashboard): bounded by a day's failures, whatever the number of matches
FAILURE_TTL = 24 * 3600
KINDS = tuple(JOB_FUNCS)
#: how long a match whose next run is in hand (`next_run_key`) has for it to be locked or queued:
#: that follows at once, so a match found neither past this was dropped by a dead process
NEXT_RUN_GRACE_MS = 10_000
#: a tournament's matches are queued this many to a job (`batch_job_id`); each may chain its
#: deal's other rotations, and a fast one play the batch's next deals ahead (worker/jobs.py
#: `run_match`); a batch of slow matches is split after `BATCH_S`
MATCHES_PER_JOB = 32
#: what joins a batch's match ids in its job's id (RQ's ids hold letters, digits, '_' and '-')
BATCH_JOIN = "-and-"


def queue_name(name: str | None = None) -> str:
    """The queue to use: `name`, else `CARDARENA_QUEUE`, else "cardarena".

    Every part that enqueues, works or sweeps asks here. Two platforms can then
    share one Redis without taking each other's jobs (the demo with
    `--redis-url` does): each runs on its own queue, with its own active set.
    """
    name = name or os.environ.get(QUEUE_ENV) or QUEUE
    if not _QUEUE_NAME.fullmatch(name):
        raise ValueError(f"a queue name is 1-64 letters, digits, '_', '.' or '-', not {name!r}")
    return name


def active_key(queue: str) -> str:
    """The set of the queue's jobs still to run to their end (the default queue keeps its old key)."""
    return "jobs:active" if queue == QUEUE else f"jobs:active:{queue}"


def intermediate_queue(connection, queue: str):
    """RQ's list of the queue's jobs a worker has taken and not started yet (RQ's API)."""
    from rq import Queue
    from rq.intermediate_queue import IntermediateQueue

    return IntermediateQueue(Queue(queue, connection=connection).key, connection)


def job_id(kind: str, ident: str, step: int | None = None) -> str:
    """The RQ id of the job running `kind` `ident`; with `step`, the run continuing a match
    from its log's `step` entries (ids hold no '-', so the parts read back unambiguously)."""
    return f"{kind}-{ident}" if step is None else f"{kind}-{ident}-{step}"


def batch_job_id(match_ids: Sequence[str]) -> str:
    """The RQ id of the job running these matches in turn ("match-{a}-and-{b}-and-…": every
    one named, so the recovery sweep sees each as the job's: `job_idents`)."""
    return job_id("match", BATCH_JOIN.join(match_ids))


def fresh_job_id(kind: str, ident: str) -> str:
    """An id of its own for a job running `kind` `ident` (`job_ident` reads it back the same)."""
    return f"{kind}-{ident}-w{secrets.token_hex(6)}"


def job_idents(jid: str) -> list[tuple[str, str]]:
    """(kind, id) of each thing the job `jid` runs: one, or a batch's matches (`batch_job_id`)."""
    kind, _, rest = jid.partition("-")
    if BATCH_JOIN in rest:
        return [(kind, ident) for ident in rest.split(BATCH_JOIN)]
    return [(kind, rest.partition("-")[0])]


def job_ident(jid: str) -> tuple[str, str]:
    """(kind, id) of what the job `jid` runs (a batch's first match)."""
    return job_idents(jid)[0]


def lease_key(kind: str, ident: str) -> str:
    return f"lease:{kind}:{ident}"


def next_run_key(match_id: str) -> str:
    """Set (`NEXT_RUN_GRACE_MS`) while the match's next run is in hand but not yet queued or locked."""
    return lease_key("next", match_id)


def enqueue_job(connection, kind: str, ident: str, queue: str | None = None) -> None:
    """Queue the job that runs `kind` `ident`, and count it active until it ends."""
    enqueue_jobs(connection, kind, [ident], queue)


def enqueue_jobs(connection, kind: str, idents: list[str], queue: str | None = None,
                 steps: Sequence[int | None] | None = None, fresh: bool = False, per_job: int = 1) -> None:
    """Queue many jobs of one kind on `queue` (see `queue_name`) in a few round trips (a
    tournament's matches), each active and queued in one transaction. With `steps`, the jobs
    are the runs continuing those matches from their logs' `steps[i]` entries (`job_id`).
    `per_job`: matches' first runs queued that many to a job (`batch_job_id`)."""
    if not idents:
        return
    at = list(steps) if steps else [None] * len(idents)
    chunk = 500 - 500 % per_job
    for start in range(0, len(idents), chunk):
        with connection.pipeline() as pipe:  # MULTI: a job is active exactly when it is queued
            enqueue_on(connection, pipe, kind, idents[start:start + chunk], queue, at[start:start + chunk],
                       fresh=fresh, per_job=per_job)
            pipe.execute()


def enqueue_on(connection, pipe, kind: str, idents: list[str], queue: str | None = None,
               steps: Sequence[int | None] | None = None, at_front: bool = False, fresh: bool = False,
               per_job: int = 1) -> None:
    """On `pipe` (a transaction the caller executes): queue these jobs and count them active,
    so that what else the transaction writes and the jobs that act on it land together.
    `at_front`: ahead of the jobs waiting (an abort, before the runs it makes pointless).
    `fresh`: each job under an id of its own (`fresh_job_id`), not the one `job_id` gives.
    `per_job`: matches' first runs, that many to a job (`batch_job_id`), each counted active."""
    from rq import Queue, Retry

    name = queue_name(queue)
    func, timeout = JOB_FUNCS[kind], JOB_TIMEOUTS[kind]
    if per_job > 1 and (kind != "match" or fresh or at_front or any(s is not None for s in steps or ())):
        raise ValueError("only matches' first runs are queued several to a job")
    batch = list(zip(idents, steps or [None] * len(idents), strict=True))
    jobs: list[tuple[str, tuple]]  # (job id, the job's args)
    if per_job == 1:
        jobs = [(fresh_job_id(kind, i) if fresh else job_id(kind, i, step), (i,) if step is None else (i, step))
                for i, step in batch]
    else:  # run_match(first, None, the rest)
        groups = [list(idents[n:n + per_job]) for n in range(0, len(idents), per_job)]
        jobs = [(batch_job_id(group), (group[0], None, group[1:])) for group in groups]
    data = [Queue.prepare_data(func, args=job_args, job_id=jid, timeout=timeout, retry=Retry(max=2),
                               result_ttl=RESULT_TTL, failure_ttl=FAILURE_TTL,
                               description=f"{func}({job_args[0]})", at_front=at_front)
            for jid, job_args in jobs]
    pipe.sadd(active_key(name), *(f"{kind}:{i}" for i, _ in batch))
    rq_queue = Queue(name, connection=connection)
    if at_front:  # one already waiting moves to the front, rather than being queued twice
        for d in data:
            rq_queue.remove(d.job_id, pipeline=pipe)
    rq_queue.enqueue_many(data, pipeline=pipe)


def mark_active(pipe, queue: str, kind: str, *idents: str) -> None:
    """On `pipe`: each `kind:ident` has work left to run to its end — a concluded match's
    follow-ups (core/conclusion.py), which the recovery sweep finishes if their process dies."""
    pipe.sadd(active_key(queue), *(f"{kind}:{ident}" for ident in idents))


def chained(pipe, queue: str, match_ids: Sequence[str]) -> None:
    """On `pipe`: these matches are active, their next runs in the hands of the job that runs
    them next (`Jobs.keep_active`)."""
    pipe.sadd(active_key(queue), *(f"match:{m}" for m in match_ids))
    for match_id in match_ids:
        pipe.set(next_run_key(match_id), 1, px=NEXT_RUN_GRACE_MS)


def drop_queue(connection, queue: str) -> None:
    """Forget a queue nobody will work any more: its waiting jobs, its active set and
    RQ's bookkeeping for it (registries, the intermediate list)."""
    from rq import Queue

    if queue == QUEUE:
        raise ValueError("the default queue is the platform's: it is never dropped")
    Queue(queue, connection=connection).delete(delete_jobs=True)
    leftovers = {active_key(queue)}
    for pattern in (f"rq:*:{queue}", f"rq:*:{queue}:*"):
        leftovers.update(connection.scan_iter(match=pattern, count=500))
    connection.delete(*leftovers)


class Jobs:
    """The store's view of its queue (`queue`, set by `Store`): what is active on it."""

    r: redis.Redis
    script: Callable[[str], Script]
    queue: str

    def enqueue(self, kind: str, idents: list[str], per_job: int = 1) -> None:
        """Queue the jobs running these matches or tournaments on this store's queue; `per_job`:
        matches' first runs, that many to a job (`batch_job_id`)."""
        enqueue_jobs(self.r, kind, idents, self.queue, per_job=per_job)

    def enqueue_woken(self, match_ids: list[str]) -> None:
        """Queue the first runs of matches woken from their bots' waiting queues (core/store/slots.py),
        each under a job id of its own: the run that put a match in a queue may still be ending
        under the match's own id (`match-{id}`), and RQ deletes that job as it ends — with it, a
        job queued again under the same id meanwhile, and the wake-up."""
        enqueue_jobs(self.r, "match", match_ids, self.queue, fresh=True)

    def enqueue_continuations(self, runs: list[tuple[str, int]]) -> None:
        """Queue the runs continuing these (match, log length) on this store's queue: the next
        run of a match whose remote turn `length - 1` was just settled."""
        if runs:
            enqueue_jobs(self.r, "match", [m for m, _ in runs], self.queue, [k for _, k in runs])

    def active_jobs(self) -> list[tuple[str, str]]:
        """(kind, id) of everything enqueued on this queue and not yet run to its end."""
        out = []
        for member in self.r.smembers(active_key(self.queue)):
            kind, _, ident = text(member).partition(":")
            if kind in KINDS and ident:
                out.append((kind, ident))
        return sorted(out)

    def queued_job_ids(self) -> list[str]:
        """The ids of the jobs waiting in this queue (RQ's own list, through RQ)."""
        from rq import Queue

        return Queue(self.queue, connection=self.r).get_job_ids()

    def popped_job_ids(self) -> list[str]:
        """The ids of the jobs a worker has taken from the queue and not started yet."""
        return intermediate_queue(self.r, self.queue).get_job_ids()

    def started_job_ids(self) -> list[str]:
        """The ids of the jobs RQ counts as running on this queue (its StartedJobRegistry: a dead
        worker's stay there until RQ's cleanup finds them abandoned)."""
        from rq.registry import StartedJobRegistry

        return StartedJobRegistry(self.queue, connection=self.r).get_job_ids(cleanup=False)

    def job_states(self, jobs: list[tuple[str, str]]) -> list[tuple[bytes | None, bool]]:
        """For each (kind, id): its record's status as stored (JSON; None when the record is gone)
        and whether it is held — its lock taken, or a match's next run in hand (`next_run_key`) —,
        in one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for kind, ident in jobs:
            pipe.hget(f"{kind}:{ident}", "status")
            pipe.exists(lease_key(kind, ident), *([next_run_key(ident)] if kind == "match" else []))
        replies = pipe.execute()
        return [(status, bool(held)) for status, held in zip(replies[::2], replies[1::2], strict=True)]

    def keep_active(self, match_id: str) -> None:
        """Count the match active without queueing its job: the caller runs it now, in its own
        job; should it die first, the recovery sweep queues it once `NEXT_RUN_GRACE_MS` is over
        (worker/recovery.py)."""
        with self.r.pipeline() as pipe:
            chained(pipe, self.queue, [match_id])
            pipe.execute()

    def job_done(self, kind: str, ident: str, keep: Sequence[str] = ()) -> None:
        """`kind` `ident` has no work left; with `keep`, in the same step those matches are
        counted active instead (`keep_active`: its caller runs them next)."""
        if not keep:
            self.r.srem(active_key(self.queue), f"{kind}:{ident}")
            return
        with self.r.pipeline() as pipe:
            chained(pipe, self.queue, keep)
            pipe.srem(active_key(self.queue), f"{kind}:{ident}")
            pipe.execute()

    def lock(self, kind: str, ident: str, ttl_ms: int):
        """The lock of `kind` `ident`'s runner (redis-py's `Lock`, not taken yet): it expires
        `ttl_ms` after it is taken unless renewed (`reacquire`)."""
        return self.r.lock(lease_key(kind, ident), timeout=ttl_ms / 1000, sleep=0.01, thread_local=False)

    def take_lease(self, kind: str, ident: str, ttl_ms: int = 20_000) -> str | None:
        """A new token if nobody holds the lease, else None (the archive's, the ladder's)."""
        token = secrets.token_hex(8)
        if self.r.set(lease_key(kind, ident), token, nx=True, px=ttl_ms):
            return token
        return None

    def take_leases(self, kind: str, idents: list[str], ttl_ms: int = 20_000) -> dict[str, str | None]:
        """`take_lease` of each, in one round trip: ident -> its new token, None where held."""
        tokens = {ident: secrets.token_hex(8) for ident in idents}
        pipe = self.r.pipeline(transaction=False)
        for ident, token in tokens.items():
            pipe.set(lease_key(kind, ident), token, nx=True, px=ttl_ms)
        taken = pipe.execute()
        return {ident: token if ok else None for (ident, token), ok in zip(tokens.items(), taken, strict=True)}

    def release_leases(self, kind: str, tokens: dict[str, str]) -> None:
        """`release_lease` of each (ident -> token), in one round trip."""
        if not tokens:
            return
        release = self.script(source("release_lease"))
        pipe = self.r.pipeline(transaction=False)
        for ident, token in tokens.items():
            release(keys=[lease_key(kind, ident)], args=[args(token=token)], client=pipe)
        pipe.execute()

    def release_lease(self, kind: str, ident: str, token: str) -> None:
        """Give the lease back if it is still `token`'s."""
        self.script(source("release_lease"))(keys=[lease_key(kind, ident)], args=[args(token=token)])

    def batches_held(self, jids: Sequence[str]) -> set[str]:
        """Of these jobs, the batches (`batch_job_id`) a live job is running: their lock held."""
        batches = [jid for jid in jids if len(job_idents(jid)) > 1]
        if not batches:
            return set()
        pipe = self.r.pipeline(transaction=False)
        for jid in batches:
            pipe.exists(lease_key("batch", job_ident(jid)[1]))
        return {jid for jid, held in zip(batches, pipe.execute(), strict=True) if held}

    def lease_held(self, kind: str, ident: str) -> bool:
        return bool(self.r.exists(lease_key(kind, ident)))
