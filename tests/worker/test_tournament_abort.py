"""Aborting a tournament is instant: the request marks it "aborting" and queues one RQ job,
which ends every unfinished match through the one ending path and then marks it "aborted"
(docs/api.md, `POST /tournaments/{id}/abort`). The request does no per-match work, a job
that dies half-way is finished by the recovery sweep, and no match of it starts a run."""

from __future__ import annotations

import time

import pytest
from rq import Queue

from core.store.jobs import job_id
from tests.live import ADMIN_TOKEN, OUTPUT
from tests.worker.test_worker_e2e import python_bot, tournament
from worker.jobs import expand
from worker.pool import WorkerPool
from worker.recovery import sweep

GAME = "duck-soup"
RANDOM = "example_bots.random:RandomBot"


def wait_for(condition, timeout: float = 60.0):
    end = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.05)
    return value


def expanded_tournament(api, deals: int) -> tuple[str, list[str]]:
    """A tournament of 3 in-process bots expanded into its matches, all queued in RQ and
    none played: no worker runs yet."""
    token = api.account("organiser")
    bots = [python_bot(api, f"random{i}", RANDOM, game=GAME) for i in range(3)]
    tid = tournament(api, token, bots, game=GAME, deals=deals)
    expand(api.store, api.store.get_tournament(tid))
    ids = api.store.tournament_matches(tid)
    assert ids and {m["status"] for m in api.store.get_matches(ids, ("status",))} == {"queued"}
    return tid, ids


def pool(redis_url: str) -> WorkerPool:
    OUTPUT.mkdir(exist_ok=True)
    return WorkerPool(redis_url, n=2, sweep_every_s=0.5, log_path=str(OUTPUT / "worker.log"),
                      grace_s=5.0, ladder_matches=0)


def assert_all_aborted_unplayed(api, tid: str, ids: list[str]) -> None:
    done = wait_for(lambda: (t := api.ok(api.get(f"/tournaments/{tid}"), 200))["status"] == "aborted" and t)
    assert done["reason"] == "stopped by the admin" and done["progress"]["done"] == len(ids)
    matches = api.store.get_matches(ids, ("status", "reason"))
    assert {m["status"] for m in matches} == {"aborted"}
    assert all(api.store.log_length(mid) == 0 for mid in ids)  # nothing played, before or after
    assert sum(row["matches"] for row in done["standings"]) == 0  # an aborted match counts for nobody


@pytest.mark.slow
def test_the_abort_answers_at_once_and_its_job_ends_every_match(api, redis_url):
    tid, ids = expanded_tournament(api, deals=35)  # 210 matches
    assert len(ids) == 210
    assert api.post(f"/tournaments/{tid}/abort", token=api.account("someone")).status_code == 403
    answer = api.ok(api.post(f"/tournaments/{tid}/abort", token=ADMIN_TOKEN), 202)
    assert answer["status"] == "aborting" and answer["reason"] == "stopped by the admin"
    # the request ended no match: with no worker running, each is still queued, and the one job
    # that will end them waits ahead of their runs
    assert {m["status"] for m in api.store.get_matches(ids, ("status",))} == {"queued"}
    queued = api.store.queued_job_ids()
    assert queued[0] == job_id("tournament", tid) and queued.count(job_id("tournament", tid)) == 1
    assert api.ok(api.get(f"/tournaments/{tid}"), 200)["status"] == "aborting"
    assert 'data-status="aborting"' in api.session.get(f"{api.live.url}/tournaments/{tid}").text
    again = api.ok(api.post(f"/tournaments/{tid}/abort", token=ADMIN_TOKEN), 202)  # a no-op
    assert again["status"] == "aborting" and api.store.queued_job_ids() == queued
    with pool(redis_url):
        assert_all_aborted_unplayed(api, tid, ids)
        wait_for(lambda: not api.store.active_jobs())  # every job of it ran to its end
    assert api.post(f"/tournaments/{tid}/abort", token=ADMIN_TOKEN).status_code == 409


@pytest.mark.slow
def test_an_abort_whose_job_died_is_finished_by_the_sweep_and_plays_nothing(api, redis_url):
    tid, ids = expanded_tournament(api, deals=5)  # 30 matches
    api.ok(api.post(f"/tournaments/{tid}/abort", token=ADMIN_TOKEN), 202)
    # its job was taken by a worker that died: gone from the queue, still active, nobody's lock
    Queue(api.store.queue, connection=api.store.r).remove(job_id("tournament", tid))
    Queue(api.store.queue, connection=api.store.r).remove(job_id("tournament", tid))
    assert ("tournament", tid) in api.store.active_jobs()
    assert ("tournament", tid) in sweep(api.store)  # queued again, behind its matches' runs
    # each run of a match finds its tournament aborting and ends it without playing a turn
    with pool(redis_url):
        assert_all_aborted_unplayed(api, tid, ids)
