"""A paused bot is said to be paused wherever it is shown: its `status_reason` (with how to resume
it), its row on the ladder and the leaderboard, its page."""

from __future__ import annotations

import re

from core.store.probation import PROBATION

GAME = "duck-soup"


def rated_bots(store) -> list[str]:
    bots = [store.create_bot("a_1", name, GAME, "python", entrypoint="example_bots.random:RandomBot")[0]["id"]
            for name in ("steady", "forfeiter")]
    for i, bot in enumerate(bots):
        store.save_rating(GAME, bot, 30.0 - i, 2.0)
    store.r.hset(f"bot:{bots[1]}", "forfeit_streak", PROBATION)  # as PROBATION forfeited ladder matches leave it
    return bots


def test_a_paused_bots_status_reason_says_so_and_how_to_resume_it(client, store):
    steady, paused = rated_bots(store)
    shown = client.get(f"/api/v1/bots/{paused}").get_json()
    assert shown["paused"] is True and shown["status"] == "online"  # alive, but off rated play
    assert shown["status_reason"].startswith(f"paused: it forfeited {PROBATION} ladder matches in a row")
    assert f"POST /api/v1/bots/{paused}/resume" in shown["status_reason"]
    assert client.get(f"/api/v1/bots/{steady}").get_json()["status_reason"] is None
    store.resume_bot(paused)
    assert client.get(f"/api/v1/bots/{paused}").get_json()["status_reason"] is None


def test_a_paused_bot_keeps_its_place_on_the_ladder_marked_paused(client, store):
    steady, paused = rated_bots(store)
    rows = client.get(f"/api/v1/games/{GAME}/rankings").get_json()["rankings"]
    assert [(r["bot"], r["paused"]) for r in rows] == [(steady, False), (paused, True)]
    page = client.get("/").get_data(as_text=True)
    row = re.search(rf'<tr data-bot="{paused}".*?</tr>', page, re.S).group(0)
    assert 'class="badge paused"' in row
    assert 'class="badge paused"' not in re.search(rf'<tr data-bot="{steady}".*?</tr>', page, re.S).group(0)


def test_a_paused_bots_page_says_why_and_how_to_resume(client, store):
    _, paused = rated_bots(store)
    page = client.get(f"/bots/{paused}").get_data(as_text=True)
    reason = re.search(r'<span id="status-reason">\((.*?)\)</span>', page).group(1)
    assert reason.startswith("paused: it forfeited") and f"/api/v1/bots/{paused}/resume" in reason
