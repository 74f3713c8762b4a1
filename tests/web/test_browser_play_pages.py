"""/play as a person sees it, for every game, on a phone and on a desktop.

For each game: the form (/play?game=…) and the table at each kind of the person's decisions
(published by hand, as the match runner publishes it), in a phone-sized and a
desktop-sized window. Neither shows raw JSON, and no list of choices is longer than
the window. Screenshots, when asked for (`CARDARENA_SCREENS`, tests/web/conftest.py), are
named <game>-<viewport>.png (the table at the decision with the most choices),
<game>-<viewport>-<decision>.png (the others) and <game>-<viewport>-form.png.
"""

from __future__ import annotations

import json
import re

import pytest

import games
from tests.web.conftest import screenshot
from tests.web.test_browser_people import decision_states

VIEWPORTS = {
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
    "desktop": {"viewport": {"width": 1200, "height": 900}},
}
#: the decision each game's table is shown at: the one with the most choices
SHOWN = {"duck-soup": "follow", "double": "bid", "double-carre": "discard", "soupe-gertrude": "bid"}
#: JSON as a reader would spot it: an object's key, or a quoted word standing alone
RAW_JSON = re.compile(r'\{\s*"|"\s*:\s*|(?:^|\s)"[\w-]+"(?:\s|$)')


def person_at_decision(api, game: str, kind: str, account: dict, person: dict, bots: list[str],
                       states: dict | None = None) -> str:
    """A match of `game` where the person (seat 0) is asked `kind` now (`states`: what
    `decision_states(game)` found): its id."""
    from server.web.people import PERSON_CLOCK

    s = api.store
    seats, seed, options, actions = (states or decision_states(game))[kind]
    match = s.create_match(game, [person["id"], *(bots[i % 2] for i in range(seats - 1))], seed, options,
                           rated=False, owner=account["id"], seat_clocks=[PERSON_CLOCK] + [None] * (seats - 1))
    mid = match["id"]
    s.set_match_status(mid, "running")
    state = games.get(game).new(seats, seed, options)
    for turn, action in enumerate(actions):
        assert s.append_entry(mid, {"turn": turn, "seat": state.to_act, "action": action})
        state.apply(action)
    s.await_answer(mid, {"type": "turn", "protocol": 1, "match_id": mid, "game": game, "turn": len(actions),
                         "seat": 0, "view": state.view(0), "legal_actions": state.legal_actions(),
                         "deadline_ms": 60_000, "clock": {"move_ms": 60_000, "bank_ms": 300_000},
                         "last_latency_ms": None},
                   {"id": person["id"], "kind": "polling"})
    return mid


def publish(api, mid: str, person: dict) -> list[dict]:
    """The person's decision at the match's log as it stands, as the match runner publishes it:
    its legal actions."""
    s = api.store
    match = s.get_match(mid)
    state = s.replay(mid)
    legal = state.legal_actions()
    s.await_answer(mid, {"type": "turn", "protocol": 1, "match_id": mid, "game": match["game"],
                         "turn": s.log_length(mid), "seat": state.to_act, "view": state.view(state.to_act),
                         "legal_actions": legal, "deadline_ms": 360_000,
                         "clock": {"move_ms": 60_000, "bank_ms": 300_000}, "last_latency_ms": None},
                   {"id": person["id"], "kind": "polling"})
    return legal


def shown_text(page, selector: str) -> str:
    return page.inner_text(selector)


def longest_list(page) -> dict:
    """The tallest list of choices on the page (a group of actions, a select's open list is
    the browser's own): its height against the window's."""
    return page.evaluate("""() => {
        let tallest = {height: 0, scrolls: false, what: null};
        document.querySelectorAll('#actions, #actions .action-group, fieldset ul, ol.clocks').forEach(e => {
            const h = e.scrollHeight;
            if (h > tallest.height) tallest = {height: h, scrolls: e.scrollHeight > e.clientHeight + 1,
                                               what: e.className || e.id || e.tagName};
        });
        return {...tallest, window: window.innerHeight};
    }""")


def signed_in_page(api, browser, viewport: str, token: str):
    context = browser.new_context(**VIEWPORTS[viewport])
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{api.live.url}/signin?next=/account")
    page.fill("#token", token)
    page.click("#signin-button")
    page.wait_for_selector("#signed-in")
    return context, page


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_the_opponents_are_sorted_by_the_number_they_show(api, browser, viewport):
    """The list says what it sorts by and shows it: the ordinal (μ − 3σ), not μ, which
    would put a bot with a high μ and a wide σ above a surer one."""
    s = api.store
    game = "double"
    bots = {name: api.bot(api.admin_token, name, game=game, kind="python",
                          entrypoint="example_bots.random:RandomBot")["id"] for name in ("bold", "sure", "new")}
    s.save_rating(game, bots["bold"], 30.0, 8.0)  # μ 30, ordinal 6
    s.save_rating(game, bots["sure"], 25.0, 2.0)  # μ 25, ordinal 19
    mid = s.create_match(game, [bots["bold"], bots["sure"]], 1, {})["id"]
    assert s.conclude_match(mid, "finished", {"scores": [0, 1]}, records=[
        {"bot": bots["bold"], "won": False, "faults": 0}, {"bot": bots["sure"], "won": True, "faults": 0}])
    context, page = signed_in_page(api, browser, viewport, api.account("kim"))
    try:
        page.goto(f"{api.live.url}/play?game={game}")
        shown = page.eval_on_selector_all("#opponent-0 option", "os => os.map(o => o.textContent)")
        assert shown == ["sure · ordinal 19.0", "bold · ordinal 6.0", "new"]
        assert "highest ordinal first" in page.inner_text("#opponents-order")
    finally:
        context.close()


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_the_header_the_prompt_the_hint_and_the_clock_line_agree(api, browser, viewport):
    """A person who acts first opens the table while the match is queued; it starts and asks
    them while the page waits for their decision: the header says running, the prompt their
    turn, the hint offers only what there is (their cards: no action below), and each seat
    has one clock line, in one format."""
    s, game = api.store, "duck-soup"
    bot = api.bot(api.admin_token, "r0", game=game, kind="python", entrypoint="example_bots.random:RandomBot")["id"]
    token = api.account("kim")
    account = s.account_for_token(token)
    person, _ = s.create_bot(account["id"], "kim (person)", game, "polling", accepts="owner", person=True)
    s.claim_person_seat(account["id"], game, person["id"])
    from server.web.people import PERSON_CLOCK

    mid = s.create_match(game, [person["id"], bot], 7, {}, rated=False, owner=account["id"],
                         seat_clocks=[PERSON_CLOCK, None])["id"]
    assert s.replay(mid).to_act == 0  # the person leads: the page waits for their decision
    context, page = signed_in_page(api, browser, viewport, token)
    try:
        with page.expect_request(lambda r: "/state?wait=" in r.url, timeout=10_000):  # it asks for its decision
            page.goto(f"{api.live.url}/play/{mid}")
            assert page.inner_text("#status") == "queued"
            assert page.inner_text("#prompt") == "Waiting for the match to start…"
        s.set_match_status(mid, "running")  # as the runner starts it: running, then the decision
        publish(api, mid, person)
        page.wait_for_selector("#table [data-action]")
        assert page.inner_text("#status") == "running"
        assert page.inner_text("#prompt").startswith("Your turn: ")
        panel = page.inner_text("#turn-panel")
        assert page.locator("#actions [data-action]").count() == 0 and "action below" not in panel
        assert "Click a card of your hand to play it." in panel
        assert page.inner_text("#keys") == "Keys: ← → choose · Enter play · 1–9 the n-th card of your hand."
        lines = page.eval_on_selector_all("#clocks li", "ls => ls.map(l => l.innerText.replace(/\\s+/g, ' ').trim())")
        assert re.fullmatch(r"kim \(person\) you [01]:\d\d to move · bank 5:00", lines[0]), lines
        assert lines[1] == "r0 2 s a move · bank 0:10", lines
    finally:
        context.close()


@pytest.mark.slow
@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
@pytest.mark.parametrize("game", games.names())
def test_play_shows_no_json_and_no_list_longer_than_the_window(api, browser, game, viewport):
    s = api.store
    bots = [api.bot(api.admin_token, f"r{k}", game=game, kind="python",
                    entrypoint="example_bots.random:RandomBot")["id"] for k in range(2)]
    token = api.account("kim")
    account = s.account_for_token(token)
    person, _ = s.create_bot(account["id"], "kim (person)", game, "polling", accepts="owner", person=True)
    s.claim_person_seat(account["id"], game, person["id"])
    states = decision_states(game)
    context, page = signed_in_page(api, browser, viewport, token)
    try:
        page.goto(f"{api.live.url}/play?game={game}")
        screenshot(page, f"{game}-{viewport}-form")
        form = shown_text(page, "#play-form")
        assert not RAW_JSON.search(form), RAW_JSON.search(form)
        wrong = {}
        for kind in sorted(states, key=lambda k: k != SHOWN[game]):  # the one shown first
            mid = person_at_decision(api, game, kind, account, person, bots, states)
            page.goto(f"{api.live.url}/play/{mid}")
            page.wait_for_selector("#table.my-turn")
            name = f"{game}-{viewport}" if kind == SHOWN[game] else f"{game}-{viewport}-{kind}"
            screenshot(page, name)
            table = shown_text(page, "#table")
            tallest = longest_list(page)
            width = page.evaluate("document.documentElement.scrollWidth")
            if RAW_JSON.search(table):
                wrong[kind] = f"raw JSON: {RAW_JSON.search(table)}"
            elif tallest["height"] > tallest["window"] or tallest["scrolls"]:
                wrong[kind] = f"a list longer than the window: {tallest}"
            elif width > VIEWPORTS[viewport]["viewport"]["width"]:
                wrong[kind] = f"the table is {width} px wide"
        assert wrong == {}
        icon = page.request.get(f"{api.live.url}/favicon.ico")
        assert icon.ok and icon.headers["content-type"].startswith("image/svg+xml")
    finally:
        context.close()


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_a_bid_is_a_number_field_marking_the_bids_the_hand_cannot_pay(api, browser, viewport):
    """Soupe & Gertrude's bids 0 to 156 are one number field with its legal range, not 157
    buttons; the bids above the hand's value (from the seat's own view) are marked before one
    is chosen, and the one chosen says so; Enter plays the number in the field."""
    s, game = api.store, "soupe-gertrude"
    bots = [api.bot(api.admin_token, f"r{k}", game=game, kind="python",
                    entrypoint="example_bots.random:RandomBot")["id"] for k in range(2)]
    token = api.account("kim")
    account = s.account_for_token(token)
    person, _ = s.create_bot(account["id"], "kim (person)", game, "polling", accepts="owner", person=True)
    s.claim_person_seat(account["id"], game, person["id"])
    mid = person_at_decision(api, game, "bid", account, person, bots)
    state = s.replay(mid)
    worth, legal = state.view(0)["hand_value"], state.legal_actions()
    bids = [a["bid"] for a in legal if "bid" in a]
    low, high = min(bids), max(bids)
    assert low <= worth < high  # some bids the hand can pay, some it cannot
    context, page = signed_in_page(api, browser, viewport, token)
    try:
        page.goto(f"{api.live.url}/play/{mid}")
        field = page.locator("#actions input[type=number][data-key=bid]")
        field.wait_for()
        assert (field.get_attribute("min"), field.get_attribute("max")) == (str(low), str(high))
        assert page.locator("#actions button").count() <= 4  # −, +, the bid, a pass
        passes = any("pass" in a for a in legal)
        assert page.inner_text("#keys") == "Keys: ← → choose · Enter play" + (" · P pass." if passes else ".")
        marks = page.inner_text("#actions .range-marks")
        assert marks == f"bid {worth + 1} to {high}: more than your hand is worth ({worth}): you cannot pay it, " \
                        "and are eliminated"
        play = page.locator("#actions [data-range]")
        field.fill(str(worth + 1))
        assert "caution" in play.get_attribute("class").split()
        assert "eliminated" in page.inner_text("#actions .range-note")
        page.click("#actions button[aria-label='bid one less']")
        assert field.input_value() == str(worth) and "caution" not in play.get_attribute("class").split()
        assert json.loads(play.get_attribute("data-action")) == {"bid": worth}
        field.fill(str(high + 1))
        assert play.is_disabled()
        field.fill(str(worth))
        field.press("Enter")
        page.wait_for_function("() => !document.querySelector('#table [data-action]')")
        played = s.match_log(mid)[-1]
        assert played["action"] == {"bid": worth} and "fault" not in played
        assert 0 not in s.replay(mid).view(None)["eliminated"]
    finally:
        context.close()


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_a_list_taller_than_the_window_shows_the_actions_of_the_cards_picked(api, browser, viewport):
    """Le double carré's discard is 45 pairs of cards: on a desktop they all show; on a phone
    (a list taller than the window) they show once a card is picked — the 9 pairs holding it,
    then the one pair of two picked cards, which Enter plays."""
    s, game = api.store, "double-carre"
    bots = [api.bot(api.admin_token, f"r{k}", game=game, kind="python",
                    entrypoint="example_bots.random:RandomBot")["id"] for k in range(2)]
    token = api.account("kim")
    account = s.account_for_token(token)
    person, _ = s.create_bot(account["id"], "kim (person)", game, "polling", accepts="owner", person=True)
    s.claim_person_seat(account["id"], game, person["id"])
    mid = person_at_decision(api, game, "discard", account, person, bots)
    legal = s.replay(mid).legal_actions()
    assert len(legal) == 45
    context, page = signed_in_page(api, browser, viewport, token)
    try:
        page.goto(f"{api.live.url}/play/{mid}")
        page.wait_for_selector("#table.my-turn")
        visible = page.locator("#actions [data-action]:visible")
        assert page.inner_text("#keys") == "Keys: ← → choose · Enter play · 1–9 the n-th card of your hand · " \
                                           "Esc unselect."
        assert page.locator("#actions [data-action]").count() == 45  # every action offered
        if viewport == "phone":
            assert visible.count() == 0
            assert page.inner_text("#play-message") == "Pick a card on the table: the actions holding it show below (45 in all)."
        else:
            assert visible.count() == 45 and page.locator("#selection").is_hidden()
        first, second = legal[-1]["discard"]
        page.locator(f'#board .selectable[data-card="{first}"]').first.click()
        assert visible.count() == sum(1 for a in legal if first in a["discard"])
        page.locator(f'#board .selectable[data-card="{second}"]:not(.selected)').first.click()
        assert visible.count() == 1
        assert json.loads(visible.first.get_attribute("data-action")) == legal[-1]
        page.keyboard.press("Enter")
        page.wait_for_function("() => !document.querySelector('#table [data-action]')")
        assert s.match_log(mid)[-1]["action"] == legal[-1]
        height = longest_list(page)
        assert height["height"] <= height["window"]
    finally:
        context.close()


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_an_answer_that_does_not_reach_the_server_can_be_sent_again(api, browser, viewport):
    """The actions are held while an answer is on its way; when it never arrives (the network
    dropped it), the page says so and gives them back: the person clicks again and plays."""
    s, game = api.store, "double"
    bots = [api.bot(api.admin_token, f"r{k}", game=game, kind="python",
                    entrypoint="example_bots.random:RandomBot")["id"] for k in range(2)]
    token = api.account("kim")
    account = s.account_for_token(token)
    person, _ = s.create_bot(account["id"], "kim (person)", game, "polling", accepts="owner", person=True)
    s.claim_person_seat(account["id"], game, person["id"])
    mid = person_at_decision(api, game, "bid", account, person, bots)
    context, page = signed_in_page(api, browser, viewport, token)
    try:
        page.goto(f"{api.live.url}/play/{mid}")
        button = page.locator("#actions button[data-action]").first
        chosen = json.loads(button.get_attribute("data-action"))
        page.route("**/turns/*", lambda route: route.abort())
        button.click()
        page.wait_for_selector("#play-message.error")
        assert "Could not reach the server" in page.inner_text("#play-message")
        assert button.is_enabled()
        page.unroute("**/turns/*")
        button.click()
        page.wait_for_function("() => !document.querySelector('#table [data-action]')")
        assert s.match_log(mid)[-1]["action"] == chosen
    finally:
        context.close()
