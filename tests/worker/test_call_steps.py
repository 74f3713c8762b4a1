"""A webhook decision's round trips in the dispatcher: a call is taken, learns all it needs and
starts in one round trip (`Store.take_prepared_call`: the BLMOVE and a Lua step sent together;
`Store.prepare_call` alone), and an answered turn settles in one (`Store.settle`,
`settle_all` for many at once). Real parts: the embedded Redis, the match runner publishing the
decision, the store's scripts as they run in production.
"""

from __future__ import annotations

import json

import pytest
import redis

from core.store import Store
from core.store.debug import debug_key
from core.store.jobs import job_id
from core.store.keys import iso_ms, now_ms
from core.store.waits import (
    CALL_SLACK_MS,
    call_fields,
    calls_key,
    deadlines_key,
    fresh_key,
    share_key,
    taken_key,
    waiting_record_and_body,
)
from sdk.faults import fault
from tests.worker.test_never_waits import ask_first_remote_turn, queued, remote_match
from worker.dispatch import Dispatcher, _Call
from worker.drivers.webhook import WebhookDriver

URL = "http://127.0.0.1:9/"


def taken(store, caller: str = "me") -> bytes:
    raw = store.take_call(1, caller)
    assert raw is not None
    return raw


def test_a_taken_call_learns_its_record_bot_and_account_and_starts_in_one_step(store):
    match, bot, _ = remote_match(store, "webhook", url=URL)
    record = ask_first_remote_turn(store, match)
    mid, turn = match["id"], record["turn"]
    raw = taken(store)
    read = store.prepare_call(mid, turn, raw, "me", start=False)
    unseen = {k: v for k, v in record["decision"].items() if k != "view"}  # only the bot reads its view
    assert read.started == "read" and read.record == {**record, "decision": unseen} and read.account == "acct_test"
    assert read.bot["id"] == bot["id"] and read.bot["url"] == URL and read.bot["owner"] == "acct_test"
    assert json.loads(read.body) == record["decision"]  # the call's body: the decision's JSON as stored
    assert store.waiting_on(mid).get("called_at") is None and store.r.lrange(taken_key(store.queue, "me"), 0, -1) == [raw]

    started = store.prepare_call(mid, turn, raw, "me", share=4, now=record["sent_at"] + 5)
    assert started.started == "sent" and started.called_at == record["sent_at"] + 5
    assert store.waiting_on(mid)["called_at"] == record["sent_at"] + 5  # the bot's clock starts now
    assert store.r.lrange(taken_key(store.queue, "me"), 0, -1) == []  # sent: no longer only taken
    lease = record["sent_at"] + 5 + record["decision"]["deadline_ms"] + CALL_SLACK_MS
    member = f"{mid}:{turn}"
    assert store.r.zscore(deadlines_key(store.queue), member) == lease
    assert store.r.zscore(share_key(store.queue, "acct_test"), member) == lease


@pytest.fixture()
def one_connection(store):
    """The store on a client of one connection, as the dispatcher's taker has it."""
    client = redis.Redis(connection_pool=redis.ConnectionPool(**store.r.connection_pool.connection_kwargs),
                         single_connection_client=True)
    yield Store(client, store.secret_key, queue=store.queue)
    client.close()


def test_a_call_is_taken_prepared_and_started_in_one_round_trip(store, one_connection):
    match, bot, _ = remote_match(store, "webhook", url=URL)
    record = ask_first_remote_turn(store, match)
    mid, turn = match["id"], record["turn"]
    before = now_ms()
    raw, started = one_connection.take_prepared_call(1, "me", share=4)
    assert json.loads(raw) == {"match": mid, "turn": turn}
    unseen = {k: v for k, v in record["decision"].items() if k != "view"}
    assert started.started == "sent" and started.record == {**record, "decision": unseen}
    assert started.bot["url"] == URL and started.account == "acct_test" and json.loads(started.body) == record["decision"]
    assert before <= started.called_at <= now_ms()  # Redis's clock as the call starts: not when the take began
    assert store.waiting_on(mid)["called_at"] == started.called_at
    lease = started.called_at + record["decision"]["deadline_ms"] + CALL_SLACK_MS
    assert store.r.zscore(share_key(store.queue, "acct_test"), f"{mid}:{turn}") == lease
    assert store.r.lrange(taken_key(store.queue, "me"), 0, -1) == [] == store.r.lrange(fresh_key(store.queue, "me"), 0, -1)
    assert one_connection.take_prepared_call(0.05, "me") is None  # none came: nothing taken
    assert store.r.ping()  # the connection is in step after a take that waited for nothing


def test_a_taken_notice_or_a_turn_over_or_over_its_share_comes_back_as_it_is(store, one_connection):
    store.push_notice("b_x", {"type": "match_over"})
    raw, prepared = one_connection.take_prepared_call(1, "me", share=4)
    assert json.loads(raw)["notice"] and prepared is False  # taken, nothing else: the dispatcher sends it
    assert store.r.lrange(taken_key(store.queue, "me"), 0, -1) == [raw]
    store.call_dropped("me", raw)
    match, _, _ = remote_match(store, "webhook", url=URL)
    record = ask_first_remote_turn(store, match)
    store.r.zadd(share_key(store.queue, "acct_test"), {"m_other:3": 2 ** 50})  # another call of the account, in flight
    raw, over = one_connection.take_prepared_call(1, "me", share=1)
    assert over.started == "over" and store.r.lrange(taken_key(store.queue, "me"), 0, -1) == [raw]
    assert store.waiting_on(match["id"]).get("called_at") is None
    store.call_dropped("me", raw)
    store.r.rpush(calls_key(store.queue), raw)  # its turn is then settled while it waits in the queue
    assert store.settle(match["id"], {"turn": record["turn"], "seat": record["seat"], "action": "x"}, record)
    assert one_connection.take_prepared_call(1, "me", share=4) == (raw, None)
    assert store.r.lrange(taken_key(store.queue, "me"), 0, -1) == []


def test_a_take_whose_script_redis_lost_or_whose_taker_died_loses_no_call(store, one_connection):
    match, _, _ = remote_match(store, "webhook", url=URL)
    ask_first_remote_turn(store, match)
    store.r.script_flush()  # the BLMOVE moves the call, the script is refused: loaded, and run alone
    raw, started = one_connection.take_prepared_call(1, "me", share=4)
    assert started.started == "sent" and json.loads(raw)["match"] == match["id"]
    other, _, _ = remote_match(store, "webhook", url=URL)
    turn = ask_first_remote_turn(store, other)["turn"]
    store.caller_beat("dead")
    moved = store.r.lmove(calls_key(store.queue), fresh_key(store.queue, "dead"))  # a taker died mid-take
    assert store.requeue_if_lost(other["id"], turn) is False  # in a caller's fresh list: not lost
    store.r.delete("waits:caller:dead")  # it stopped beating
    assert store.recover_callers("me") == 1 and store.r.lrange(calls_key(store.queue), 0, -1) == [moved]
    store.r.lmove(calls_key(store.queue), fresh_key(store.queue, "me"))  # a failed round trip left it
    assert one_connection.take_prepared_call(1, "me", share=4, wait=False)[0] == moved
    assert one_connection.take_prepared_call(1, "me", wait=False) is None


def test_a_taken_call_over_its_accounts_share_stays_taken_and_unstarted(store):
    match, _, _ = remote_match(store, "webhook", url=URL)
    record = ask_first_remote_turn(store, match)
    store.r.zadd(share_key(store.queue, "acct_test"), {"m_other:3": 2 ** 50})  # another call of the account, in flight
    raw = taken(store)
    over = store.prepare_call(match["id"], record["turn"], raw, "me", share=1)
    assert over.started == "over" and store.waiting_on(match["id"]).get("called_at") is None
    assert store.r.lrange(taken_key(store.queue, "me"), 0, -1) == [raw]
    assert store.start_call(match["id"], record["turn"], record["sent_at"], record["decision"]["deadline_ms"], "me",
                            raw, "acct_test", 2) == "sent"  # with room, the waiting call starts as before


def test_a_bots_new_url_and_a_pinned_version_are_read_at_each_call(store):
    """Nothing about the bot is kept between calls: a URL changed now is the next call's, and a
    match pinned to an older version reaches that version's URL."""
    match, bot, _ = remote_match(store, "webhook", url=URL)
    record = ask_first_remote_turn(store, match)
    raw = taken(store)
    store.update_bot(bot["id"], url="http://127.0.0.1:10/")
    assert store.prepare_call(match["id"], record["turn"], raw, "me", start=False).bot["url"] == "http://127.0.0.1:10/"
    store.new_version(bot["id"], url="http://127.0.0.1:11/")  # the match keeps the version it pinned
    pinned = store.prepare_call(match["id"], record["turn"], raw, "me", start=False).bot
    assert pinned["url"] == "http://127.0.0.1:10/" and pinned["version"] == 1


def test_a_taken_call_whose_turn_is_over_leaves_the_taken_list(store):
    match, _, _ = remote_match(store, "webhook", url=URL)
    record = ask_first_remote_turn(store, match)
    raw = taken(store)
    assert store.settle(match["id"], {"turn": record["turn"], "seat": record["seat"], "action": "x"}, record)
    assert store.prepare_call(match["id"], record["turn"], raw, "me") is None
    assert store.r.lrange(taken_key(store.queue, "me"), 0, -1) == []


def test_turns_settle_in_one_round_trip_each_once_with_their_debug_and_next_run(store):
    records, entries = [], []
    for _ in range(2):
        match, _, _ = remote_match(store, "webhook", url=URL)
        record = ask_first_remote_turn(store, match)
        raw = taken(store)
        store.prepare_call(match["id"], record["turn"], raw, "me", share=4)
        decision = record["decision"]
        records.append((match["id"], record))
        entries.append({"turn": decision["turn"], "seat": decision["seat"], "action": decision["legal_actions"][0]})
    store.r.script_flush()  # Redis lost its scripts (a restart): loaded again
    landed = store.settle_all([(mid, entry, record, "thinking") for (mid, record), entry in zip(records, entries, strict=True)])
    assert landed == [True, True]
    again = [(mid, {**entry, "fault": fault("timeout", "late")}, record, None)
             for (mid, record), entry in zip(records, entries, strict=True)]
    assert store.settle_all(again) == [False, False]  # each turn settles once
    for (mid, record), entry in zip(records, entries, strict=True):
        member = f"{mid}:{record['turn']}"
        assert store.log_since(mid, record["turn"]) == [entry]
        assert store.r.zscore(deadlines_key(store.queue), member) is None
        assert store.r.zscore(share_key(store.queue, "acct_test"), member) is None
        assert json.loads(store.r.hget(debug_key(mid), str(record["turn"]))) == {"seat": record["seat"],
                                                                                   "text": "thinking"}
        assert queued(store).count(job_id("match", mid, record["turn"] + 1)) == 1


def test_a_bots_good_answers_are_noted_once_a_second_and_a_recovery_at_once(store, monkeypatch):
    monkeypatch.setattr("worker.dispatch.SEEN_EVERY_S", 3600.0)  # every answer here falls within one
    _, bot, secret = remote_match(store, "webhook", url=URL)
    dispatcher = Dispatcher(store)
    call = _Call(b"{}", {})
    call.bot, call.account = {"id": bot["id"], "url": URL}, "acct_test"

    def settled(outcome):
        driver = WebhookDriver(call.bot, secret, store=store)
        driver.outcome = outcome
        dispatcher.busy += 1
        dispatcher.in_flight["acct_test"] += 1
        dispatcher._settled(call, driver)
        return store.bot_record(bot["id"])

    first = settled(None)["last_seen"]
    store.r.hset(f"bot:{bot['id']}", "last_seen", json.dumps(iso_ms(1)))
    assert settled(None)["last_seen"] == iso_ms(1)  # seen a moment ago: not written again
    failed = settled("unreachable")
    assert failed["last_failed"] >= first and failed["last_failure"] == "unreachable"
    assert settled(None)["last_seen"] >= failed["last_failed"]  # a good answer after a failure: noted at once
    assert settled("timeout")["last_seen"] >= failed["last_failed"]  # a timeout says neither
    assert dispatcher.busy == 0 and not dispatcher.in_flight


def test_a_decision_is_read_without_its_view_and_whole_when_laid_out_otherwise():
    """`call_fields`: the decision's own fields but its view; a `legal_actions` nested deeper (in
    an action, in the clock) is never taken for the decision's: then the decision is read whole."""
    decision = {"type": "turn", "protocol": 1, "match_id": "m_1", "game": "duck-soup", "turn": 3, "seat": 1,
                "view": {"hand": ["AS"], "legal_actions": ["not these"]}, "legal_actions": [{"play": "AS"}, []],
                "deadline_ms": 300, "clock": {"move_ms": 300, "bank_ms": 0}, "last_latency_ms": None}
    record = {"turn": 3, "seat": 1, "bot": "b_1", "kind": "webhook", "decision": decision}
    read, body = waiting_record_and_body(json.dumps(record, separators=(",", ":")).encode())
    assert read == {**record, "decision": {k: v for k, v in decision.items() if k != "view"}}
    assert json.loads(body) == decision
    for nested in ({**decision, "legal_actions": [{"legal_actions": [1]}, {"x": 2}]},
                   {**decision, "clock": {"legal_actions": [3]}}, {**decision, "last_latency_ms": {"legal_actions": []}}):
        assert call_fields(json.dumps(nested, separators=(",", ":"))) is None
        stored = json.dumps({**record, "decision": nested}, separators=(",", ":")).encode()
        read, body = waiting_record_and_body(stored)
        assert read == {**record, "decision": nested} and json.loads(body) == nested
    for other in ({"decision": decision, "turn": 3}, {**record, "decision": decision}):  # not last; not compact
        assert waiting_record_and_body(json.dumps(other).encode()) == (other, None)  # then encoded to be sent


def test_calls_of_turns_no_longer_pending_are_found_in_chunks(store, monkeypatch):
    monkeypatch.setattr("core.store.waits.CALLS_OVER_CHUNK", 2)
    turns = []
    for _ in range(3):
        match, _, _ = remote_match(store, "webhook", url=URL)
        turns.append((match["id"], ask_first_remote_turn(store, match)))
    (pending, _), (settled, record), (aborted, _) = turns
    assert store.settle(settled, {"turn": record["turn"], "seat": record["seat"], "action": "x"}, record)
    store.forget_wait(aborted)  # the match ended: its turn is no longer pending
    calls = [(mid, record["turn"]) for mid, record in turns]
    assert store.calls_over(calls) == {calls[1], calls[2]}
    assert store.calls_over([calls[0]]) == set() and store.calls_over([]) == set()
