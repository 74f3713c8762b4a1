"""Nobody learns who sits at a rated table until its deal is over (docs/api.md, the ladder).

The attack as filed: `GET /matches/{id}` listed the seats' bot ids during a live ladder match,
so a throwaway could tell it faced its farmer and throw the deal. Here a ladder pairing (one
duplicate deal of two rotations) is made by the platform's matchmaker, and every place a match's
seats are read — the match, the lists, a bot's matches, the rankings' matches in play, the pages
— shows seat numbers only (the admin sees all) until the deal's last rotation ends."""

from __future__ import annotations

import random

import pytest
import requests

from core.store.ladder import ladder_lease
from tests.live import ADMIN_TOKEN
from tests.worker.ladder_helpers import finish, house_bot

GAME = "duck-soup"


@pytest.mark.slow
def test_a_live_rated_tables_seats_are_hidden_everywhere_until_its_deal_is_over(api):
    store = api.store
    a = house_bot(store, "farmer-bot-name", GAME, owner="acct_a")
    b = house_bot(store, "helper-bot-name", GAME, owner="acct_b")
    token = store.take_lease(*ladder_lease(GAME))
    pairing = store.create_pairing(GAME, [a, b], random.Random(1).getrandbits(63), [0, 1], token)
    first, second = pairing["matches"]
    watcher = api.account("watcher")

    def shows_bots(text: str) -> bool:
        return any(s in text for s in (a, b, "farmer-bot-name", "helper-bot-name", "acct_a", "acct_b"))

    def check_hidden() -> None:
        for mid in (first, second):
            for token_ in (None, watcher):
                shown = api.ok(api.get(f"/matches/{mid}", token=token_), 200)
                assert [(s["seat"], s["bot"], s["version"]) for s in shown["seats"]] == [(0, None, None), (1, None, None)]
                assert not shows_bots(str(shown))
        listed = api.ok(api.get("/matches", params={"game": GAME}), 200)["matches"]
        assert {m["id"] for m in listed} == {first, second} and not shows_bots(str(listed))
        for bot in (a, b):
            assert api.ok(api.get(f"/bots/{bot}/matches"), 200)["matches"] == []
            assert api.ok(api.get("/matches", params={"bot": bot}), 200)["matches"] == []
        in_play = api.ok(api.get(f"/games/{GAME}/rankings"), 200)["in_play"]
        assert [m["id"] for m in in_play] and not shows_bots(str(in_play))
        for path in (f"/matches/{first}", f"/matches/{second}", "/matches", "/"):
            page = requests.get(f"{api.live.url}{path}", timeout=30)
            assert page.status_code == 200 and not shows_bots(page.text), path
        for path in (f"/matches?bot={a}", f"/bots/{a}"):  # the bot's own lists do not hold it
            page = requests.get(f"{api.live.url}{path}", timeout=30).text
            assert first not in page and second not in page, path
        admin = api.ok(api.get(f"/matches/{first}", token=ADMIN_TOKEN), 200)
        assert [s["bot"] for s in admin["seats"]] == [a, b]

    check_hidden()
    finish(store, first, [1, 2])  # one rotation over: the deal is not
    check_hidden()
    finish(store, second, [2, 1])
    for mid, seats in ((first, [a, b]), (second, [b, a])):
        assert [s["bot"] for s in api.ok(api.get(f"/matches/{mid}"), 200)["seats"]] == seats
    assert {m["id"] for m in api.ok(api.get(f"/bots/{a}/matches"), 200)["matches"]} == {first, second}
    assert "farmer-bot-name" in requests.get(f"{api.live.url}/matches", timeout=30).text
