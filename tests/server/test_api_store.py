"""The store on a real Redis: the event log, secrets, decisions, tournaments."""

from __future__ import annotations

import json
import threading
import time

import pytest

from core.store import Store, secret_key
from core.store.keys import epoch_ms_of, iso_ms, now_ms
from tests.server import toygame
from tests.waiting import wait_until


@pytest.fixture()
def store(redis_client):
    toygame.register()
    return Store(redis_client, secret_key(redis_client))


def two_bots(store, kind="polling"):
    account, _ = store.create_account("alice")
    a, _ = store.create_bot(account["id"], "a", "toy-high", kind)
    b, _ = store.create_bot(account["id"], "b", "toy-high", kind)
    return account, a, b


def test_account_token_is_found_only_by_itself(store):
    account, token = store.create_account("alice")
    assert store.account_for_token(token)["id"] == account["id"]
    assert store.account_for_token(token + "x") is None
    assert store.account_for_token("") is None
    assert "token_sha256" not in store.account_for_token(token)


def test_bot_secret_is_derived_and_checked(store):
    _, a, b = two_bots(store)
    secret = store.bot_secret(a["id"])
    assert store.bot_for_secret(secret)["id"] == a["id"]
    assert store.bot_for_secret(secret[:-1] + ("0" if secret[-1] != "0" else "1")) is None
    assert store.bot_for_secret(store.bot_secret(b["id"]))["id"] == b["id"]
    store.retire_bot(a["id"])
    assert store.get_bot(a["id"])["retired"] is True
    assert store.bot_for_secret(secret) is None


def test_append_entry_needs_exactly_turn_entries(store):
    _, a, b = two_bots(store)
    m = store.create_match("toy-high", [a["id"], b["id"]], seed=3, options={})
    state = store.replay(m["id"])
    first = state.legal_actions()[0]
    assert store.append_entry(m["id"], {"turn": 1, "seat": 0, "action": first}) is False
    assert store.append_entry(m["id"], {"turn": 0, "seat": 0, "action": first}) is True
    assert store.append_entry(m["id"], {"turn": 0, "seat": 0, "action": first}) is False
    assert store.match_log(m["id"]) == [{"turn": 0, "seat": 0, "action": first}]
    assert store.replay(m["id"]).to_act == 1
    assert store.conclude_match(m["id"], "finished", {"scores": [0, 0]})
    second = store.replay(m["id"]).legal_actions()[0]
    assert store.append_entry(m["id"], {"turn": 1, "seat": 1, "action": second}) is False


def test_concurrent_appends_of_one_turn_let_exactly_one_in(store, redis_url):
    import redis

    _, a, b = two_bots(store)
    m = store.create_match("toy-high", [a["id"], b["id"]], seed=3, options={})
    action = store.replay(m["id"]).legal_actions()[0]
    results = []
    barrier = threading.Barrier(8)

    def writer():
        own = Store(redis.Redis.from_url(redis_url), store.secret_key)
        barrier.wait()
        results.append(own.append_entry(m["id"], {"turn": 0, "seat": 0, "action": action}))

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]


def test_queued_matches_count_until_they_start(store):
    account, a, b = two_bots(store)
    m = store.create_match("toy-high", [a["id"], b["id"]], 1, {}, owner=account["id"])
    assert store.queued_match_count(account["id"]) == 1
    store.set_match_status(m["id"], "running")
    assert store.queued_match_count(account["id"]) == 0
    assert store.get_match(m["id"])["started"]


def test_decision_pending_until_answered_or_expired(store):
    _, a, b = two_bots(store)
    m = store.create_match("toy-high", [a["id"], b["id"]], 1, {})
    decision = {"type": "turn", "protocol": 1, "match_id": m["id"], "game": "toy-high", "turn": 0,
                "seat": 0, "view": {}, "legal_actions": [{"card": "1"}], "deadline_ms": 150}
    store.await_answer(m["id"], decision, a)  # as the match runner publishes it
    assert store.pending_decisions(a["id"]) == [decision]
    assert store.pending_decisions(b["id"]) == []
    wait_until(lambda: store.pending_decisions(a["id"]) == [], 10, "the decision gone past its deadline")


def decoded(texts: list[bytes]) -> list[dict]:
    """A poll's decisions, handed on as their JSON texts, decoded."""
    return [json.loads(t) for t in texts]


def test_a_polls_read_and_places_are_one_step_even_after_redis_lost_its_scripts(store):
    """`pending_or_poll_places` reads what is pending and takes a long-poll's places in one round
    trip; a Redis that lost its scripts (restarted, flushed) gets them again, each run once."""
    account, a, b = two_bots(store)
    cred = store.credential(store.bot_secret(a["id"]))
    caps = [(f"bot:{a['id']}:polls", 1), (f"quota:polls:{account['id']}", 5)]
    store.r.script_flush()
    pending, places, full = store.pending_or_poll_places(cred, set(), caps, 1.0)
    assert pending == [] and places.token and full is None
    assert store.r.zcard(caps[0][0]) == 1 and store.r.zcard(caps[1][0]) == 1  # one place each, once
    assert store.pending_or_poll_places(cred, set(), caps, 1.0)[1:] == (None, caps[0][0])  # the bot's cap
    assert store.r.zcard(caps[1][0]) == 1  # all or none: the account's place was not taken either
    with store.listen_decisions(a["id"]) as sub:
        assert store.wait_texts(a["id"], 0.2, set(), sub, places, now_ms()) == []
    assert places.token and store.r.zcard(caps[0][0]) == 1  # the places are held through the wait
    store.give_places(places)  # and given back at its end, in one round trip
    assert places.token is None and store.r.zcard(caps[0][0]) == 0 and store.r.zcard(caps[1][0]) == 0
    m = store.create_match("toy-high", [a["id"], b["id"]], 1, {})
    decision = {"type": "turn", "protocol": 1, "match_id": m["id"], "game": "toy-high", "turn": 0,
                "seat": 0, "view": {}, "legal_actions": [{"card": "1"}], "deadline_ms": 5000}
    store.await_answer(m["id"], decision, a)
    pending, places, full = store.pending_or_poll_places(cred, set(), caps, 1.0)
    assert decoded(pending) == [decision] and full is None and places.token is None
    assert store.r.zcard(caps[0][0]) == 0 and store.r.zcard(caps[1][0]) == 0  # no wait: given back
    held = store.pending_or_poll_places(cred, {(m["id"], 0)}, caps, 1.0)
    assert held[0] == [] and held[1].token  # what the bot holds is left out: this poll would wait
    # woken by a decision it holds already: the wait goes on, and keeps its places throughout
    timer = threading.Timer(0.2, store.r.publish, (f"bot:{a['id']}:wake", f"{m['id']}:0"))
    with store.listen_decisions(a["id"]) as sub:
        timer.start()
        assert store.wait_texts(a["id"], 0.6, {(m["id"], 0)}, sub, held[1], now_ms()) == []
    timer.join()
    assert held[1].token and store.r.zcard(caps[0][0]) == 1


def test_the_read_that_ends_a_wait_gives_its_places_back_and_notes_the_bot_seen(store):
    """A woken long-poll's read that brings a decision gives the poll's places back, and notes the
    bot seen when the poll began a second ago or more, in its one round trip; one that brings
    nothing keeps them."""
    account, a, b = two_bots(store)
    cred = store.credential(store.bot_secret(a["id"]))
    caps = [(f"bot:{a['id']}:polls", 2), (f"quota:polls:{account['id']}", 5)]
    m = store.create_match("toy-high", [a["id"], b["id"]], 1, {})
    decision = {"type": "turn", "protocol": 1, "match_id": m["id"], "game": "toy-high", "turn": 0,
                "seat": 0, "view": {"hand": ["é"]}, "legal_actions": [{"card": "1"}], "deadline_ms": 30_000}
    _, places, _ = store.pending_or_poll_places(cred, set(), caps, 5.0)
    store.r.hset(f"bot:{a['id']}", "last_seen", json.dumps(iso_ms(1)))
    timer = threading.Timer(0.2, store.await_answer, (m["id"], decision, a))
    with store.listen_decisions(a["id"]) as sub:
        timer.start()
        got = store.wait_texts(a["id"], 30, set(), sub, places, now_ms() - 5000)
    timer.join()
    assert decoded(got) == [decision] and places.token is None
    assert store.r.zcard(caps[0][0]) == 0 and store.r.zcard(caps[1][0]) == 0
    assert now_ms() - epoch_ms_of(json.loads(store.r.hget(f"bot:{a['id']}", "last_seen"))) < 60_000  # at its end


def test_a_credential_is_checked_in_the_requests_own_step_and_a_retired_bot_is_refused_at_once(store):
    """A secret this process checked once is known (no round trip); each credited step checks the
    bot still holds it — a bot retired since is refused at its next request, and forgotten."""
    from core.store.bots import NotCredited

    account, a, b = two_bots(store)
    secret = store.bot_secret(a["id"])
    assert store.known_credential(secret) is None
    cred = store.credential(secret)
    assert store.known_credential(secret) is cred and cred.bot == {"id": a["id"], "kind": "polling",
                                                                   "owner": account["id"]}
    assert store.known_credential(secret[:-1] + ("0" if secret[-1] != "0" else "1")) is None
    assert store.known_credential(store.bot_secret(b["id"])) is None  # known per bot
    store.r.hdel(f"bot:{a['id']}", "last_seen")
    assert store.pending_texts(cred) == []
    assert now_ms() - epoch_ms_of(json.loads(store.r.hget(f"bot:{a['id']}", "last_seen"))) < 60_000  # in the step
    store.retire_bot(a["id"])
    with pytest.raises(NotCredited):
        store.pending_texts(cred)
    assert store.known_credential(secret) is None and store.credential(secret) is None
    caps = [(f"bot:{a['id']}:polls", 2)]
    with pytest.raises(NotCredited):
        store.pending_or_poll_places(cred, set(), caps, 1.0)
    assert store.r.zcard(caps[0][0]) == 0  # no place taken by a refused credential


def test_a_decision_goes_out_as_stored(store):
    """A poll cuts each decision's JSON text from its record, undecoded; an answer's one step reads
    whether it is pending and the match's waiting hash."""
    from core.store.decisions import record_parts
    from core.store.waits import waiting_key, waiting_record

    _, a, b = two_bots(store)
    m = store.create_match("toy-high", [a["id"], b["id"]], 1, {})
    decision = {"type": "turn", "protocol": 1, "match_id": m["id"], "game": "toy-high", "turn": 0,
                "seat": 0, "view": {"s": "a,\"sent_at\":1}"}, "legal_actions": [{"card": "1"}],
                "deadline_ms": 5000, "clock": {"move_ms": 5000, "bank_ms": 0}, "last_latency_ms": None}
    store.await_answer(m["id"], decision, a)
    field = f"{m['id']}:0".encode()
    stored = store.r.hget(f"bot:{a['id']}:decisions", field)
    turn, deadline, text = record_parts(field, stored)
    assert (turn, deadline, json.loads(text)) == (0, json.loads(stored)["deadline_at"], decision)
    other = json.dumps({"sent_at": 1, "deadline_at": 2, "decision": decision}).encode()  # not pend's shape
    assert record_parts(field, other) == (0, 2, json.dumps(decision, separators=(",", ":")).encode())
    cred = store.credential(store.bot_secret(a["id"]))
    pending, raw = store.answer_reads(cred, m["id"], 0, waiting_key(m["id"]))
    assert pending and waiting_record(raw) == store.waiting_on(m["id"])
    assert waiting_record(raw)["decision"] == decision  # the same decision as the bot's record: one is decoded
    assert store.answer_reads(cred, m["id"], 1, waiting_key(m["id"]))[0] is False


def test_a_poll_takes_places_unless_a_live_decision_is_pending(store):
    """The poll's one script takes no place when a decision is live for it (nothing to give back);
    one past its deadline, answered already, or held by the bot leaves it taking them as before."""
    account, a, b = two_bots(store)
    cred = store.credential(store.bot_secret(a["id"]))
    caps = [(f"bot:{a['id']}:polls", 2), (f"quota:polls:{account['id']}", 5)]
    m = store.create_match("toy-high", [a["id"], b["id"]], 1, {})

    def publish(turn: int, deadline_ms: int) -> dict:
        decision = {"type": "turn", "protocol": 1, "match_id": m["id"], "game": "toy-high", "turn": turn,
                    "seat": 0, "view": {"deadline_at": 1}, "legal_actions": [{"card": "1"}],
                    "deadline_ms": deadline_ms}
        store.await_answer(m["id"], decision, a)
        return decision

    live = publish(0, 60_000)
    pending, places, full = store.pending_or_poll_places(cred, set(), caps, 1.0)
    assert decoded(pending) == [live] and places.token is None and full is None
    assert store.r.zcard(caps[0][0]) == 0 and store.r.zcard(caps[1][0]) == 0  # none taken
    store.give_places(places)  # a no-op, as the view's `finally` does
    pending, places, full = store.pending_or_poll_places(cred, {(m["id"], 0)}, caps, 1.0)
    assert pending == [] and places.token and store.r.zcard(caps[0][0]) == 1  # held: it waits
    store.give_places(places)
    assert store.append_entry(m["id"], {"turn": 0, "seat": 0, "action": {"card": "1"}})  # turn 0 answered
    publish(1, 1)  # a deadline 1 ms away: both still in the hash, neither live
    due = json.loads(store.r.hget(f"bot:{a['id']}:decisions", f"{m['id']}:1"))["deadline_at"]
    while now_ms() <= due:
        time.sleep(0.001)
    assert store.r.hlen(f"bot:{a['id']}:decisions") == 2
    pending, places, full = store.pending_or_poll_places(cred, set(), caps, 1.0)
    assert pending == [] and places.token and full is None  # nothing live: it waits, places taken
    assert store.r.zcard(caps[0][0]) == 1 and store.r.zcard(caps[1][0]) == 1


def test_wait_decisions_wakes_on_publish_and_times_out(store):
    _, a, b = two_bots(store)
    m = store.create_match("toy-high", [a["id"], b["id"]], 1, {})
    decision = {"type": "turn", "protocol": 1, "match_id": m["id"], "game": "toy-high", "turn": 0,
                "seat": 0, "view": {}, "legal_actions": [{"card": "1"}], "deadline_ms": 5000}
    timer = threading.Timer(0.3, store.await_answer, (m["id"], decision, a))
    start = time.monotonic()
    timer.start()
    got = store.wait_decisions(a["id"], 30)
    elapsed = time.monotonic() - start
    assert got == [decision] and 0.25 < elapsed < 20  # woken, not timed out (bounds for a busy machine)
    start = time.monotonic()
    assert store.wait_decisions(b["id"], 0.4) == []
    assert time.monotonic() - start >= 0.39


def test_last_tournament_match_is_reported_once(store):
    account, a, b = two_bots(store)
    t = store.create_tournament("toy-high", [a["id"], b["id"]], seats=2, deals=1, duplicate=True,
                                seed=1, options={}, owner=account["id"])
    assert store.open_tournament_count(account["id"]) == 1
    mids = [store.create_match("toy-high", [a["id"], b["id"]], 1, {}, tournament_id=t["id"])["id"]
            for _ in range(3)]
    for mid in mids:
        store.add_tournament_match(t["id"], mid)
    records = [{"bot": a["id"], "won": True, "faults": 0, "points": 1.0, "score": 1.0},
               {"bot": b["id"], "won": False, "faults": 0, "points": 0.0, "score": 0.0}]
    ends = [store.conclude_match(mid, "finished", {"scores": [1, 0]}, records=records) for mid in mids + mids[:1]]
    assert ends == [True, True, True, False]  # a match ends once: the fourth call counts nothing
    assert store.tournament_progress(t["id"]) == {"done": 3, "total": 3}
    assert store.tournament_complete(t["id"])
    assert store.tournament_tallies(t["id"])[a["id"]]["points"] == 3.0
    store.save_standings(t["id"], [{"rank": 1, "bot": a["id"], "points": 1.0, "matches": 3}])
    store.set_tournament(t["id"], status="finished")
    assert store.standings(t["id"])[0]["bot"] == a["id"]
    assert store.open_tournament_count(account["id"]) == 0


def test_rankings_order_and_history(store):
    _, a, b = two_bots(store)
    store.save_rating("toy-high", a["id"], 20.0, 5.0, "m_1")
    store.save_rating("toy-high", b["id"], 30.0, 5.0, "m_1")
    ladder = store.rankings("toy-high")
    assert [(r["rank"], r["bot"]) for r in ladder] == [(1, b["id"]), (2, a["id"])]
    assert ladder[0]["rating"]["ordinal"] == 15.0
    assert store.get_bot(a["id"])["rating"]["mu"] == 20.0
    assert store.rating_history(a["id"])[0]["match"] == "m_1"
    records = [{"bot": a["id"], "won": True, "faults": 0}, {"bot": b["id"], "won": False, "faults": 0}]
    rated = [store.create_match("toy-high", [a["id"], b["id"]], i, {}, rated=True)["id"] for i in range(2)]
    for mid in rated:  # a rated match is queued for the ladder as it concludes
        assert store.conclude_match(mid, "finished", {"scores": [1, 0], "ranks": [1, 2]}, records=records)
    with store.rating_lock("toy-high"):
        assert store.rating_events("toy-high") == rated
        store.ack_rating_event("toy-high", rated[0])
    assert store.rating_events("toy-high") == rated[1:]


def test_a_concluded_match_counts_in_its_bots_records(store):
    _, a, b = two_bots(store)
    for won, faults in ((True, 2), (False, 0)):
        mid = store.create_match("toy-high", [a["id"], b["id"]], 1, {})["id"]
        records = [{"bot": a["id"], "won": won, "faults": faults}, {"bot": b["id"], "won": not won, "faults": 0}]
        assert store.conclude_match(mid, "finished", {"scores": [0, 0]}, records=records)
    bot = store.get_bot(a["id"])
    assert (bot["matches"], bot["wins"], bot["faults"]) == (2, 1, 2)


def test_a_runner_starting_a_match_the_admin_stopped_leaves_it_aborted(store):
    """The runner reads "queued", the admin aborts, then the runner starts it: it stays aborted
    (it was marked running again, so its log took appends and it concluded a second time)."""
    account, a, b = two_bots(store)
    match = store.create_match("toy-high", [a["id"], b["id"]], 1, {}, owner=account["id"])
    assert store.conclude_match(match["id"], "aborted", None, reason="stopped by the admin")
    assert store.start_match(match["id"]) == 1
    assert store.match_status(match["id"]) == "aborted"
    assert not store.append_entry(match["id"], {"turn": 0, "seat": 0, "action": {"card": "2"}})
    assert store.queued_match_count(account["id"]) == 0


def test_a_script_runs_by_its_sha_and_is_loaded_again_when_redis_lost_it(store):
    """`Store.script` (redis-py's `register_script`): one object per source, EVALSHA with its keys and
    arguments; after SCRIPT FLUSH (a restart) the next call loads it again, with the same answer."""
    source = "return {#KEYS, #ARGV, KEYS[1], ARGV[1]}"
    script = store.script(source)
    assert store.script(source) is script
    assert script(keys=["k"], args=["a", 2]) == [1, 2, b"k", b"a"]
    store.r.script_flush()
    assert store.r.script_exists(script.sha) == [False]
    assert script(["k2"], []) == [1, 0, b"k2"]
    assert store.r.script_exists(script.sha) == [True]
