"""Polling bots over real HTTP: the long-poll, answering, races, and no leaks."""

from __future__ import annotations

import json
import threading
import time

import pytest
import requests

import games
from server.api.json_text import reprs_as_json
from tests.server.driving import conclude, finish, next_decision, publish_next, running_match


def error_code(response) -> str:
    return response.json()["error"]["code"]


@pytest.fixture()
def running(api, owner):
    """A running toy-high match between the owner's two polling bots."""
    token, a, b = owner
    mid = api.match(token, "toy-high", [a["id"], b["id"]], seed=3)["id"]
    api.store.set_match_status(mid, "running")
    return mid, a, b


def test_long_poll_returns_when_a_turn_is_published(api, running):
    mid, a, _ = running
    published = {}

    def worker_side():
        published["decision"], _ = publish_next(api.store, mid)

    timer = threading.Timer(0.5, worker_side)
    timer.start()
    start = time.monotonic()
    body = api.ok(api.get("/bots/me/turns", token=a["secret"], params={"wait": 30}), 200)
    elapsed = time.monotonic() - start
    timer.join()  # the poll may answer before the publishing thread has noted what it published
    assert body == {"turns": [published["decision"]]}
    assert 0.4 < elapsed < 20  # it waited, and was woken: a 30 s wait ends no sooner than 24 s
    # still pending until answered: returned again without waiting (bounds for a busy machine)
    start = time.monotonic()
    assert api.ok(api.get("/bots/me/turns", token=a["secret"], params={"wait": 30}), 200)["turns"]
    assert time.monotonic() - start < 20


def test_a_poll_leaves_out_the_decisions_the_bot_holds_and_waits_for_another(api, owner, running):
    mid, a, b = running
    token = owner[0]
    first, who = publish_next(api.store, mid)
    assert who == a["id"]  # a's seat acts first in this seeded toy match (so in each below)
    other = api.match(token, "toy-high", [a["id"], b["id"]], seed=3)["id"]
    api.store.set_match_status(other, "running")
    second, _ = publish_next(api.store, other)
    held = f"{mid}:{first['turn']}"
    body = api.ok(api.get("/bots/me/turns", token=a["secret"], params={"held": held}), 200)
    assert body == {"turns": [second]}  # the one it holds is left out
    both = f"{held},{other}:{second['turn']}"
    third = api.match(token, "toy-high", [a["id"], b["id"]], seed=3)["id"]
    api.store.set_match_status(third, "running")
    published = {}

    def worker_side():
        published["decision"], _ = publish_next(api.store, third)

    timer = threading.Timer(0.5, worker_side)
    timer.start()
    start = time.monotonic()
    body = api.ok(api.get("/bots/me/turns", token=a["secret"], params={"wait": 10, "held": both}), 200)
    assert time.monotonic() - start > 0.4  # it waited (the new decision came 0.5 s in)
    timer.join()  # the poll may answer before the publishing thread has noted what it published
    assert body == {"turns": [published["decision"]]}  # it waited for a new one, and only that came
    for bad in ("nocolon", f"{mid}:x", ",".join(f"m_{i}:1" for i in range(65)), "a" * 70 + ":1"):
        r = api.get("/bots/me/turns", token=a["secret"], params={"held": bad})
        assert r.status_code == 422 and error_code(r) == "invalid", bad


def test_long_poll_is_empty_after_wait_seconds(api, running):
    _, _, b = running
    start = time.monotonic()
    body = api.ok(api.get("/bots/me/turns", token=b["secret"], params={"wait": 1}), 200)
    elapsed = time.monotonic() - start
    assert body == {"turns": []} and 0.95 <= elapsed < 15  # its wait, then an answer (a busy machine's bound)


def test_long_poll_needs_the_bot_secret_and_a_wait_up_to_30(api, running):
    _, a, _ = running
    assert api.get("/bots/me/turns").status_code == 401
    assert api.get("/bots/me/turns", token=a["secret"][:-2]).status_code == 401
    r = api.get("/bots/me/turns", token=a["secret"], params={"wait": 31})
    assert r.status_code == 422 and error_code(r) == "invalid"
    assert api.get("/bots/me/turns", token=a["secret"], params={"wait": -1}).status_code == 422


def test_answer_is_appended_and_the_next_remote_turn_published_with_it(api, running):
    """The answer lands once; the next seat is a polling bot's, so the API publishes its turn
    itself (core/play_on.py) and no run of the match is enqueued."""
    from core.store.jobs import job_id

    mid, a, b = running
    decision, bot_id = publish_next(api.store, mid)
    assert bot_id == a["id"]
    action = decision["legal_actions"][-1]
    body = api.ok(api.post(f"/matches/{mid}/turns/0", {"action": action}, token=a["secret"]), 200)
    assert body == {"match_id": mid, "turn": 0, "action": action}
    assert job_id("match", mid, 1) not in api.store.queued_job_ids()
    [entry] = api.store.match_log(mid)
    assert {k: v for k, v in entry.items() if k != "ms"} == {"turn": 0, "seat": 0, "action": action}
    assert 0 <= entry["ms"] < 60_000  # charged from the decision's publication to the answer
    assert api.store.pending_decisions(a["id"]) == []
    state = api.store.replay(mid)
    [published] = api.ok(api.get("/bots/me/turns", token=b["secret"]), 200)["turns"]
    assert (published["turn"], published["seat"]) == (1, state.to_act)
    assert published["view"] == state.view(state.to_act) and published["legal_actions"] == state.legal_actions()
    assert api.store.waiting_on(mid)["turn"] == 1
    r = api.post(f"/matches/{mid}/turns/0", {"action": action}, token=a["secret"])
    assert r.status_code == 409 and error_code(r) == "not_pending"


def test_an_answer_before_an_in_process_bots_turn_enqueues_the_matchs_next_run(api, owner):
    """The next seat is an in-process bot's: a worker must ask it, so the match's next run is
    enqueued (an RQ job) and nothing is published."""
    from core.store.jobs import job_id

    token, a, _ = owner
    house = api.store.create_bot(a["owner"],
                                 "house-random", "toy-high", "python",
                                 entrypoint="example_bots.random:RandomBot")[0]
    mid = api.match(token, "toy-high", [a["id"], house["id"]], seed=3)["id"]
    api.store.set_match_status(mid, "running")
    decision, bot_id = publish_next(api.store, mid)
    assert bot_id == a["id"]
    api.ok(api.post(f"/matches/{mid}/turns/0", {"action": decision["legal_actions"][0]}, token=a["secret"]), 200)
    assert job_id("match", mid, 1) in api.store.queued_job_ids()
    assert api.store.waiting_on(mid)["turn"] == 0  # nothing more published


def test_an_answer_settles_from_the_bots_own_record_when_the_waiting_one_is_not_that_turns(api, running):
    """The answer reads its decision from the match's waiting record when that record is the
    turn's (one decode); a waiting record without it (a worker of another version) leaves the
    bot's own record to be read, and the answer lands the same."""
    mid, a, _ = running
    decision, _ = publish_next(api.store, mid)
    record = json.loads(api.store.r.hget(f"match:{mid}:waiting", "record"))
    del record["decision"]
    api.store.r.hset(f"match:{mid}:waiting", "record", json.dumps(record))
    action = decision["legal_actions"][0]
    body = api.ok(api.post(f"/matches/{mid}/turns/0", {"action": action}, token=a["secret"]), 200)
    assert body == {"match_id": mid, "turn": 0, "action": action}
    assert [e["action"] for e in api.store.match_log(mid)] == [action]


def test_a_retired_bots_secret_is_refused_at_its_next_request(api, owner, running):
    """The API keeps a checked secret (no round trip to check it again), but each turn request's own
    step checks the bot is not retired: a retirement takes effect at once, on the poll and the answer."""
    token, a, _ = owner
    mid = running[0]
    decision, _ = publish_next(api.store, mid)
    assert api.ok(api.get("/bots/me/turns", token=a["secret"]), 200)["turns"] == [decision]  # known now
    assert api.delete(f"/bots/{a['id']}", token=token).status_code in (200, 204)
    for r in (api.get("/bots/me/turns", token=a["secret"]), api.get("/bots/me/turns", token=a["secret"],
                                                                    params={"wait": 1}),
              api.post(f"/matches/{mid}/turns/0", {"action": decision["legal_actions"][0]}, token=a["secret"])):
        assert r.status_code == 401 and error_code(r) == "unauthorized"
    assert api.store.match_log(mid) == []


def test_turn_answer_errors(api, owner, running):
    mid, a, b = running
    token = owner[0]
    outsider = api.bot(token, "c", game="toy-high")
    decision, _ = publish_next(api.store, mid)          # turn 0 is seat 0's: bot a
    action = decision["legal_actions"][0]
    url = f"/matches/{mid}/turns/0"
    assert api.post(url, {"action": action}).status_code == 401
    assert api.post(url, {"action": action}, token=token).status_code == 401  # an account is not a bot
    r = api.post(url, {"action": action}, token=outsider["secret"])
    assert r.status_code == 403 and error_code(r) == "forbidden"
    r = api.post(url, {"action": action}, token=b["secret"])
    assert r.status_code == 403 and error_code(r) == "not_your_turn"
    r = api.post(f"/matches/{mid}/turns/1", {"action": action}, token=a["secret"])
    assert r.status_code == 409
    assert api.post("/matches/m_nothere/turns/0", {"action": action}, token=a["secret"]).status_code == 404
    assert api.post(url, {"action": "play"}, token=a["secret"]).status_code == 422
    assert api.post(url, {}, token=a["secret"]).status_code == 422
    r = api.post(url, {"action": action, "error": "both"}, token=a["secret"])
    assert r.status_code == 422 and error_code(r) == "invalid"
    assert api.post(url, {"error": ""}, token=a["secret"]).status_code == 422
    assert api.post(url, {"error": "x" * 1001}, token=a["secret"]).status_code == 422
    assert api.store.match_log(mid) == []        # nothing stored by any of those
    api.ok(api.post(url, {"action": action}, token=a["secret"]), 200)


@pytest.mark.parametrize("bad", [{"card": "not-a-card"}, {"card": 1}, {"card": "x", "x": 1}, {}])
def test_an_illegal_answer_is_422_with_the_reason_and_a_fault_recorded_at_once(api, running, bad):
    """Answered once: the referee records the fault now (no waiting out the deadline as a
    timeout) and plays on; the same answer again is too late."""
    mid, a, _ = running
    decision, _ = publish_next(api.store, mid)
    url = f"/matches/{mid}/turns/0"
    r = api.post(url, {"action": bad}, token=a["secret"])
    assert r.status_code == 422 and error_code(r) == "illegal_action", bad
    message = r.json()["error"]["message"]
    [entry] = api.store.match_log(mid)
    assert entry["fault"].startswith(("illegal: ", "bad_answer: ")) and reprs_as_json(entry["fault"]) in message
    assert entry["action"] == decision["legal_actions"][0] and "ms" in entry
    assert api.store.pending_decisions(a["id"]) == []
    r = api.post(url, {"action": decision["legal_actions"][0]}, token=a["secret"])
    assert r.status_code == 409 and error_code(r) == "not_pending"


@pytest.mark.parametrize("bad", [{"play": ["7H"]}, {"play": "ZZ"}, {"nope": True}])
def test_an_illegal_answers_message_shows_actions_as_json_never_python_reprs(api, bad):
    bots = [api.store.create_bot("acct", f"b{i}", "duck-soup", "polling") for i in range(2)]
    mid, _ = running_match(api.store, [bot["id"] for bot, _ in bots], seed=5)
    decision, bot_id = publish_next(api.store, mid)
    secret = dict((bot["id"], secret) for bot, secret in bots)[bot_id]
    r = api.post(f"/matches/{mid}/turns/0", {"action": bad}, token=secret)
    assert r.status_code == 422 and error_code(r) == "illegal_action"
    message = r.json()["error"]["message"]
    assert "Card(" not in message and "'" not in message and "True" not in message, message
    played = json.dumps(decision["legal_actions"][0])
    assert message.endswith(f"the referee played {played})")


def test_a_sentence_keeps_its_apostrophes_and_text_that_is_no_literal():
    assert reprs_as_json("the 7H's rank, not 'ZZ' or {'play': Card('7H')}; send {'bid': n}") == \
        'the 7H\'s rank, not "ZZ" or {"play": "7H"}; send {"bid": n}'


def test_a_reported_error_is_a_bot_error_fault_at_once_its_text_the_owners_only(api, running):
    mid, a, _ = running
    decision, _ = publish_next(api.store, mid)
    body = api.ok(api.post(f"/matches/{mid}/turns/0", {"error": "KeyError: 'no_such_key'\n  at line 3",
                                                         "debug": "thinking"}, token=a["secret"]), 200)
    [entry] = api.store.match_log(mid)
    assert entry["fault"].startswith("bot_error: ") and "no_such_key" not in entry["fault"]  # no bot text
    assert body["action"] == entry["action"] == decision["legal_actions"][0]
    note = api.store.turn_debug(mid, 0)  # kept with its debug output, which only its owner reads
    assert note["text"] == "thinking\nthe bot failed: KeyError: 'no_such_key'\n  at line 3"


def test_two_clients_racing_on_one_turn_exactly_one_wins(api, running, live_server):
    mid, a, _ = running
    decision, _ = publish_next(api.store, mid)
    barrier = threading.Barrier(6)
    statuses = []

    def racer(i):
        with requests.Session() as session:
            action = decision["legal_actions"][i % len(decision["legal_actions"])]
            barrier.wait()
            r = session.post(f"{live_server.api}/matches/{mid}/turns/0", json={"action": action},
                             headers={"Authorization": f"Bearer {a['secret']}"}, timeout=30)
            statuses.append(r.status_code)

    threads = [threading.Thread(target=racer, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200] + [409] * 5
    assert len(api.store.match_log(mid)) == 1


def test_worker_default_and_bot_answer_race_one_winner(api, running):
    mid, a, _ = running
    decision, _ = publish_next(api.store, mid)
    default = {"turn": 0, "seat": 0, "action": decision["legal_actions"][0], "fault": "timeout"}
    assert api.store.append_entry(mid, default) is True
    r = api.post(f"/matches/{mid}/turns/0", {"action": decision["legal_actions"][0]}, token=a["secret"])
    assert r.status_code == 409
    assert api.store.match_log(mid) == [default]


@pytest.mark.slow
@pytest.mark.parametrize("game", games.names())
def test_decisions_hold_only_the_seats_own_view_over_whole_matches(api, game):
    """Drive matches of every game as the worker would; each bot receives exactly view(seat).

    The match page is read every turn for the first 30 turns, then every
    tenth (the server replays the log on each read: every turn would be
    quadratic in the match length); at tables of more than three, two other
    seats (varying with the turn) are checked to have been sent nothing.
    """
    token = api.account()
    spec = games.get(game)
    for seats in sorted({spec.min_seats, spec.max_seats}):
        bots = [api.bot(token, f"p{seats}-{i}", game=game) for i in range(seats)]
        seat_bots = [b["id"] for b in bots]
        secret_of = {b["id"]: b["secret"] for b in bots}
        mid = api.match(token, game, seat_bots, seed=seats * 101)["id"]
        api.store.set_match_status(mid, "running")
        state = api.store.replay(mid)
        turn = 0
        publish_next(api.store, mid)  # the match's first run asks its first seat; the API the rest
        while not state.is_over:
            seat = state.to_act
            bot_id = seat_bots[seat]
            got = api.ok(api.get("/bots/me/turns", token=secret_of[bot_id]), 200)["turns"]
            assert len(got) == 1 and (got[0]["turn"], got[0]["seat"]) == (turn, seat)
            assert got[0]["view"] == state.view(seat) and got[0]["legal_actions"] == state.legal_actions()
            # the other bots are sent nothing of it (at big tables, two of them in turn)
            others = [b for b in seat_bots if b != bot_id]
            if len(others) > 2:
                others = [others[turn % len(others)], others[(turn * 7 + 3) % len(others)]]
            for other in others:
                assert api.ok(api.get("/bots/me/turns", token=secret_of[other]), 200)["turns"] == []
            if turn < 30 or turn % 10 == 0:
                shown = api.ok(api.get(f"/matches/{mid}"), 200)
                assert shown["view"] == state.view(None) and shown["log"] is None
                assert shown["result"] is None and shown["seed"] is None
            action = got[0]["legal_actions"][turn % len(got[0]["legal_actions"])]
            api.ok(api.post(f"/matches/{mid}/turns/{turn}", {"action": action}, token=secret_of[bot_id]), 200)
            state.apply(action)
            turn += 1
        conclude(api.store, mid)
        assert api.ok(api.get(f"/matches/{mid}"), 200)["log"][-1]["turn"] == turn - 1


def test_toy_decisions_never_show_the_other_hand(api, owner):
    token, a, b = owner
    mid = api.match(token, "toy-high", [a["id"], b["id"]], options={"deck": list("123456789")})["id"]
    api.store.set_match_status(mid, "running")
    decision, _ = publish_next(api.store, mid)
    sent = api.get("/bots/me/turns", token=a["secret"]).text
    assert json.loads(sent)["turns"][0]["view"]["hand"] == ["1", "2"]
    assert '"3"' not in sent and '"4"' not in sent       # seat 1's cards
    match_page = api.get(f"/matches/{mid}").text
    assert not any(f'"{c}"' in match_page for c in "1234")
    assert next_decision(api.store, mid)[0] == decision
    finish(api.store, mid)
