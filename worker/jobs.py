"""The RQ entry points, and what happens when a match ends.

    run_tournament(tid)    expand the round-robin (or gauntlet) into matches, one run_match job each;
                           for a tournament "aborting", end its matches not over, then mark it "aborted"
    run_match(mid[, step]) referee one match (worker/match_runner.py): its first run, or with
                           `step` the run continuing it once its remote turn `step - 1` was settled;
                           a batch's job (a tournament's matches) goes on to the first runs of `then`
    run_comparison(cid)    schedule a comparison's deals (core/comparisons.py)

What follows a match's end is core/conclusion.py's.

Both are safe to run twice or after a crash: the schedule is a function of
the tournament alone (the same match ids every time), a match resumes from
its log, and a match ends once, along the one path every ending takes
(`core.conclusion.end_match`), whose follow-ups only ever recompute things or
enqueue jobs with fixed ids, so a retried job may repeat them.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence

import redis

from core import comparisons
from core.conclusion import OVER, due_twin, finish_tournament_if_complete, stop_if_decided, stop_tournament
from core.store import Store, secret_key
from core.store.jobs import MATCHES_PER_JOB
from worker.horses import horse_dies_with_worker
from worker.locks import TTL_MS, Held
from worker.match_runner import MatchRunner
from worker.schedules import gauntlet, round_robin, twin_groups

log = logging.getLogger("cardarena.worker")


def connection() -> redis.Redis:
    """The Redis of the running RQ job, else `REDIS_URL` / the embedded server."""
    from rq import get_current_job

    job = get_current_job()
    if job is not None:
        return job.connection
    from core.redis_server import shared_url

    return redis.Redis.from_url(os.environ.get("REDIS_URL") or shared_url())


def store_for(client: redis.Redis | None = None) -> Store:
    """The store a job works with: on the queue the job came from, so what it enqueues
    (a tournament's matches, a match's next run) stays with the workers of that queue. One per
    connection and queue in a process, made at its first job."""
    from rq import get_current_job

    horse_dies_with_worker()
    client = client or connection()
    job = get_current_job()
    queue = job.origin if job is not None else None
    found = _stores.get((id(client), queue))
    if found is None or found.r is not client:
        found = _stores[(id(client), queue)] = Store(client, secret_key(client), queue=queue)
    return found


_stores: dict[tuple[int, str | None], Store] = {}

#: how long a match's continuation waits for the lock the run that asked still holds: that run
#: publishes its decision and then lets go, and a fast answer can be settled in between
CONTINUATION_WAIT_S = 2.0


#: a batch's job starts no further match past this many seconds (counted from its first): matches
#: this slow gain nothing from sharing a job, so it queues the rest one a job, behind the jobs
#: queued meanwhile, for every free worker to take (the job's timeout bounds one match, not the
#: batch)
BATCH_S = 1.0


def run_match(match_id: str, step: int | None = None, then: Sequence[str] = ()) -> str:
    """A run of the match: its first (`step` None), or the one continuing it from a log of `step`
    entries; then, in a batch's job (core/store/jobs.py `batch_job_id`), the first runs of the
    matches `then`, in turn, under the batch's lock (the recovery sweep's sign that the
    matches it has not reached are not dropped). The status of the first."""
    store = store_for()
    if not then:
        return run_one(store, match_id, step)
    with Held(store.lock("batch", match_id, TTL_MS)) as held:
        if not held.taken:
            return "busy"  # the same batch is being run (its job again, after a retry)
        pending = list(then)  # a run may play whole deals of them ahead: taken off it
        started = time.monotonic()
        status = run_one(store, match_id, step, pending)
        while pending:
            if time.monotonic() - started >= BATCH_S:
                store.enqueue("match", pending)
                break
            run_one(store, pending.pop(0), batch=pending)
    return status


def run_one(store: Store, match_id: str, step: int | None = None, batch: list[str] | None = None) -> str:
    """One match's run (see `run_match`). A duplicate or stale run is harmless: it waits for or
    finds the match's lock taken ("busy"), or finds the log moved on and goes on from there — to
    a remote turn already published ("waiting"), or the end. A match that ends here is followed,
    in this job, by its deal's next rotation's first run (`match_concluded`'s chain), and so on
    to the deal's last: one job a deal played in-process, each rotation still a match of its
    own (its lock, its log, its end), the job no longer than its deal. `batch`: the matches the
    job runs after it, of which the run may play whole deals ahead (`MatchRunner.play_ahead`)."""
    chain: list[str] = []
    if step is None:
        match = store.get_match(match_id)
        if match is not None and match["status"] == "queued" and due_twin(store, match) not in (None, match_id):
            store.job_done("match", match_id)  # a twin before it is still to be played: it will be enqueued
            return "waiting"
        status = MatchRunner(store, match_id, match=match, chain=chain, batch=batch).run()
    else:
        status = MatchRunner(store, match_id, CONTINUATION_WAIT_S, chain=chain).run()
    while chain:  # the deal's next rotation, counted active and not queued: run here
        status = MatchRunner(store, chain.pop(), chain=chain, batch=batch).run()
    return status


def tournament_match_id(tid: str, index: int) -> str:
    """The id of the tournament's `index`-th scheduled match: the same on every expansion."""
    return f"m_{tid.removeprefix('t_')}_{index}"


#: how long an abort's job waits for the tournament's lock an expansion still holds (it lets go
#: as it ends; past this the job leaves the abort to the recovery sweep, which queues it again)
ABORT_WAIT_S = 5.0


def run_tournament(tid: str) -> str:
    """Create the tournament's matches (those not created yet) and enqueue every one not over;
    for an "aborting" tournament, end every match not over instead, then mark it "aborted"."""
    store = store_for()
    t = store.get_tournament(tid)
    if t is None:
        return "missing"
    if t["status"] in OVER:
        store.job_done("tournament", tid)
        return t["status"]
    aborting = t["status"] == "aborting"
    with Held(store.lock("tournament", tid, TTL_MS), ABORT_WAIT_S if aborting else 0.0) as held:
        if not held.taken:
            return "busy"  # still active: an abort left so is queued again by the sweep
        if aborting:
            stop_tournament(store, tid, match_reason=t.get("reason") or STOPPED)
            store.job_done("tournament", tid)
            log.info("tournament %s aborted", tid)
            return "aborted"
        to_run = expand(store, t)
        store.job_done("tournament", tid)
        if store.tournament_stop(tid)[0] == "aborting":  # stopped while being expanded: its
            store.enqueue("tournament", [tid])  # abort job, active again, ends what was created
            return "aborting"
    if not to_run:
        finish_tournament_if_complete(store, tid)
    return "expanded"


#: why a match of a tournament stopped without a reason of its own ends
STOPPED = "its tournament was stopped"


def expand(store, t: dict) -> list[str]:
    """Create the tournament's matches not created yet, enqueue every one due and not over
    (none once it is aborting: its abort's job ends them); the ids enqueued."""
    tid = t["id"]
    if t.get("format") == "gauntlet":
        schedule = gauntlet(t["bots"], t["candidate"], t["seats"], t["deals"], t["duplicate"], t["seed"])
    else:
        schedule = round_robin(t["bots"], t["seats"], t["deals"], t["duplicate"], t["seed"])
    store.start_tournament(tid, total=len(schedule.matches), schedule=schedule.description,
                           schedule_stats=schedule.stats)
    listed = set(store.tournament_matches(tid))
    twins: dict[int, list[str]] = {}
    for group in twin_groups(schedule, t["seed"]):
        for index in group:
            twins[index] = [tournament_match_id(tid, i) for i in group]
    ids = [tournament_match_id(tid, index) for index in range(len(schedule.matches))]
    # one read of every match's status (a retried expansion finds those created), then the missing
    # ones created and listed in a few round trips: their places in creation order reserved at once
    statuses = {mid: None if m is None else m["status"]
                for mid, m in zip(ids, store.get_matches(ids, ("status",)), strict=True)}
    missing = [index for index, mid in enumerate(ids) if statuses[mid] is None]
    first = store.reserve_match_seqs(len(missing)) if missing else 0
    for start in range(0, len(missing), 500):
        with store.r.pipeline() as pipe:
            for n, index in enumerate(missing[start:start + 500], start=first + start):
                planned = schedule.matches[index]
                store.create_match(
                    t["game"], list(planned.bots), planned.seed, t["options"],
                    move_timeout_ms=t["move_timeout_ms"], max_faults=t["max_faults"],
                    time_bank_ms=t.get("time_bank_ms"),
                    tournament_id=tid, rated=bool(t.get("rated")), match_id=ids[index], twins=twins.get(index),
                    versions=[(t.get("versions") or {}).get(b) for b in planned.bots], pipe=pipe, seq=n)
                statuses[ids[index]] = "queued"
            pipe.execute()
    store.add_tournament_matches(tid, [mid for mid in ids if mid not in listed])
    # of each deal's twins only the one due now: the next is enqueued when it ends
    to_run = [mid for index, mid in enumerate(ids) if statuses[mid] not in OVER
              and due_twin(store, {"id": mid, "twins": twins.get(index)},
                           {twin: statuses[twin] for twin in twins.get(index) or ()}) in (None, mid)]
    if store.tournament_stop(tid)[0] in ("aborting", "aborted"):
        to_run = []
    store.enqueue("match", to_run, per_job=MATCHES_PER_JOB)
    log.info("tournament %s: %d matches (%s), %d enqueued", tid, len(schedule.matches),
             schedule.description, len(to_run))
    return to_run


def run_comparison(cid: str) -> str:
    """Start (or settle again) a comparison: its first deals, then each deal's end schedules more."""
    store = store_for()
    status = comparisons.run_comparison(store, cid)
    stop_if_decided(store, cid)
    store.job_done("comparison", cid)
    return status
