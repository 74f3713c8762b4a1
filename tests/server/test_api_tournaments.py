"""`POST /tournaments`, its limits, and what its matches show before it ends."""

from __future__ import annotations

import pytest
import redis
from rq import Queue

from tests.server.driving import finish


def error_code(response) -> str:
    return response.json()["error"]["code"]


@pytest.fixture()
def entrants(api):
    token = api.account("organiser")
    return token, [api.bot(token, f"bot{i}", game="toy-high")["id"] for i in range(4)]


def test_tournament_is_stored_and_enqueued(api, entrants, redis_url):
    token, bots = entrants
    r = api.post("/tournaments", {"game": "toy-high", "bots": bots, "format": "round-robin", "deals": 2},
                 token=token)
    assert r.status_code == 202
    body = r.json()
    assert body["status"] == "queued" and body["seats"] == 2 and body["duplicate"] is True
    assert body["rated"] is False  # an account's tournament: only the admin's, on the standard clock, are rated
    admin = api.post("/tournaments", {"game": "toy-high", "bots": bots, "deals": 2}, token=api.admin_token)
    assert admin.json()["rated"] is True
    quick = api.post("/tournaments", {"game": "toy-high", "bots": bots, "move_timeout_ms": 500},
                     token=api.admin_token)
    assert quick.json()["rated"] is False  # not the standard clock
    admin_jobs = [admin.json()["id"], quick.json()["id"]]
    stored = api.store.get_tournament(body["id"])
    assert stored["bots"] == bots and stored["deals"] == 2 and stored["format"] == "round-robin"
    jobs = Queue("cardarena", connection=redis.Redis.from_url(redis_url)).get_jobs()
    assert [(j.func_name, j.args) for j in jobs] == [("worker.jobs.run_tournament", (t,))
                                                     for t in (body["id"], *admin_jobs)]
    shown = api.ok(api.get(f"/tournaments/{body['id']}"), 200)
    assert shown["progress"] == {"done": 0, "total": 0} and shown["standings"] == []
    assert shown["seed"] is None and "owner" not in shown


@pytest.mark.parametrize("change, code", [
    ({"game": "nope"}, "unknown_game"),
    ({"deals": 101}, "invalid"),
    ({"deals": 0}, "invalid"),
    ({"format": "swiss"}, "invalid"),
    ({"seats": 4}, "invalid_options"),               # toy-high seats 2 to 3
    ({"bots": "first-two"}, "too_few_bots"),         # fewer bots than one table of 3
    ({"bots": "dup"}, "duplicate_bot"),
    ({"bots": "unknown"}, "unknown_bot"),
    ({"bots": "sixty-five"}, "invalid"),
    ({"options": {"rounds": 0}}, "invalid_options"),
    ({"move_timeout_ms": 50}, "invalid"),
    ({"max_faults": 20}, "invalid"),
    ({"duplicate": "yes"}, "invalid"),
])
def test_bad_tournament_is_422(api, entrants, change, code):
    token, bots = entrants
    body = {"game": "toy-high", "bots": bots, "format": "round-robin", "deals": 1}
    special = {"first-two": bots[:2], "dup": bots[:2] + bots[:1], "unknown": bots + ["b_none"],
               "sixty-five": [f"b_{i}" for i in range(65)]}
    body.update({k: special.get(v, v) if isinstance(v, str) else v for k, v in change.items()})
    if change.get("bots") == "first-two":
        body["seats"] = 3
    r = api.post("/tournaments", body, token=token)
    assert r.status_code == 422 and error_code(r) == code, r.text
    assert api.store.r.zcard("tournaments") == 0


def test_tournament_needs_an_account(api, entrants):
    _, bots = entrants
    assert api.post("/tournaments", {"game": "toy-high", "bots": bots}).status_code == 401


def test_three_unfinished_tournaments_per_account_then_429(api, entrants):
    token, bots = entrants
    body = {"game": "toy-high", "bots": bots, "deals": 1}
    ids = [api.ok(api.post("/tournaments", body, token=token), 202)["id"] for _ in range(3)]
    r = api.post("/tournaments", body, token=token)
    assert r.status_code == 429 and error_code(r) == "too_many_tournaments"
    api.store.set_tournament(ids[0], status="finished")
    assert api.post("/tournaments", body, token=token).status_code == 202


def test_tournament_matches_stay_private_until_the_tournament_ends(api, entrants):
    token, bots = entrants
    tid = api.ok(api.post("/tournaments", {"game": "toy-high", "bots": bots[:2], "seed": 11},
                          token=token), 202)["id"]
    store = api.store
    mids = []
    for rotation in ([bots[0], bots[1]], [bots[1], bots[0]]):
        m = store.create_match("toy-high", rotation, 11, {}, tournament_id=tid)
        store.add_tournament_match(tid, m["id"])
        mids.append(m["id"])
    store.set_tournament(tid, status="running")
    finish(store, mids[0])  # concluded: counted done in its tournament
    early = api.ok(api.get(f"/matches/{mids[0]}"), 200)
    assert early["status"] == "finished" and early["log"] is None and early["result"] is None
    assert early.get("seed") is None and early.get("decks") is None
    listed = api.ok(api.get(f"/tournaments/{tid}/matches"), 200)["matches"]
    assert [m["id"] for m in listed] == mids and all(m["result"] is None for m in listed)
    assert api.ok(api.get(f"/tournaments/{tid}"), 200)["progress"] == {"done": 1, "total": 2}
    admin = api.ok(api.get(f"/matches/{mids[0]}", token=api.admin_token), 200)
    assert admin["log"] and admin["seed"] == 11
    finish(store, mids[1])  # concluded: counted done in its tournament
    standings = [{"rank": 1, "bot": bots[0], "points": 1.5, "matches": 2, "wins": 1},
                 {"rank": 2, "bot": bots[1], "points": 0.5, "matches": 2, "wins": 0}]
    store.save_standings(tid, standings)
    store.set_tournament(tid, status="finished")
    shown = api.ok(api.get(f"/tournaments/{tid}"), 200)
    assert shown["status"] == "finished" and shown["standings"] == standings and shown["seed"] == 11
    assert shown["progress"] == {"done": 2, "total": 2}
    assert api.ok(api.get(f"/matches/{mids[0]}"), 200)["log"]
    assert all(m["result"] for m in api.ok(api.get(f"/tournaments/{tid}/matches"), 200)["matches"])
    assert api.get("/tournaments/t_none").status_code == 404
    assert api.get("/tournaments/t_none/matches").status_code == 404


@pytest.mark.parametrize("format, entrants_, seats", [
    ("round-robin", 4, 2), ("gauntlet", 4, 3), ("round-robin", 12, 3),  # 220 tables of 3: a sample
])
def test_the_answer_says_the_format_schedule_and_candidate_as_the_worker_builds_them(api, format, entrants_, seats):
    from worker.schedules import gauntlet, round_robin

    token = api.account("organiser")
    bots = [api.bot(token, f"bot{i}", game="toy-high")["id"] for i in range(entrants_)]
    body = {"game": "toy-high", "bots": bots, "format": format, "seats": seats, "deals": 1, "seed": 3}
    if format == "gauntlet":
        body["candidate"] = bots[2]
    answer = api.ok(api.post("/tournaments", body, token=token), 202)
    assert answer["format"] == format and answer["candidate"] == body.get("candidate")
    built = (gauntlet(bots, bots[2], seats, 1, True, 3) if format == "gauntlet"
             else round_robin(bots, seats, 1, True, 3))
    assert built.description.startswith(answer["schedule"])  # the sample's balance is drawn later
    assert answer["total"] == len(built.matches)
