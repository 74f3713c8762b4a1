"""A settled remote turn goes on from where it landed (core/play_on.py): the next remote turn
published by the settler, once, whoever else publishes it; anything else left to a run.

Real Redis, the real runner; the settlers' deaths are built by hand (a settling that landed and
went no further), as a crash leaves them.
"""

from __future__ import annotations

import pytest

from core import play_on
from core.answers import answered, timed_out
from core.store import waits
from core.store.jobs import job_id
from tests.waiting import wait_until
from worker import recovery
from worker.match_runner import MatchRunner

GAME = "double-carre"


@pytest.fixture(autouse=True)
def no_grace(monkeypatch):
    monkeypatch.setattr(recovery, "START_GRACE_S", 0.0)


def polling_match(store, max_faults: int = 3) -> str:
    first = store.r.incrby("test:bot-names", 2) - 2
    bots = [store.create_bot("acct", f"p{first + i}", GAME, "polling")[0]["id"] for i in range(2)]
    mid = store.create_match(GAME, bots, 7, {}, max_faults=max_faults)["id"]
    assert MatchRunner(store, mid).run() == "waiting"  # its first run publishes turn 0
    return mid


def answer(store, mid: str) -> dict:
    """The entry of the waiting turn answered with its first listed action."""
    record = store.waiting_on(mid)
    return answered(store, record["decision"], 5, action=record["decision"]["legal_actions"][0])


def test_the_settler_publishes_the_next_remote_turn_and_no_run_is_enqueued(store):
    mid = polling_match(store)
    before = store.queued_job_ids()
    assert play_on.settle(store, mid, answer(store, mid))
    waiting = store.waiting_on(mid)
    state = store.replay(mid)
    assert waiting["turn"] == 1 and waiting["seat"] == state.to_act
    assert waiting["decision"]["view"] == state.view(state.to_act)
    assert waiting["decision"]["legal_actions"] == state.legal_actions()
    assert [d["turn"] for d in store.pending_decisions(waiting["bot"])] == [1]
    assert store.queued_job_ids() == before  # no job for a worker


def test_a_settler_going_on_is_left_to_it(store):
    """The settling landed and its settler is about to go on (publish the next turn or queue the
    run): the sweep, running in between, leaves the match to it."""
    mid = polling_match(store)
    assert store.settle_all([(mid, answer(store, mid), store.waiting_on(mid), None)], enqueue=False) == [True]
    assert recovery.sweep(store) == []
    assert job_id("match", mid, 1) not in store.queued_job_ids()


def test_a_settler_that_died_before_going_on_leaves_the_turn_to_a_run_published_once(store, monkeypatch):
    """The settling landed and its process died: once its hold lapses, the sweep enqueues the
    match's next run, which publishes the turn; a settler coming late (or a second run)
    publishes nothing more."""
    monkeypatch.setattr(waits, "NEXT_RUN_GRACE_MS", 1)
    mid = polling_match(store)
    assert store.settle_all([(mid, answer(store, mid), store.waiting_on(mid), None)], enqueue=False) == [True]
    assert store.waiting_on(mid)["turn"] == 0  # nothing went on
    wait_until(lambda: store.job_states([("match", mid)])[0][1] is False, what="the hold's lapse")
    assert recovery.sweep(store) == [("match", mid)]
    assert job_id("match", mid, 1) in store.queued_job_ids()
    assert MatchRunner(store, mid, 0.0).run() == "waiting"
    published = store.waiting_on(mid)
    assert published["turn"] == 1
    assert play_on.play_on(store, mid, 1, store.queue) is True  # late: published already
    assert MatchRunner(store, mid, 0.0).run() == "waiting"  # a duplicate run
    assert store.waiting_on(mid) == published  # the same record: not published again
    assert len(store.pending_decisions(published["bot"])) == 1


def test_a_run_after_the_settler_published_publishes_nothing(store):
    mid = polling_match(store)
    assert play_on.settle(store, mid, answer(store, mid))
    published = store.waiting_on(mid)
    store.enqueue_continuations([(mid, 1)])  # say the sweep had enqueued it too
    assert MatchRunner(store, mid, 0.0).run() == "waiting"
    assert store.waiting_on(mid) == published


def test_a_forfeited_seat_or_the_end_is_left_to_a_run(store):
    """With one fault allowed, a timeout forfeits its seat: the referee plays for it in a run,
    which the settling enqueues; the run plays the forfeited turns and publishes the next remote
    one, or ends the match."""
    mid = polling_match(store, max_faults=1)
    record = store.waiting_on(mid)
    assert play_on.settle(store, mid, timed_out(record["decision"]), record)
    ref = play_on.new_referee(store.get_match(mid))
    for entry in store.match_log(mid):
        ref.record(entry)
    forfeiter = record["seat"]
    while not ref.is_over and ref.to_act != forfeiter:  # the other seat answers until it is the forfeiter's turn
        entry = answer(store, mid)
        assert play_on.settle(store, mid, entry)
        ref.record(entry)
    assert not ref.is_over and ref.forfeited()  # this deal comes back to the forfeiter
    assert store.waiting_on(mid)["turn"] < ref.turn  # not published: nobody is asked
    assert job_id("match", mid, ref.turn) in store.queued_job_ids()
    assert MatchRunner(store, mid, 0.0).run() in ("waiting", "finished")
    assert all(e.get("fault") == "forfeited" for e in store.match_log(mid)[ref.turn:] if e["seat"] == forfeiter)


def test_a_match_over_is_not_gone_on(store):
    mid = polling_match(store)
    entry = answer(store, mid)
    store.set_match_status(mid, "aborted")
    assert not play_on.settle(store, mid, entry)
    assert store.waiting_on(mid)["turn"] == 0


def test_the_settler_goes_on_from_the_referee_it_kept_and_replays_a_log_it_did_not_record(store):
    """The referee kept after a publication serves the match's next turn; one whose last entry is
    not the log's (another process published in between, say) is not used: the log is replayed."""
    mid = polling_match(store)
    assert play_on.settle(store, mid, answer(store, mid))
    assert play_on._kept[mid].ref.turn == 1
    assert play_on.settle(store, mid, answer(store, mid))
    kept = play_on._kept[mid]
    assert kept.ref.turn == 2 and kept.last == store.match_log(mid)[1]
    log = store.match_log(mid)
    stale = play_on.new_referee(kept.match)  # a referee that played another action at turn 1
    stale.record(log[0])
    other = [a for a in stale.state.legal_actions() if a != log[1]["action"]][0]
    diverged = {**log[1], "action": other}
    stale.record(diverged)
    play_on._kept[mid] = play_on._Kept(kept.match, stale, diverged)
    assert play_on.settle(store, mid, answer(store, mid))
    state = store.replay(mid)
    waiting = store.waiting_on(mid)
    assert waiting["turn"] == 3 and waiting["decision"]["view"] == state.view(state.to_act)
    kept = play_on._kept[mid]
    assert kept.ref.turn == 3 and all(kept.ref.state.view(seat) == state.view(seat) for seat in (None, 0, 1))
