"""Refereeing never waits on a bot (architecture idea 6, issue 15): a remote seat's decision is
published and the run ends; the answer or the deadline settles the turn and starts the next run.

Real parts throughout: the embedded Redis, webhook bots under `sdk.serve` on loopback,
polling bots through the live API, the dispatcher in threads or the pool's own process.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

import sdk
from core.store.jobs import job_id
from sdk import Bot
from tests.live import ADMIN_TOKEN
from tests.waiting import wait_until
from tests.worker.test_worker_e2e import OUTPUT, matches_of, replay_mismatches, tournament, wait_finished
from worker.dispatch import Dispatcher
from worker.match_runner import MatchRunner
from worker.recovery import sweep

GAME = "duck-soup"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def queued(store) -> list[str]:
    """The queue's RQ jobs and the matches' next runs (core/store/jobs.py `runs`), as job ids."""
    return store.queued_job_ids()


def remote_match(store, kind: str, url: str | None = None, move_ms: int = 300) -> tuple[dict, dict, str]:
    """A duck-soup match of a `kind` bot (seat 0) against an in-process one."""
    n = store.r.incr("test:names")
    bot, secret = store.create_bot("acct_test", f"remote{n}", GAME, kind, url=url)
    other, _ = store.create_bot("acct_test", f"first{n}", GAME, "python", entrypoint="tests.worker.bots:First")
    match = store.create_match(GAME, [bot["id"], other["id"]], 7, {}, move_timeout_ms=move_ms, time_bank_ms=0,
                               max_faults=100)
    return match, bot, secret


def ask_first_remote_turn(store, match: dict) -> dict:
    """Run the match until its remote seat is asked; the waiting record."""
    assert MatchRunner(store, match["id"]).run() == "waiting"
    record = store.waiting_on(match["id"])
    assert record is not None and record["turn"] == store.log_length(match["id"])
    return record


class Thinker(Bot):
    """The first legal action after `think_s`; counts the decisions it is thinking at once."""

    def __init__(self, think_s: float, counter: dict) -> None:
        self.think_s, self.counter = think_s, counter

    def decide(self, decision):
        with self.counter["lock"]:
            self.counter["now"] += 1
            self.counter["most"] = max(self.counter["most"], self.counter["now"])
        try:
            time.sleep(self.think_s)
            return decision["legal_actions"][0]
        finally:
            with self.counter["lock"]:
                self.counter["now"] -= 1


# -- a remote turn, settled -------------------------------------------------------------------

def test_asking_a_polling_bot_ends_the_run_holding_nothing(store):
    match, bot, _ = remote_match(store, "polling")
    record = ask_first_remote_turn(store, match)
    assert not store.lease_held("match", match["id"])  # no worker on it while the bot thinks
    assert record["kind"] == "polling" and record["bot"] == bot["id"]
    pending = store.pending_decisions(bot["id"])
    assert [d["turn"] for d in pending] == [record["turn"]]
    assert store.playing(bot["id"]) == [match["id"]]  # its slot is held between runs
    # a second run (a duplicate job, a sweep) asks nothing again
    assert MatchRunner(store, match["id"]).run() == "waiting"
    assert len(store.pending_decisions(bot["id"])) == 1


def test_a_polling_deadline_is_judged_by_the_clock_once_and_the_next_run_enqueued(store):
    match, bot, _ = remote_match(store, "polling", move_ms=100)
    record = ask_first_remote_turn(store, match)
    turn = record["turn"]
    with Dispatcher(store):
        end = time.monotonic() + 10
        while store.log_length(match["id"]) == turn and time.monotonic() < end:
            time.sleep(0.005)
    entry = store.log_since(match["id"], turn)[0]
    assert entry["fault"] == "timeout: no answer within 100 ms move + 0 ms bank" and entry["ms"] == 100
    assert store.log_length(match["id"]) == turn + 1  # judged once
    assert job_id("match", match["id"], turn + 1) in queued(store)
    assert store.pending_decisions(bot["id"]) == []
    assert 0 <= store.lateness()[0] < 5000


def test_an_answer_and_the_deadline_racing_land_exactly_one_entry(store):
    from core.answers import answered, timed_out

    match, _, _ = remote_match(store, "polling")
    record = ask_first_remote_turn(store, match)
    decision = record["decision"]
    results = []
    barrier = threading.Barrier(8)

    def settle(entry):
        barrier.wait()
        results.append(store.settle(match["id"], entry))

    entries = [answered(store, decision, 5, action=decision["legal_actions"][-1]), timed_out(decision)] * 4
    threads = [threading.Thread(target=settle, args=(e,)) for e in entries]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 1
    assert store.log_length(match["id"]) == record["turn"] + 1
    assert queued(store).count(job_id("match", match["id"], record["turn"] + 1)) == 1


def test_a_webhook_answer_is_called_by_the_dispatcher_and_settles_the_turn(store):
    port = free_port()
    match, bot, secret = remote_match(store, "webhook", url=f"http://127.0.0.1:{port}/")
    counter = {"lock": threading.Lock(), "now": 0, "most": 0}
    server = sdk.serve(Thinker(0.0, counter), port=port, secret=secret, block=False)
    try:
        record = ask_first_remote_turn(store, match)
        with Dispatcher(store):
            end = time.monotonic() + 10
            while store.log_length(match["id"]) == record["turn"] and time.monotonic() < end:
                time.sleep(0.005)
    finally:
        server.stop()
    entry = store.log_since(match["id"], record["turn"])[0]
    assert "fault" not in entry and entry["action"] == record["decision"]["legal_actions"][0]
    assert job_id("match", match["id"], record["turn"] + 1) in queued(store)


def test_a_webhook_call_lost_with_its_dispatcher_is_made_once_more_then_is_a_timeout(store):
    match, _, _ = remote_match(store, "webhook", url="http://127.0.0.1:9/", move_ms=100)
    record = ask_first_remote_turn(store, match)
    mid, turn = match["id"], record["turn"]
    taken = store.take_call(1, "dead")  # a dispatcher took the call ...
    assert store.call_started(mid, turn, record["sent_at"] - 60_000, caller="dead", item=taken)  # ... sent it long ago, and died
    d = Dispatcher(store)
    d.judge_deadline(mid, turn)
    assert store.log_length(mid) == turn and json.loads(store.take_call(1)) == {"match": mid, "turn": turn}  # made again
    assert store.call_started(mid, turn, record["sent_at"] - 60_000)  # and lost again
    d.judge_deadline(mid, turn)
    assert store.log_since(mid, turn)[0]["fault"].startswith("timeout: ")


def test_a_clock_look_claims_the_due_deadlines_and_reads_the_next_in_one_step(store):
    """`claim_due_and_next`: what is due is claimed (once: a second look finds it gone), and the
    earliest deadline left comes with it, as `next_deadline` gives it."""
    assert store.claim_due_and_next(now=1_000) == ([], None)
    store.judge_later("m_due", 3, 500)
    store.judge_later("m_later", 4, 5_000)
    assert store.claim_due_and_next(now=1_000) == ([("m_due", 3)], 5_000) and store.next_deadline() == 5_000
    assert store.claim_due_and_next(now=1_000) == ([], 5_000)  # claimed by the first look alone
    assert store.claim_due(now=6_000) == [("m_later", 4)] and store.claim_due_and_next(now=6_000) == ([], None)


def test_the_sweep_leaves_a_waiting_match_alone_and_restarts_a_settled_one_whose_next_run_was_lost(store):
    match, _, _ = remote_match(store, "polling")
    record = ask_first_remote_turn(store, match)
    mid, turn = match["id"], record["turn"]
    store.job_done("match", mid)
    store.enqueue("match", [])  # nothing
    store.r.sadd("jobs:active", f"match:{mid}")
    assert sweep(store) == []  # the bot's turn: the dispatcher's, not the sweep's
    store.claim_due(now=record["deadline_at"] + 10**9)  # a clock claimed its deadline and died
    assert not store.has_deadline(mid, turn)
    sweep(store)
    assert store.has_deadline(mid, turn)  # claimed again by the next clock
    # settled by someone who died before enqueueing the next run
    assert store.append_entry(mid, {"turn": turn, "seat": record["seat"],
                                    "action": record["decision"]["legal_actions"][0], "ms": 1})
    assert sweep(store) == [("match", mid)]
    assert job_id("match", mid, turn + 1) in queued(store)


def test_a_match_that_ends_while_the_sweep_reads_it_gets_no_deadline_back(store, monkeypatch):
    """The sweep puts back a deadline a dead clock claimed; one that went with its match's end
    between the sweep's reads stays gone (the admin stopping a match on a remote turn)."""
    from core.conclusion import end_match
    from core.store import waits

    match, _, _ = remote_match(store, "polling")
    record = ask_first_remote_turn(store, match)
    mid, turn = match["id"], record["turn"]
    store.r.sadd("jobs:active", f"match:{mid}")  # active, not queued: the sweep reads it
    read = waits.waiting_record
    ended: list[bool] = []

    def read_then_end(raw):  # the sweep's first read done, the match ends before its next
        out = read(raw)
        if not ended:
            ended.append(False)
            ended[0] = end_match(store, mid, "aborted", reason="stopped by the admin")
        return out

    monkeypatch.setattr(waits, "waiting_record", read_then_end)
    sweep(store)
    assert ended == [True]
    assert not store.has_deadline(mid, turn)


# -- on the pool ------------------------------------------------------------------------------

@pytest.mark.slow
def test_one_worker_process_referees_many_remote_matches_at_once(api, redis_url):
    """With one worker process, webhook bots thinking 0.15 s are asked in several matches at
    once (before, a worker held each match for all its turns: one at a time)."""
    from worker.pool import WorkerPool

    token = api.account("organiser")
    counter = {"lock": threading.Lock(), "now": 0, "most": 0}
    servers, bots = [], []
    try:
        for i in range(4):
            port = free_port()
            bot = api.bot(token, f"thinker{i}", GAME, kind="webhook", url=f"http://127.0.0.1:{port}/",
                          max_concurrent=4)
            servers.append(sdk.serve(Thinker(0.15, counter), port=port, secret=bot["secret"], block=False, threads=6))
            bots.append(bot["id"])
        OUTPUT.mkdir(exist_ok=True)
        with WorkerPool(redis_url, n=1, sweep_every_s=0.5, log_path=str(OUTPUT / "worker-one.log")):
            tid = tournament(api, token, bots, game=GAME, seats=2, deals=1, seed=5,
                             options={"deal_only": True}, move_timeout_ms=3000)
            done = wait_finished(api, tid, timeout=180)
    finally:
        for server in servers:
            server.stop()
    assert done["status"] == "finished"
    assert counter["most"] >= 3, counter  # 12 matches, at most 2 per bot pair at a time
    assert sum(r["faults"] for r in done["standings"]) == 0


@pytest.mark.slow
def test_kill_9_of_the_dispatcher_mid_tournament_loses_nothing(api, redis_url):
    """The dispatcher dies with webhook calls under way and polling deadlines pending; the pool
    starts another; every match finishes once, from its log, and no bot is charged a fault."""
    from worker.pool import WorkerPool

    token = api.account("organiser")
    counter = {"lock": threading.Lock(), "now": 0, "most": 0}
    servers, pollers, bots = [], [], []
    try:
        for i in range(2):
            port = free_port()
            hook = api.bot(token, f"hook{i}", GAME, kind="webhook", url=f"http://127.0.0.1:{port}/")
            servers.append(sdk.serve(Thinker(0.05, counter), port=port, secret=hook["secret"], block=False))
            polled = api.bot(token, f"poll{i}", GAME, kind="polling")
            pollers.append(sdk.connect(Thinker(0.05, counter), api.live.url, secret=polled["secret"], wait=1,
                                       block=False, concurrency=4))
            bots += [hook["id"], polled["id"]]
        OUTPUT.mkdir(exist_ok=True)
        with WorkerPool(redis_url, n=2, sweep_every_s=0.3, log_path=str(OUTPUT / "dispatch-kill.log")) as pool:
            tid = tournament(api, token, bots, game=GAME, seats=2, deals=1, seed=9,
                             options={"deal_only": True}, move_timeout_ms=4000)
            for _ in range(2):
                wait_until(lambda: counter["now"] > 0, 60, "decisions under way")
                gone = pool.kill_dispatcher()
                wait_until(lambda gone=gone: all(p is not None and p.poll() is None and p.pid not in gone
                                                 for p in pool.dispatchers), 30, "the supervisor starts another")
            done = wait_finished(api, tid, timeout=240)
            assert pool.restarts >= 2
    finally:
        for poller in pollers:
            poller.stop(timeout=30)
        for server in servers:
            server.stop()
    assert done["status"] == "finished" and done["progress"]["done"] == done["progress"]["total"] == 12
    matches = matches_of(api, tid)
    assert all(m["status"] == "finished" for m in matches)
    assert not replay_mismatches(matches), replay_mismatches(matches)
    assert sum(r["faults"] for r in done["standings"]) == 0
    for bot in bots:  # each match counted once
        assert api.ok(api.get(f"/bots/{bot}"), 200)["matches"] == 6


def test_admin_abort_of_a_match_waiting_on_a_bot_withdraws_its_turn(api, worker_pool):
    token = api.account("owner")
    polled = api.bot(token, "sleepy", GAME, kind="polling")
    other = api.ok(api.post("/bots", {"name": "first", "game": GAME, "kind": "python",
                                      "entrypoint": "tests.worker.bots:First"}, token=ADMIN_TOKEN), 201)
    mid = api.ok(api.post("/matches", {"game": GAME, "bots": [polled["id"], other["id"]], "seed": 1,
                                       "move_timeout_ms": 10000}, token=ADMIN_TOKEN), 202)["id"]  # a house bot's clock
    end = time.monotonic() + 30
    while api.store.waiting_on(mid) is None and time.monotonic() < end:
        time.sleep(0.02)
    assert api.store.pending_decisions(polled["id"])
    api.ok(api.post(f"/matches/{mid}/abort", {}, token=ADMIN_TOKEN), 200)
    end = time.monotonic() + 10
    while api.store.waiting_on(mid) is not None and time.monotonic() < end:
        time.sleep(0.02)
    assert api.store.waiting_on(mid) is None and api.store.pending_decisions(polled["id"]) == []
    assert api.store.playing(polled["id"]) == []
