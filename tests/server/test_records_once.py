"""What a finished match adds to records, on the platform (docs/api.md §4 "Meanings"): a bot's
record counts a match once however many of its versions sat at the table, and a seat that
forfeited never shows a better score in standings than the seats that played on."""

from __future__ import annotations

from sdk.standings import seat_records
from tests.server.driving import make_bots, played, running_match, running_tournament


def test_a_bot_playing_its_own_other_version_counts_the_match_once(api):
    (bot,) = make_bots(api.store, 1)
    mid = played(api.store, [bot, bot], seed=3)
    shown = api.ok(api.get(f"/bots/{bot}"), 200)
    assert (shown["matches"], shown["wins"]) == (1, 0)  # beating only itself is no win
    listed = api.ok(api.get(f"/bots/{bot}/matches"), 200)["matches"]
    assert [m["id"] for m in listed] == [mid]
    page = api.session.get(f"{api.live.url}/bots/{bot}", timeout=30).text  # the bot's page
    assert '<td class="num" id="matches">1</td>' in page and '<td class="num" id="wins">0</td>' in page
    assert page.count(f"/matches/{mid}") == 1  # its recent matches list it once


def test_a_forfeited_seat_shows_no_better_mean_score_than_the_winner(api):
    forfeiter, winner = make_bots(api.store, 2)
    tid = running_tournament(api.store, [forfeiter, winner], total=1)
    mid, _ = running_match(api.store, [forfeiter, winner], tournament=tid)
    # the case: the autopilot earned the forfeiting seat 1, the winner scored 0
    result = {"scores": [1, 0], "ranks": [2, 1], "forfeits": [0], "faults": [3, 0]}
    assert api.store.conclude_match(mid, "finished", result, records=seat_records(result, [forfeiter, winner]))
    # the tournament is in play: its standings are its tallies as read now
    rows = {r["bot"]: r for r in api.ok(api.get(f"/tournaments/{tid}"), 200)["standings"]}
    assert rows[forfeiter]["forfeits"] == 1 and rows[forfeiter]["points"] == 0
    assert rows[forfeiter]["mean_score"] <= rows[winner]["mean_score"]
    assert api.store.get_match(mid)["result"]["scores"] == [1, 0]  # the match keeps the engine's
