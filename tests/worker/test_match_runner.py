"""worker/match_runner.py: refereeing one match, called directly (no pool), on a real Redis.

The seats are in-process bots from tests/worker/bots.py. The game is
double-carre: two seats, 12 decisions, 6 per seat. With seed 5 seat 0 acts
first, and if both seats always play the first legal action seat 0 wins.
"""

from __future__ import annotations

import json
import re
import threading
import time

import pytest

import games
from tests.worker import bots as test_bots
from tests.worker.bots import ENTRY
from worker.dispatch import Dispatcher
from worker.match_runner import MAX_ATTEMPTS, MatchRunner

GAME = "double-carre"
SEED = 5  # seat 0 first; all-first-actions play: ranks [1, 2]
DECISIONS = 12


@pytest.fixture(autouse=True)
def _clear_match_overs():
    test_bots.MATCH_OVERS.clear()
    yield
    test_bots.MATCH_OVERS.clear()


def new_bot(store, cls: str) -> str:
    """A bot of class `cls`, named after it (and numbered: names are unique per game)."""
    number = store.r.incr("test:bot-names")
    bot, _ = store.create_bot("acct_test", f"{cls.lower()}{number}", GAME, "python", entrypoint=ENTRY + cls)
    return bot["id"]


def new_match(store, classes: list[str], seed: int = SEED, **fields) -> dict:
    """A match of these test bots; no time bank unless asked (most tests here time one move)."""
    seats = [new_bot(store, cls) for cls in classes]
    return store.create_match(GAME, seats, seed, {}, **{"time_bank_ms": 0, **fields})


def jsonish(value):
    return json.loads(json.dumps(value))


def replay_checked(match: dict, log: list[dict]):
    """Replay `log` on a fresh state, checking every faulted entry holds the first legal action."""
    state = games.get(match["game"]).new(len(match["seats"]), match["seed"], match["options"])
    for turn, entry in enumerate(log):
        assert entry["turn"] == turn
        assert entry["seat"] == state.to_act
        legal = state.legal_actions()
        if "fault" in entry:
            assert entry["action"] == jsonish(legal[0]), entry
        assert entry["action"] in jsonish(legal), entry
        state.apply(entry["action"])
    return state


def assert_result_is_the_replay(store, mid: str) -> dict:
    """The stored result is what replaying the stored log gives (ranks aside when someone forfeited)."""
    match = store.get_match(mid)
    log = store.match_log(mid)
    assert len(log) == DECISIONS
    state = replay_checked(match, log)
    assert state.is_over
    expected = jsonish(state.result())
    result = match["result"]
    for key, value in expected.items():
        if key == "ranks" and result.get("forfeits"):
            continue
        assert result[key] == value, key
    assert jsonish(store.replay(mid).result()) == expected
    return match


def run_to_end(store, mid: str, timeout_s: float = 60.0) -> str:
    """Run the match as the pool would: each time a remote seat was asked, again once its
    turn is settled (the dispatcher appends it and enqueues the next run, which no worker
    takes here)."""
    end = time.monotonic() + timeout_s
    while True:
        status = MatchRunner(store, mid).run()
        if status != "waiting" or time.monotonic() > end:
            return status
        asked = store.waiting_on(mid)["turn"]  # the log may have moved past it already
        while store.log_length(mid) <= asked and time.monotonic() < end:
            time.sleep(0.01)


def faults_of(log: list[dict], seat: int) -> list[str]:
    return [e["fault"] for e in log if e["seat"] == seat and "fault" in e]


# -- a match played to its end ----------------------------------------------------


def test_a_clean_match_finishes_and_its_log_replays_to_the_result(store):
    match = new_match(store, ["First", "Last"])
    mid = match["id"]
    store.r.sadd("jobs:active", f"match:{mid}")
    assert MatchRunner(store, mid).run() == "finished"
    done = assert_result_is_the_replay(store, mid)
    assert done["status"] == "finished"
    assert done["started"] and done["finished"]
    assert done["result"]["faults"] == [0, 0]
    assert "forfeits" not in done["result"]
    log = store.match_log(mid)
    assert all("fault" not in e for e in log)
    # each seat played its own bot's choice: seat 1 the last legal action
    state = games.get(GAME).new(2, SEED, {})
    for entry in log:
        legal = jsonish(state.legal_actions())
        assert entry["action"] == (legal[0] if entry["seat"] == 0 else legal[-1])
        state.apply(entry["action"])
    # the bots' records, the lease and the active job
    ranks = done["result"]["ranks"]
    for seat, bot in enumerate(match["seats"]):
        record = store.get_bot(bot)
        assert record["matches"] == 1
        assert record["wins"] == int(ranks[seat] == 1 and ranks.count(1) == 1)
        assert record["faults"] == 0
    assert not store.lease_held("match", mid)
    assert ("match", mid) not in store.active_jobs()
    # the bot was told the match is over (not a tournament match: the whole result)
    assert [m for m, _ in test_bots.MATCH_OVERS] == [mid]
    assert test_bots.MATCH_OVERS[0][1]["ranks"] == ranks
    assert "decks" in test_bots.MATCH_OVERS[0][1]


def test_an_unknown_match_is_missing(store):
    assert MatchRunner(store, "m_nosuchmatch").run() == "missing"


# -- faults ------------------------------------------------------------------------


def test_errors_and_illegal_answers_are_faults_with_reasons_and_the_first_action_is_played(store):
    match = new_match(store, ["Illegal", "Raises"], max_faults=10)
    mid = match["id"]
    assert MatchRunner(store, mid).run() == "finished"
    done = assert_result_is_the_replay(store, mid)
    log = store.match_log(mid)
    illegal, raised = faults_of(log, 0), faults_of(log, 1)
    assert len(illegal) == len(raised) == 6  # every decision, and no forfeit below 10 faults
    assert all(f.startswith("illegal: ") for f in illegal)
    assert "must take" in illegal[0]  # the engine's own reason
    assert all(f == "bot_error: RuntimeError: boom in act" for f in raised)
    assert done["result"]["faults"] == [6, 6]
    assert "forfeits" not in done["result"]
    assert [store.get_bot(b)["faults"] for b in match["seats"]] == [6, 6]


def test_a_bot_past_its_deadline_once_gets_one_timeout_fault(store):
    match = new_match(store, ["Sleeper", "First"], move_timeout_ms=200)
    mid = match["id"]
    began = time.monotonic()
    assert MatchRunner(store, mid).run() == "finished"
    # the watchdog interrupted the 0.6 s sleep at the 200 ms deadline
    assert time.monotonic() - began < test_bots.Sleeper.SLEEP_S + 1.0
    assert_result_is_the_replay(store, mid)
    log = store.match_log(mid)
    assert faults_of(log, 0) == ["timeout: no answer within 200 ms move + 0 ms bank"]
    assert log[0]["fault"] == "timeout: no answer within 200 ms move + 0 ms bank"  # its very first decision
    # after that it plays its own (last) actions again
    state = games.get(GAME).new(2, SEED, {})
    for entry in log:
        legal = jsonish(state.legal_actions())
        if entry["seat"] == 0 and entry["turn"] > 0:
            assert entry["action"] == legal[-1]
        state.apply(entry["action"])
    assert store.get_bot(match["seats"][0])["faults"] == 1


def test_off_the_main_thread_a_late_answer_is_still_a_timeout(store):
    """No signal can reach another thread: the sleep runs out, and the answer is judged late."""
    match = new_match(store, ["Sleeper", "First"], move_timeout_ms=200)
    mid = match["id"]
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(MatchRunner(store, mid).run()))
    worker.start()
    worker.join(timeout=30)
    assert out == ["finished"]
    log = store.match_log(mid)
    (late,) = faults_of(log, 0)
    assert re.fullmatch(r"timeout: answered after [\d,]+ ms; the deadline was 200 ms move \+ 0 ms bank", late)
    assert_result_is_the_replay(store, mid)


def test_a_bot_spinning_forever_is_interrupted_by_the_watchdog(store):
    match = new_match(store, ["Hangs", "First"], move_timeout_ms=200, max_faults=2)
    mid = match["id"]
    began = time.monotonic()
    assert MatchRunner(store, mid).run() == "finished"
    assert time.monotonic() - began < 3.0  # two interrupted 200 ms decisions, not two 10 s spins
    log = store.match_log(mid)
    assert faults_of(log, 0)[:2] == ["timeout: no answer within 200 ms move + 0 ms bank"] * 2
    assert store.get_match(mid)["result"]["forfeits"] == [0]


def test_a_bot_editing_the_listed_action_it_returns_cannot_break_the_log(store):
    match = new_match(store, ["Mutates", "First"])
    mid = match["id"]
    assert MatchRunner(store, mid).run() == "finished"
    log = store.match_log(mid)
    assert all("note" not in e["action"] for e in log)
    faults = [e["fault"] for e in log if e["seat"] == 0 and "fault" in e]
    assert len(faults) > 3 and all(f.startswith("illegal: ") for f in faults[:3])  # judged as sent
    assert set(faults[3:]) <= {"forfeited"}
    assert_result_is_the_replay(store, mid)


# -- forfeits --------------------------------------------------------------------------


def test_after_max_faults_the_seat_forfeits_and_ranks_last(store):
    # with all-first-actions play seat 0 would win (seed 5): the forfeit alone puts it last
    match = new_match(store, ["Raises", "First"], max_faults=2)
    mid = match["id"]
    assert MatchRunner(store, mid).run() == "finished"
    done = assert_result_is_the_replay(store, mid)
    log = store.match_log(mid)
    seat0 = [e for e in log if e["seat"] == 0]
    assert len(seat0) == 6
    assert [e["fault"] for e in seat0[:2]] == ["bot_error: RuntimeError: boom in act"] * 2
    assert [e["fault"] for e in seat0[2:]] == ["forfeited"] * 4
    assert all("fault" not in e for e in log if e["seat"] == 1)
    result = done["result"]
    assert jsonish(replay_checked(done, log).result())["ranks"] == [1, 2]
    assert result["forfeits"] == [0]
    assert result["ranks"] == [2, 1]
    assert result["faults"] == [2, 0]  # "forfeited" entries are not faults
    assert done["status"] == "finished"
    raiser, first = (store.get_bot(b) for b in match["seats"])
    assert (raiser["matches"], raiser["wins"], raiser["faults"]) == (1, 0, 2)
    assert (first["matches"], first["wins"], first["faults"]) == (1, 1, 0)


@pytest.mark.parametrize("cls", ["Nested", "Poison"])
def test_an_answer_of_any_shape_is_a_bad_answer_fault_never_a_crash(store, cls):
    """50,000 levels of nesting, or a value raising on every use: the seat's fault, the match finishes."""
    # a move time a loaded machine needs to build and judge 50,000 levels: the fault must be the
    # answer's shape, never the clock's
    match = new_match(store, [cls, "First"], max_faults=10, move_timeout_ms=15_000)
    assert MatchRunner(store, match["id"]).run() == "finished"
    faults = faults_of(store.match_log(match["id"]), 0)
    # not JSON (too deep, or not a JSON object at all): the referee's bad_answer, as local play says
    assert len(faults) == 6 and all(f.startswith("bad_answer: ") for f in faults), faults[:1]
    assert store.get_match(match["id"])["result"]["faults"] == [6, 0]


@pytest.mark.parametrize("record, kind", [
    ({"kind": "webhook", "url": f"http://{'a' * 64}.example/"}, "refused_url"),  # urllib3 could not parse it
    ({"kind": "webhook", "url": None}, "refused_url"),
    ({"kind": "telepathy"}, "bot_error"),
])
def test_a_stored_bot_the_referee_cannot_drive_faults_its_seat_and_the_match_finishes(store, redis_client,
                                                                                      record, kind):
    """Stored before today's checks (or by hand): every decision a fault of its kind, then a forfeit."""
    match = new_match(store, ["First", "First"], max_faults=2)
    bad = match["seats"][0]
    redis_client.hset(f"bot:{bad}", mapping={k: json.dumps(v) for k, v in record.items()})
    with Dispatcher(store):  # a webhook seat is called by the dispatcher, never by the runner
        assert run_to_end(store, match["id"]) == "finished"
    done = store.get_match(match["id"])
    faults = faults_of(store.match_log(match["id"]), 0)
    assert faults[:2] and all(f.startswith(f"{kind}: ") for f in faults[:2]), faults[:2]
    assert done["result"]["forfeits"] == [0]


def test_one_fault_allowed_forfeits_at_the_first(store):
    match = new_match(store, ["First", "Illegal"], max_faults=1)
    mid = match["id"]
    assert MatchRunner(store, mid).run() == "finished"
    log = store.match_log(mid)
    seat1 = [e.get("fault", "") for e in log if e["seat"] == 1]
    assert seat1[0].startswith("illegal: ")
    assert seat1[1:] == ["forfeited"] * 5
    result = store.get_match(mid)["result"]
    assert (result["forfeits"], result["ranks"], result["faults"]) == ([1], [1, 2], [0, 1])
    assert store.get_bot(match["seats"][1])["faults"] == 1


# -- resuming, repeating ------------------------------------------------------------------


def test_a_runner_resumes_from_the_log_and_keeps_what_it_holds(store):
    match = new_match(store, ["First", "First"])
    mid = match["id"]
    # an earlier runner played 5 decisions, each the *last* legal action (First would
    # play the first), and was charged a fault on turn 2
    state = games.get(GAME).new(2, SEED, {})
    earlier = []
    for turn in range(5):
        legal = jsonish(state.legal_actions())
        entry = {"turn": turn, "seat": state.to_act, "action": legal[-1]}
        if turn == 2:
            entry = {**entry, "action": legal[0], "fault": "timeout: no answer within 2000 ms"}
        earlier.append(entry)
        state.apply(entry["action"])
    assert store.append_entries(mid, earlier)
    store.set_match_status(mid, "running")
    assert MatchRunner(store, mid).run() == "finished"
    log = store.match_log(mid)
    assert log[:5] == earlier
    assert all("fault" not in e for e in log[5:])
    done = assert_result_is_the_replay(store, mid)
    faulted_seat = earlier[2]["seat"]
    assert done["result"]["faults"][faulted_seat] == 1  # counted from the log it resumed
    assert store.get_bot(match["seats"][faulted_seat])["faults"] == 1


def test_a_whole_log_not_yet_concluded_is_concluded_without_asking_anyone(store):
    """A runner died between writing the last action and concluding the match."""
    match = new_match(store, ["Raises", "Raises"])
    mid = match["id"]
    state = games.get(GAME).new(2, SEED, {})
    entries = []
    while not state.is_over:
        legal = jsonish(state.legal_actions())
        entries.append({"turn": len(entries), "seat": state.to_act, "action": legal[-1]})
        state.apply(legal[-1])
    assert store.append_entries(mid, entries)
    assert MatchRunner(store, mid).run() == "finished"
    assert store.match_log(mid) == entries
    done = assert_result_is_the_replay(store, mid)
    assert done["result"]["faults"] == [0, 0]  # a Raises bot asked even once would have faulted


def tournament_match(store, classes: list[str]) -> tuple[str, dict]:
    seats = [new_bot(store, cls) for cls in classes]
    t = store.create_tournament(GAME, seats, seats=2, deals=1, duplicate=False, seed=1, options={})
    store.set_tournament(t["id"], status="running", total=1)
    match = store.create_match(GAME, seats, SEED, {}, tournament_id=t["id"])
    store.add_tournament_match(t["id"], match["id"])
    return t["id"], match


def test_running_a_concluded_match_again_changes_nothing(store):
    tid, match = tournament_match(store, ["First", "Last"])
    mid = match["id"]
    assert MatchRunner(store, mid).run() == "finished"
    snapshot = {
        "match": store.get_match(mid), "log": store.match_log(mid),
        "bots": [store.get_bot(b) for b in match["seats"]],
        "tallies": store.tournament_tallies(tid), "standings": store.standings(tid),
        "progress": store.tournament_progress(tid),
    }
    assert snapshot["progress"] == {"done": 1, "total": 1}
    assert store.get_tournament(tid)["status"] == "finished"
    assert [b["matches"] for b in snapshot["bots"]] == [1, 1]
    assert {bot: t["matches"] for bot, t in snapshot["tallies"].items()} == dict.fromkeys(match["seats"], 1.0)
    assert sum(row["points"] for row in snapshot["standings"]) == 1.0
    # a tournament match's end tells the bots only the scores and ranks
    assert test_bots.MATCH_OVERS == [(mid, {"scores": snapshot["match"]["result"]["scores"],
                                            "ranks": snapshot["match"]["result"]["ranks"]})]

    assert MatchRunner(store, mid).run() == "finished"
    assert store.get_match(mid) == snapshot["match"]
    assert store.match_log(mid) == snapshot["log"]
    assert [store.get_bot(b) for b in match["seats"]] == snapshot["bots"]
    assert store.tournament_tallies(tid) == snapshot["tallies"]
    assert store.standings(tid) == snapshot["standings"]
    assert store.tournament_progress(tid) == snapshot["progress"]
    assert len(test_bots.MATCH_OVERS) == 1  # not told twice


# -- leases and attempts ----------------------------------------------------------------------


def test_a_match_whose_lease_is_held_is_left_alone(store):
    match = new_match(store, ["First", "First"])
    mid = match["id"]
    token = store.take_lease("match", mid)
    assert token
    assert MatchRunner(store, mid).run() == "busy"
    assert store.match_log(mid) == []
    after = store.get_match(mid)
    assert after["status"] == "queued"
    assert "attempts" not in after  # leaving a busy match is not an attempt
    assert store.lease_held("match", mid)  # still the other runner's
    store.release_lease("match", mid, token)
    assert MatchRunner(store, mid).run() == "finished"


def test_a_third_attempt_still_runs(store):
    mid = new_match(store, ["First", "First"])["id"]
    store.r.hset(f"match:{mid}", "attempts", MAX_ATTEMPTS - 1)
    assert MatchRunner(store, mid).run() == "finished"
    assert store.get_match(mid)["attempts"] == MAX_ATTEMPTS


def test_a_match_started_more_than_three_times_is_aborted(store):
    match = new_match(store, ["First", "First"])
    mid = match["id"]
    store.r.sadd("jobs:active", f"match:{mid}")
    store.r.hset(f"match:{mid}", "attempts", 3)
    assert MAX_ATTEMPTS == 3
    assert MatchRunner(store, mid).run() == "aborted"
    done = store.get_match(mid)
    assert done["status"] == "aborted"
    assert done["result"] is None
    assert "3 times" in done["reason"]
    assert store.match_log(mid) == []
    assert [store.get_bot(b)["matches"] for b in match["seats"]] == [0, 0]
    assert not store.lease_held("match", mid)
    assert ("match", mid) not in store.active_jobs()
    assert test_bots.MATCH_OVERS == []
    # and it stays aborted
    assert MatchRunner(store, mid).run() == "aborted"


def test_a_run_after_a_remote_turn_goes_on_from_the_referee_its_process_kept(store):
    """A run that asked a remote bot leaves its referee to the process; the next run records only
    the settled entry on it. One whose last entry is not the log's is never used: replayed whole."""
    from core.answers import answered
    from worker import match_runner

    polling, _ = store.create_bot("acct_test", f"poll{store.r.incr('test:bot-names')}", GAME, "polling")
    match = store.create_match(GAME, [polling["id"], new_bot(store, "First")], SEED, {}, time_bank_ms=0)
    mid, kept, runs = match["id"], [], 0
    while (status := MatchRunner(store, mid).run()) == "waiting":
        runs += 1
        decision = store.waiting_on(mid)["decision"]
        assert store.settle(mid, answered(store, decision, 5, action=decision["legal_actions"][0]))
        if decision["turn"] == 0:  # nothing recorded yet: nothing kept
            assert mid not in match_runner._kept
            continue
        found = match_runner._kept[mid]
        ref, last = found.ref, found.last
        kept.append(ref)
        assert ref.turn == decision["turn"] and last == store.match_log(mid)[ref.turn - 1]
        assert found.match["seats"] == match["seats"]
        if len(kept) == 3:  # a kept referee that does not match the log is not used
            found.last = {**last, "action": {"forged": True}}
    assert status == "finished" and runs == DECISIONS // 2
    assert len(kept) == DECISIONS // 2 - 1
    assert kept[1] is kept[0] and kept[2] is kept[1]  # one referee, run after run
    assert kept[3] is not kept[2]  # the forged one was dropped: rebuilt from the log
    assert_result_is_the_replay(store, mid)


def run_queued_jobs(store) -> None:
    """Run what the store's queue holds, as a worker of the pool does (RQ's own loop, in this
    process: a referee kept by one run serves the next)."""
    from rq import Queue, SimpleWorker

    SimpleWorker([Queue(store.queue, connection=store.r)], connection=store.r).work(burst=True)


def test_each_continuation_is_an_rq_job_that_goes_on_from_the_kept_referee(store):
    """Each settled turn of a match of two polling bots enqueues its next run, one RQ job
    ("match-{id}-{k+1}") run by RQ's worker loop: it reads match, bots, log and waiting record in
    one step, goes on from the referee the process kept and lets go of the match's lock; one with
    no referee kept (another process's) replays the log."""
    from core.answers import answered
    from core.store.jobs import job_id
    from worker import match_runner

    seats = [store.create_bot("acct_test", f"poll{store.r.incr('test:bot-names')}", GAME, "polling")[0]["id"]
             for _ in range(2)]
    mid = store.create_match(GAME, seats, SEED, {}, time_bank_ms=0)["id"]
    status, refs, runs = MatchRunner(store, mid).run(), [], 0
    while status == "waiting":
        runs += 1
        decision = store.waiting_on(mid)["decision"]
        assert store.settle(mid, answered(store, decision, 5, action=decision["legal_actions"][-1]))
        assert store.queued_job_ids() == [job_id("match", mid, decision["turn"] + 1)]
        if runs == 6:  # as if another process ran the match so far
            match_runner._kept.pop(mid)
        run_queued_jobs(store)
        assert store.queued_job_ids() == [] and not store.lease_held("match", mid)
        status = store.get_match(mid)["status"]
        if status == "running":
            status = "waiting"
            refs.append(match_runner._kept[mid].ref)
            assert refs[-1].turn == decision["turn"] + 1 == store.waiting_on(mid)["turn"]
    assert status == "finished" and runs == DECISIONS
    assert all(ref is refs[0] for ref in refs[:5]) and all(ref is refs[5] for ref in refs[5:])
    assert refs[5] is not refs[0]
    assert mid not in match_runner._kept or match_runner._kept[mid].ref.turn < DECISIONS
    assert_result_is_the_replay(store, mid)


def test_a_stale_or_duplicate_continuation_plays_nothing_twice(store):
    """A continuation run again (enqueued twice, or after the match went on) finds the turn
    published already and publishes nothing, plays nothing: the log and the waiting record are
    as the first left them."""
    from core.answers import answered

    seats = [store.create_bot("acct_test", f"poll{store.r.incr('test:bot-names')}", GAME, "polling")[0]["id"]
             for _ in range(2)]
    mid = store.create_match(GAME, seats, SEED, {}, time_bank_ms=0)["id"]
    assert MatchRunner(store, mid).run() == "waiting"
    decision = store.waiting_on(mid)["decision"]
    assert store.settle(mid, answered(store, decision, 5, action=decision["legal_actions"][0]))
    run_queued_jobs(store)
    log, waiting = store.match_log(mid), store.waiting_on(mid)
    assert waiting["turn"] == decision["turn"] + 1
    store.enqueue_continuations([(mid, decision["turn"] + 1)])  # the same run, again
    run_queued_jobs(store)
    assert store.match_log(mid) == log and store.waiting_on(mid) == waiting
    assert not store.settle(mid, answered(store, decision, 5, action=decision["legal_actions"][0]))
    assert store.queued_job_ids() == []  # a turn settled twice enqueues nothing the second time


def test_a_continuation_waits_for_the_lock_the_run_that_asked_still_holds(store):
    """A fast answer can be settled between the run's publishing and its letting go of the lock:
    the continuation then waits for the lock (not "busy", which would leave the match idle)."""
    import threading

    from core.answers import answered

    seats = [store.create_bot("acct_test", f"poll{store.r.incr('test:bot-names')}", GAME, "polling")[0]["id"]
             for _ in range(2)]
    mid = store.create_match(GAME, seats, SEED, {}, time_bank_ms=0)["id"]
    assert MatchRunner(store, mid).run() == "waiting"
    decision = store.waiting_on(mid)["decision"]
    lock = store.lock("match", mid, 10_000)
    assert lock.acquire(blocking=False)  # the run that asked, not gone yet
    assert store.settle(mid, answered(store, decision, 5, action=decision["legal_actions"][0]))
    assert MatchRunner(store, mid).run() == "busy"  # a first run does not wait
    released = threading.Timer(0.05, lock.release)
    released.start()
    assert MatchRunner(store, mid, wait_s=5.0).run() == "waiting"
    released.join()
    assert store.waiting_on(mid)["turn"] == decision["turn"] + 1


def test_a_run_ends_asking_in_one_step_with_the_bytes_the_readers_expect(store):
    """`end_run_asking`: a polling decision pending as it always was stored (the same bytes), a webhook's
    call queued, the waiting record, the deadline and the run's clean end in one step; a decision
    published already is not published again, nor one of a turn the log is not at."""
    from core.store.decisions import decisions_key
    from core.store.matches import log_key
    from core.store.waits import CALL_SLACK_MS, call_item, calls_key, deadlines_key, waiting_key

    poll = store.create_bot("acct_test", f"poll{store.r.incr('test:bot-names')}", GAME, "polling")[0]
    hook = {"id": "b_hook", "kind": "webhook", "owner": "acct_test", "version": 2}
    mid = store.create_match(GAME, [poll["id"], poll["id"]], SEED, {}, time_bank_ms=0)["id"]
    store.r.hset(f"match:{mid}", "attempts", 2)
    decision = {"match_id": mid, "turn": 0, "seat": 0, "deadline_ms": 5000, "view": {"hand": ["é", 1.5]}}
    record = store.end_run_asking(mid, 0, (decision, poll))
    assert store.r.hget(f"match:{mid}", "attempts") == b"0"
    assert store.waiting_on(mid) == record and record["decision"] == decision and record["kind"] == "polling"
    stored = store.r.hget(decisions_key(poll["id"]), f"{mid}:0")
    assert stored == json.dumps({"decision": decision, "sent_at": record["sent_at"],
                                 "deadline_at": record["deadline_at"]}, separators=(",", ":")).encode()
    assert store.r.hget(waiting_key(mid), "record") == json.dumps(record, separators=(",", ":")).encode()
    assert store.r.zscore(deadlines_key(store.queue), f"{mid}:0") == record["deadline_at"]

    assert store.end_run_asking(mid, 1, ({**decision, "turn": 1}, hook)) is None  # the log holds no turn 0
    store.r.rpush(log_key(mid), json.dumps({"turn": 0, "seat": 0, "action": 1}))
    assert store.end_run_asking(mid, 0, (decision, poll)) is None  # turn 0 is published already
    record = store.end_run_asking(mid, 1, ({**decision, "turn": 1}, hook))
    assert store.r.lrange(calls_key(store.queue), 0, -1) == [call_item(mid, 1).encode()]
    assert store.end_run_asking(mid, 1, ({**decision, "turn": 1}, hook), run_ends=False) is None  # again: no
    assert store.r.zscore(deadlines_key(store.queue), f"{mid}:1") == record["deadline_at"] + CALL_SLACK_MS
    assert store.waiting_on(mid) == record and record["version"] == 2 and record["account"] == "acct_test"

    store.r.hset(f"match:{mid}", "attempts", 1)
    assert store.end_run_asking(mid, 1, None) is None  # published already: only the clean end
    assert store.waiting_on(mid) == record and store.r.llen(calls_key(store.queue)) == 1
    assert store.r.hget(f"match:{mid}", "attempts") == b"0"


def test_a_continuation_is_sent_a_bots_fields_only_when_they_changed(store):
    """`start_run` gives each seat's bot as it is now: its fields come in the step's answer only
    when their stamp is not the one this process holds (the same fields: the record read before),
    so a bot changed or deleted between two runs is seen at the next."""
    from core.store.bots import RUNNER_FIELDS
    from core.store.keys import text
    from core.store.lua import args, source
    from core.store.matches import log_key
    from core.store.runs import _read_bots, start_run
    from core.store.slots import slots_step
    from core.store.waits import waiting_key

    poll = store.create_bot("acct_test", f"poll{store.r.incr('test:bot-names')}", GAME, "polling")[0]
    mid = store.create_match(GAME, [poll["id"], poll["id"]], SEED, {}, time_bank_ms=0)
    bots = [{**poll, "version": 1}] * 2
    first = start_run(store, mid["id"], mid, 0, bots).bots[poll["id"]]
    assert first["kind"] == "polling" and first["max_concurrent"] == 4
    stamp = _read_bots[poll["id"]][0]
    _, slot_keys, slots = slots_step(mid["id"], [])
    keys = [f"match:{mid['id']}", log_key(mid["id"]), waiting_key(mid["id"]), f"match:{mid['id']}",  # no tournament
            f"bot:{poll['id']}", *slot_keys]
    for held, sent in ((stamp, []), ("", [stamp]), ("0" * 40, [stamp])):
        raw = store.script(source("start_run"))(keys=keys, args=[args(
            bots=1, fields=RUNNER_FIELDS, stamps=[text(held)], since=0, slots=slots,
            started_at='"now"')])
        assert raw[2][0][:1] == sent  # nothing but a stamp it does not hold
    assert start_run(store, mid["id"], mid, 0, bots).bots[poll["id"]] == first

    store.r.hset(f"bot:{poll['id']}", "max_concurrent", "2")
    assert start_run(store, mid["id"], mid, 0, bots).bots[poll["id"]] == {**first, "max_concurrent": 2}
    store.r.delete(f"bot:{poll['id']}")
    assert start_run(store, mid["id"], mid, 0, bots).bots == {}


def test_a_continuation_reads_takes_its_slots_and_starts_in_one_step(store):
    """`start_run`: the reads of `read_run`, then the slots and the start, as `take_slots_and_start`
    makes them, in one step; none of them for a match that is over; a bot full for a match not
    holding its slot puts the match in its queue."""
    from core.store.runs import read_run, start_run
    from core.store.slots import playing_key
    from core.store.slots import waiting_key as slot_queue

    poll = store.create_bot("acct_test", f"poll{store.r.incr('test:bot-names')}", GAME, "polling",
                            max_concurrent=1)[0]
    mid, other = (store.create_match(GAME, [poll["id"], poll["id"]], SEED, {}, time_bank_ms=0) for _ in "ab")
    bots = [{**poll, "version": 1}] * 2
    start = start_run(store, mid["id"], mid, 0, bots)
    assert start.started == ((None, 1), True) and store.get_match(mid["id"])["status"] == "running"
    read = read_run(store, mid["id"], mid["seats"], 0, mid)
    assert (start.match, start.bots, start.log, start.waiting) == (read.match, read.bots, read.log, read.waiting)
    assert start.waiting is None
    decision = {"match_id": mid["id"], "turn": 0, "seat": 0, "deadline_ms": 5000, "view": {"hand": ["x"]},
                "legal_actions": [{"type": "play"}]}
    asked = store.await_answer(mid["id"], decision, bots[0])  # the waiting record, its decision last
    head = {k: v for k, v in asked.items() if k != "decision"}
    for waiting in (start_run(store, mid["id"], mid, 0, bots).waiting, read_run(store, mid["id"], mid["seats"], 0, mid).waiting):
        assert waiting == head and waiting["turn"] == 0 and waiting["deadline_at"] == asked["deadline_at"]
    assert start_run(store, mid["id"], mid, 0, bots).started == ((None, 2), False)  # asking ended a run: 0
    assert store.r.smembers(playing_key(poll["id"])) == {mid["id"].encode()}

    store.take_lease("match", mid["id"], 10_000)  # the slot is live: the other match waits for it
    full = start_run(store, other["id"], other, 0, bots)
    assert full.started[0][0]["id"] == poll["id"] and full.started[0][1] == 0
    assert store.r.zscore(slot_queue(poll["id"]), other["id"]) is not None
    assert store.get_match(other["id"])["status"] == "queued"

    store.set_match_status(mid["id"], "aborted")
    over = start_run(store, mid["id"], mid, 0, bots)
    assert over.started is None and over.match["status"] == "aborted"
    assert store.r.hget(f"match:{mid['id']}", "attempts") == b"2"
    assert start_run(store, "m_none", {**mid, "id": "m_none"}, 0, bots) is None


def heard(watch, count: int, timeout_s: float = 10.0) -> set[tuple[bytes, bytes]]:
    """The next `count` messages `watch` receives, (channel, data) each (subscribe replies skipped)."""
    out: set[tuple[bytes, bytes]] = set()
    deadline = time.monotonic() + timeout_s
    while len(out) < count and time.monotonic() < deadline:
        message = watch.get_message(timeout=0.5)
        if message is not None:
            out.add((message["channel"], message["data"]))
    return out


def test_a_start_that_marks_a_match_running_announces_it_in_the_same_step(store):
    """`take_slots_and_start` and `start_run`, given the match's record, make what follows a start
    (`match_started`) in their own Lua step: the match leaves its owner's queued matches, and its
    watchers and its tournament's are told; a start that changes nothing tells nobody."""
    from core.store import events
    from core.store.accounts import queued_key
    from core.store.runs import start_run

    def started_twice(start) -> None:
        mid = store.create_match(GAME, ["b_x", "b_y"], SEED, {}, owner="acct_owner", tournament_id="t_watched")
        assert store.r.sismember(queued_key("acct_owner"), mid["id"])
        with store.r.pubsub(ignore_subscribe_messages=True) as watch:
            watch.subscribe(events.match_channel(mid["id"]), events.tournament_channel("t_watched"))
            start(mid)
            expected = {(events.match_channel(mid["id"]).encode(), events.STATUS.encode()),
                        (events.tournament_channel("t_watched").encode(), mid["id"].encode())}
            assert heard(watch, len(expected)) == expected
            assert not store.r.sismember(queued_key("acct_owner"), mid["id"])
            start(mid)  # running already: nothing to say
            store.r.publish(events.match_channel(mid["id"]), "marker")  # what comes next is this
            assert heard(watch, 1) == {(events.match_channel(mid["id"]).encode(), b"marker")}

    started_twice(lambda mid: store.take_slots_and_start(mid["id"], [], mid))
    started_twice(lambda mid: start_run(store, mid["id"], mid, 0, []))


def test_a_run_reads_its_tournaments_stop_and_owner_with_the_rest(store):
    """A run of a tournament's match learns, in its read (`read_run`, `start_run`), whether the
    tournament is stopping and who owns it: a stopping tournament's match ends aborted at once."""
    from core.store.runs import read_run, start_run

    t = store.create_tournament(GAME, ["b_x", "b_y"], seats=2, deals=1, duplicate=False, seed=1, options={},
                                owner="acct_t")
    mid = store.create_match(GAME, ["b_x", "b_y"], SEED, {}, tournament_id=t["id"])
    assert read_run(store, mid["id"], mid["seats"], 0, mid).tournament == {
        "status": "queued", "reason": None, "owner": "acct_t"}
    store.set_tournament(t["id"], status="aborting", reason="stopped by a test")
    stopping = start_run(store, mid["id"], mid, 0, [])
    assert stopping.tournament == {"status": "aborting", "reason": "stopped by a test", "owner": "acct_t"}
    assert stopping.started is None and store.get_match(mid["id"])["status"] == "queued"  # never started
    assert read_run(store, mid["id"], mid["seats"], 0, None).tournament is None  # its record not known yet
    assert MatchRunner(store, mid["id"], match=mid).run() == "aborted"
    assert store.get_match(mid["id"])["reason"] == "stopped by a test"


def test_a_first_run_of_bots_known_to_take_no_slot_starts_with_its_reads_in_one_step(store, monkeypatch):
    """Once a process has read a match's bots and none takes a slot (in-process bots), a first run
    of theirs reads, starts and announces itself in one step (`start_run`); a bot it has not read
    yet, or one that takes slots, goes the other way (`read_run`, then `take_slots_and_start`)."""
    from core.store import events

    first = new_match(store, ["First", "First"])
    assert MatchRunner(store, first["id"], match=first).run() == "finished"  # its bots read now
    again = store.create_match(GAME, first["seats"], SEED, {}, time_bank_ms=0, tournament_id="t_watched")
    polling, _ = store.create_bot("acct_test", f"poll{store.r.incr('test:bot-names')}", GAME, "polling")
    remote = store.create_match(GAME, [polling["id"], first["seats"][0]], SEED, {}, time_bank_ms=0)
    slow_starts = []
    take = store.take_slots_and_start
    monkeypatch.setattr(store, "take_slots_and_start", lambda *a, **k: slow_starts.append(a[0]) or take(*a, **k))
    with store.r.pubsub(ignore_subscribe_messages=True) as watch:
        watch.subscribe(events.tournament_channel("t_watched"))
        assert MatchRunner(store, again["id"], match=again).run() == "finished"
        told = [watch.get_message(timeout=1.0) for _ in range(3)]
    assert slow_starts == []
    assert [m["data"] for m in told if m].count(again["id"].encode()) >= 1  # its start was announced
    record = store.get_match(again["id"])
    assert record["status"] == "finished" and record["started"] and store.r.hget(f"match:{again['id']}", "attempts") == b"1"
    assert MatchRunner(store, remote["id"], match=remote).run() == "waiting"  # asks the polling bot
    assert slow_starts == [remote["id"]]
