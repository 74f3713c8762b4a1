"""Jobs: what the worker pool must run, and which runner holds each one now.

Keys:
    jobs:active            set of "match:{id}", "tournament:{id}" and "comparison:{id}" still to run
                           (on the default queue; another queue Q has jobs:active:Q)
    lease:{kind}:{id}      the token of the runner working on it; expires unless renewed
    runs[:Q]               list of a match's next runs, "{id}:{k}" (its log holds k entries: its
                           remote turn k-1 was settled; "{id}:0" a run from its start, queued as
                           another match ended: `enqueue_runs`), and "*", a nudge: an RQ job was
                           queued. The queue's worker processes take them (worker/process.py)
    rq:queue:{queue}       RQ's own keys for the queue (see `queue_name`), read and written
                           only through RQ's API

RQ job ids are "match-{id}" and "tournament-{id}", so a job can be found
again from what it runs. A match's later runs, one enqueued each time its
remote bot's turn k is settled (core/store/waits.py), are no RQ jobs: a
remote decision's continuation is a few milliseconds of work, and RQ's
bookkeeping of a job (its hash, registries, result, heartbeats: some twenty
round trips) cost more than the run itself. They are items "{id}:{k+1}" of
`runs`, which a worker takes together with the match's lease (`take_run`,
one Lua step: the sweep never sees such a run in between) — or, a worker
that waits for one, pops it and takes the lease in the run's first round
trip (`pop_run`): should it die in between, the sweep finds the match
active, unleased and not queued and queues its run again, as for any run a
dead worker dropped (one queued again in that instant finds the lease held,
or its turn published, and plays nothing twice: the log takes turn k only
once). The sweep names them "match-{id}-{k+1}"
(`job_id`; `job_ident` reads the match back from either form).

Why leases: a worker can die at any moment (a crash, `kill -9`, a lost
machine). A runner takes the lease before it touches a match and renews it
while it works; the pool's recovery sweep re-enqueues whatever is active, not
queued, and held by nobody. Two runners can never both drive one match: the
second finds the lease taken and leaves. Since a match is an event log, the
one that picks it up again resumes where the dead one stopped.
"""

from __future__ import annotations

import os
import re
import secrets

from core.store.keys import text

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

#: KEYS[1] the lease; ARGV[1] token, ARGV[2] ttl ms
RENEW_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
#: The take step: `runs_key` the runs list, `new_token` a lease token, `ttl` its ttl ms and `taken`
#: (false), declared before it. The next run with its match's lease taken, in one step: it sets
#: `taken` to {item, 1}; {item, 0} if another runner holds the match (that run goes on itself: this
#: one is dropped) or the item is a nudge; it stays false if there is none.
TAKE_STEP = """
local item = redis.call('LPOP', runs_key)
if item then
  local match = string.match(item, '^(.+):%d+$')
  if match and redis.call('SET', 'lease:match:' .. match, new_token, 'NX', 'PX', ttl) then
    taken = {item, 1}
  else
    taken = {item, 0}
  end
end
"""
#: KEYS[1] the runs list; ARGV[1] a lease token, ARGV[2] its ttl ms: the take step alone (`take_run`)
TAKE_RUN_LUA = ("local runs_key, new_token, ttl = KEYS[1], ARGV[1], ARGV[2]\nlocal taken = false\n" + TAKE_STEP
                + "return taken\n")
#: The release step: `lease` the lease's key and `token` a token ('' for none), declared before it:
#: the lease given back if it is this token's (`released` 1)
RELEASE_STEP = """
local released = 0
if redis.call('GET', lease) == token then released = redis.call('DEL', lease) end
"""
#: KEYS[1] the lease; ARGV[1] token: the release step alone (`release_lease`)
RELEASE_LUA = "local lease, token = KEYS[1], ARGV[1]\n" + RELEASE_STEP + "return released\n"


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


def runs_key(queue: str) -> str:
    """The list of the queue's matches' next runs (and nudges: an RQ job was queued)."""
    return "runs" if queue == QUEUE else f"runs:{queue}"


#: the item of `runs` that wakes a worker to look in RQ's queue
NUDGE = "*"


def intermediate_queue(connection, queue: str):
    """RQ's list of the queue's jobs a worker has taken and not started yet (RQ's API)."""
    from rq import Queue
    from rq.intermediate_queue import IntermediateQueue

    return IntermediateQueue(Queue(queue, connection=connection).key, connection)


def job_id(kind: str, ident: str, step: int | None = None) -> str:
    """The RQ id of the job running `kind` `ident`; with `step`, the run continuing a match
    from its log's `step` entries (ids hold no '-', so the parts read back unambiguously)."""
    return f"{kind}-{ident}" if step is None else f"{kind}-{ident}-{step}"


def job_ident(jid: str) -> tuple[str, str]:
    """(kind, id) of what the job `jid` runs."""
    kind, _, rest = jid.partition("-")
    return kind, rest.partition("-")[0]


def lease_key(kind: str, ident: str) -> str:
    return f"lease:{kind}:{ident}"


def enqueue_job(connection, kind: str, ident: str, queue: str | None = None) -> None:
    """Queue the job that runs `kind` `ident`, and count it active until it ends."""
    enqueue_jobs(connection, kind, [ident], queue)


def enqueue_jobs(connection, kind: str, idents: list[str], queue: str | None = None) -> None:
    """Queue many jobs of one kind on `queue` (see `queue_name`) in a few round trips
    (a tournament's matches)."""
    from rq import Queue, Retry

    if not idents:
        return
    name = queue_name(queue)
    queue = Queue(name, connection=connection)
    func, timeout = JOB_FUNCS[kind], JOB_TIMEOUTS[kind]
    for start in range(0, len(idents), 500):
        batch = idents[start:start + 500]
        data = [Queue.prepare_data(func, args=(i,), job_id=job_id(kind, i), timeout=timeout,
                                   retry=Retry(max=2), result_ttl=RESULT_TTL, failure_ttl=FAILURE_TTL,
                                   description=f"{func}({i})")
                for i in batch]
        with connection.pipeline() as pipe:  # MULTI: a job is active exactly when it is queued
            pipe.sadd(active_key(name), *(f"{kind}:{i}" for i in batch))
            queue.enqueue_many(data, pipeline=pipe)
            pipe.rpush(runs_key(name), NUDGE)  # a worker waiting on the runs looks in the queue
            pipe.execute()


def taken_run(taken) -> tuple[str | None, int] | None:
    """`Jobs.take_run`'s answer from the take step's `taken`."""
    if not taken:
        return None
    match_id, _, step = text(taken[0]).rpartition(":")
    return (match_id, int(step)) if int(taken[1]) else (None, 0)


def mark_active(pipe, queue: str, kind: str, ident: str) -> None:
    """On `pipe`: `kind:ident` has work left to run to its end — a concluded match's
    follow-ups (core/conclusion.py), which the recovery sweep finishes if their process dies."""
    pipe.sadd(active_key(queue), f"{kind}:{ident}")


def enqueue_continuation(connection, match_id: str, step: int, queue: str | None = None) -> None:
    """Queue the run that continues a match whose log now holds `step` entries (its remote
    turn was settled): active and queued in one transaction."""
    with connection.pipeline() as pipe:
        continuation(pipe, match_id, step, queue)
        pipe.execute()


def continuation(pipe, match_id: str, step: int, queue: str | None = None) -> None:
    """`enqueue_continuation` on a transaction's `pipe` (with other writes of the settling)."""
    (active, runs), (member, item) = continuation_parts(match_id, step, queue)
    pipe.sadd(active, member)
    pipe.rpush(runs, item)


#: The continuation step: `active_key`, `runs_key`, `active_member` and `run_item` set before it
#: (`continuation_parts`): `continuation` inside a script (core/store/waits.py's settling step)
CONTINUATION_STEP = """
redis.call('SADD', active_key, active_member)
redis.call('RPUSH', runs_key, run_item)
"""


def continuation_parts(match_id: str, step: int, queue: str | None = None) -> tuple[list[str], list[str]]:
    """The keys (active set, runs list) and values (the match's member, its run) of `continuation`."""
    name = queue_name(queue)
    return [active_key(name), runs_key(name)], [f"match:{match_id}", f"{match_id}:{step}"]


def drop_queue(connection, queue: str) -> None:
    """Forget a queue nobody will work any more: its waiting jobs, its active set and
    RQ's bookkeeping for it (registries, the intermediate list)."""
    from rq import Queue

    if queue == QUEUE:
        raise ValueError("the default queue is the platform's: it is never dropped")
    Queue(queue, connection=connection).delete(delete_jobs=True)
    leftovers = {active_key(queue), runs_key(queue)}
    for pattern in (f"rq:*:{queue}", f"rq:*:{queue}:*"):
        leftovers.update(connection.scan_iter(match=pattern, count=500))
    connection.delete(*leftovers)


class Jobs:
    """The store's view of its queue (`queue`, set by `Store`): what is active on it."""

    r: object
    script: object
    queue: str

    def enqueue(self, kind: str, idents: list[str]) -> None:
        """Queue the jobs running these matches or tournaments on this store's queue."""
        enqueue_jobs(self.r, kind, idents, self.queue)

    def enqueue_runs(self, match_ids: list[str]) -> None:
        """Queue runs of these matches from their logs' start (items "{id}:0" of `runs`, no RQ
        job: a match due after another's end, its next twin or one woken from a bot's slot
        queue), active and queued in one transaction. A run reads the whole log, so one that
        finds the match already under way, over or leased does what any run does then."""
        if not match_ids:
            return
        with self.r.pipeline() as pipe:
            for match_id in match_ids:
                continuation(pipe, match_id, 0, self.queue)
            pipe.execute()

    def active_jobs(self) -> list[tuple[str, str]]:
        """(kind, id) of everything enqueued on this queue and not yet run to its end."""
        out = []
        for member in self.r.smembers(active_key(self.queue)):
            kind, _, ident = text(member).partition(":")
            if kind in KINDS and ident:
                out.append((kind, ident))
        return sorted(out)

    def queued_job_ids(self) -> list[str]:
        """The ids of the jobs waiting in this queue (RQ's own list, through RQ), and of the
        matches' next runs waiting in `runs` ("match-{id}-{k}")."""
        from rq import Queue

        runs = [text(item).rpartition(":") for item in self.r.lrange(runs_key(self.queue), 0, -1)]
        return Queue(self.queue, connection=self.r).get_job_ids() + [
            job_id("match", match_id, int(step)) for match_id, _, step in runs if match_id]

    def take_run(self, token: str, ttl_ms: int) -> tuple[str | None, int] | None:
        """The next of the queue's runs: (match id, its log length when enqueued) with the match's
        lease taken for `token`; (None, 0) for a nudge or a match another runner holds; None if
        there is none."""
        return taken_run(self.script(TAKE_RUN_LUA)(keys=[runs_key(self.queue)], args=[token, ttl_ms]))

    def pop_run(self, timeout_s: float) -> tuple[str | None, int] | None:
        """The next of the queue's runs, waiting up to `timeout_s` for one (`take_run`'s answer
        but for the lease, which its runner takes as it starts, in its first round trip: the
        waiting worker's wake-up and its take are one); None if none came. A worker is woken
        only for a run it then holds, never for one another worker takes."""
        popped = self.r.blpop([runs_key(self.queue)], timeout_s)
        if popped is None:
            return None
        match_id, _, step = text(popped[1]).rpartition(":")
        return (match_id, int(step)) if match_id else (None, 0)

    def popped_job_ids(self) -> list[str]:
        """The ids of the jobs a worker has taken from the queue and not started yet."""
        return intermediate_queue(self.r, self.queue).get_job_ids()

    def job_done(self, kind: str, ident: str) -> None:
        self.r.srem(active_key(self.queue), f"{kind}:{ident}")

    def take_lease(self, kind: str, ident: str, ttl_ms: int = 20_000) -> str | None:
        """A new token if nobody holds the lease, else None."""
        token = secrets.token_hex(8)
        if self.r.set(lease_key(kind, ident), token, nx=True, px=ttl_ms):
            return token
        return None

    def renew_lease(self, kind: str, ident: str, token: str, ttl_ms: int = 20_000) -> bool:
        """Extend the lease; False if it is no longer this token's (it expired and was taken)."""
        script = self.script(RENEW_LUA)
        return bool(script(keys=[lease_key(kind, ident)], args=[token, ttl_ms]))

    def release_lease(self, kind: str, ident: str, token: str) -> None:
        script = self.script(RELEASE_LUA)
        script(keys=[lease_key(kind, ident)], args=[token])

    def lease_held(self, kind: str, ident: str) -> bool:
        return bool(self.r.exists(lease_key(kind, ident)))
