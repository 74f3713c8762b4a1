"""Picking up what a dead worker dropped.

Every unit of work is an RQ job (core/store/jobs.py). RQ retries a job whose
work horse died while its worker lived, and its own cleanup of the
StartedJobRegistry (`clean_registries`, run here every sweep) retries a job
whose worker vanished once the job's time is up. A whole worker killed
(`kill -9`, a lost machine) in a match's run is found sooner, by the pool's
sweep every few seconds: every job still active (core/store/jobs.py) whose
match or tournament is not over, whose lock nobody holds, and that is
neither queued nor being started by a live worker (RQ's queue, its
intermediate list and its StartedJobRegistry, each job given
`START_GRACE_S` to take its lock) nor in a batch whose job holds the batch's
lock (worker/jobs.py `run_match`) nor a match whose next run is in hand (a
deal's next rotation its job runs next, a settled turn's continuation its
settler queues next: `next_run_key`, for `NEXT_RUN_GRACE_MS`) is enqueued again, its dead execution
taken off the registry. The match runner resumes from the log; one whose
job has started `MAX_ATTEMPTS` times is aborted.

The sweep also archives the matches due (core/conclusion.py
`archive_when_settled`: those of the last, incomplete batch, and a dead
process's), and finishes what a runner may have died between doing: a
match's follow-ups (core/conclusion.py `match_concluded`), a tournament whose last match ended, a ladder with queued
matches; and a match's next run that whoever settled its remote turn died
before enqueueing (a match waiting on a bot's turn is the dispatcher's, and
left alone).
"""

from __future__ import annotations

import json
import logging
import time

from core.comparisons import settle_comparison
from core.conclusion import OVER, archive_due, finish_tournament_if_complete, match_concluded, stop_if_decided
from core.ratings import update_ratings
from core.store.archive import ArchiveMissing
from core.store.comparisons import OVER as COMPARISON_OVER
from core.store.jobs import intermediate_queue, job_idents
from core.store.keys import text
from core.store.matches import ARCHIVE_BATCH

log = logging.getLogger("cardarena.worker")

#: a job a worker took from the queue, or started, this recently may not hold its lock yet
START_GRACE_S = 10.0
#: batches of matches due to be archived one sweep archives at most
SWEEP_BATCHES = 16


def job_starting(connection, queue: str, jid: str, popped: set[str]) -> bool:
    """Whether a worker took the job `jid` from the queue, or started it, a moment ago and may
    not hold its lock yet; a job found so for longer was dropped by a dead worker, and is taken
    off RQ's lists (to be enqueued again).

    A worker moves a job it takes into the queue's intermediate list (`popped`)
    until it starts it; a worker killed in between leaves it there for good.
    So a popped job gets `START_GRACE_S` from when the sweep first saw it
    there, and a started one (RQ's StartedJobRegistry) as long from its start.
    """
    from rq.exceptions import NoSuchJobError
    from rq.job import Job
    from rq.registry import StartedJobRegistry
    from rq.utils import now

    if jid in popped:
        intermediate = intermediate_queue(connection, queue)
        intermediate.set_first_seen(jid)
        first = intermediate.get_first_seen(jid)
        if first is not None and (now() - first).total_seconds() < START_GRACE_S:
            return True
        intermediate.remove(jid)  # it will be queued again
        return False
    try:
        job = Job.fetch(jid, connection=connection)
        status = job.get_status(refresh=True)
    except NoSuchJobError:
        return False
    status = getattr(status, "value", status)
    if status == "queued":  # in the registry a moment before RQ marks it started
        return True
    if status != "started":
        return False
    if job.started_at is not None and (now() - job.started_at).total_seconds() < START_GRACE_S:
        return True
    StartedJobRegistry(queue, connection=connection).remove_executions(job)  # its worker is gone
    return False


def sweep(store) -> list[tuple[str, str]]:
    """Re-enqueue the orphaned jobs of the store's queue (never another queue's) and finish
    what dead processes left undone (`requeue_dropped`), then archive the matches due
    (`archive_all_due`); the (kind, id) enqueued again."""
    again = requeue_dropped(store)
    archive_all_due(store)  # the deals the follow-ups above left due too
    return again


def requeue_dropped(store) -> list[tuple[str, str]]:
    """Re-enqueue the orphaned jobs of the store's queue; the (kind, id) enqueued again.

    Reads in bulk (a few round trips however many jobs are active): a large
    tournament keeps thousands of matches waiting in the queue. Where a job may be is read
    in the order a job moves — RQ's queue, its intermediate list, its StartedJobRegistry,
    then the locks — so a job moving on meanwhile is seen at its next place.
    """
    from rq import Queue
    from rq.registry import clean_registries

    clean_registries(Queue(store.queue, connection=store.r))  # RQ's own: abandoned jobs retried
    stalled = store.wake_stalled()
    if stalled:
        log.warning("matches waiting for a bot's free slot woken by the sweep: %s", ", ".join(stalled))
        store.enqueue_woken(stalled)
    active = store.active_jobs()
    if not active:
        return []
    queued = {ident for j in store.queued_job_ids() for ident in job_idents(text(j))}
    popped = {text(j) for j in store.popped_job_ids()}
    started: dict[tuple[str, str], list[str]] = {}
    for jid in [*popped, *map(text, store.started_job_ids())]:
        for ident in job_idents(jid):
            started.setdefault(ident, []).append(jid)
    # a batch's job whose lock is held is alive: the matches it has not reached are not dropped
    batches_running = store.batches_held([jid for jids in started.values() for jid in jids])
    again = []
    states = store.job_states(active)
    # every match that may be queued again (in play, its lock free, no job waiting): read at once
    in_play = [ident for (kind, ident), (status, leased) in zip(active, states, strict=True)
               if kind == "match" and status is not None and json.loads(status) not in OVER
               and not leased and (kind, ident) not in queued]
    runs = store.run_states(in_play)
    for (kind, ident), (status, leased) in zip(active, states, strict=True):
        if status is None:
            store.job_done(kind, ident)
            continue
        status = json.loads(status)
        if status in ("finished", "aborted") or (kind == "comparison" and status in COMPARISON_OVER):
            if kind == "match":
                try:  # whatever its runner did not get to, its archiving included
                    match_concluded(store, store.get_match(ident))
                except ArchiveMissing as exc:  # archived, and this host lost the file: say so, never loop on it
                    log.error("%s: its follow-ups are left undone", exc)
                    store.job_done(kind, ident)
            else:
                store.job_done(kind, ident)
            continue
        if leased or (kind, ident) in queued:
            continue
        step = None
        if kind == "match":
            step, pending, deadline_set = runs[ident]
            if pending is not None and pending["turn"] == step:  # a remote bot's turn: the dispatcher's
                if not deadline_set:  # a clock died holding its claim
                    store.judge_later(ident, step, pending["deadline_at"])
                continue
            if pending is None:  # never asked a remote bot: its one job is "match-{id}"
                step = None
        if kind == "tournament" and status == "running" and finish_tournament_if_complete(store, ident):
            continue
        if any(jid in batches_running for jid in started.get((kind, ident), [])):
            continue
        # every job of it a worker may be starting (any of them would take the lock and go on)
        if any([job_starting(store.r, store.queue, jid, popped) for jid in started.get((kind, ident), [])]):
            continue
        record = store.get_tournament(ident) if kind == "tournament" else None
        if record and record["status"] != "aborting" and record.get("total") \
                and len(store.tournament_matches(ident)) >= record["total"]:
            store.job_done(kind, ident)  # expanded: its matches are active jobs of their own
            continue
        log.warning("%s %s was dropped by a dead worker: enqueued again", kind, ident)
        if step is not None:
            store.enqueue_continuations([(ident, step)])
        else:
            store.enqueue(kind, [ident])
        again.append((kind, ident))
    for cid in store.running_comparisons():  # a deal's end whose counting a dead worker dropped
        settle_comparison(store, cid)
        stop_if_decided(store, cid)
    for game in _games_with_queued_ratings(store):
        update_ratings(store, game)
    return again


def archive_all_due(store) -> None:
    """Archive the matches due (core/conclusion.py `archive_when_settled`), a batch at a time:
    a lone match's, the last batch of a tournament's, those a dead process left; up to
    `SWEEP_BATCHES` batches, the rest at the next sweep. Matches another process holds are
    passed over, so a dead archiver's batch, due until its leases lapse, holds up no other."""
    skip = 0
    for _ in range(SWEEP_BATCHES):
        done, left = archive_due(store, ARCHIVE_BATCH, skip)
        if done + left == 0:
            return
        skip += left


def _games_with_queued_ratings(store) -> list[str]:
    import games

    return [g for g in games.names() if store.rating_events(g, limit=1)]


def sweep_forever(store, every_s: float, stop) -> None:
    """Sweep every `every_s` seconds until the `stop` event is set."""
    while not stop.wait(every_s):
        started = time.monotonic()
        try:
            sweep(store)
        except Exception:  # Redis away for a moment: the next sweep will do
            log.exception("recovery sweep failed")
        if time.monotonic() - started > every_s:
            log.warning("recovery sweep took %.1f s", time.monotonic() - started)
