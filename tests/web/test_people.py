"""People at the table, through Flask's test client (docs/api.md §6 "People at the table"):
signing a page in (the cookie, CSRF, signing out), choosing and starting a match, the
person's decisions answered along the referee's own path, "play again", the account page.

The browser tests (test_browser_people.py) play whole matches by clicking; these check the
rules around them without a browser or a worker: decisions are published as the match
runner publishes them (tests/server/driving.py).
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest

import games
from core.store.people import session_key
from server.api.common import GUEST_MATCHES
from server.auth import SESSION_COOKIE
from server.web.people import PERSON_CLOCK
from tests.server.driving import publish_next
from tests.web.helpers import SCRIPT_NAME

GAME = "duck-soup"


@pytest.fixture()
def account(store):
    record, token = store.create_account("ann")
    return {**record, "token": token}


@pytest.fixture()
def opponents(store, account):
    """Bots a person may choose: one of another account that accepts everyone (with a script
    for a name), one of theirs that accepts its owner only, and one of the person's own."""
    other, _ = store.create_account("other")
    everyone, _ = store.create_bot(other["id"], SCRIPT_NAME, GAME, "polling")
    private, _ = store.create_bot(other["id"], "private", GAME, "polling", accepts="owner")
    own, _ = store.create_bot(account["id"], "mine", GAME, "polling", accepts="owner")
    return {"everyone": everyone["id"], "private": private["id"], "own": own["id"]}


def sign_in(client, token: str):
    return client.post("/sessions", json={"token": token})


def csrf_of(client) -> str:
    body = client.get("/play").get_data(as_text=True)
    return re.search(r'<meta name="csrf-token" content="([^"]+)">', body)[1]


def start(client, bot: str, csrf: str, **fields):
    form = {"game": GAME, "seats": "2", "seat": "0", "opponent": bot, "csrf": csrf, "opt-deal_only": "on", **fields}
    return client.post("/play", data=form)


# -- signing in ------------------------------------------------------------------------

def test_signing_in_sets_an_httponly_strict_signed_expiring_cookie(client, account):
    response = sign_in(client, account["token"])
    assert response.status_code == 201
    assert response.get_json()["account"] == {"id": account["id"], "name": "ann"}
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(SESSION_COOKIE + "=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Max-Age=604800" in cookie
    value = cookie.split(";")[0].split("=", 1)[1]
    assert account["token"] not in cookie and "." in value  # signed: the id and its signature
    page = client.get("/").get_data(as_text=True)
    assert 'id="signed-in"' in page and ">ann<" in page and 'name="csrf-token"' in page


def test_a_form_signs_in_and_goes_on_to_a_path_of_this_site_only(client, account):
    response = client.post("/sessions", data={"token": account["token"], "next": "/play?game=double"})
    assert response.status_code == 303 and response.headers["Location"] == "/play?game=double"
    client.delete_cookie(SESSION_COOKIE)
    response = client.post("/sessions", data={"token": account["token"], "next": "//evil.example/x"})
    assert response.headers["Location"] == "/play"


@pytest.mark.parametrize("target", [
    "/\t/evil.example/", "/\n/evil.example/", "/\r\n/evil.example/", "/ /evil.example/", "/\x00/evil.example/",
    "/\\evil.example/", "/\\/evil.example/", "//evil.example/", "///evil.example/", "https://evil.example/",
    "javascript:alert(1)", "evil.example", "/play\nSet-Cookie: x=1", "/\u2028/evil.example/", "/" + "a" * 3000,
])
def test_a_next_that_is_not_a_same_site_path_goes_to_play_and_never_answers_500(client, account, target):
    """The issue: `next=/\t/evil.example/` came back as `Location: //evil.example/` (browsers drop the
    tab), and a `next` holding a newline answered 500 after creating a session."""
    response = client.post("/sessions", data={"token": account["token"], "next": target})
    assert response.status_code == 303 and response.headers["Location"] == "/play"
    page = client.get(f"/signin?next={quote(target)}").get_data(as_text=True)
    assert 'name="next" value="/play"' in page


def test_a_wrong_token_or_another_sites_page_cannot_sign_in(client, account):
    assert sign_in(client, "cat_nope").status_code == 401
    assert client.post("/sessions", json={}).status_code == 400
    foreign = client.post("/sessions", json={"token": account["token"]},
                          headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403 and "Set-Cookie" not in foreign.headers
    assert 'id="sign-in"' in client.get("/").get_data(as_text=True)


def test_a_forged_or_altered_cookie_signs_nobody_in(client, store, account):
    session_id, _ = store.create_session(account["id"])
    client.set_cookie(SESSION_COOKIE, session_id)  # the bare id, unsigned
    assert 'id="sign-in"' in client.get("/").get_data(as_text=True)
    sign_in(client, account["token"])
    value = client.get_cookie(SESSION_COOKIE).value
    client.set_cookie(SESSION_COOKIE, value[:-2] + ("AA" if not value.endswith("AA") else "BB"))
    assert 'id="sign-in"' in client.get("/").get_data(as_text=True)


def test_signing_out_takes_the_csrf_token_and_ends_the_session_in_the_store(client, store, account):
    sign_in(client, account["token"])
    cookie = client.get_cookie(SESSION_COOKIE).value
    assert client.delete("/sessions").status_code == 403  # no CSRF token
    csrf = csrf_of(client)
    assert client.delete("/sessions", headers={"X-CSRF-Token": "wrong"}).status_code == 403
    assert client.delete("/sessions", headers={"X-CSRF-Token": csrf}).status_code == 204
    client.set_cookie(SESSION_COOKIE, cookie)  # the old cookie, kept by a thief: dead
    assert 'id="sign-in"' in client.get("/").get_data(as_text=True)
    assert not [k for k in store.r.keys("session:*")]


def test_the_sign_out_form_works_without_a_script(client, account):
    sign_in(client, account["token"])
    csrf = csrf_of(client)
    response = client.post("/signout", data={"csrf": csrf})
    assert response.status_code == 303
    assert 'id="sign-in"' in client.get("/").get_data(as_text=True)


def test_a_session_expires_with_its_key(client, store, account):
    sign_in(client, account["token"])
    keys = store.r.keys("session:*")
    assert len(keys) == 1 and 0 < store.r.ttl(keys[0]) <= 7 * 24 * 3600
    assert keys[0].decode().startswith("session:") and len(keys[0]) == len(session_key("x"))


def test_the_api_never_takes_the_page_cookie(client, account, opponents):
    """A cookie a browser sends by itself is no credential of the API: only bearer tokens are."""
    sign_in(client, account["token"])
    response = client.post("/api/v1/matches", json={"game": GAME, "bots": [opponents["own"], opponents["own"]]})
    assert response.status_code == 401


def test_sign_in_is_rate_limited_per_address(redis_url):
    from server import create_app
    from tests.live import reset_db

    reset_db(redis_url)
    app = create_app({"REDIS_URL": redis_url, "SESSIONS_RATE_LIMIT": "3 per minute", "TESTING": True})
    client = app.test_client()
    codes = [client.post("/sessions", json={"token": f"cat_guess{i}"}).status_code for i in range(5)]
    assert codes == [401, 401, 401, 429, 429]


# -- choosing and starting -----------------------------------------------------------------

def test_the_play_form_lists_bots_that_accept_everyone_and_ones_own(client, account, opponents):
    anonymous = client.get(f"/play?game={GAME}").get_data(as_text=True)
    assert 'id="signin-first"' in anonymous and "data-start disabled" in anonymous
    sign_in(client, account["token"])
    page = client.get(f"/play?game={GAME}").get_data(as_text=True)
    assert opponents["everyone"] in page and opponents["own"] in page and opponents["private"] not in page
    assert SCRIPT_NAME not in page and "&lt;script&gt;" in page
    assert "data-start" in page and "data-start disabled" not in page
    chosen = client.get(f"/play?game={GAME}&bots={opponents['own']}").get_data(as_text=True)
    assert f'<option value="{opponents["own"]}" selected>' in chosen
    for kind in ("lead", "follow", "answer-coin", "answer-coin-coin"):  # what the person will decide
        assert f"<b>{kind}</b>" in page


def test_starting_takes_a_session_and_its_csrf_token(client, account, opponents):
    assert start(client, opponents["everyone"], "x").status_code == 401
    sign_in(client, account["token"])
    assert start(client, opponents["everyone"], "wrong").status_code == 403
    assert start(client, opponents["everyone"], csrf_of(client),
                 ).status_code == 303


def test_a_persons_match_is_unrated_on_a_persons_clock_against_bots_on_the_standard(client, store, account,
                                                                                   opponents):
    sign_in(client, account["token"])
    response = start(client, opponents["everyone"], csrf_of(client), seat="1")
    mid = response.headers["Location"].rsplit("/", 1)[1]
    match = store.get_match(mid)
    person = store.get_bot(match["seats"][1])
    assert match["seats"][0] == opponents["everyone"] and person["person"] is True
    assert person["owner"] == account["id"] and person["accepts"] == "owner" and person["kind"] == "polling"
    assert match["rated"] is False and match["options"] == {"deal_only": True}
    assert match["seat_clocks"] == [None, PERSON_CLOCK]
    assert (match["move_timeout_ms"], match["time_bank_ms"]) == (2000, 10000)
    record = client.get(f"/api/v1/matches/{mid}").get_json()
    assert record["seat_clocks"] == [None, PERSON_CLOCK] and record["rated"] is False
    # the same person seat for the next match of the game
    again = start(client, opponents["own"], csrf_of(client))
    assert store.get_match(again.headers["Location"].rsplit("/", 1)[1])["seats"][0] == person["id"]


def test_another_accounts_private_bot_or_a_person_seat_cannot_be_chosen(client, store, account, opponents):
    sign_in(client, account["token"])
    refused = start(client, opponents["private"], csrf_of(client))
    assert refused.status_code == 422 and "accepts matches from its owner only" in refused.get_data(as_text=True)
    bad = start(client, opponents["everyone"], csrf_of(client), **{"opt-target": "-5"})
    assert bad.status_code == 422 and "target" in bad.get_data(as_text=True)
    assert 'value="-5"' in bad.get_data(as_text=True)  # the form keeps what was given


# -- at the table ----------------------------------------------------------------------------

@pytest.fixture()
def table(client, store, account, opponents):
    """A started match with the person in seat 0, signed in; (match id, csrf)."""
    sign_in(client, account["token"])
    csrf = csrf_of(client)
    mid = start(client, opponents["everyone"], csrf).headers["Location"].rsplit("/", 1)[1]
    store.set_match_status(mid, "running")
    return mid, csrf


def to_person(store, mid: str) -> dict:
    """Play the bot's turns (first legal actions) until the person is to act; publish it."""
    match = store.get_match(mid)
    state = store.replay(mid)
    while match["seats"][state.to_act] != match["seats"][0]:
        action = state.legal_actions()[0]
        assert store.append_entry(mid, {"turn": store.log_length(mid), "seat": state.to_act, "action": action})
        state.apply(action)
    decision, _ = publish_next(store, mid)
    return decision


def test_the_table_shows_the_persons_hand_and_nobody_elses(client, store, table):
    mid, _ = table
    to_person(store, mid)
    body = client.get(f"/play/{mid}").get_data(as_text=True)
    assert f'data-match="{mid}"' in body and 'data-status="running"' in body
    state = store.replay(mid)
    mine = [str(c) for c in state.view(0)["hand"]]
    theirs = {str(c) for c in state.view(1)["hand"]}
    shown = set(re.findall(r'data-card="([^"]+)"', body))
    assert set(mine) <= shown and not shown & theirs
    data = json.loads(re.search(r'<script type="application/json" id="page-data">(.*?)</script>', body, re.S)[1])
    assert data["seat"] == 0 and data["decision"]["legal_actions"] == state.legal_actions()
    assert SCRIPT_NAME not in body  # the bot's name, escaped


def test_the_state_of_the_table_is_the_persons_own(client, store, table, account):
    mid, _ = table
    decision = to_person(store, mid)
    state = client.get(f"/play/{mid}/state", headers={"Accept": "application/json"}).get_json()
    assert state["decision"]["turn"] == decision["turn"] and state["to_act"] == 0
    assert state["decision"]["legal_actions"] == decision["legal_actions"]
    assert 0 < state["decision"]["left_ms"] <= decision["deadline_ms"]
    assert state["table"]["seats"][0]["hand"] and state["table"]["seats"][1]["hand"] is None
    client.delete_cookie(SESSION_COOKIE)
    refused = client.get(f"/play/{mid}/state", headers={"Accept": "application/json"})
    assert refused.status_code == 401 and refused.get_json()["error"]["code"] == "unauthorized"


def test_the_persons_answer_is_judged_by_the_referee(client, store, table):
    mid, csrf = table
    decision = to_person(store, mid)
    turn, action = decision["turn"], decision["legal_actions"][-1]
    url = f"/play/{mid}/turns/{turn}"
    json_headers = {"Accept": "application/json"}
    assert client.post(url, json={"action": action}, headers=json_headers).status_code == 403  # no CSRF
    played = client.post(url, json={"action": action}, headers={**json_headers, "X-CSRF-Token": csrf})
    assert played.status_code == 200 and played.get_json()["action"] == action
    assert store.match_log(mid)[turn]["action"] == action and "ms" in store.match_log(mid)[turn]
    late = client.post(url, json={"action": action}, headers={**json_headers, "X-CSRF-Token": csrf})
    assert late.status_code == 409 and "not yours to play now" in late.get_json()["error"]["message"]

    decision = to_person(store, mid)
    bad = client.post(f"/play/{mid}/turns/{decision['turn']}", json={"action": {"play": "ZZ"}},
                      headers={**json_headers, "X-CSRF-Token": csrf})
    assert bad.status_code == 422
    assert "the referee played" in bad.get_json()["error"]["message"]
    assert store.match_log(mid)[decision["turn"]]["fault"].startswith("illegal")


def test_someone_else_has_no_seat_at_the_persons_table(client, store, table, opponents):
    mid, _ = table
    other, token = store.create_account("eve")
    client.delete_cookie(SESSION_COOKIE)
    sign_in(client, token)
    assert client.get(f"/play/{mid}").status_code == 403
    assert client.get(f"/play/{mid}/state", headers={"Accept": "application/json"}).status_code == 403


def test_after_the_match_play_again_deals_the_same_cards_with_the_seats_rotated(client, store, table, account):
    from tests.server.driving import finish

    mid, csrf = table
    finish(store, mid)
    body = client.get(f"/play/{mid}").get_data(as_text=True)
    assert 'data-status="finished"' in body and 'id="replay-link"' in body and "data-again" in body
    assert 'id="verdict"' in body
    response = client.post(f"/play/{mid}/again", data={"csrf": csrf})
    assert response.status_code == 303
    new = store.get_match(response.headers["Location"].rsplit("/", 1)[1])
    old = store.get_match(mid)
    assert new["seed"] == old["seed"] and new["options"] == old["options"]
    assert new["seats"] == old["seats"][1:] + old["seats"][:1]
    assert new["seat_clocks"] == [None, PERSON_CLOCK] and new["rated"] is False
    first = games.get(GAME).new(2, old["seed"], old["options"]).view(1)["hand"]
    assert games.get(GAME).new(2, new["seed"], new["options"]).view(1)["hand"] == first  # the same deal
    account_page = client.get("/account").get_data(as_text=True)
    assert mid in account_page and new["id"] in account_page


def test_play_again_never_replays_a_deal_another_rotation_is_still_playing(client, store, table, account,
                                                                          opponents):
    """The issue: "play again" on a finished rotation of a running tournament made a public match
    with that deal's seed and decks while the other rotation was still being played."""
    from core.store.keys import new_id
    from tests.server.driving import finish

    _, csrf = table
    person = store.person_seat(account["id"], GAME)
    bot = opponents["everyone"]
    ids = [new_id("m"), new_id("m")]
    for mid, seats in zip(ids, ([person, bot], [bot, person]), strict=True):
        store.create_match(GAME, seats, 77, {"deal_only": True}, match_id=mid, twins=ids)
    store.set_match_status(ids[0], "running")
    finish(store, ids[0])
    store.set_match_status(ids[1], "running")
    table_page = client.get(f"/play/{ids[0]}").get_data(as_text=True)
    assert 'id="deal-in-play"' in table_page and "data-again" not in table_page
    refused = client.post(f"/play/{ids[0]}/again", data={"csrf": csrf}, headers={"Accept": "application/json"})
    assert refused.status_code == 409 and refused.get_json()["error"]["code"] == "deal_in_play"
    assert sorted(store.bot_match_page(person, 100)[0]) == sorted([*ids, table[0]])  # nothing was made
    finish(store, ids[1])
    assert "data-again" in client.get(f"/play/{ids[0]}").get_data(as_text=True)
    assert client.post(f"/play/{ids[0]}/again", data={"csrf": csrf}).status_code == 303


def test_the_match_page_leads_the_person_to_their_seat(client, store, table):
    mid, _ = table
    assert 'id="your-seat"' in client.get(f"/matches/{mid}").get_data(as_text=True)
    client.delete_cookie(SESSION_COOKIE)
    assert 'id="your-seat"' not in client.get(f"/matches/{mid}").get_data(as_text=True)


def test_the_match_page_shows_a_bots_debug_output_to_its_owner_only(client, store, account, opponents):
    from tests.web.helpers import finished_match

    mid = finished_match(store, GAME, [opponents["own"], opponents["everyone"]], seed=3)
    store.note_debug(mid, [(0, 0, "<b>my own</b> thoughts"), (1, 1, "theirs, not mine")])
    assert "thoughts" not in client.get(f"/matches/{mid}").get_data(as_text=True)
    sign_in(client, account["token"])
    body = client.get(f"/matches/{mid}").get_data(as_text=True)
    assert "&lt;b&gt;my own&lt;/b&gt; thoughts" in body and "theirs, not mine" not in body


@pytest.mark.parametrize("game", games.names())
def test_a_seats_table_shows_its_own_hand_and_no_other(game):
    import random

    from games.table import check
    from server.match_table import seat_table_of, table_of
    from server.web.seating import regions

    g = games.get(game)
    seats = min(g.max_seats, 3)
    state, rng = g.new(seats, 5, {}), random.Random(5)
    for _ in range(6):
        if state.is_over:
            break
        state.apply(rng.choice(state.legal_actions()))
    for me in range(seats):
        table = seat_table_of(game, seats, state.view(None), None, me, state.view(me))
        check({k: table[k] for k in ("facts", "seats", "centre", "last")}, seats)
        assert table["seats"][me]["hand"] == [str(c) for c in state.view(me)["hand"]]
        assert all(s["hand"] is None for s in table["seats"] if s["seat"] != me)
        spectator = table_of(game, seats, state.view(None))
        assert {k: v for k, v in table["faces"].items() if k in spectator["faces"]} == spectator["faces"]
        drawn = regions(seats, me)
        assert drawn["bottom"][-1] == me or me in drawn["bottom"]
        assert sorted(i for r in drawn.values() for i in r) == list(range(seats))


@pytest.mark.parametrize("game", games.names())
def test_the_form_says_the_decisions_in_words_and_the_option_values_plainly(client, game):
    body = client.get(f"/play?game={game}").get_data(as_text=True)
    decisions = body.split("What you will decide")[1].split("</fieldset>")[0]
    for decision in games.get(game).decisions:
        assert decision.words.replace("'", "&#39;") in decisions
    assert "{" not in decisions and "&#34;" not in decisions  # no JSON, no quoted names
    defaults = re.findall(r'<small class="hint">default ([^<]*)</small>', body)
    assert len(defaults) == len(games.get(game).options) and not any('&#34;' in d for d in defaults)
    if game == "duck-soup":
        assert defaults[0] == "fr" and 'value="fr"' in body


# -- another owner's bot: bounded as a challenger is (the attack: four /play matches answered at 57 s
# of the 60 s move clock held the bot's slots as long as the person liked) ----------------------

def test_a_person_has_at_most_a_few_unfinished_matches_with_another_owners_bot(client, account, opponents,
                                                                             store):
    sign_in(client, account["token"])
    csrf = csrf_of(client)
    bot = opponents["everyone"]
    for _ in range(GUEST_MATCHES):
        assert start(client, bot, csrf).status_code == 303
    refused = start(client, bot, csrf)
    assert refused.status_code == 429 and "unfinished matches with bot" in refused.get_data(as_text=True)
    assert start(client, opponents["own"], csrf).status_code == 303  # its own bot: no such bound
    assert len(store.bot_match_page(bot, 10)[0]) == GUEST_MATCHES


def test_a_person_plays_another_owners_bot_on_the_standard_options(client, account, opponents, store):
    sign_in(client, account["token"])
    refused = start(client, opponents["everyone"], csrf_of(client), **{"opt-target": "10000", "opt-deal_only": ""})
    assert refused.status_code == 422 and "standard" in refused.get_data(as_text=True)
    assert store.bot_match_page(opponents["everyone"], 10)[0] == []


def test_the_form_says_which_options_another_accounts_bot_is_played_on(client):
    duck = client.get("/play?game=duck-soup").get_data(as_text=True)
    double = client.get("/play?game=double").get_data(as_text=True)
    said = re.search(r'<p class="hint" id="options-standard">([^<]*)</p>', duck)[1]
    assert said == ("Against another account's bot the options stay the standard ones, but for deal_only "
                    "(it only shortens the match); against your own bots, any.")
    assert "deal_only" not in re.search(r'<p class="hint" id="options-standard">([^<]*)</p>', double)[1]
