"""Picking up what a dead worker dropped.

RQ retries a job whose work horse died while its worker lived, but when a
whole worker process is killed (`kill -9`, a lost machine) its job is left
"started" with nobody on it. The pool's supervisor therefore sweeps every
few seconds: every job still active (server/store/jobs.py) whose match or
tournament is not over, that nobody holds the lease of, and that is not
waiting in the queue, is enqueued again. The match runner resumes from the
log; one whose job has started `MAX_ATTEMPTS` times is aborted.

The sweep also finishes what a runner may have died between doing: a
tournament whose last match ended, a ladder with queued matches.
"""

from __future__ import annotations

import json
import logging
import time

from server.store.jobs import enqueue_job, job_id, lease_key
from worker.jobs import finish_tournament_if_complete
from worker.ratings import update_ratings

log = logging.getLogger("cardarena.worker")

#: a job taken from the queue this recently may not have taken its lease yet
START_GRACE_S = 10.0


def job_starting(connection, kind: str, ident: str) -> bool:
    """Whether a worker took this job from the queue a moment ago and may not hold
    the lease yet. Its status alone is no proof: a worker killed right after
    popping a job leaves it "queued" in no queue at all, or "started" forever."""
    from rq.exceptions import NoSuchJobError
    from rq.job import Job
    from rq.utils import now

    try:
        job = Job.fetch(job_id(kind, ident), connection=connection)
        status = job.get_status(refresh=True)
    except NoSuchJobError:
        return False
    status = getattr(status, "value", status)
    since = job.started_at if status == "started" else job.enqueued_at if status == "queued" else None
    return since is not None and (now() - since).total_seconds() < START_GRACE_S


def sweep(store) -> list[tuple[str, str]]:
    """Re-enqueue the orphaned jobs; the (kind, id) enqueued again.

    Reads in bulk (a few round trips however many jobs are active): a large
    tournament keeps thousands of matches waiting in the queue.
    """
    from rq import Queue

    from server.store.jobs import QUEUE

    active = store.active_jobs()
    if not active:
        return []
    queued = set(Queue(QUEUE, connection=store.r).get_job_ids())
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
        if status in ("finished", "aborted"):
            if kind == "match":
                from worker.jobs import match_concluded

                match_concluded(store, store.get_match(ident))  # whatever its runner did not get to
            else:
                store.job_done(kind, ident)
            continue
        if leased or job_id(kind, ident) in queued:
            continue
        if kind == "tournament" and status == "running" and finish_tournament_if_complete(store, ident):
            continue
        if job_starting(store.r, kind, ident):
            continue
        record = store.get_tournament(ident) if kind == "tournament" else None
        if record and record.get("total") and len(store.tournament_matches(ident)) >= record["total"]:
            store.job_done(kind, ident)  # expanded: its matches are active jobs of their own
            continue
        log.warning("%s %s was dropped by a dead worker: enqueued again", kind, ident)
        enqueue_job(store.r, kind, ident)
        again.append((kind, ident))
    for game in _games_with_queued_ratings(store):
        update_ratings(store, game)
    return again


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
