"""`GET /matches` and `GET /tournaments`: newest first, pages that cover everything once,
filters by game and bot, results only where public."""

from __future__ import annotations

from tests.server.driving import make_bots, played, running_tournament


def walk(api, path: str, key: str, limit: int, **filters) -> list[dict]:
    """Every item of a list, page after page."""
    items, cursor = [], None
    for _ in range(100):
        params = {"limit": limit, **filters, **({"cursor": cursor} if cursor else {})}
        page = api.ok(api.get(path, params=params), 200)
        assert len(page[key]) <= limit
        items += page[key]
        cursor = page["next_cursor"]
        if cursor is None:
            return items
    raise AssertionError("the pages never ended")


def test_matches_are_listed_newest_first_a_page_at_a_time_and_filtered(api):
    store = api.store
    ducks = make_bots(store, 3)
    carres = make_bots(store, 2, game="double-carre")
    made = []
    for i in range(7):
        made.append(store.create_match("duck-soup", [ducks[i % 3], ducks[(i + 1) % 3]], i, {})["id"])
        if i % 2:
            made.append(store.create_match("double-carre", carres, i, {})["id"])
    newest_first = made[::-1]
    assert [m["id"] for m in walk(api, "/matches", "matches", 3)] == newest_first
    assert [m["id"] for m in walk(api, "/matches", "matches", 100)] == newest_first
    by_game = walk(api, "/matches", "matches", 2, game="double-carre")
    assert [m["id"] for m in by_game] == [m for m in newest_first if store.get_match(m)["game"] == "double-carre"]
    by_bot = walk(api, "/matches", "matches", 2, bot=ducks[0])
    assert [m["id"] for m in by_bot] == [m for m in newest_first if ducks[0] in store.get_match(m)["seats"]]
    assert walk(api, "/matches", "matches", 5, bot=ducks[0], game="double-carre") == []
    first = api.ok(api.get("/matches", params={"limit": 1}), 200)["matches"][0]
    assert first["seats"] == [{"seat": 0, "bot": ducks[0], "version": 1}, {"seat": 1, "bot": ducks[1], "version": 1}]  # i = 6
    assert (first["status"], first["public"], first["result"]) == ("queued", False, None)


def test_a_match_result_is_listed_only_once_public(api):
    store = api.store
    bots = make_bots(store)
    tid = running_tournament(store, bots)
    for tournament in (None, tid):
        played(store, bots, seed=1, tournament=tournament)
    twin, challenge = api.ok(api.get("/matches"), 200)["matches"]
    assert twin["tournament"] == tid and (twin["public"], twin["result"]) == (False, None)
    assert challenge["public"] and set(challenge["result"]) == {"scores", "ranks"}
    store.set_tournament(tid, status="finished")
    twin = api.ok(api.get("/matches"), 200)["matches"][0]
    assert twin["public"] and twin["result"]["ranks"]


def test_tournaments_are_listed_newest_first_with_progress_and_filtered(api):
    store = api.store
    ducks = make_bots(store, 3)
    carres = make_bots(store, 2, game="double-carre")
    made = []
    for i in range(5):
        made.append(store.create_tournament("duck-soup", ducks[:2] if i % 2 else ducks, seats=2, deals=1,
                                            duplicate=True, seed=i, options={})["id"])
    made.append(store.create_tournament("double-carre", carres, seats=2, deals=1, duplicate=True, seed=9,
                                        options={})["id"])
    store.set_tournament(made[0], status="running", total=6)
    listed = walk(api, "/tournaments", "tournaments", 2)
    assert [t["id"] for t in listed] == made[::-1]
    assert listed[-1]["progress"] == {"done": 0, "total": 6} and listed[-1]["status"] == "running"
    assert [t["id"] for t in walk(api, "/tournaments", "tournaments", 2, game="double-carre")] == [made[-1]]
    with_third = walk(api, "/tournaments", "tournaments", 2, bot=ducks[2])
    assert [t["id"] for t in with_third] == [made[4], made[2], made[0]]


def test_bad_list_queries_are_json_422s(api):
    for params in ({"limit": 0}, {"limit": 101}, {"cursor": "abc"}, {"cursor": "-1"}, {"game": "chess"}):
        for path in ("/matches", "/tournaments"):
            response = api.get(path, params=params)
            assert response.status_code == 422, (path, params)
            assert set(response.json()["error"]) >= {"code", "message"}


def test_records_stored_before_the_lists_are_indexed_once(api, redis_client):
    store = api.store
    bots = make_bots(store)
    mids = [store.create_match("duck-soup", bots, i, {})["id"] for i in range(3)]
    tid = store.create_tournament("duck-soup", bots, seats=2, deals=1, duplicate=True, seed=1, options={})["id"]
    for key in redis_client.keys("matches:game:*") + redis_client.keys("tournaments:*:*"):
        redis_client.delete(key)  # (the per-bot match list has its own backfill: index_bot_matches)
    redis_client.delete("lists:indexed")
    assert walk(api, "/matches", "matches", 10, game="duck-soup") == []
    assert store.index_lists() == 4  # a step of `cardarena migrate` (core/store/schema.py)
    assert store.index_lists() == 0
    assert [m["id"] for m in walk(api, "/matches", "matches", 10, game="duck-soup")] == mids[::-1]
    assert [t["id"] for t in walk(api, "/tournaments", "tournaments", 10, game="duck-soup")] == [tid]
    assert [t["id"] for t in walk(api, "/tournaments", "tournaments", 10, bot=bots[1])] == [tid]
