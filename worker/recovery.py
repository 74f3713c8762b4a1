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

import logging
import time

from server.store.jobs import enqueue_job, job_id
from worker.jobs import finish_tournament_if_complete
from worker.ratings import update_ratings

log = logging.getLogger("cardarena.worker")

#: a job that started this recently may not have taken its lease yet
START_GRACE_S = 10.0
WAITING = ("queued", "scheduled", "deferred")


def job_waiting_or_starting(connection, kind: str, ident: str) -> bool:
    """Whether RQ still has this job in hand: queued, or started a moment ago."""
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    try:
        job = Job.fetch(job_id(kind, ident), connection=connection)
        status = job.get_status(refresh=True)
    except NoSuchJobError:
        return False
    if status is None:
        return False
    status = getattr(status, "value", status)
    if status in WAITING:
        return True
    if status == "started" and job.started_at is not None:
        from rq.utils import now

        return (now() - job.started_at).total_seconds() < START_GRACE_S
    return False


def sweep(store) -> list[tuple[str, str]]:
    """Re-enqueue the orphaned jobs; the (kind, id) enqueued again."""
    again = []
    for kind, ident in store.active_jobs():
        record = store.get_match(ident) if kind == "match" else store.get_tournament(ident)
        if record is None:
            store.job_done(kind, ident)
            continue
        if record["status"] in ("finished", "aborted"):
            if kind == "match":
                from worker.jobs import match_concluded

                match_concluded(store, record)  # whatever its runner did not get to
            else:
                store.job_done(kind, ident)
            continue
        if kind == "tournament" and record["status"] == "running" and finish_tournament_if_complete(store, ident):
            continue
        if store.lease_held(kind, ident) or job_waiting_or_starting(store.r, kind, ident):
            continue
        if kind == "tournament" and record.get("total") and record["status"] == "running" \
                and len(store.tournament_matches(ident)) >= record["total"]:
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
