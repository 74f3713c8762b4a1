"""The pages through Flask's test client: no JavaScript, so this is what a
browser without scripts, a crawler or curl gets — plus 404s, escaping, the
no-peeking rule and the JSON twins the pages rely on."""

from __future__ import annotations

import html
import json
import re

import pytest

import games
from server.api.crosstable import wilson
from server.web.cards import face
from tests.games.builtin import builtin_names
from tests.live import ADMIN_TOKEN
from tests.web.helpers import SCRIPT_NAME, finished_match, make_bot, standings_of, state_at


def text(response) -> str:
    assert response.headers["Content-Type"].startswith("text/html")
    return response.get_data(as_text=True)


def hands_on(body: str) -> dict[int, list[str]]:
    """Each seat's cards on the drawn table."""
    out = {}
    for seat, block in re.findall(r'<div class="seat[^"]*" data-seat="(\d+)">.*?<div class="hand">(.*?)</div>',
                                  body, re.S):
        out[int(seat)] = re.findall(r'data-card="([^"]+)"', block)
    return dict(sorted(out.items()))


@pytest.fixture()
def duck(store):
    """A finished duck-soup challenge between a bot with a script for a name and 'bob'."""
    a, b = make_bot(store, SCRIPT_NAME, "duck-soup"), make_bot(store, "bob", "duck-soup")
    mid = finished_match(store, "duck-soup", [a, b], seed=11, rng_seed=3, fault_turns=(2,))
    return mid, a, b


# -- 404s and bad input -------------------------------------------------------

@pytest.mark.parametrize("path", ["/bots/b_nope", "/matches/m_nope", "/tournaments/t_nope", "/games/nope/rules",
                                  "/matches?game=nope", "/tournaments?game=nope"])
def test_unknown_ids_are_an_html_404_page(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert "404" in text(response) and "nope" in text(response)
    assert 'href="/matches"' in text(response)  # the navigation, and a way on


def test_a_step_past_the_log_is_404_and_a_step_that_is_not_a_number_is_400(client, store, duck):
    mid, _, _ = duck
    turns = store.log_length(mid)
    assert client.get(f"/api/v1/matches/{mid}/steps/{turns + 1}").status_code == 404
    assert client.get(f"/matches/{mid}?step=x").status_code == 400
    clamped = text(client.get(f"/matches/{mid}?step=99999"))
    assert f'data-step="{turns}"' in clamped


@pytest.mark.parametrize("path", ["/no/such/page", "/matches/m_1/nothing", "/web/static/nothing.css"])
def test_an_unknown_page_is_an_html_404_and_an_unknown_api_path_a_json_one(client, path):
    response = client.get(path)
    assert response.status_code == 404 and "404 · Not Found" in text(response)
    response = client.get("/api/v1" + path)
    assert response.status_code == 404 and response.get_json()["error"]["code"] == "not_found"


# -- escaping -------------------------------------------------------------------

def test_a_bot_named_like_a_script_is_escaped_on_every_page(client, store, duck):
    mid, a, b = duck
    tid = store.create_tournament("duck-soup", [a, b], seats=2, deals=1, duplicate=False, seed=1,
                                  options={})["id"]
    store.set_tournament(tid, status="running")
    store.save_rating("duck-soup", a, 26.0, 7.0, mid)
    for path in ["/", f"/bots/{a}", f"/bots/{b}", f"/matches/{mid}", f"/matches/{mid}?step=1",
                 f"/tournaments/{tid}", "/matches", "/tournaments", f"/matches?bot={a}"]:
        body = text(client.get(path))
        assert "<script>alert" not in body, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body or "\\u003cscript\\u003e" in body, path


def test_names_embedded_as_json_cannot_close_the_script_element(client, store):
    a = make_bot(store, "</script><script>alert(2)</script>", "double-carre")
    b = make_bot(store, "x", "double-carre")
    tid = store.create_tournament("double-carre", [a, b], seats=2, deals=1, duplicate=False, seed=1,
                                  options={})["id"]
    body = text(client.get(f"/tournaments/{tid}"))
    embedded = re.search(r'<script type="application/json" id="bot-names">(.*?)</script>', body, re.S).group(1)
    assert json.loads(embedded)[a] == "</script><script>alert(2)</script>"
    assert "<script>alert(2)" not in body


# -- static content without JavaScript ------------------------------------------------

def test_leaderboard_lists_each_game_and_its_rated_bots_without_javascript(client, store):
    a, b = make_bot(store, "alpha", "double"), make_bot(store, "beta", "double")
    store.save_rating("double", a, 30.0, 5.0)
    store.save_rating("double", b, 20.0, 4.0)
    mid = store.create_match("double", [a, b], 1, {}, rated=True)["id"]  # counted in the bots' records as it ends
    assert store.conclude_match(mid, "finished", {"scores": [1, 0]}, records=[
        {"bot": a, "won": True, "faults": 2}, {"bot": b, "won": False, "faults": 0}])
    body = text(client.get("/"))
    for game in games.names():
        assert f'id="game-{game}"' in body
    rows = re.findall(r'<tr data-bot="([^"]+)"(?: class="tied")?><td class="num rank">(\d+)', body)
    assert rows == [(a, "1"), (b, "2")]
    assert '<td class="num ordinal">15.00</td>' in body and '<td class="num ordinal">8.00</td>' in body
    assert "30.00 ± 15.00" in body and "20.00 ± 12.00" in body
    ladder = client.get("/api/v1/games/double/rankings").get_json()["rankings"]
    assert [(r["bot"], r["faults"], r["wins"]) for r in ladder] == [(a, 2, 1), (b, 0, 0)]


def test_bot_page_shows_record_recent_matches_and_an_svg_rating_chart(client, store, duck):
    mid, a, _ = duck
    store.save_rating("duck-soup", a, 27.0, 7.5, mid)
    store.save_rating("duck-soup", a, 29.0, 6.5, mid)
    body = text(client.get(f"/bots/{a}"))
    assert f'href="/matches/{mid}"' in body
    svg = re.search(r"<svg class=\"chart\".*?</svg>", body, re.S).group(0)
    assert svg.count("<circle") == 3  # the starting rating and two rated matches
    assert "<polygon" in svg and "<polyline" in svg
    twin = client.get(f"/api/v1/bots/{a}/ratings").get_json()
    assert [p["mu"] for p in twin["history"]] == [27.0, 29.0]
    recent = client.get(f"/api/v1/bots/{a}/matches").get_json()["matches"]
    assert [(m["id"], m["seat"], m["public"]) for m in recent] == [(mid, 0, True)]
    assert recent[0]["rank"] == store.get_match(mid)["result"]["ranks"][0]


def test_bot_page_shows_whom_the_bot_accepts_matches_from(client, store):
    bot = make_bot(store, "shy", "duck-soup")
    assert re.search(r'id="accepts"[^>]*>everyone, on the standard clock<', text(client.get(f"/bots/{bot}")))
    store.update_bot(bot, accepts="owner")
    assert re.search(r'id="accepts"[^>]*>its owner only<', text(client.get(f"/bots/{bot}")))


def test_replay_page_renders_step_k_hands_from_the_engine_without_javascript(client, store, duck):
    mid, _, _ = duck
    for k in (0, 5, store.log_length(mid)):
        body = text(client.get(f"/matches/{mid}?step={k}"))
        state = state_at(store, mid, k)
        assert hands_on(body) == {seat: state.view(seat)["hand"] for seat in (0, 1)}
        assert f'<b id="step-no">{k}</b>' in body
    assert "fault: timeout" in body  # the log lists the referee's default on turn 2


def test_replay_shows_calls_as_badges(client, store, duck):
    mid, _, _ = duck
    log = store.match_log(mid)
    called = next(e for e in log if "call" in e["action"])
    body = text(client.get(f"/matches/{mid}?step={called['turn'] + 1}"))
    last = re.search(r'<p class="last-action">(.*?)</p>', body, re.S).group(1)
    assert f'({called["action"]["call"].replace("-aux-canards", " aux canards")}!)' in last
    item = re.search(rf'<li data-step="{called["turn"] + 1}"[^>]*>(.*?)</li>', body, re.S).group(1)
    assert f'class="call call-{called["action"]["call"]}">{called["action"]["call"]}!' in item


def test_a_log_line_is_numbered_by_its_turn_as_the_apis_steps_are(client, store, duck):
    """Log line `t` is turn `t`: `GET /steps/t` holds the decision that line answered, and the
    line shows the table after it (step t + 1)."""
    mid, _, _ = duck
    body = text(client.get(f"/matches/{mid}"))
    for entry in store.match_log(mid)[:6]:
        t = entry["turn"]
        item = re.search(rf'<li data-step="{t + 1}"[^>]*>(.*?)</li>', body, re.S).group(1)
        assert re.search(rf'<span class="stepno"[^>]*>{t}</span>', item)
        step = client.get(f"/api/v1/matches/{mid}/steps/{t}").get_json()
        assert step["decision"]["turn"] == t and step["to_act"] == entry["seat"]


@pytest.mark.parametrize("game", builtin_names())
def test_every_game_replays_with_its_cards_drawn(client, store, game):
    seats = games.get(game).demo.seats
    bots = [make_bot(store, f"p{i}", game) for i in range(seats)]
    mid = finished_match(store, game, bots, seed=4)
    body = text(client.get(f"/matches/{mid}?step=6"))
    state = state_at(store, mid, 6)
    assert hands_on(body) == {s: [str(c) for c in state.view(s)["hand"]] for s in range(seats)}


def test_card_faces_follow_each_games_notation():
    assert face("duck-soup", "QH")["suit"] == "♥" and face("duck-soup", "QH")["colour"] == "red"
    assert face("double-carre", "10S")["colour"] == "black"
    double = face("double", "KS/4H")
    assert (double["high"]["suit"], double["low"]["suit"], double["low"]["colour"]) == ("♠", "♥", "red")
    assert face("double", "POPE/8H")["high"]["colour"] == "special"
    assert face("soupe-gertrude", "tomate")["family"] == "vegetable"
    assert face("soupe-gertrude", "oseille-3")["value"] == 3
    assert face("duck-soup", "coin") is None and face("soupe-gertrude", "QH") is None


# -- no peeking across duplicates ------------------------------------------------------

def test_a_finished_match_of_a_running_tournament_shows_no_hands(client, store):
    a, b = make_bot(store, "a", "duck-soup"), make_bot(store, "b", "duck-soup")
    tid = store.create_tournament("duck-soup", [a, b], seats=2, deals=1, duplicate=True, seed=5,
                                  options={})["id"]
    store.set_tournament(tid, status="running", total=2)
    mid = finished_match(store, "duck-soup", [a, b], seed=5, tournament=tid)
    body = text(client.get(f"/matches/{mid}"))
    assert 'id="hidden"' in body and "data-card" not in body
    assert client.get(f"/api/v1/matches/{mid}/steps/0").status_code == 409
    assert client.get(f"/api/v1/matches/{mid}/export").status_code == 409
    assert 'class="download"' not in body
    assert client.get(f"/api/v1/tournaments/{tid}/crosstable").status_code == 409
    admin = client.get(f"/api/v1/matches/{mid}/steps/0", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert admin.status_code == 200
    tpage = text(client.get(f"/tournaments/{tid}"))
    assert 'id="crosstable-pending"' in tpage
    # the bot page lists it, without a result
    recent = client.get(f"/api/v1/bots/{a}/matches").get_json()["matches"]
    assert recent[0]["result"] is None and recent[0]["rank"] is None


def test_a_running_match_shows_the_spectator_view_only(client, store):
    a, b = make_bot(store, "a", "duck-soup"), make_bot(store, "b", "duck-soup")
    mid = store.create_match("duck-soup", [a, b], 9, {})["id"]
    store.set_match_status(mid, "running")
    state = store.replay(mid)
    for turn in range(3):
        store.append_entry(mid, {"turn": turn, "seat": state.to_act, "action": state.legal_actions()[0]})
        state.apply(state.legal_actions()[0])
    body = text(client.get(f"/matches/{mid}"))
    assert 'id="live"' in body and 'id="replay"' not in body
    assert f'data-events="/api/v1/matches/{mid}/events"' in body
    assert 'data-step="3"' in body and hands_on(body) == {0: [], 1: []}  # face down: counts only
    held = set(state.view(0)["hand"]) | set(state.view(1)["hand"])
    shown = set(re.findall(r'data-card="([^"]+)"', body))
    assert shown and not shown & held  # only played (public) cards are drawn


# -- the tournament page and its crosstable -----------------------------------------------

def test_finished_tournament_page_has_standings_and_a_crosstable_with_intervals(client, store):
    bots = [make_bot(store, name, "duck-soup") for name in ("ann", "ben", "cat")]
    tid = store.create_tournament("duck-soup", bots, seats=2, deals=1, duplicate=False, seed=5,
                                  options={"deal_only": True})["id"]
    store.set_tournament(tid, status="running", total=3)
    mids = [finished_match(store, "duck-soup", pair, seed=i, options={"deal_only": True}, tournament=tid)
            for i, pair in enumerate([(bots[0], bots[1]), (bots[0], bots[2]), (bots[1], bots[2])])]
    assert store.tournament_progress(tid) == {"done": 3, "total": 3}  # each counted as it concluded
    store.save_standings(tid, standings_of(store, bots, mids))
    store.set_tournament(tid, status="finished")
    body = text(client.get(f"/tournaments/{tid}"))
    assert '<progress id="progress" value="3" max="3">' in body
    assert 'id="crosstable"' in body and body.count('class="self"') == 3
    twin = client.get(f"/api/v1/tournaments/{tid}/crosstable").get_json()
    assert twin["bots"] == [row["bot"] for row in store.standings(tid)]
    for row in twin["rows"]:
        for cell in row["cells"]:
            if cell is not None:
                assert cell["matches"] == 1
                assert (cell["low"], cell["high"]) == pytest.approx(wilson(cell["score"], 1))
                assert html.escape(f"n={cell['matches']}") in body


def standings_cells(body: str) -> list[list[str]]:
    """The standings table's rows as cell texts (tags stripped, entities decoded)."""
    tbody = re.search(r'<tbody id="standings">(.*?)</tbody>', body, re.S).group(1)
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
             for cell in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", tbody, re.S)]


def test_standings_show_mean_score_with_its_95_ci_and_faults_without_javascript(client, store):
    names = ("ann", "ben", "cat", "dan")
    bots = [make_bot(store, name, "double-carre") for name in names]
    tid = store.create_tournament("double-carre", bots, seats=2, deals=1, duplicate=True, seed=3,
                                  options={})["id"]
    store.set_tournament(tid, status="running", total=12)
    rows = [  # what core/conclusion.py saves: mean_score and ci95 may be null
        {"rank": 1, "bot": bots[0], "points": 5.5, "matches": 6, "wins": 5, "draws": 1, "mean_score": 12.3456,
         "ci95": 1.3802, "faults": 0, "forfeits": 0},
        {"rank": 2, "bot": bots[1], "points": 3, "matches": 6, "wins": 3, "draws": 0, "mean_score": -4.25,
         "ci95": 0.75, "faults": 4, "forfeits": 1},
        {"rank": 3, "bot": bots[2], "points": 1, "matches": 1, "wins": 1, "draws": 0, "mean_score": 7.0,
         "ci95": None, "faults": 0, "forfeits": 0},
        {"rank": 4, "bot": bots[3], "points": 0, "matches": 0, "wins": 0, "draws": 0, "mean_score": None,
         "ci95": None, "faults": 0, "forfeits": 0},
    ]
    store.save_standings(tid, rows)
    body = text(client.get(f"/tournaments/{tid}"))
    head = re.search(r'<table class="standings">\s*<thead>(.*?)</thead>', body, re.S).group(1)
    assert [html.unescape(re.sub(r"<[^>]+>", "", th)) for th in re.findall(r"<th[^>]*>.*?</th>", head)] == [
        "rank", "bot", "points", "matches", "wins", "mean score ± 95% CI", "faults"]
    assert standings_cells(body) == [
        ["1", "ann", "5.5", "6", "5", "12.3 ± 1.4", "0"],
        ["2", "ben", "3", "6", "3", "-4.2 ± 0.8", "4"],  # Python's '%.1f' (web.js rounds these ties alike)
        ["3", "cat", "1", "1", "1", "7.0", "0"],  # one match: a mean, no interval
        ["4", "dan", "0", "0", "0", "", "0"],  # no mean: blank
    ]
    assert '<span class="fault">4</span>' in body  # faults stand out, as on the match page
    twin = client.get(f"/api/v1/tournaments/{tid}").get_json()["standings"]
    assert [(r["mean_score"], r["ci95"], r["faults"]) for r in twin] == [
        (r["mean_score"], r["ci95"], r["faults"]) for r in rows]


def test_standings_saved_before_the_new_fields_still_render(client, store):
    a, b = make_bot(store, "ann", "duck-soup"), make_bot(store, "ben", "duck-soup")
    tid = store.create_tournament("duck-soup", [a, b], seats=2, deals=1, duplicate=False, seed=1,
                                  options={})["id"]
    store.save_standings(tid, [{"rank": 1, "bot": a, "points": 1, "matches": 1},
                               {"rank": 2, "bot": b, "points": 0, "matches": 1}])
    assert standings_cells(text(client.get(f"/tournaments/{tid}"))) == [
        ["1", "ann", "1", "1", "", "", ""], ["2", "ben", "0", "1", "", "", ""]]


def test_an_empty_standings_table_spans_every_column(client, store):
    a, b = make_bot(store, "ann", "duck-soup"), make_bot(store, "ben", "duck-soup")
    tid = store.create_tournament("duck-soup", [a, b], seats=2, deals=1, duplicate=False, seed=1,
                                  options={})["id"]
    body = text(client.get(f"/tournaments/{tid}"))
    assert '<tr class="empty"><td colspan="7">No match finished yet.</td></tr>' in body


def test_wilson_interval_stays_inside_0_1_and_narrows_with_more_matches():
    low1, high1 = wilson(1.0, 2)
    assert 0.3 < low1 < 0.4 and high1 == 1.0
    low2, high2 = wilson(0.5, 100)
    assert high2 - low2 < 0.2 and low2 < 0.5 < high2


def test_openapi_documents_the_new_twins(client):
    paths = client.get("/api/v1/openapi.json").get_json()["paths"]
    for path in ("/api/v1/bots/{bot_id}/matches", "/api/v1/bots/{bot_id}/ratings",
                 "/api/v1/tournaments/{tid}/crosstable", "/api/v1/matches/{match_id}/steps/{step}"):
        assert path in paths, path


# -- the lists and the honest ladder ------------------------------------------------------

def test_the_match_list_pages_newest_first_and_filters_without_javascript(client, store):
    ducks = [make_bot(store, name, "duck-soup") for name in ("ann", "ben", "cat")]
    mids = [store.create_match("duck-soup", [ducks[i % 3], ducks[(i + 1) % 3]], i, {})["id"] for i in range(30)]
    body = text(client.get("/matches"))
    listed = re.findall(r'<tr data-match="([^"]+)">', body)
    assert listed == mids[::-1][:25]
    older = html.unescape(re.search(r'<a class="btn" id="older" href="([^"]+)"', body).group(1))
    rest = re.findall(r'<tr data-match="([^"]+)">', text(client.get(older)))
    assert rest == mids[::-1][25:]
    of_cat = re.findall(r'<tr data-match="([^"]+)">', text(client.get(f"/matches?bot={ducks[2]}&game=duck-soup")))
    assert of_cat == [m for m in mids[::-1] if ducks[2] in store.get_match(m)["seats"]][:25]
    assert "No match matches these filters" in text(client.get("/matches?game=double"))
    assert client.get("/matches?cursor=x").status_code == 400


def test_the_leaderboard_marks_statistical_ties_and_shows_the_ordinal(client, store):
    a, b, c = (make_bot(store, name, "double") for name in ("alpha", "beta", "gamma"))
    store.save_rating("double", a, 40.0, 1.0)
    store.save_rating("double", b, 30.0, 3.0)  # 21..39 overlaps alpha's 37..43: tied
    store.save_rating("double", c, 10.0, 1.0)
    body = text(client.get("/"))
    ranks = re.findall(r'<tr data-bot="([^"]+)"(?: class="tied")?><td class="num rank">(\d+)(?: <span class="tie"'
                       r'[^>]*>≈ #(\d+)</span>)?', body)
    assert ranks == [(a, "1", ""), (b, "2", "1"), (c, "3", "")]
    assert "statistical tie" in body
    rankings = client.get("/api/v1/games/double/rankings").get_json()["rankings"]
    assert [r["tied_from"] for r in rankings] == [None, 1, None]


def test_the_favicon_is_an_svg_that_every_page_links(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
    assert icon.data.lstrip().startswith(b"<svg")
    page = client.get("/play").get_data(as_text=True)
    linked = page.split('<link rel="icon" href="')[1].split('"')[0]
    assert client.get(linked).mimetype == "image/svg+xml"
