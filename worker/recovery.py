"""Picking up what a dead worker dropped.

RQ retries a job whose work horse died while its worker lived, but when a
whole worker process is killed (`kill -9`, a lost machine) its job is left
"started" with nobody on it. The pool's supervisor therefore sweeps every
few seconds: every job still active (core/store/jobs.py) whose match or
tournament is not over, that nobody holds the lease of, and that is not
waiting in the queue, is enqueued again. The match runner resumes from the
log; one whose job has started `MAX_ATTEMPTS` times is aborted.

The sweep also finishes what a runner may have died between doing: a
match's follow-ups (core/conclusion.py `match_concluded`, archiving its deal
included), a tournament whose last match ended, a ladder with queued
matches; and a match's next run that whoever settled its remote turn died
before enqueueing (a match waiting on a bot's turn is the dispatcher's, and
left alone). A match found orphaned is enqueued again at the second sweep
that finds it so: a run a live worker has just popped is under no lease for
the moment until its next round trip (`sweep`).
"""

from __future__ import annotations

import json
import logging
import time

from core.comparisons import settle_comparison
from core.conclusion import finish_tournament_if_complete, match_concluded, stop_if_decided
from core.ratings import update_ratings
from core.store.archive import ArchiveMissing
from core.store.comparisons import OVER as COMPARISON_OVER
from core.store.jobs import enqueue_continuation, intermediate_queue, job_id, job_ident, lease_key
from core.store.keys import text

log = logging.getLogger("cardarena.worker")

#: a job taken from the queue this recently may not have taken its lease yet
START_GRACE_S = 10.0


def job_starting(connection, queue: str, kind: str, ident: str, popped: dict, step: int | None = None) -> bool:
    """Whether a worker took this job from the queue a moment ago and may not hold
    the lease yet.

    A worker moves a job it takes into the queue's intermediate list (`popped`)
    until it starts it; a worker killed in between leaves it there for good.
    So a popped job gets `START_GRACE_S` from when the sweep first saw it
    there, and a started one as long from its start. `popped` maps (kind, id)
    to the popped job's id; `step`, a match's log length, names its latest run
    (`job_id(kind, id, step)`, or its first run when None).
    """
    from rq.exceptions import NoSuchJobError
    from rq.job import Job
    from rq.utils import now

    jid = popped.get((kind, ident)) or job_id(kind, ident, step)
    if jid in popped.values():
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
    return (status == "started" and job.started_at is not None
            and (now() - job.started_at).total_seconds() < START_GRACE_S)


def sweep(store, suspects: set | None = None) -> list[tuple[str, str]]:
    """Re-enqueue the orphaned jobs of the store's queue (never another queue's); the
    (kind, id) enqueued again.

    Reads in bulk (a few round trips however many jobs are active): a large
    tournament keeps thousands of matches waiting in the queue.

    `suspects` (kept by `sweep_forever` from one sweep to the next): a match's run
    a waiting worker has popped (core/store/jobs.py `pop_run`) is in nobody's list
    and under no lease until that worker's next round trip takes it, so a match
    found orphaned is enqueued again only if the sweep before found it so too, at
    the same log length — a worker alive took its lease long before; one killed
    left it so. The set is updated in place. Without it (a test, a one-off
    sweep), an orphan is enqueued at once.
    """
    previous = set(suspects) if suspects is not None else None
    if suspects is not None:
        suspects.clear()
    stalled = store.wake_stalled()
    if stalled:
        log.warning("matches waiting for a bot's free slot woken by the sweep: %s", ", ".join(stalled))
        store.enqueue("match", stalled)
    active = store.active_jobs()
    if not active:
        return []
    queued = {job_ident(text(j)) for j in store.queued_job_ids()}
    popped = {job_ident(text(j)): text(j) for j in store.popped_job_ids()}
    pipe = store.r.pipeline(transaction=False)
    for kind, ident in active:
        pipe.hget(f"{kind}:{ident}", "status")
        pipe.exists(lease_key(kind, ident))
    replies = pipe.execute()
    again = []
    for (kind, ident), status, leased in zip(active, replies[::2], replies[1::2], strict=True):
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
                except OSError as exc:  # the archive cannot be written now (full, read-only): the next sweep
                    log.error("match %s could not be archived (%s): it stays in Redis, tried again", ident, exc)
            else:
                store.job_done(kind, ident)
            continue
        if leased or (kind, ident) in queued:
            continue
        step = None
        if kind == "match":
            step = store.log_length(ident)
            pending = store.waiting_on(ident)
            if pending is not None and pending["turn"] == step:  # a remote bot's turn: the dispatcher's
                if not store.has_deadline(ident, step):  # a clock died holding its claim
                    store.judge_later(ident, step, pending["deadline_at"])
                continue
            if pending is None:  # never asked a remote bot: its one job is "match-{id}"
                step = None
        if kind == "tournament" and status == "running" and finish_tournament_if_complete(store, ident):
            continue
        if job_starting(store.r, store.queue, kind, ident, popped, step):
            continue
        if kind == "match" and previous is not None:
            suspects.add((ident, step))
            if (ident, step) not in previous:  # maybe in a worker's hands this instant: the next sweep
                continue
        record = store.get_tournament(ident) if kind == "tournament" else None
        if record and record.get("total") and len(store.tournament_matches(ident)) >= record["total"]:
            store.job_done(kind, ident)  # expanded: its matches are active jobs of their own
            continue
        log.warning("%s %s was dropped by a dead worker: enqueued again", kind, ident)
        if step is not None:
            enqueue_continuation(store.r, ident, step, store.queue)
        else:
            store.enqueue(kind, [ident])
        again.append((kind, ident))
    for cid in store.running_comparisons():  # a deal's end whose counting a dead worker dropped
        settle_comparison(store, cid)
        stop_if_decided(store, cid)
    for game in _games_with_queued_ratings(store):
        update_ratings(store, game)
    return again


def _games_with_queued_ratings(store) -> list[str]:
    import games

    return [g for g in games.names() if store.rating_events(g, limit=1)]


def sweep_forever(store, every_s: float, stop) -> None:
    """Sweep every `every_s` seconds until the `stop` event is set."""
    suspects: set = set()
    while not stop.wait(every_s):
        started = time.monotonic()
        try:
            sweep(store, suspects)
        except Exception:  # Redis away for a moment: the next sweep will do
            log.exception("recovery sweep failed")
        if time.monotonic() - started > every_s:
            log.warning("recovery sweep took %.1f s", time.monotonic() - started)
