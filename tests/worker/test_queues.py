"""One queue name, configurable: platforms sharing a Redis never take or sweep each other's jobs."""

from __future__ import annotations

import itertools

import pytest
from rq import Queue, SimpleWorker

from core.store import Store, secret_key
from core.store.jobs import QUEUE, drop_queue, job_id, queue_name
from core.store.matches import archive_due_key, hand_over_archive_due
from worker import recovery

OTHER = "cardarena-other"


@pytest.fixture()
def stores(redis_client):
    key = secret_key(redis_client)
    return Store(redis_client, key), Store(redis_client, key, queue=OTHER)


@pytest.fixture(autouse=True)
def no_grace(monkeypatch):
    monkeypatch.setattr(recovery, "START_GRACE_S", 0.0)


_names = itertools.count()


def work_burst(store) -> None:
    """What a worker process of the store's queue does, here, until nothing is left: its RQ jobs
    (a match's next twin is one: core/conclusion.py)."""
    SimpleWorker([Queue(store.queue, connection=store.r)], connection=store.r).work(burst=True)


def random_bots(store, n=2, game="double-carre"):
    """n in-process random bots, each with a name of its own (names are unique per game)."""
    return [store.create_bot("acct", f"b{next(_names)}", game, "python", entrypoint="example_bots.random:RandomBot")[0]["id"]
            for i in range(n)]


def test_the_queue_is_named_by_the_caller_else_CARDARENA_QUEUE_else_cardarena(monkeypatch):
    monkeypatch.delenv("CARDARENA_QUEUE", raising=False)
    assert queue_name() == QUEUE == "cardarena"
    monkeypatch.setenv("CARDARENA_QUEUE", "staging")
    assert queue_name() == "staging" and queue_name("mine") == "mine"
    for bad in ("a b", "x" * 65, "rq:queue"):
        with pytest.raises(ValueError):
            queue_name(bad)


def test_each_queue_has_its_own_waiting_jobs_and_active_set(stores):
    default, other = stores
    a = default.create_match("double-carre", random_bots(default), 1, {})
    b = other.create_match("double-carre", random_bots(other), 2, {})
    default.enqueue("match", [a["id"]])
    other.enqueue("match", [b["id"]])
    assert default.active_jobs() == [("match", a["id"])]
    assert other.active_jobs() == [("match", b["id"])]
    assert Queue(QUEUE, connection=default.r).get_job_ids() == [job_id("match", a["id"])]
    assert Queue(OTHER, connection=default.r).get_job_ids() == [job_id("match", b["id"])]


def test_a_sweep_never_enqueues_another_queues_dropped_jobs(stores):
    default, other = stores
    dropped = default.create_match("double-carre", random_bots(default), 1, {})
    default.enqueue("match", [dropped["id"]])
    default.r.delete(f"rq:queue:{QUEUE}")  # as a dead worker leaves it: active, in no queue
    assert recovery.sweep(other) == []
    assert Queue(OTHER, connection=other.r).get_job_ids() == []
    assert recovery.sweep(default) == [("match", dropped["id"])]  # its own platform's sweep does
    assert Queue(QUEUE, connection=default.r).get_job_ids() == [job_id("match", dropped["id"])]


def test_a_tournament_run_from_a_queue_enqueues_its_matches_on_that_queue(stores):
    default, other = stores
    bots = random_bots(other)
    t = other.create_tournament("double-carre", bots, seats=2, deals=1, duplicate=True, seed=5, options={})
    other.enqueue("tournament", [t["id"]])
    work_burst(other)
    assert other.get_tournament(t["id"])["status"] == "finished"
    assert len(other.tournament_matches(t["id"])) == 2
    assert Queue(QUEUE, connection=default.r).count == 0 and default.active_jobs() == []
    assert other.active_jobs() == []


def test_dropping_a_queue_forgets_its_jobs_and_no_one_elses(stores):
    default, other = stores
    mine = default.create_match("double-carre", random_bots(default), 1, {})
    theirs = other.create_match("double-carre", random_bots(other), 2, {})
    default.enqueue("match", [mine["id"]])
    other.enqueue("match", [theirs["id"]])
    drop_queue(other.r, OTHER)
    assert other.active_jobs() == [] and Queue(OTHER, connection=other.r).count == 0
    assert default.active_jobs() == [("match", mine["id"])]
    assert Queue(QUEUE, connection=default.r).get_job_ids() == [job_id("match", mine["id"])]


def test_a_dropped_queues_matches_due_to_be_archived_are_handed_to_the_default_queue(stores):
    default, other = stores
    mine = default.create_match("double-carre", random_bots(default), 1, {})
    theirs = other.create_match("double-carre", random_bots(other), 2, {})
    for store, queue, match in ((default, QUEUE, mine), (other, OTHER, theirs)):
        store.set_match_status(match["id"], "finished")
        store.r.zadd(archive_due_key(queue), {match["id"]: 1})  # as `archive_later` leaves it
    drop_queue(other.r, OTHER)
    hand_over_archive_due(other.r, OTHER)
    assert other.archive_due_count() == 0 and not other.r.exists(archive_due_key(OTHER))
    assert default.archive_due_count() == 2  # the default queue's sweep archives both
