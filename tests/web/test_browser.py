"""The replay on its card table in a real browser: Playwright driving Debian's Chromium.

Matches here are built through the store (the live page on the real worker
pool is in test_browser_live.py). Each game's table is checked against the
engine at a few steps, and the board web.js draws when stepping must be the
very board the server draws for that step (same elements, classes, attributes
and text). Screenshots of each game's table go to test-output/web/.
"""

from __future__ import annotations

import pytest

from example_bots.double import DoubleHeuristic
from example_bots.double_carre import DoubleCarreHeuristic
from example_bots.duck_soup import DuckSoupHeuristic
from example_bots.soupe_gertrude import SoupeGertrudeHeuristic
from tests.web.conftest import screenshot
from tests.web.helpers import SCRIPT_NAME, finished_match, make_bot, state_at

#: a DOM subtree as [tag, sorted attributes, children], text runs trimmed: what both renderers must agree on
CANON = """el => {
  const canon = n => {
    const kids = []; let text = null;
    const flush = () => { if (text !== null) { const t = text.replace(/\\s+/g, ' ').trim(); if (t) kids.push(t); text = null; } };
    for (const c of n.childNodes) {
      if (c.nodeType === 3) { text = (text ?? '') + c.textContent; continue; }
      if (c.nodeType !== 1) continue;
      flush(); kids.push(canon(c));
    }
    flush();
    return [n.tagName.toLowerCase(), [...n.attributes].map(a => [a.name, a.value]).sort(), kids];
  };
  return canon(el);
}"""

#: game, seats, its heuristic (a match with real decisions to show), and the steps to look at
TABLES = [
    ("duck-soup", 2, DuckSoupHeuristic, (1, 2, 9)),
    ("double", 3, DoubleHeuristic, (3, 5, 14)),
    ("double-carre", 2, DoubleCarreHeuristic, (1, 2, 3)),
    ("soupe-gertrude", 3, SoupeGertrudeHeuristic, (2, 4, 9)),
]


def hands_in(page) -> dict[str, list[str]]:
    """Each seat's cards as the table shows them now."""
    return page.eval_on_selector_all(
        "#board .seat", "els => Object.fromEntries(els.map(s => [s.dataset.seat,"
        " [...s.querySelectorAll('.hand .card')].map(c => c.dataset.card)]))")


def at_step(page, k: int) -> None:
    page.wait_for_selector(f'#board .board[data-step="{k}"]')


def expected(store, mid: str, k: int) -> dict[str, list[str]]:
    state = state_at(store, mid, k)
    return {str(seat): [str(c) for c in state.view(seat)["hand"]] for seat in range(state.seats)}


@pytest.mark.slow
@pytest.mark.parametrize(("game", "seats", "heuristic", "steps"), TABLES, ids=[t[0] for t in TABLES])
def test_each_games_table_replays_and_the_script_draws_the_servers_board(live_server, store, page, game, seats,
                                                                          heuristic, steps):
    names = ["ann", "bob", "cy"][:seats]
    bots = [make_bot(store, name, game) for name in names]
    mid = finished_match(store, game, bots, seed=21, players=[heuristic() for _ in range(seats)])
    turns = store.log_length(mid)
    for k in (*steps, turns):
        k = min(k, turns)
        page.goto(f"{live_server.url}/matches/{mid}?step={k}")
        at_step(page, k)
        served = page.eval_on_selector("#board .board", CANON)
        assert hands_in(page) == expected(store, mid, k)
        screenshot(page, f"table-{game}-step-{k}" if k < turns else f"table-{game}-end", "#board")
        page.goto(f"{live_server.url}/matches/{mid}?step={k - 1}")
        at_step(page, k - 1)
        page.keyboard.press("ArrowRight")  # web.js fetches step k from the API and redraws
        at_step(page, k)
        assert page.eval_on_selector("#board .board", CANON) == served, f"step {k}: the script's board differs"
        entry = store.match_log(mid)[k - 1]
        assert page.get_attribute(f'#board .seat[data-seat="{entry["seat"]}"]', "class").endswith("last")
        assert page.inner_text("#board .last-action").startswith(f"Step {k}\n") or \
            page.inner_text("#board .last-action").startswith(f"Step {k} ")
        assert names[entry["seat"]] in page.inner_text("#board .last-action")
    result = store.get_match(mid)["result"]
    winners = [names[s] for s in range(seats) if result["ranks"][s] == 1]
    assert all(w in page.inner_text("#board .result .winner") for w in winners)
    assert page.dialogs == []


def test_replay_viewer_steps_with_keys_buttons_and_the_log(live_server, store, page, shot):
    a, b = make_bot(store, "ann", "duck-soup"), make_bot(store, "bob", "duck-soup")
    mid = finished_match(store, "duck-soup", [a, b], seed=11, rng_seed=3, fault_turns=(2,))
    turns = store.log_length(mid)
    page.goto(f"{live_server.url}/matches/{mid}")
    at_step(page, 0)
    assert hands_in(page) == expected(store, mid, 0)
    assert "nobody has played yet" in page.inner_text("#board .last-action")

    for k in range(1, 8):  # forward with the keyboard, one step at a time
        page.keyboard.press("ArrowRight")
        at_step(page, k)
        assert hands_in(page) == expected(store, mid, k), f"step {k}"
        assert page.inner_text("#step-no") == str(k)
    page.keyboard.press("Home")
    at_step(page, 0)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    at_step(page, 3)
    assert "fault: timeout" in page.inner_text("#board .last-action")  # turn 2 was a referee default
    assert "fault" in page.inner_text("#log li.fault")
    shot(page, "replay-duck-soup-fault")

    page.keyboard.press("ArrowLeft")
    at_step(page, 2)
    page.click("#next")  # the buttons step too
    at_step(page, 3)
    page.click("#prev")
    at_step(page, 2)

    page.keyboard.press("End")
    at_step(page, turns)
    assert hands_in(page) == expected(store, mid, turns)
    assert page.locator("#board .result").is_visible()

    called = next(e for e in store.match_log(mid) if "call" in e["action"])
    page.click(f'#log li[data-step="{called["turn"] + 1}"] a')  # jump from the log
    at_step(page, called["turn"] + 1)
    assert hands_in(page) == expected(store, mid, called["turn"] + 1)
    assert page.url.endswith(f"?step={called['turn'] + 1}")
    assert page.locator("#log li.current").get_attribute("data-step") == str(called["turn"] + 1)
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
    assert page.inner_text('#board .seat[data-seat="0"] .seat-head a.bot') == SCRIPT_NAME
    page.keyboard.press("ArrowRight")  # drawn by web.js now
    at_step(page, 1)
    assert page.inner_text('#board .seat[data-seat="0"] .seat-head a.bot') == SCRIPT_NAME
    assert SCRIPT_NAME in page.inner_text("#board .last-action")
    page.goto(f"{live_server.url}/matches")
    assert SCRIPT_NAME in page.inner_text("#match-list")
    shot(page, "match-script-name")

    assert page.dialogs == []
    assert page.evaluate("document.querySelectorAll('script:not([type=\"application/json\"])').length") == 1

