"""The ladder through the API: its deals private until every rotation is over, and the worker
pool playing it on its own (docs/api.md §6 "The ladder is the platform's")."""

from __future__ import annotations

import time

import pytest

import sdk
from tests.live import ADMIN_TOKEN, OUTPUT
from tests.worker.ladder_helpers import finish
from worker.matchmaker import Matchmaker

GAME = "duck-soup"


def house_bots(api, n: int) -> list[str]:
    return [api.ok(api.post("/bots", {"name": f"house{i}", "game": GAME, "kind": "python",
                                      "entrypoint": "tests.worker.bots:First"}, token=ADMIN_TOKEN), 201)["id"]
            for i in range(n)]


def test_a_ladder_deal_shows_nothing_until_its_every_rotation_is_over(api):
    house_bots(api, 2)
    (pairing,) = Matchmaker(api.store, per_game=1, game_names=[GAME]).cycle()[GAME]
    first, second = pairing["matches"]
    listed = {m["id"]: m for m in api.ok(api.get("/matches", params={"game": GAME}), 200)["matches"]}
    assert listed[first]["kind"] == "ladder" and listed[first]["rated"] is True
    finish(api.store, first, [1, 2])
    shown = api.ok(api.get(f"/matches/{first}"), 200)
    assert shown["status"] == "finished" and shown["public"] is False and shown["kind"] == "ladder"
    assert shown["result"] is None and shown["seed"] is None and shown["log"] is None and shown["decks"] is None
    assert api.get(f"/matches/{first}/steps/0").status_code == 409
    assert api.get(f"/matches/{first}/export").status_code == 409
    assert api.ok(api.get("/matches", params={"game": GAME}), 200)["matches"][-1]["result"] is None
    in_play = api.ok(api.get(f"/games/{GAME}/rankings"), 200)["in_play"]
    assert [(m["id"], m["rotation"], m["rotations"]) for m in in_play] == [(second, 2, 2)]
    finish(api.store, second, [2, 1])
    done = api.ok(api.get(f"/matches/{first}"), 200)
    assert done["public"] is True and done["seed"] == pairing["seed"]  # the deal is done: all of it shows
    rows = api.ok(api.get(f"/games/{GAME}/rankings"), 200)["rankings"]
    assert sorted(r["ladder_matches"] for r in rows) == [2, 2] and all(r["provisional"] for r in rows)


def test_the_ladder_flag_is_taken_shown_and_changed(api):
    token = api.account("author")
    on = api.bot(token, "on", GAME)
    off = api.bot(token, "off", GAME, ladder=False)
    assert on["ladder"] is True and off["ladder"] is False
    assert api.ok(api.get(f"/bots/{off['id']}"), 200)["ladder"] is False
    changed = api.ok(api.request("PATCH", f"/bots/{off['id']}", token=token, json={"ladder": True}), 200)
    assert changed["ladder"] is True
    assert api.request("PATCH", f"/bots/{on['id']}", token=api.account("other"),
                       json={"ladder": False}).status_code == 403
    client = sdk.Client(api.live.url, token=token)
    assert client.register_bot("sdk", GAME, kind="polling", ladder=False).ladder is False
    assert client.update_bot(on["id"], ladder=False).ladder is False and client.bot(on["id"]).ladder is False


@pytest.mark.slow
def test_the_ladder_plays_on_its_own(api, redis_url):
    from worker.pool import WorkerPool

    bots = house_bots(api, 3)
    OUTPUT.mkdir(exist_ok=True)
    with WorkerPool(redis_url, n=2, sweep_every_s=0.5, log_path=str(OUTPUT / "worker-ladder.log"),
                    grace_s=5.0, ladder_matches=2):
        deadline = time.monotonic() + 120
        rows: list = []
        while time.monotonic() < deadline:
            rows = sdk.Client(api.live.url).rankings(GAME)
            if len(rows) == 3 and all(r.ladder_matches >= 2 for r in rows):
                break
            time.sleep(0.2)
        assert {r.bot for r in rows} == set(bots) and all(r.ladder_matches >= 2 for r in rows), rows
    matches = api.ok(api.get("/matches", params={"game": GAME}), 200)["matches"]
    assert matches and all(m["kind"] == "ladder" and m["rated"] for m in matches)  # nobody scheduled any


def test_the_ladder_page_shows_matches_in_play_provisional_bots_and_each_bots_history(api):
    bots = house_bots(api, 4)
    made = Matchmaker(api.store, per_game=2, game_names=[GAME]).cycle()[GAME]
    done, playing = made
    for mid, ranks in zip(done["matches"], ([1, 2], [2, 1]), strict=True):
        finish(api.store, mid, ranks)
    earlier = [f"m_earlier_{r}" for r in range(2)]  # an earlier rated deal of the same two bots
    for r, mid in enumerate(earlier):
        api.store.create_match(GAME, done["bots"][r:] + done["bots"][:r], seed=1, options={}, rated=True,
                               match_id=mid, twins=earlier, kind="ladder")
    for mid in earlier:
        finish(api.store, mid, [1, 2])
    page = api.session.get(f"{api.live.url}/", timeout=10).text
    board = page.split(f'id="game-{GAME}"')[1].split("</section>")[0]
    assert board.count('class="badge provisional"') == 2  # the two rated bots, both still provisional
    assert board.count('<svg class="spark"') == 2  # their ladder history (two rated deals each)
    assert f'data-match="{playing["matches"][0]}"' in board and "rotation 1/2" in board  # live: in play now
    bot_page = api.session.get(f"{api.live.url}/bots/{done['bots'][0]}", timeout=10).text
    assert 'id="ladder"' in bot_page and "yes: paired against bots of similar strength" in bot_page
    assert 'id="ladder-matches">2<' in bot_page and ">ladder <span class=\"rated\">(rated)</span>" in bot_page
    api.store.update_bot(bots[0], ladder=False)
    assert "no: off the ladder" in api.session.get(f"{api.live.url}/bots/{bots[0]}", timeout=10).text
