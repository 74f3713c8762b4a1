"""The recovery sweep: what a dead worker dropped is enqueued again, nothing else is.

The states a crash leaves are built by hand on a real Redis: a job popped
from the queue by a worker that died before starting it, a match whose
runner died after concluding it, a tournament whose last match ended with
its runner.
"""

from __future__ import annotations

import pytest
from rq import Queue, SimpleWorker

from core import conclusion
from core.store import jobs as store_jobs
from core.store.jobs import QUEUE, enqueue_job, job_id, lease_key
from tests.waiting import wait_until
from worker import jobs, match_runner, recovery
from worker.match_runner import MatchRunner


@pytest.fixture(autouse=True)
def no_grace(monkeypatch):
    monkeypatch.setattr(recovery, "START_GRACE_S", 0.0)


def pop_like_a_worker(store) -> None:
    """Take the next job as an RQ worker does: into the queue's intermediate list."""
    store.r.lmove(f"rq:queue:{QUEUE}", f"rq:queue:{QUEUE}:intermediate", "LEFT", "RIGHT")


def python_bots(store, n=2, game="double-carre"):
    first = store.r.incrby("test:bot-names", n) - n  # names are unique per game
    return [store.create_bot("acct", f"b{first + i}", game, "python",
                             entrypoint="example_bots.random:RandomBot")[0]["id"]
            for i in range(n)]


def queued_ids(store):
    return Queue(QUEUE, connection=store.r).get_job_ids()


def test_a_job_popped_by_a_worker_that_died_is_enqueued_again(store, monkeypatch):
    match = store.create_match("double-carre", python_bots(store), 3, {})
    enqueue_job(store.r, "match", match["id"])
    pop_like_a_worker(store)  # a worker took it and died before starting it: status still "queued"
    assert queued_ids(store) == []
    monkeypatch.setattr(recovery, "START_GRACE_S", 30.0)
    assert recovery.sweep(store) == []  # just popped: its worker may be about to start it
    monkeypatch.setattr(recovery, "START_GRACE_S", 0.0)
    assert recovery.sweep(store) == [("match", match["id"])]  # popped too long ago: dropped
    assert queued_ids(store) == [job_id("match", match["id"])]
    assert store.r.llen(f"rq:queue:{QUEUE}:intermediate") == 0


def test_a_job_in_no_queue_and_never_started_is_enqueued_again(store):
    match = store.create_match("double-carre", python_bots(store), 3, {})
    enqueue_job(store.r, "match", match["id"])
    store.r.delete(f"rq:queue:{QUEUE}")
    assert recovery.sweep(store) == [("match", match["id"])]


def test_a_match_waiting_in_the_queue_or_leased_is_left_alone(store):
    waiting = store.create_match("double-carre", python_bots(store), 3, {})
    running = store.create_match("double-carre", python_bots(store), 4, {})
    enqueue_job(store.r, "match", waiting["id"])
    enqueue_job(store.r, "match", running["id"])
    store.r.lrem(f"rq:queue:{QUEUE}", 1, job_id("match", running["id"]))
    assert store.take_lease("match", running["id"])  # its runner is alive
    assert recovery.sweep(store) == []
    assert queued_ids(store) == [job_id("match", waiting["id"])]


def test_a_match_concluded_by_a_runner_that_died_is_followed_up(store, monkeypatch):
    bots = python_bots(store)
    t = store.create_tournament("double-carre", bots, seats=2, deals=1, duplicate=False, seed=1, options={},
                                rated=True)
    match = store.create_match("double-carre", bots, 5, {}, tournament_id=t["id"], rated=True)
    store.add_tournament_match(t["id"], match["id"])
    store.set_tournament(t["id"], status="running", total=1)
    enqueue_job(store.r, "match", match["id"])
    pop_like_a_worker(store)
    runner = MatchRunner(store, match["id"])
    with monkeypatch.context() as m:  # the runner dies right after the conclusion's transaction
        m.setattr(conclusion, "match_concluded", lambda store, match, chain=None: None)
        assert runner.run() == "finished"
    assert store.get_tournament(t["id"])["status"] == "running" and store.rating_events("double-carre")

    assert recovery.sweep(store) == []  # nothing to play again, only to finish
    assert store.get_tournament(t["id"])["status"] == "finished"
    assert [row["matches"] for row in store.standings(t["id"])] == [1, 1]
    assert store.rating_events("double-carre") == [] and len(store.rankings("double-carre")) == 2
    assert store.active_jobs() == []


def test_a_deal_played_in_process_is_one_job(store):
    bots = python_bots(store)
    t = store.create_tournament("double-carre", bots, seats=2, deals=2, duplicate=True, seed=1, options={})
    enqueue_job(store.r, "tournament", t["id"])
    worker = SimpleWorker([Queue(QUEUE, connection=store.r)], connection=store.r)
    worker.work(burst=True, max_jobs=3)  # the expansion, then one job for each deal's two rotations
    assert store.get_tournament(t["id"])["status"] == "finished"
    assert store.tournament_progress(t["id"]) == {"done": 4, "total": 4}
    assert store.active_jobs() == [] and queued_ids(store) == []


def chained_rotation(store, monkeypatch) -> str:
    """A duplicate deal whose first rotation a job has played: the id of the next, which that
    job runs next (active, not queued) — not played ahead with it (worker/match_runner.py
    `play_ahead`), as a rotation of a slower deal is not."""
    monkeypatch.setattr(match_runner, "PLAY_AHEAD_S", 0.0)
    bots = python_bots(store)
    t = store.create_tournament("double-carre", bots, seats=2, deals=1, duplicate=True, seed=1, options={})
    (first,) = jobs.expand(store, t)
    chain: list[str] = []
    assert MatchRunner(store, first, chain=chain).run() == "finished"
    (following,) = chain
    assert following != first and queued_ids(store) == [job_id("match", first)]
    assert ("match", following) in store.active_jobs()
    return following


def test_a_rotation_its_job_is_about_to_run_is_left_to_it(store, monkeypatch):
    following = chained_rotation(store, monkeypatch)
    # its job has not taken its lock yet: the sweep does not take it for dropped
    assert recovery.sweep(store) == []
    assert queued_ids(store)[-1] != job_id("match", following)
    assert MatchRunner(store, following).run() == "finished"
    assert store.job_states([("match", following)]) == [(b'"finished"', False)]  # its hold ends with it


def test_a_rotation_its_deal_left_to_a_job_that_died_is_enqueued_again(store, monkeypatch):
    monkeypatch.setattr(store_jobs, "NEXT_RUN_GRACE_MS", 1)
    following = chained_rotation(store, monkeypatch)
    # the job dies here, before running it: once its hold lapses, the sweep queues it
    wait_until(lambda: store.job_states([("match", following)])[0][1] is False, what="the hold's lapse")
    assert recovery.sweep(store) == [("match", following)]
    assert queued_ids(store)[-1] == job_id("match", following)


def test_a_tournament_whose_expansion_died_is_expanded_again(store):
    bots = python_bots(store, 3)
    t = store.create_tournament("double-carre", bots, seats=2, deals=1, duplicate=True, seed=1, options={})
    enqueue_job(store.r, "tournament", t["id"])
    pop_like_a_worker(store)
    store.set_tournament(t["id"], status="running", total=6)  # it died after setting the total
    assert recovery.sweep(store) == [("tournament", t["id"])]


def continued_match(store) -> str:
    """A started match of python bots whose first turn is played and whose next run is queued."""
    match = store.create_match("double-carre", python_bots(store), 3, {})
    mid = match["id"]
    store.start_match(mid)
    state = store.replay(mid)
    store.append_entries(mid, [{"turn": 0, "seat": state.to_act, "action": state.legal_actions()[0]}])
    store.enqueue_continuations([(mid, 1)])
    return mid


def start_like_a_worker(store):
    """Take the next job and start it as an RQ worker does (RQ's API): it is then in RQ's
    StartedJobRegistry, its match's lock not taken yet."""
    from rq import SimpleWorker

    queue = Queue(QUEUE, connection=store.r)
    worker = SimpleWorker([queue], connection=store.r)
    job, _ = Queue.dequeue_any([queue], None, connection=store.r)
    worker.prepare_execution(job)
    worker.prepare_job_execution(job, remove_from_intermediate_queue=True)
    return job


def test_a_continuation_whose_worker_died_is_enqueued_again_off_rqs_started_registry(store, monkeypatch):
    """A match's next run is an RQ job ("match-{id}-{k}"): the sweep leaves it while it is
    queued, while a worker is starting it (in RQ's StartedJobRegistry, its lock not taken yet)
    and while its lock is held; once the lock is gone (its worker killed: nobody renews it) and
    the job has been started for longer than a start takes, it is enqueued again and its dead
    execution taken off the registry."""
    mid = continued_match(store)
    assert store.queued_job_ids() == [job_id("match", mid, 1)]
    assert recovery.sweep(store) == []  # queued: left alone
    job = start_like_a_worker(store)
    assert job.id == job_id("match", mid, 1) and store.queued_job_ids() == []
    assert store.started_job_ids() == [job.id]
    monkeypatch.setattr(recovery, "START_GRACE_S", 30.0)
    assert recovery.sweep(store) == []  # just started: its worker is about to take the lock
    lock = store.lock("match", mid, 60_000)
    assert lock.acquire(blocking=False)
    monkeypatch.setattr(recovery, "START_GRACE_S", 0.0)
    assert recovery.sweep(store) == []  # its runner holds the lock: alive
    store.r.delete(lease_key("match", mid))  # the worker was killed; its lock expired
    assert recovery.sweep(store) == [("match", mid)]
    # it never asked a remote bot: its run is queued as its first job
    assert store.queued_job_ids() == [job_id("match", mid)] and store.started_job_ids() == []
    assert recovery.sweep(store) == []  # queued again: nothing left to pick up
