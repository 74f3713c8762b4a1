"""The leaderboard's record is rated play only (docs/api.md, the ladder).

The attack as filed: 40 challenges against a bot that never answers took an account's wins on the
leaderboard from 38 to 79. A challenge is unrated (the challenger picks the opponent): it shows in
the row's `other_matches`, never in its `matches` and `wins`."""

from __future__ import annotations

import re

import requests

from tests.worker.ladder_helpers import finish

GAME = "duck-soup"


def test_forty_unrated_challenges_do_not_change_the_rated_record(api):
    token = api.account("farmer")
    winner = api.bot(token, "winner", GAME)["id"]
    victim = api.bot(api.account("victim"), "victim", GAME)["id"]
    rated = api.store.create_match(GAME, [winner, victim], 1, {}, rated=True)["id"]
    finish(api.store, rated, [1, 2])
    api.store.save_rating(GAME, winner, 30.0, 2.0)
    api.store.save_rating(GAME, victim, 20.0, 2.0)

    def row(bot: str) -> dict:
        rows = api.ok(api.get(f"/games/{GAME}/rankings"), 200)["rankings"]
        return next(r for r in rows if r["bot"] == bot)

    before = row(winner)
    assert (before["matches"], before["wins"], before["other_matches"], before["other_wins"]) == (1, 1, 0, 0)
    for _ in range(40):  # each challenge the challenger wins: the victim never answers
        created = api.match(token, GAME, [winner, victim])
        assert created["rated"] is False
        finish(api.store, created["id"], [1, 2])
    after = row(winner)
    assert (after["matches"], after["wins"]) == (1, 1)
    assert (after["other_matches"], after["other_wins"]) == (40, 40)
    assert row(victim)["matches"] == 1 and row(victim)["other_matches"] == 40
    assert api.ok(api.get(f"/bots/{winner}"), 200)["matches"] == 41  # the bot's own record: everything

    page = requests.get(f"{api.live.url}/", timeout=30).text
    cells = re.search(rf'<tr data-bot="{winner}".*?</tr>', page, re.S).group(0)
    assert '<td class="num rated-matches">1</td>' in cells and '<td class="num rated-wins">1</td>' in cells
    assert re.search(r'class="num other other-matches">40 <small>\(40 won\)', cells)
    assert "other matches (unrated)" in page
