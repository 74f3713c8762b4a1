"""An admin stops a match or a tournament while the worker pool plays it (docs/api.md §3:
a match is "aborted" only when an admin stops it or its job fails 3 times)."""

from __future__ import annotations

import time

from tests.live import ADMIN_TOKEN
from tests.worker.test_worker_e2e import python_bot, tournament, wait_finished

GAME = "duck-soup"  # long enough matches to be stopped in the middle


def wait_for(condition, timeout: float = 60.0):
    end = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < end, "condition not reached"
        time.sleep(0.02)
    return value


def test_an_admin_stops_a_running_match_and_its_worker_stops_playing(api, worker_pool):
    token = api.account("alice")
    bots = [python_bot(api, f"slow{i}", "tests.worker.e2e_bots:Slow", game=GAME) for i in range(2)]
    mid = api.ok(api.post("/matches", {"game": GAME, "bots": bots}, token=token), 202)["id"]
    wait_for(lambda: api.store.log_length(mid) >= 5)  # its moves show live (written every 0.2 s)
    assert api.post(f"/matches/{mid}/abort").status_code == 401
    assert api.post(f"/matches/{mid}/abort", token=token).status_code == 403  # an account is not the admin
    assert api.post("/matches/m_none/abort", token=ADMIN_TOKEN).status_code == 404
    stopped = api.ok(api.post(f"/matches/{mid}/abort", token=ADMIN_TOKEN), 200)
    assert stopped["status"] == "aborted" and stopped["reason"] == "stopped by the admin"
    assert stopped["result"] is None
    wait_for(lambda: not api.store.lease_held("match", mid))  # its runner let go
    length = api.store.log_length(mid)
    wait_for(lambda: ("match", mid) not in api.store.active_jobs())  # its job ran to its end: no run is left
    assert api.store.log_length(mid) == length  # and plays no more
    assert api.post(f"/matches/{mid}/abort", token=ADMIN_TOKEN).status_code == 409
    for bot in bots:  # an aborted match counts for nobody
        record = api.ok(api.get(f"/bots/{bot}"), 200)
        assert record["matches"] == 0 and record["rating"]["mu"] == 25.0


def test_an_admin_stops_a_running_tournament(api, worker_pool):
    token = api.account("organiser")
    bots = [python_bot(api, f"slow{i}", "tests.worker.e2e_bots:Slow", game=GAME) for i in range(3)]
    tid = tournament(api, token, bots, game=GAME, deals=10)  # 60 matches
    wait_for(lambda: api.ok(api.get(f"/tournaments/{tid}"), 200)["progress"]["done"] >= 2)
    assert api.post(f"/tournaments/{tid}/abort", token=token).status_code == 403
    stopped = api.ok(api.post(f"/tournaments/{tid}/abort", token=ADMIN_TOKEN), 202)
    assert stopped["status"] == "aborting"  # its job ends the matches (tests/worker/test_tournament_abort.py)
    done = wait_finished(api, tid)
    assert done["status"] == "aborted"
    wait_for(lambda: api.ok(api.get(f"/tournaments/{tid}"), 200)["progress"]["done"] == 60)
    matches = api.ok(api.get(f"/tournaments/{tid}/matches"), 200)["matches"]
    finished = [m for m in matches if m["status"] == "finished"]
    assert finished and len(finished) < 60
    assert all(m["status"] in ("finished", "aborted") for m in matches)
    wait_for(lambda: not api.store.r.keys("lease:match:*"))  # every runner let go
    standings = api.ok(api.get(f"/tournaments/{tid}"), 200)["standings"]
    assert sum(row["matches"] for row in standings) == 2 * len(finished)  # only the finished count
    assert api.post(f"/tournaments/{tid}/abort", token=ADMIN_TOKEN).status_code == 409
    # the owner's slot is free again: three more unfinished tournaments are allowed
    for _ in range(3):
        tournament(api, token, bots, game=GAME, deals=1)


def test_stopping_a_match_on_a_remote_turn_frees_its_decision_and_slots_at_once(api, worker_pool):
    """One ending path: the admin's stop does all that follows a match's end — the bot's pending
    decision and its deadline go, its slot is free and the match waiting for it starts —
    at once, not when the recovery sweep comes by."""
    token = api.account("alice")
    poller = api.bot(token, "poller", GAME, max_concurrent=1)
    other = python_bot(api, "slow", "tests.worker.e2e_bots:Slow", game=GAME)
    # a house bot on a long clock: the admin's to choose (docs/api.md §6)
    first = api.match(api.admin_token, GAME, [poller["id"], other], move_timeout_ms=10000)["id"]
    second = api.match(api.admin_token, GAME, [poller["id"], other], move_timeout_ms=10000)["id"]
    turns = lambda: api.ok(api.get("/bots/me/turns", token=poller["secret"]), 200)["turns"]  # noqa: E731
    pending = wait_for(turns)
    stopped_id = pending[0]["match_id"]
    waiting_id = second if stopped_id == first else first
    assert api.store.playing(poller["id"]) == [stopped_id]  # the other match waits for the slot
    api.ok(api.post(f"/matches/{stopped_id}/abort", token=ADMIN_TOKEN), 200)
    # at once: no decision of the stopped match pending, no deadline, its slot taken by the other
    assert all(t["match_id"] != stopped_id for t in turns())
    assert api.store.waiting_on(stopped_id) is None and not api.store.has_deadline(stopped_id, pending[0]["turn"])
    assert api.store.playing(poller["id"]) in ([], [waiting_id])
    assert ("match", stopped_id) not in api.store.active_jobs()
    wait_for(lambda: any(t["match_id"] == waiting_id for t in turns()))  # the waiting match plays


def test_a_stop_whose_follow_ups_died_with_their_process_is_finished_by_the_sweep(api, monkeypatch):
    """kill -9 between the conclusion's transaction and its follow-ups loses nothing: the match
    stays active, and the pool's recovery sweep does the rest (slots, waits)."""
    from core import conclusion
    from worker import recovery

    token = api.account("alice")
    bots = [api.bot(token, f"p{i}", GAME)["id"] for i in range(2)]  # polling bots: they have slots
    mid = api.match(token, GAME, bots)["id"]
    store = api.store
    assert store.take_slots(mid, store.seat_bots(store.get_match(mid))) is None
    assert all(store.playing(b) == [mid] for b in bots)
    with monkeypatch.context() as m:  # the API process dies right after the transaction
        m.setattr(conclusion, "match_concluded", lambda store, match, chain=None: None)
        assert conclusion.end_match(store, mid, "aborted", reason="stopped by the admin")
    assert ("match", mid) in store.active_jobs() and store.playing(bots[0]) == [mid]
    recovery.sweep(store)
    assert ("match", mid) not in store.active_jobs()
    assert all(store.playing(b) == [] for b in bots) and store.get_match(mid)["status"] == "aborted"
