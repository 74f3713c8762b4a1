"""The recovery sweep: what a dead worker dropped is enqueued again, nothing else is.

The states a crash leaves are built by hand on a real Redis: a job popped
from the queue by a worker that died before starting it, a match whose
runner died after concluding it, a tournament whose last match ended with
its runner.
"""

from __future__ import annotations

import pytest
from rq import Queue

from core import conclusion
from core.store import Store, secret_key
from core.store.jobs import QUEUE, enqueue_job, job_id
from worker import recovery
from worker.match_runner import MatchRunner


@pytest.fixture()
def store(redis_client):
    return Store(redis_client, secret_key(redis_client))


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
        m.setattr(conclusion, "match_concluded", lambda store, match: None)
        assert runner.run() == "finished"
    assert store.get_tournament(t["id"])["status"] == "running" and store.rating_events("double-carre")

    assert recovery.sweep(store) == []  # nothing to play again, only to finish
    assert store.get_tournament(t["id"])["status"] == "finished"
    assert [row["matches"] for row in store.standings(t["id"])] == [1, 1]
    assert store.rating_events("double-carre") == [] and len(store.rankings("double-carre")) == 2
    assert store.active_jobs() == []


def test_a_tournament_whose_expansion_died_is_expanded_again(store):
    bots = python_bots(store, 3)
    t = store.create_tournament("double-carre", bots, seats=2, deals=1, duplicate=True, seed=1, options={})
    enqueue_job(store.r, "tournament", t["id"])
    pop_like_a_worker(store)
    store.set_tournament(t["id"], status="running", total=6)  # it died after setting the total
    assert recovery.sweep(store) == [("tournament", t["id"])]


def continued_match(store) -> str:
    """A started match of python bots whose first turn is played and whose next run is queued."""
    from core.store.jobs import enqueue_continuation

    match = store.create_match("double-carre", python_bots(store), 3, {})
    mid = match["id"]
    store.start_match(mid)
    state = store.replay(mid)
    store.append_entries(mid, [{"turn": 0, "seat": state.to_act, "action": state.legal_actions()[0]}])
    enqueue_continuation(store.r, mid, 1)
    return mid


def test_a_matchs_next_run_is_taken_with_its_lease_and_a_lost_one_is_enqueued_again(store):
    """A remote turn's continuation is an item of `runs`, no RQ job: the sweep sees it queued;
    a worker takes it with the match's lease in one step (so the sweep never finds it in
    between), or drops it if another runner holds the match; one lost with its worker (taken,
    then kill -9: no lease left once it expires) is enqueued again."""
    from core.store.jobs import enqueue_continuation, lease_key

    mid = continued_match(store)
    assert job_id("match", mid, 1) in store.queued_job_ids()
    assert recovery.sweep(store) == []  # queued: left alone
    assert store.take_run("t1", 10_000) == (mid, 1)
    assert store.r.get(lease_key("match", mid)) == b"t1"
    assert recovery.sweep(store) == []  # taken: leased
    enqueue_continuation(store.r, mid, 1)  # a second run while the first holds the match: dropped
    assert store.take_run("t2", 10_000) == (None, 0) and store.r.get(lease_key("match", mid)) == b"t1"
    assert store.take_run("t3", 10_000) is None
    store.r.delete(lease_key("match", mid))  # the worker died; its lease expired
    assert recovery.sweep(store) == [("match", mid)]
    assert store.queued_job_ids() == [job_id("match", mid)]  # it never asked a remote bot: its first job


def test_a_run_a_worker_has_just_popped_is_left_to_it_and_one_still_dropped_a_sweep_later_is_enqueued(store):
    """A waiting worker pops a run (`pop_run`) and takes the match's lease in its next round
    trip: in between the match is in no list and under no lease. The pool's sweep (which keeps
    its suspects from one sweep to the next) leaves a match found so once; found so again at
    the same log length, its worker is dead: enqueued again."""
    from core.store.jobs import lease_key

    def popped_match():
        mid = continued_match(store)
        assert store.pop_run(1.0) == (mid, 1)  # popped: its lease not taken yet
        return mid

    suspects: set = set()
    alive, dead = popped_match(), popped_match()
    assert recovery.sweep(store, suspects) == []  # either may be in its worker's hands this instant
    assert store.r.set(lease_key("match", alive), "w1", px=10_000)  # the live worker's next round trip
    assert recovery.sweep(store, suspects) == [("match", dead)]  # still nobody's: dropped
    assert store.queued_job_ids() == [job_id("match", dead)]  # it never asked a remote bot: its first job
    assert recovery.sweep(store) == []  # queued again, or leased: nothing left to pick up
