"""Reads that stay cheap (issue 13): lists come a page at a time, a bot's matches from its
own index, and what a finished tournament shows is computed once and stored.

On a 2,800-match tournament the crosstable, the matches list and the tournament
page took ~1 s each, and `GET /bots/{id}/matches` scanned every match ever
stored; bench/api.py measures the times, these tests the rules.
"""

from __future__ import annotations

import pytest


def error_code(response) -> str:
    return response.json()["error"]["code"]


def all_pages(api, path: str, key: str, limit: int, **params) -> tuple[list[dict], int]:
    """Every item of a paginated list, following `next_cursor`; and the number of pages read."""
    items, cursor, pages = [], None, 0
    while True:
        query = {"limit": limit, **params, **({"cursor": cursor} if cursor else {})}
        page = api.ok(api.get(path, params=query), 200)
        items += page[key]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            return items, pages
        assert len(page[key]) == limit


def commands(api, name: str) -> int:
    """How many times Redis has run command `name` so far."""
    stats = api.store.r.info("commandstats").get(f"cmdstat_{name}")
    return int(stats["calls"]) if stats else 0


@pytest.fixture()
def two_bots(api):
    token = api.account("reader")
    return token, api.bot(token, "a", game="toy-high")["id"], api.bot(token, "b", game="toy-high")["id"]


def test_bots_list_pages_in_registration_order(api):
    token = api.account("owner")
    ids = [api.bot(token, f"bot{i}", game="toy-high" if i % 2 else "double")["id"] for i in range(7)]
    listed, pages = all_pages(api, "/bots", "bots", limit=3)
    assert [b["id"] for b in listed] == ids and pages == 3
    toy, _ = all_pages(api, "/bots", "bots", limit=2, game="toy-high")
    assert [b["id"] for b in toy] == ids[1::2]
    assert api.ok(api.get("/bots"), 200)["next_cursor"] is None  # one page of 100 holds them all


@pytest.mark.parametrize("query", [{"limit": 101}, {"limit": 0}, {"cursor": "abc"}, {"cursor": "-1"},
                                   {"cursor": "9" * 40}])
def test_a_page_beyond_the_limits_or_a_forged_cursor_is_422(api, two_bots, query):
    _, a, _ = two_bots
    for path in ("/bots", f"/bots/{a}/matches"):
        r = api.get(path, params=query)
        assert r.status_code == 422 and error_code(r) == "invalid", (path, query)


def test_a_bots_matches_come_from_its_index_newest_first_a_page_at_a_time(api, two_bots):
    token, a, b = two_bots
    c = api.bot(token, "c", game="toy-high")["id"]
    mine = [api.store.create_match("toy-high", [a, b] if i % 2 else [b, a], i, {})["id"] for i in range(5)]
    for i in range(300):  # matches it does not play: a scan would read them all
        api.store.create_match("toy-high", [b, c], 100 + i, {})
    listed, pages = all_pages(api, f"/bots/{a}/matches", "matches", limit=2)
    assert [m["id"] for m in listed] == mine[::-1] and pages == 3
    assert all(m["seats"][m["seat"]] == a for m in listed)
    before = commands(api, "hgetall") + commands(api, "hget")
    api.ok(api.get(f"/bots/{a}/matches", params={"limit": 100}), 200)
    assert commands(api, "hgetall") + commands(api, "hget") - before <= 8  # its 5 matches, not 305


def test_matches_stored_before_the_index_are_indexed_once(api, two_bots):
    _, a, b = two_bots
    old = [api.store.create_match("toy-high", [a, b], i, {})["id"] for i in range(3)]
    api.store.r.delete(f"bot:{a}:matches", f"bot:{b}:matches", "matches:bot_index")  # as an old database
    assert api.ok(api.get(f"/bots/{a}/matches"), 200)["matches"] == []
    assert api.store.index_bot_matches() == 6  # a step of `cardarena migrate` (core/store/schema.py)
    assert [m["id"] for m in api.ok(api.get(f"/bots/{a}/matches"), 200)["matches"]] == old[::-1]
    assert api.store.index_bot_matches() == 0  # once


def finished_tournament(api, token: str, bots: list[str], monkeypatch) -> str:
    """A round-robin of the toy game run to its end through the store, as the worker would."""
    from core.conclusion import finish_tournament_if_complete
    from games.ranking import alone_first, match_points
    from worker.jobs import run_tournament

    monkeypatch.setenv("REDIS_URL", api.live.redis_url)  # where run_tournament looks
    tid = api.ok(api.post("/tournaments", {"game": "toy-high", "bots": bots, "deals": 2}, token=token),
                 202)["id"]
    assert run_tournament(tid) == "expanded"
    for mid in api.store.tournament_matches(tid):
        api.store.start_match(mid)
        state = api.store.replay(mid)
        while not state.is_over:
            action = state.legal_actions()[0]
            assert api.store.append_entry(mid, {"turn": api.store.log_length(mid), "seat": state.to_act,
                                                "action": action})
            state.apply(action)
        result = state.result()
        records = [{"bot": bot, "won": alone_first(result["ranks"], i), "faults": 0,
                    "points": match_points(result["ranks"], i), "score": float(result["scores"][i])}
                   for i, bot in enumerate(api.store.get_match(mid)["seats"])]
        assert api.store.conclude_match(mid, "finished", result, records=records)
    assert finish_tournament_if_complete(api.store, tid)
    return tid


def test_a_tournaments_matches_page_in_schedule_order(api, two_bots, monkeypatch):
    token, a, b = two_bots
    c = api.bot(token, "c", game="toy-high")["id"]
    tid = finished_tournament(api, token, [a, b, c], monkeypatch)
    listed, pages = all_pages(api, f"/tournaments/{tid}/matches", "matches", limit=5)
    assert [m["id"] for m in listed] == api.store.tournament_matches(tid) and pages == 3  # 12 matches
    assert all(m["result"] for m in listed)


def test_a_finished_tournaments_crosstable_is_computed_once_and_stored(api, two_bots, monkeypatch):
    token, a, b = two_bots
    tid = finished_tournament(api, token, [a, b], monkeypatch)
    first = api.ok(api.get(f"/tournaments/{tid}/crosstable"), 200)
    stored = api.store.tournament_summary(tid, "crosstable")
    assert stored == {"bots": first["bots"], "rows": first["rows"]}
    mid = api.store.tournament_matches(tid)[0]  # a stored match changed by hand: the crosstable is not recomputed
    api.store.r.hset(f"match:{mid}", "result", '{"ranks": [2, 1], "scores": [0, 1]}')
    assert api.ok(api.get(f"/tournaments/{tid}/crosstable"), 200) == first
    before = commands(api, "hmget")
    api.ok(api.get(f"/tournaments/{tid}/crosstable"), 200)
    assert commands(api, "hmget") == before  # no match read at all
