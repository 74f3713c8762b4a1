"""Challenges (`POST /matches`) and what `GET /matches/{id}` shows when."""

from __future__ import annotations

import pytest
import redis
from rq import Queue

from tests.server.driving import finish


def error_code(response) -> str:
    return response.json()["error"]["code"]


def queued_jobs(redis_url) -> list[tuple[str, tuple]]:
    queue = Queue("cardarena", connection=redis.Redis.from_url(redis_url))
    return [(job.func_name, job.args) for job in queue.get_jobs()]


def test_challenge_is_stored_queued_and_enqueued(api, owner, redis_url):
    token, a, b = owner
    body = api.match(token, "toy-high", [a["id"], b["id"]])
    assert body["status"] == "queued" and body["rated"] is False  # only the ladder's matches are rated
    assert api.ok(api.get(f"/matches/{body['id']}"), 200)["kind"] == "challenge"
    match = api.store.get_match(body["id"])
    assert match["seats"] == [a["id"], b["id"]] and match["status"] == "queued"
    assert (match["move_timeout_ms"], match["max_faults"]) == (2000, 3)
    assert 0 <= match["seed"] < 2**63
    assert queued_jobs(redis_url) == [("worker.jobs.run_match", (body["id"],))]


def test_a_challenge_is_unrated_whatever_its_seed_or_deck(api, owner):
    token, a, b = owner
    seeded = api.match(token, "toy-high", [a["id"], b["id"]], seed=7, move_timeout_ms=100, time_bank_ms=0,
                        max_faults=10)
    assert seeded["rated"] is False
    match = api.store.get_match(seeded["id"])
    assert (match["seed"], match["move_timeout_ms"], match["max_faults"]) == (7, 100, 10)
    deck = [str(n) for n in range(9, 0, -1)]
    dealt = api.match(token, "toy-high", [a["id"], b["id"]], options={"deck": deck})
    assert dealt["rated"] is False


@pytest.mark.parametrize("change, code", [
    ({"game": "no-such-game"}, "unknown_game"),
    ({"bots": ["b_nothere", "B"]}, "unknown_bot"),
    ({"bots": ["A"]}, "invalid_options"),            # toy-high needs 2 to 3 seats
    ({"bots": ["A", "B", "A", "B"]}, "invalid_options"),
    ({"options": {"rounds": 9}}, "invalid_options"),
    ({"options": {"colour": "red"}}, "invalid_options"),
    ({"options": {"deck": ["1", "1"]}}, "invalid_options"),
    ({"seed": 2**63}, "invalid"),
    ({"seed": "7"}, "invalid"),
    ({"move_timeout_ms": 99}, "invalid"),
    ({"move_timeout_ms": 10001}, "invalid"),
    ({"time_bank_ms": -1}, "invalid"),
    ({"time_bank_ms": 60001}, "invalid"),           # a bank is at most a minute
    ({"max_faults": 0}, "invalid"),
    ({"max_faults": 11}, "invalid"),
    ({"bots": []}, "invalid"),
])
def test_bad_challenge_is_422_and_stores_nothing(api, owner, redis_url, change, code):
    token, a, b = owner
    body = {"game": "toy-high", "bots": [a["id"], b["id"]], **change}
    body["bots"] = [{"A": a["id"], "B": b["id"]}.get(x, x) for x in body["bots"]]
    r = api.post("/matches", body, token=token)
    assert r.status_code == 422 and error_code(r) == code, r.text
    assert api.store.r.zcard("matches") == 0 and queued_jobs(redis_url) == []


def test_challenge_with_retired_or_other_game_bot_is_422(api, owner):
    token, a, b = owner
    games = [g["name"] for g in api.ok(api.get("/games"), 200)["games"]]
    stranger = api.bot(token, "s", game=next(g for g in games if g != "toy-high"))
    r = api.post("/matches", {"game": "toy-high", "bots": [a["id"], stranger["id"]]}, token=token)
    assert r.status_code == 422 and error_code(r) == "wrong_game"
    api.delete(f"/bots/{b['id']}", token=token)
    r = api.post("/matches", {"game": "toy-high", "bots": [a["id"], b["id"]]}, token=token)
    assert r.status_code == 422 and error_code(r) == "retired_bot"


def test_challenge_needs_an_account(api, owner):
    _, a, b = owner
    body = {"game": "toy-high", "bots": [a["id"], b["id"]]}
    assert api.post("/matches", body).status_code == 401
    assert api.post("/matches", body, token="cat_nope").status_code == 401
    assert api.post("/matches", body, token=a["secret"]).status_code == 401


def test_fifty_queued_matches_per_account_then_429(api, owner):
    token, a, b = owner
    ids = [api.match(token, "toy-high", [a["id"], b["id"]], seed=i)["id"] for i in range(50)]
    r = api.post("/matches", {"game": "toy-high", "bots": [a["id"], b["id"]]}, token=token)
    assert r.status_code == 429 and error_code(r) == "too_many_matches" and r.headers["Retry-After"]
    api.store.set_match_status(ids[0], "running")  # one starts: a slot frees
    api.match(token, "toy-high", [a["id"], b["id"]])


def test_match_shows_no_actions_until_finished(api, owner):
    token, a, b = owner
    mid = api.match(token, "toy-high", [a["id"], b["id"]], seed=5)["id"]
    queued = api.ok(api.get(f"/matches/{mid}"), 200)
    assert queued["status"] == "queued" and queued["log"] is None and queued["result"] is None
    unplayed = {"latency_ms": {"p50": None, "max": None}, "bank_ms": 10000}
    assert queued["seats"] == [{"seat": 0, "bot": a["id"], "version": 1, **unplayed},
                               {"seat": 1, "bot": b["id"], "version": 1, **unplayed}]
    assert "seed" not in queued or queued["seed"] is None
    api.store.set_match_status(mid, "running")
    state = api.store.replay(mid)
    action = state.legal_actions()[0]
    api.store.append_entry(mid, {"turn": 0, "seat": 0, "action": action})
    state.apply(action)
    running = api.ok(api.get(f"/matches/{mid}"), 200)
    assert running["view"] == state.view(None) and running["log"] is None and running["turns"] == 1
    assert running["seed"] is None and running["decks"] is None
    # the admin sees everything at any time
    assert api.ok(api.get(f"/matches/{mid}", token=api.admin_token), 200)["log"][0]["action"] == action
    result = finish(api.store, mid)
    done = api.ok(api.get(f"/matches/{mid}"), 200)
    assert done["status"] == "finished" and done["result"] == result and done["seed"] == 5
    assert done["decks"] == result["decks"]
    assert [e["turn"] for e in done["log"]] == list(range(len(done["log"])))
    assert api.get("/matches/m_nothere").status_code == 404


def test_chosen_deck_stays_hidden_until_public(api, owner):
    token, a, b = owner
    deck = [str(n) for n in range(9, 0, -1)]
    mid = api.match(token, "toy-high", [a["id"], b["id"]], options={"deck": deck})["id"]
    assert "deck" not in api.ok(api.get(f"/matches/{mid}"), 200)["options"]
    finish(api.store, mid)
    assert api.ok(api.get(f"/matches/{mid}"), 200)["options"]["deck"] == deck
