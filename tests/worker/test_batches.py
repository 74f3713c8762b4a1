"""A tournament's matches are queued several to an RQ job (core/store/jobs.py `batch_job_id`):
the job runs them in turn, each a match of its own, and what a dead batch's job did not
reach is queued again by the recovery sweep."""

from __future__ import annotations

import pytest
from rq import Queue, SimpleWorker

from core.store.jobs import MATCHES_PER_JOB, QUEUE, batch_job_id, enqueue_jobs, job_id, job_idents
from tests.worker.test_recovery import python_bots, queued_ids
from worker import jobs, match_runner, recovery


@pytest.fixture(autouse=True)
def no_grace(monkeypatch):
    monkeypatch.setattr(recovery, "START_GRACE_S", 0.0)


def worker(store):
    return SimpleWorker([Queue(QUEUE, connection=store.r)], connection=store.r)


def deals_tournament(store, deals):
    """A tournament of `deals` deals, each played twice (seats swapped): the first rotation of
    each is due at its expansion, the second is chained by its job."""
    t = store.create_tournament("double-carre", python_bots(store), seats=2, deals=deals, duplicate=True,
                                seed=1, options={})
    return t, jobs.expand(store, t)


def test_a_tournaments_matches_are_queued_several_to_a_job(store):
    t, due = deals_tournament(store, MATCHES_PER_JOB + 2)
    assert queued_ids(store) == [batch_job_id(due[:MATCHES_PER_JOB]), batch_job_id(due[MATCHES_PER_JOB:])]
    assert [ident for _, ident in job_idents(queued_ids(store)[0])] == due[:MATCHES_PER_JOB]
    worker(store).work(burst=True, max_jobs=2)  # two jobs play all the deals' two rotations
    total = 2 * (MATCHES_PER_JOB + 2)
    assert store.tournament_progress(t["id"]) == {"done": total, "total": total}
    assert store.get_tournament(t["id"])["status"] == "finished"
    assert store.active_jobs() == [] and queued_ids(store) == []


def test_a_batch_past_its_time_queues_the_rest_one_a_job_behind_the_others(store, monkeypatch):
    monkeypatch.setattr(jobs, "BATCH_S", 0.0)  # every batch stops after its first match
    monkeypatch.setattr(match_runner, "PLAY_AHEAD_S", 0.0)  # which plays no other deal ahead
    t, due = deals_tournament(store, MATCHES_PER_JOB + 2)
    worker(store).work(burst=True, max_jobs=1)
    assert store.tournament_progress(t["id"])["done"] == 2  # the first deal's two rotations
    assert queued_ids(store) == [batch_job_id(due[MATCHES_PER_JOB:]), *(job_id("match", m) for m in due[1:MATCHES_PER_JOB])]
    assert len(store.active_jobs()) == len(due) - 1
    worker(store).work(burst=True)
    assert store.get_tournament(t["id"])["status"] == "finished" and store.active_jobs() == []


def test_the_sweep_leaves_a_live_batch_alone_and_queues_what_a_dead_one_did_not_reach(store):
    t, due = deals_tournament(store, 3)
    (batch,) = queued_ids(store)
    # a worker takes the batch's job, runs its first match, and is still at it (the batch's lock)
    store.r.lmove(f"rq:queue:{QUEUE}", f"rq:queue:{QUEUE}:intermediate", "LEFT", "RIGHT")
    lock = store.lock("batch", due[0], 60_000)
    assert lock.acquire(blocking=False)
    assert jobs.run_one(store, due[0]) == "finished"  # and its deal's other rotation
    assert store.tournament_progress(t["id"])["done"] == 2
    assert recovery.sweep(store) == []  # its job lives: nothing it has yet to run is dropped
    assert queued_ids(store) == []
    lock.release()  # the worker dies: its lock lapses
    again = recovery.sweep(store)
    assert sorted(again) == [("match", due[1]), ("match", due[2])]
    worker(store).work(burst=True)
    assert store.tournament_progress(t["id"]) == {"done": 6, "total": 6}
    assert store.get_tournament(t["id"])["status"] == "finished" and store.active_jobs() == []


def test_only_matches_first_runs_are_batched(store):
    with pytest.raises(ValueError):
        enqueue_jobs(store.r, "tournament", ["t_a", "t_b"], per_job=2)
    with pytest.raises(ValueError):
        enqueue_jobs(store.r, "match", ["m_a", "m_b"], steps=[3, 4], per_job=2)
