"""The pages in a real browser: Playwright driving Debian's Chromium.

Each test saves a screenshot of the page it checked in test-output/web/.
Matches here are built through the store; the tournament tests in
test_browser_tournaments.py run on the real worker pool.
"""

from __future__ import annotations

from tests.web.helpers import SCRIPT_NAME, finished_match, make_bot, state_at


def hands_in(page) -> dict[int, list[str]]:
    """Each seat's cards as the viewer shows them now."""
    return page.eval_on_selector_all(
        ".board .hand",
        "els => Object.fromEntries(els.map(h => [h.dataset.seat,"
        " [...h.querySelectorAll('.card')].map(c => c.dataset.card)]))")


def at_step(page, k: int) -> None:
    page.wait_for_selector(f'#board .board[data-step="{k}"]')


def expected(store, mid: str, k: int) -> dict[str, list[str]]:
    state = state_at(store, mid, k)
    return {str(seat): list(state.view(seat)["hand"]) for seat in range(state.seats)}


def test_replay_viewer_steps_through_a_finished_duck_soup_match(live_server, store, page, shot):
    a, b = make_bot(store, "ann", "duck-soup"), make_bot(store, "bob", "duck-soup")
    mid = finished_match(store, "duck-soup", [a, b], seed=11, rng_seed=3, fault_turns=(2,))
    turns = store.log_length(mid)
    page.goto(f"{live_server.url}/matches/{mid}")
    at_step(page, 0)
    assert hands_in(page) == expected(store, mid, 0)

    for k in range(1, 8):  # forward with the keyboard, one step at a time
        page.keyboard.press("ArrowRight")
        at_step(page, k)
        assert hands_in(page) == expected(store, mid, k), f"step {k}"
    assert "fault" in page.inner_text("#log li.fault")  # turn 2 was a referee default
    shot(page, "replay-duck-soup-step-7")

    page.keyboard.press("ArrowLeft")
    at_step(page, 6)
    assert hands_in(page) == expected(store, mid, 6)
    page.click("#next")  # the buttons step too
    at_step(page, 7)
    page.click("#prev")
    at_step(page, 6)

    page.keyboard.press("End")
    at_step(page, turns)
    assert hands_in(page) == expected(store, mid, turns)
    assert page.inner_text(".to-act") == "Match over."

    called = next(e for e in store.match_log(mid) if "call" in e["action"])
    page.click(f'#log li[data-turn="{called["turn"]}"] a')  # jump from the log
    at_step(page, called["turn"] + 1)
    assert hands_in(page) == expected(store, mid, called["turn"] + 1)
    assert page.inner_text("#last-action .call") == called["action"]["call"] + "!"
    assert page.url.endswith(f"?step={called['turn'] + 1}")
    shot(page, "replay-duck-soup-call")


def test_a_bot_named_script_is_shown_as_text_and_runs_nothing(live_server, store, page, shot):
    evil, bob = make_bot(store, SCRIPT_NAME, "duck-soup"), make_bot(store, "bob", "duck-soup")
    mid = finished_match(store, "duck-soup", [evil, bob], seed=2, options={"deal_only": True})
    store.save_rating("duck-soup", evil, 27.0, 6.0, mid)
    store.save_rating("duck-soup", bob, 23.0, 6.0, mid)

    page.goto(live_server.url + "/")
    row = page.locator(f'tr[data-bot="{evil}"] a.bot')
    assert row.inner_text() == SCRIPT_NAME
    shot(page, "leaderboard-script-name")

    page.goto(f"{live_server.url}/bots/{evil}")
    assert page.inner_text("h1.botname") == SCRIPT_NAME
    shot(page, "bot-script-name")

    page.goto(f"{live_server.url}/matches/{mid}")
    assert page.inner_text('.hand[data-seat="0"] h3').startswith(f"seat 0 · {SCRIPT_NAME}")
    page.keyboard.press("ArrowRight")
    at_step(page, 1)
    shot(page, "match-script-name")

    assert page.dialogs == []
    assert page.evaluate("document.querySelectorAll('script').length") == 1  # only web.js
