"""Watching a match live: the real worker pool plays it, the page follows its event stream.

Both seats are polling bots this test drives itself through the API, one
decision at a time, so the match is still running while the test reads the
stream (`GET /matches/{id}/events`, over real HTTP) and looks at the page
after each step. The page must redraw its table from the stream alone: no
reload, no polling request, no hidden card; at the end it turns into the
replay with the result. Screenshots of the live table go to test-output/web/.
"""

from __future__ import annotations

import random
import time

import pytest

import games
from tests.live import served_api
from tests.server.driving import make_bots, running_match, step
from tests.sse import EventStream
from tests.web.conftest import screenshot

GAME = "duck-soup"
SEED = 5
WATCHED = 6  # decisions answered one by one while the page and the stream are checked


def answer_next(api, secrets: dict[str, str], deadline_s: float = 30) -> dict:
    """Long-poll each bot until one has a decision; answer it (a call when one is legal:
    more to see on the table). Returns the decision and the action sent."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        for secret in secrets.values():
            turns = api.ok(api.get("/bots/me/turns", token=secret, params={"wait": 0.5}), 200)["turns"]
            if turns:
                decision = turns[0]
                legal = decision["legal_actions"]
                action = next((a for a in legal if "call" in a), legal[0])
                api.ok(api.post(f"/matches/{decision['match_id']}/turns/{decision['turn']}", {"action": action},
                                token=secret), 200)
                return {"decision": decision, "action": action}
    raise AssertionError("no decision came")


@pytest.mark.slow
def test_the_live_page_and_the_event_stream_follow_a_running_match(api, worker_pool, page):
    token = api.account("watcher")
    bots = [api.bot(token, name, game=GAME, kind="polling") for name in ("north", "south")]
    secrets = {b["id"]: b["secret"] for b in bots}
    names = {0: "north", 1: "south"}
    mid = api.match(token, GAME, [b["id"] for b in bots], seed=SEED, move_timeout_ms=10_000, max_faults=10)["id"]
    state = games.get(GAME).new(2, SEED, {})

    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(f"{api.live.url}/matches/{mid}")
    page.evaluate("window.sameDocument = true")
    assert page.locator("#live").count() == 1

    with EventStream(f"{api.base}/matches/{mid}/events") as stream:
        for k in range(WATCHED):
            sent = answer_next(api, secrets)
            seat = sent["decision"]["seat"]
            state.apply(sent["action"])
            event = stream.next(timeout=20)
            assert (event.name, event.id) == ("step", str(k))
            assert event.data["entry"] == {"turn": k, "seat": seat}  # no action while the match runs
            assert event.data["view"] == state.view(None) and event.data["to_act"] == state.to_act

            page.wait_for_selector(f'#board .board[data-step="{k + 1}"]')
            assert page.get_attribute(f'#board .seat[data-seat="{seat}"]', "class").endswith("last")
            played = str(sent["action"].get("play", ""))
            if played:
                assert page.locator(f'#board .centre [data-card="{played}"]').count() >= 1
            assert names[seat] in page.inner_text("#board .last-action")
            assert page.locator("#board .hand .card").count() == 0  # hands stay face down
            held = {str(c) for s in range(2) for c in state.view(s)["hand"]}
            shown = set(page.eval_on_selector_all("#board [data-card]", "cs => cs.map(c => c.dataset.card)"))
            assert not shown & held
            assert f"step {k + 1}" in page.inner_text("#live-status")
            if k + 1 in (1, 3, WATCHED):
                screenshot(page, f"live-{GAME}-step-{k + 1}")
        assert page.evaluate("window.sameDocument") is True  # redrawn in place, never reloaded
        fetched = [u for u in requests if "/web/static/" not in u]  # the page, then only its stream: no polling
        assert fetched == [f"{api.live.url}/matches/{mid}", f"{api.base}/matches/{mid}/events?after=-1"], fetched

        while not state.is_over:  # play it out; the stream sees the end
            sent = answer_next(api, secrets)
            state.apply(sent["action"])
        events = stream.until("over", timeout=30)
        assert [e.name for e in events[:-1]] == ["step"] * (len(events) - 1)
        over = events[-1].data
        assert over["status"] == "finished" and over["public"] is True
        assert over["result"]["ranks"] == state.result()["ranks"]

    page.wait_for_selector("#replay", timeout=30_000)  # the page reloaded into the replay
    winner = names[state.result()["ranks"].index(1)]
    page.keyboard.press("End")
    page.wait_for_selector("#board .result")
    assert winner in page.inner_text("#board .result .winner")
    screenshot(page, f"live-{GAME}-over")
    assert page.dialogs == []


@pytest.mark.slow
def test_a_live_page_refused_a_stream_tries_again_and_catches_up(store, page, redis_url):
    """A busy server refuses a stream (503): the browser's EventSource gives up on such an
    answer, so the page opens a new one a few seconds later, from the step it shows — here
    from the same server restarted with room for streams."""
    mid, state = running_match(store, make_bots(store), seed=SEED)
    rng = random.Random(1)
    step(store, mid, state, rng)
    with served_api(redis_url, {"CARDARENA_RATE_LIMITS": "off", "CARDARENA_EVENT_STREAMS": "0"},
                    name="no-streams") as server:  # every stream refused
        page.goto(f"{server.url}/matches/{mid}")
        page.wait_for_function(
            "() => document.getElementById('live-status').textContent.startsWith('Connection lost')")
        server.restart({"CARDARENA_EVENT_STREAMS": "16"})
        for _ in range(2):
            step(store, mid, state, rng)
        page.wait_for_selector('#board .board[data-step="3"]', timeout=20_000)
    assert page.locator("#board .seat.last").get_attribute("data-seat") == str(store.match_log(mid)[-1]["seat"])
