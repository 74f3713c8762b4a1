"""A retired bot leaves the ladder: `GET /games/{game}/rankings` and the leaderboard page
list only active bots (the demo retires its bots on a shared Redis relying on this)."""

from __future__ import annotations

GAME = "duck-soup"


def test_a_retired_bot_is_on_neither_the_ladder_nor_the_leaderboard(client, store):
    bots = [store.create_bot("a_1", name, GAME, "polling")[0]["id"] for name in ("stays", "retires")]
    for i, bot in enumerate(bots):
        store.save_rating(GAME, bot, 30.0 - i, 2.0)
    ladder = client.get(f"/api/v1/games/{GAME}/rankings").get_json()["rankings"]
    assert [row["bot"] for row in ladder] == bots
    store.retire_bot(bots[1])
    ladder = client.get(f"/api/v1/games/{GAME}/rankings").get_json()["rankings"]
    assert [(row["rank"], row["bot"]) for row in ladder] == [(1, bots[0])]
    page = client.get("/").get_data(as_text=True)
    assert f'data-bot="{bots[0]}"' in page and f'data-bot="{bots[1]}"' not in page
