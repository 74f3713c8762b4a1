"""A person plays whole matches in a real browser, on the real platform (docs/api.md §6).

The live API (`cardarena serve`) and the real worker pool referee every match; the person is
Chromium, signed in with an account token through the sign-in page, choosing the game
and the example heuristic on /play, then clicking one of the legal actions the table
offers (`[data-action]`) until the table says `data-status="finished"`. Every game is
played to its end this way; a screenshot of each game's table mid-decision, when asked for
(`CARDARENA_SCREENS`, tests/web/conftest.py), is play-<game>.png. One match is played with
the keyboard alone on a phone-sized window.
"""

from __future__ import annotations

import json
import random

import pytest

import games
from tests.waiting import wait_until
from tests.web.conftest import screenshot

HEURISTICS = {
    "duck-soup": "example_bots.duck_soup:DuckSoupHeuristic",
    "double": "example_bots.double:DoubleHeuristic",
    "double-carre": "example_bots.double_carre:DoubleCarreHeuristic",
    "soupe-gertrude": "example_bots.soupe_gertrude:SoupeGertrudeHeuristic",
}
#: small matches: one deal of duck soup (deal_only, the one option that may change a match
#: seating another account's bot: it only shortens it); DOUBLE on its standard rounds; three
#: seats at Soupe & Gertrude
OPTIONS = {"duck-soup": {"opt-deal_only": True}}
SEATS = {"soupe-gertrude": 3}
#: the decision whose table is kept as the game's screenshot
SHOT_AT = {"duck-soup": 3, "double": 2, "double-carre": 2, "soupe-gertrude": 1}


def setup_person(api, page, game: str, name: str = "ann") -> list[str]:
    """The example heuristic (and, for a third seat, the random bot) registered by the admin;
    an account signed in through the page. The opponents' ids."""
    bots = [api.bot(api.admin_token, "heuristic", game=game, kind="python", entrypoint=HEURISTICS[game])["id"]]
    for k in range(SEATS.get(game, 2) - 2):
        bots.append(api.bot(api.admin_token, f"random{k}", game=game, kind="python",
                            entrypoint="example_bots.random:RandomBot")["id"])
    token = api.account(name)
    page.goto(f"{api.live.url}/play?game={game}&bots={','.join(bots)}")
    page.click("#signin-first a")
    page.fill("#token", token)
    page.click("#signin-button")
    page.wait_for_selector("#play-form")  # back on the form, signed in
    assert page.inner_text("#signed-in") == name
    return bots


def start_match(page, game: str) -> str:
    for field, value in OPTIONS.get(game, {}).items():
        if value is True:
            page.check(f'input[name="{field}"]')
        else:
            page.fill(f'input[name="{field}"]', value)
    page.click("[data-start]")
    page.wait_for_selector("#table[data-match]")
    return page.get_attribute("#table", "data-match")


def wait_for_turn_or_end(page, timeout_ms: int = 60_000) -> str:
    """'turn' once the person has legal actions to click, 'finished' at the end."""
    page.wait_for_function(
        """() => { const t = document.querySelector('#table');
                   return t && (t.dataset.status === 'finished' || t.dataset.status === 'aborted'
                                || t.querySelectorAll('[data-action]').length > 0); }""", timeout=timeout_ms)
    status = page.get_attribute("#table", "data-status")
    return status if status in ("finished", "aborted") else "turn"


def wait_moved(page, turns: str, api=None, mid: str | None = None) -> None:
    try:
        page.wait_for_function(
            """t => { const e = document.querySelector('#table');
                      return e && (e.dataset.turns !== t || e.dataset.status === 'finished'); }""", arg=turns,
            timeout=60_000)
    except Exception as e:  # what the page and the referee had at the timeout, to tell why
        seen = page.evaluate("""() => { const a = document.activeElement;
            return {turns: document.querySelector('#table').dataset.turns,
                    prompt: (document.querySelector('#prompt') || {}).textContent,
                    said: (document.querySelector('#play-message') || {}).textContent,
                    focused: a ? a.outerHTML.slice(0, 300) : null,
                    actions: Array.from(document.querySelectorAll('#table [data-action]')).map(x => x.outerHTML.slice(0, 200)),
                    trace: (window.__trace || []).slice(-40)}; }""")
        store = {}
        if api is not None and mid:
            match = api.store.get_match(mid)
            store = {"status": match["status"], "log": len(api.store.match_log(mid)),
                     "pending": [(d["match_id"], d["turn"]) for d in api.store.pending_decisions(match["seats"][int(
                         page.get_attribute("#table", "data-seat"))])]}
        raise AssertionError(f"the table did not move from turn {turns}: page {seen}; referee {store}") from e


#: what the page fetched and which keys reached it, kept in `window.__trace` for a failure's message
TRACE = """(() => {
  const trace = window.__trace = [];
  const t0 = Date.now();
  const fetch0 = window.fetch;
  window.fetch = function (url, opts) {
    const method = (opts && opts.method) || 'GET';
    return fetch0.apply(this, arguments).then(r => {
      r.clone().json().then(b => trace.push({ms: Date.now() - t0, method, url: String(url).slice(-40), status: r.status,
        turns: b.turns, decision: b.decision ? b.decision.turn : (b.error ? b.error.code : null)})).catch(() => {});
      return r;
    });
  };
  window.addEventListener('keydown', e => {
    const t = document.querySelector('#table');
    trace.push({ms: Date.now() - t0, key: e.key, target: e.target.tagName, turns: t && t.dataset.turns,
                myTurn: !!(t && t.classList.contains('my-turn')), actions: document.querySelectorAll('#table [data-action]').length});
  }, true);
})()"""


def offered(page) -> list[dict]:
    """Every action the table offers: each clickable element's, and every number of a number
    field's range (the button beside it plays the one chosen)."""
    shown = page.eval_on_selector_all("#table [data-action]:not([data-range])", "es => es.map(e => e.dataset.action)")
    ranges = page.eval_on_selector_all("#actions input[data-key]", "es => es.map(e => [e.dataset.key, +e.min, +e.max])")
    return [json.loads(a) for a in shown] + [{key: n} for key, low, high in ranges for n in range(low, high + 1)]


def click_action(page, action) -> None:
    """Click an offered action; one shown only once its cards are picked (a list taller than the
    window) is reached as a person reaches it: its cards picked on the table first."""
    if not action.is_visible():
        chosen = json.loads(action.get_attribute("data-action"))
        for card in [c for v in chosen.values() for c in (v if isinstance(v, list) else [v]) if isinstance(c, str)]:
            page.locator(f'#board .selectable[data-card="{card}"]:not(.selected)').first.click()
    action.click()


def check_actions_are_the_referees(page, api, mid: str) -> list[dict]:
    """Every action offered is one the referee lists, each exactly once."""
    actions = offered(page)
    seat = int(page.get_attribute("#table", "data-seat"))
    pending = api.store.pending_decisions(api.store.get_match(mid)["seats"][seat])
    legal = next(d["legal_actions"] for d in pending if d["match_id"] == mid)
    assert sorted(map(json.dumps, actions)) == sorted(map(json.dumps, legal))
    return actions


@pytest.mark.slow
@pytest.mark.parametrize("game", games.names())
def test_a_person_plays_a_whole_match_by_clicking(api, worker_pool, page, game):
    setup_person(api, page, game)
    screenshot(page, f"play-form-{game}")
    mid = start_match(page, game)
    rng = random.Random(7)
    decisions, bid_shot = 0, False
    while wait_for_turn_or_end(page) == "turn":
        decisions += 1
        check_actions_are_the_referees(page, api, mid)
        if decisions == SHOT_AT[game]:
            screenshot(page, f"play-{game}")
            assert page.locator("#countdown").inner_text()  # the person's clock, counting down
        if not bid_shot and page.locator("#actions .action-group.range").count():  # a long run of bids
            bid_shot = True
            screenshot(page, f"play-{game}-bids")
        turns = page.get_attribute("#table", "data-turns")
        options = page.locator("#table [data-action]")
        click_action(page, options.nth(rng.randrange(options.count())))
        wait_moved(page, turns)
    assert page.get_attribute("#table", "data-status") == "finished"
    match = api.store.get_match(mid)
    assert match["status"] == "finished" and match["rated"] is False and decisions >= 1
    log = api.store.match_log(mid)
    seat = int(page.get_attribute("#table", "data-seat"))
    assert sum(1 for e in log if e["seat"] == seat) >= decisions and not any(e.get("fault") for e in log)
    assert page.locator("#verdict").count() == 1 and page.locator("#board .result").count() == 1
    screenshot(page, f"play-{game}-over")
    # after the match: the replay, and the same deal again with the seats rotated
    assert page.get_attribute("#replay-link", "href") == f"/matches/{mid}"
    with page.expect_navigation(url=lambda url: "/play/" in url and mid not in url, timeout=30_000):
        page.click("[data-again]")
    page.wait_for_selector("#table[data-match]")
    again = api.store.get_match(page.get_attribute("#table", "data-match"))
    assert again["id"] != mid and again["seed"] == match["seed"]
    assert again["seats"] == match["seats"][1:] + match["seats"][:1]
    assert page.dialogs == []


@pytest.mark.slow
def test_a_person_plays_with_the_keyboard_on_a_phone(api, worker_pool, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    context.add_init_script(TRACE)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.dialogs = []
    try:
        game = "duck-soup"
        setup_person(api, page, game, "pat")
        mid = start_match(page, game)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 400, f"the table is {width} px wide on a 390 px phone"
        decisions = 0
        while wait_for_turn_or_end(page) == "turn":
            decisions += 1
            actions = check_actions_are_the_referees(page, api, mid)
            if decisions == 2:
                screenshot(page, f"play-{game}-phone")
            turns = page.get_attribute("#table", "data-turns")
            seat = page.get_attribute("#table", "data-seat")
            hand = page.locator(f'#board .seat[data-seat="{seat}"] .hand [data-card]')
            playable = [i for i in range(min(9, hand.count()))
                        if "playable" in (hand.nth(i).get_attribute("class") or "").split()]
            if playable:  # a card of the hand by its number
                page.keyboard.press(str(playable[-1] + 1))
            else:  # the arrows to the last action, then Enter
                for _ in range(len(actions) - 1):
                    page.keyboard.press("ArrowRight")
                page.keyboard.press("Enter")
            wait_moved(page, turns, api, mid)
        assert page.get_attribute("#table", "data-status") == "finished"
        assert not any(e.get("fault") for e in api.store.match_log(mid))
        screenshot(page, f"play-{game}-phone-over")
    finally:
        context.close()


def pick(rng: random.Random, legal: list[dict]) -> dict:
    """A seeded choice that keeps a match going long enough to ask every kind: low bids, some
    passes, special cards played when they may be."""
    bids = [a for a in legal if isinstance(a.get("bid"), int) and len(a) == 1]
    passes = [a for a in legal if a.get("pass") is True]
    if bids:
        if passes and rng.random() < 0.4:
            return passes[0]
        want = min(a["bid"] for a in bids) + rng.choice([0, 0, 1, 2])
        return next((a for a in bids if a["bid"] == want), min(bids, key=lambda a: a["bid"]))
    specials = [a for a in legal if "souris" in a or "gertrude" in a]
    if specials and rng.random() < 0.7:
        return rng.choice(specials)
    return rng.choice(legal)


def decision_states(game: str, tries: int = 300) -> dict[str, tuple[int, int, dict, list[dict]]]:
    """For each decision kind of `game`: (seats, seed, options, the actions before it) of a seeded
    match where seat 0 is asked that kind (a variant's options when only it asks it)."""
    g = games.get(game)
    found = {}
    for decision in g.decisions:
        options = dict(decision.options)
        for seed in range(tries):
            seats = max(g.min_seats, min(g.max_seats, 2 + seed % 3))
            state, rng, log = g.new(seats, seed, options), random.Random(seed), []
            while not state.is_over and len(log) < 2000:
                if state.to_act == 0 and state.view(0).get("pending") == decision.kind:
                    found[decision.kind] = (seats, seed, options, log)
                    break
                action = pick(rng, state.legal_actions())
                log.append(action)
                state.apply(action)
            if decision.kind in found:
                break
    return found


@pytest.mark.slow
@pytest.mark.parametrize("game", games.names())
def test_every_decision_kind_is_offered_to_click(api, page, game):
    """Every decision kind the rules page lists, each legal action exactly one clickable element;
    clicking one plays it. The decisions are published as the match runner publishes them."""
    from server.web.people import PERSON_CLOCK

    s = api.store
    bots = [api.bot(api.admin_token, f"r{k}", game=game, kind="python",
                    entrypoint="example_bots.random:RandomBot")["id"] for k in range(2)]
    token = api.account("kim")
    account = s.account_for_token(token)
    person, _ = s.create_bot(account["id"], "kim (person)", game, "polling", accepts="owner", person=True)
    s.claim_person_seat(account["id"], game, person["id"])
    page.goto(f"{api.live.url}/signin?next=/account")
    page.fill("#token", token)
    page.click("#signin-button")
    page.wait_for_selector("#signed-in")
    states = decision_states(game)
    picked: dict[str, int] = {}
    assert sorted(states) == sorted(d.kind for d in games.get(game).decisions)
    for kind, (seats, seed, options, actions) in states.items():
        seat_bots = [person["id"], *(bots[i % 2] for i in range(seats - 1))]
        match = s.create_match(game, seat_bots, seed, options, rated=False, owner=account["id"],
                               seat_clocks=[PERSON_CLOCK] + [None] * (seats - 1))
        mid = match["id"]
        s.set_match_status(mid, "running")
        state = games.get(game).new(seats, seed, options)
        for turn, action in enumerate(actions):
            assert s.append_entry(mid, {"turn": turn, "seat": state.to_act, "action": action})
            state.apply(action)
        legal = state.legal_actions()
        s.await_answer(mid, {"type": "turn", "protocol": 1, "match_id": mid, "game": game, "turn": len(actions),
                             "seat": 0, "view": state.view(0), "legal_actions": legal, "deadline_ms": 60_000,
                             "clock": {"move_ms": 60_000, "bank_ms": 300_000}, "last_latency_ms": None},
                       {"id": person["id"], "kind": "polling"})
        page.goto(f"{api.live.url}/play/{mid}")
        page.wait_for_selector("#table [data-action]")
        assert sorted(offered(page), key=json.dumps) == sorted(legal, key=json.dumps), kind
        screenshot(page, f"play-{game}-{kind}")
        choice = page.locator("#table [data-action]").last
        chosen = json.loads(choice.get_attribute("data-action"))
        cards = [c for v in chosen.values() for c in (v if isinstance(v, list) else [v]) if isinstance(c, str)]
        pickable = [c for c in cards if page.locator(f'#board .selectable[data-card="{c}"]').count()]
        if choice.evaluate("e => e.tagName") == "BUTTON" and cards and pickable == cards:
            for card in cards:  # as a person would: pick its cards on the table, then Enter
                page.locator(f'#board .selectable[data-card="{card}"]:not(.selected)').first.click()
            left = page.eval_on_selector_all("#actions [data-action]:not(.filtered)", "es => es.map(e => e.dataset.action)")
            assert chosen in [json.loads(a) for a in left], kind
            if len(left) == 1:
                page.keyboard.press("Enter")
            else:
                choice.click()
            picked[kind] = len(left)
        else:
            choice.click()
        # sent, and accepted (the person's next turn, if it is theirs again, is published at once)
        wait_until(lambda mid=mid, n=len(actions): s.log_length(mid) > n, 30, "the click's entry")
        assert s.match_log(mid)[len(actions)]["action"] == chosen and "fault" not in s.match_log(mid)[len(actions)]
    if game == "double-carre":  # the pairs to take or discard, picked card by card
        assert picked == {"take": 1, "discard": 1}
    assert page.dialogs == []
