"""Tournament pages in a real browser (Playwright on Debian's Chromium) while the
real worker pool plays: the leaderboard after a tournament, the tournament page
watched live as it runs, a bot page afterwards.

Bots are in-process (`kind: "python"`, registered with the admin token), the
tournaments are scheduled through the public API and the pages are checked
against their JSON twins. Each test can save a screenshot (`CARDARENA_SCREENS`, tests/web/conftest.py).

A tournament reads "finished" as soon as its last match is counted, a moment
before the worker has rated that match for the ladder (worker/jobs.py:
`match_concluded` finishes the tournament first), so the ladder and the
rating charts are checked once every match is rated (`wait_rated`).
"""

from __future__ import annotations

import json
import time

import pytest

from tests.live import ADMIN_TOKEN

GAME = "double-carre"
SLOW = "tests.worker.e2e_bots:Slower"  # 60 ms a decision: a tournament that lasts long enough to watch
RANDOM = "example_bots.random:RandomBot"
HEURISTIC = "example_bots.double_carre:DoubleCarreHeuristic"
ILLEGAL = "tests.worker.bots:Illegal"  # every answer illegal: faults, then a forfeit
WORK_MS = 120_000  # how long the page may wait on the workers (the page fixture's default is 10 s)


def python_bot(api, name: str, entrypoint: str) -> str:
    body = {"name": name, "game": GAME, "kind": "python", "entrypoint": entrypoint}
    return api.ok(api.post("/bots", body, token=ADMIN_TOKEN), 201)["id"]


def start_tournament(api, bots: list[str], **fields) -> str:
    """The admin's, on the standard clock: rated (an account's tournament is not: docs/api.md §6)."""
    body = {"game": GAME, "bots": bots, "format": "round-robin", **fields}
    return api.ok(api.post("/tournaments", body, token=ADMIN_TOKEN), 202)["id"]


def poll(what: str, check, timeout: float = 45.0, every: float = 0.05):
    """check() until it returns something truthy; fail saying `what` after `timeout` s."""
    end = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < end, f"gave up waiting for {what}"
        time.sleep(every)


def wait_finished(api, tid: str) -> dict:
    def finished():
        t = api.ok(api.get(f"/tournaments/{tid}"), 200)
        return t if t["status"] in ("finished", "aborted") else None

    return poll(f"tournament {tid} to finish", finished)


def wait_rated(api, bots: list[str]) -> None:
    """Until every bot's rating history has one point per deal it played (a duplicate deal of a
    two-seat game: two matches, rated once as a whole)."""
    def rated():
        return all(2 * len(api.ok(api.get(f"/bots/{b}/ratings"), 200)["history"])
                   == api.ok(api.get(f"/bots/{b}"), 200)["matches"] for b in bots)

    poll("every match to be rated", rated)


def cells(page, rows: str) -> list[list[str]]:
    """The text of each cell of the rows matching `rows`, as the browser shows it."""
    return page.eval_on_selector_all(
        rows, "trs => trs.map(tr => [...tr.cells].map(td => td.innerText.trim()))")


def rating_text(r: dict) -> str:
    return f"{r['mu']:.2f} ± {3 * r['sigma']:.2f}"  # macros.html's rating()


def mean_ci(row: dict) -> str:
    """tournament.html's mean_ci(): "12.3 ± 1.4", blank without a mean."""
    if row.get("mean_score") is None:
        return ""
    return f"{row['mean_score']:.1f}" + ("" if row.get("ci95") is None else f" ± {row['ci95']:.1f}")


def standings_text(rows: list[dict], names: dict[str, str]) -> list[list[str]]:
    return [[str(r["rank"]), names[r["bot"]], f"{r['points']:g}", str(r["matches"]), str(r["wins"]),
             mean_ci(r), str(r["faults"])] for r in rows]


def test_leaderboard_lists_the_bots_in_ladder_order_after_a_tournament(api, worker_pool, page, shot):
    names = {python_bot(api, name, entry): name for name, entry in
             [("heuristic", HEURISTIC), ("random", RANDOM), ("illegal", ILLEGAL)]}
    tid = start_tournament(api, list(names), deals=2)
    assert wait_finished(api, tid)["status"] == "finished"
    wait_rated(api, list(names))
    ladder = api.ok(api.get(f"/games/{GAME}/rankings"), 200)["rankings"]
    assert {r["bot"] for r in ladder} == set(names)

    page.goto(api.live.url + "/")
    board = f"#game-{GAME} table.ladder tbody tr"
    assert page.eval_on_selector_all(board, "trs => trs.map(tr => tr.dataset.bot)") == [r["bot"] for r in ladder]
    assert cells(page, board) == [
        [str(r["rank"]) + (f" ≈ #{r['tied_from']}" if r["tied_from"] else ""),
         names[r["bot"]] + (" provisional" if r["provisional"] else ""),
         f"{r['rating']['ordinal']:.2f}", rating_text(r["rating"]), "", "", str(r["ladder_matches"]),
         str(r["matches"]), str(r["wins"]), f"{r['other_matches']} ({r['other_wins']} won)",
         str(r["faults"])] for r in ladder]
    assert page.locator(f"{board} svg.interval").count() == len(ladder)
    assert "statistical tie" in page.inner_text("#tie-note")
    assert all(r["ladder_matches"] == 0 for r in ladder)  # rated by the admin's tournament, not the ladder
    links = page.eval_on_selector_all(f"{board} a.bot", "as => as.map(a => [a.textContent, a.getAttribute('href')])")
    assert links == [[names[r["bot"]], f"/bots/{r['bot']}"] for r in ladder]
    ordinals = [r["rating"]["ordinal"] for r in ladder]
    assert ordinals == sorted(ordinals, reverse=True)  # ladder order: μ − 3σ, best first
    assert all(r["matches"] == 8 for r in ladder)  # 2 opponents × 2 deals × 2 seat rotations
    illegal = next(r for r in ladder if names[r["bot"]] == "illegal")
    assert illegal["faults"] >= 8 and illegal["wins"] == 0  # a fault is counted and shown
    for other in ("heuristic", "random"):  # no other game's board lists them
        assert page.locator(f"section.board:not(#game-{GAME}) a.bot", has_text=other).count() == 0
    shot(page, "tournament-leaderboard")

    page.click(f'{board} a.bot >> text="{names[ladder[0]["bot"]]}"')  # a name leads to its bot page
    page.wait_for_url(f"**/bots/{ladder[0]['bot']}")
    assert page.inner_text("h1.botname") == names[ladder[0]["bot"]]


@pytest.mark.slow
def test_tournament_page_follows_a_running_tournament_until_its_crosstable(api, worker_pool, page, shot):
    names = {python_bot(api, name, entry): name for name, entry in
             [("slow-a", SLOW), ("slow-b", SLOW), ("random", RANDOM), ("illegal", ILLEGAL)]}
    tid = start_tournament(api, list(names), deals=4)  # 6 tables × 4 deals × 2 rotations, a few s
    total = 48
    page.goto(f"{api.live.url}/tournaments/{tid}")
    page.evaluate("window.sameDocument = true")  # gone if the page is reloaded
    reloads = []
    page.on("framenavigated", lambda frame: reloads.append(frame.url) if frame == page.main_frame else None)
    assert page.get_attribute("#tournament", "data-status") in ("queued", "running")

    def progress() -> dict:
        return page.evaluate("""() => ({done: +document.getElementById('done').textContent,
            total: +document.getElementById('total').textContent, status: document.getElementById('status').textContent,
            value: document.getElementById('progress').value, max: document.getElementById('progress').max,
            same: window.sameDocument === true})""")

    # the count moves without a reload: once past 0, then again (predicates are functions:
    # the page's CSP forbids eval, which Playwright uses for a bare expression)
    page.wait_for_function("() => +document.getElementById('done').textContent > 0 && window.sameDocument",
                           timeout=WORK_MS)
    first = progress()
    assert first["status"] == "running" and first["total"] == total and first["same"]
    assert first["value"] == first["done"] and first["max"] == total
    shot(page, "tournament-running")
    page.wait_for_function(f"() => +document.getElementById('done').textContent > {first['done']}"
                           " && window.sameDocument", timeout=WORK_MS)
    second = progress()
    assert second["same"] and second["value"] == second["done"] > first["done"]
    assert reloads == []

    # the standings fill in live, the new columns included
    page.wait_for_function("() => document.querySelectorAll('#standings tr:not(.empty)').length === 4"
                           " && window.sameDocument", timeout=WORK_MS)
    live = cells(page, "#standings tr")
    assert sorted(row[1] for row in live) == sorted(names.values())
    assert all(len(row) == 7 for row in live)
    by_name = {row[1]: row for row in live}
    assert by_name["illegal"][6] != "0"  # its faults, already
    assert by_name["slow-a"][5] == "" or "." in by_name["slow-a"][5]  # a mean score as soon as it has one
    running = progress()
    assert running["same"] and running["status"] in ("running", "finished")
    shot(page, "tournament-standings-live")

    # the page turns to "finished" and reloads itself: the crosstable is published
    page.wait_for_selector("#crosstable", timeout=WORK_MS)
    assert reloads == [page.url] and page.evaluate("window.sameDocument") is None
    final = progress()
    assert (final["status"], final["done"], final["total"], final["value"], final["max"]) == (
        "finished", total, total, total, total)
    assert page.get_attribute("#tournament", "data-status") == "finished"
    t = api.ok(api.get(f"/tournaments/{tid}"), 200)
    assert t["status"] == "finished" and t["progress"] == {"done": total, "total": total}
    assert cells(page, "#standings tr") == standings_text(t["standings"], names)
    assert [names[row["bot"]] for row in t["standings"]][-1] == "illegal"
    header = page.eval_on_selector_all("#crosstable thead th", "ths => ths.map(th => th.innerText.trim())")
    assert header == ["", *[names[row["bot"]] for row in t["standings"]], "overall"]
    assert page.locator("#crosstable td.self").count() == 4
    assert page.locator("#crosstable td.cell:not(.overall)").count() == 12  # every pair met
    assert page.locator("#tmatches li a").count() == total
    assert "finished" in page.inner_text("#tmatches li:first-child")
    assert page.dialogs == []
    shot(page, "tournament-finished")


def test_bot_page_shows_recent_matches_and_its_rating_chart(api, worker_pool, page, shot):
    names = {python_bot(api, name, entry): name for name, entry in
             [("heuristic", HEURISTIC), ("random", RANDOM), ("random-2", RANDOM)]}
    bots = list(names)
    tid = start_tournament(api, bots, deals=2)
    assert wait_finished(api, tid)["status"] == "finished"
    wait_rated(api, bots)
    bot = bots[0]
    record = api.ok(api.get(f"/bots/{bot}"), 200)
    recent = api.ok(api.get(f"/bots/{bot}/matches"), 200)["matches"]
    history = api.ok(api.get(f"/bots/{bot}/ratings"), 200)["history"]
    assert record["matches"] == len(recent) == 2 * len(history) == 8  # a point per deal

    page.goto(f"{api.live.url}/bots/{bot}")
    assert page.inner_text("h1.botname") == "heuristic"
    assert (page.inner_text("#matches"), page.inner_text("#wins"), page.inner_text("#faults")) == (
        str(record["matches"]), str(record["wins"]), str(record["faults"]))
    rows = page.locator("table.matches tbody tr")
    assert rows.count() == len(recent)
    shown = page.eval_on_selector_all(
        "table.matches tbody tr",
        "trs => trs.map(tr => [tr.querySelector('a').getAttribute('href'), tr.cells[1].innerText.trim(),"
        " tr.cells[2].innerText.trim(), tr.cells[4].innerText.trim(),"
        " tr.querySelector('small a').getAttribute('href')])")
    assert shown == [[f"/matches/{m['id']}", "finished", "1", str(m["rank"]), f"/tournaments/{tid}"]
                     for m in recent]  # its version 1 played every match
    assert all(m["rank"] in (1, 2) for m in recent)  # the tournament is over: results are public

    chart = page.locator("svg.chart")
    assert chart.is_visible()
    assert chart.locator("circle.dot").count() == len(history) + 1  # the starting rating, then each deal
    assert chart.locator("polygon.band").count() == 1 and chart.locator("polyline.mu").count() == 1
    box = chart.bounding_box()
    assert box["width"] > 300 and box["height"] > 100
    last = chart.locator("circle.dot").last.locator("title").text_content()
    assert f"μ {history[-1]['mu']:.2f}, σ {history[-1]['sigma']:.2f}" in last
    assert page.inner_text("table.record .rating") == rating_text(record["rating"])
    shot(page, "tournament-bot-page")


@pytest.fixture()
def entrants(store):
    bots = {}
    for name in ("ann", "ben", "cat", "dan"):
        bot, _ = store.create_bot("acct", name, GAME, "polling")
        bots[bot["id"]] = name
    return bots


def test_the_live_standings_read_exactly_as_the_server_renders_them(live_server, store, entrants, browser,
                                                                    page, shot):
    """web.js redraws the standings from the event stream: the same text as tournament.html, with the
    rounding ties '%.1f' and JavaScript's toFixed settle differently. No worker here: the
    standings are written to the store as the worker would."""
    bots = list(entrants)
    tid = store.create_tournament(GAME, bots, seats=2, deals=1, duplicate=True, seed=3, options={})["id"]
    store.set_tournament(tid, status="running", total=12)
    url = f"{live_server.url}/tournaments/{tid}"
    page.goto(url)
    assert cells(page, "#standings tr") == [["No match finished yet."]]

    def row(i, points, mean, ci, faults, matches=6):
        return {"rank": i + 1, "bot": bots[i], "points": points, "matches": matches, "wins": i, "draws": 0,
                "mean_score": mean, "ci95": ci, "faults": faults, "forfeits": 0}

    played = []
    for i in range(6):
        played.append(store.create_match(GAME, bots[:2], i, {}, tournament_id=tid)["id"])
        store.add_tournament_match(tid, played[-1])
    no_js = browser.new_context(java_script_enabled=False)
    try:
        server_page = no_js.new_page()
        for step, standings in enumerate([
            [row(0, 5.5, 12.25, 0.75, 0), row(1, 3, -4.25, 1.45, 5), row(2, 1, 7.0, None, 0, matches=1),
             row(3, 0, None, None, 0, matches=0)],
            [row(0, 6, 2.35, 0.05, 1), row(1, 4.5, -0.75, 0.25, 0), row(2, 1.5, 100.0, 12.3456, 0),
             row(3, 0, -0.04, 3.0, 7)],
        ], start=1):
            store.set_tournament(tid, total=12)
            for mid in played[(step - 1) * 3:step * 3]:  # concluded as the worker concludes them
                assert store.conclude_match(mid, "finished", {"scores": [0, 0]})
            store.save_standings(tid, standings)  # after the matches are counted, as the worker does
            page.wait_for_function(f"() => +document.getElementById('done').textContent === {step * 3}")
            server_page.goto(url)
            server = cells(server_page, "#standings tr")
            assert server == standings_text(standings, entrants)
            # the progress event that moved `done` may have carried the standings read just before
            # they were saved: the next event brings these (a busy machine shows the gap)
            end = time.monotonic() + 30
            while cells(page, "#standings tr") != server and time.monotonic() < end:
                page.wait_for_timeout(50)
            assert cells(page, "#standings tr") == server, f"step {step}"
            assert page.evaluate("document.querySelectorAll('#standings span.fault').length") == sum(
                1 for r in standings if r["faults"])
        shot(page, "tournament-live-standings-format")
    finally:
        no_js.close()

    page.evaluate("window.sameDocument = true")
    store.set_tournament(tid, status="finished")
    page.wait_for_function("() => document.getElementById('tournament').dataset.status === 'finished'")
    assert page.evaluate("window.sameDocument") is None  # reloaded by web.js
    assert cells(page, "#standings tr") == server


@pytest.mark.slow
def test_the_lists_find_tournaments_and_matches_by_game_and_bot(api, worker_pool, page, shot):
    names = {python_bot(api, name, entry): name for name, entry in
             [("heuristic", HEURISTIC), ("random", RANDOM), ("random-2", RANDOM), ("random-3", RANDOM)]}
    bots = list(names)
    tid = start_tournament(api, bots, deals=3)  # 6 tables × 3 deals × 2 rotations: 36 matches
    assert wait_finished(api, tid)["status"] == "finished"

    page.goto(api.live.url + "/")
    page.click("header.top nav >> text=Tournaments")  # the navigation reaches the lists
    page.wait_for_url("**/tournaments")
    row = page.locator(f'#tournament-list tr[data-tournament="{tid}"]')
    assert "finished" in row.inner_text() and "36 / 36" in row.inner_text()
    href = row.locator("a.download").get_attribute("href")
    lines = api.session.get(api.live.url + href, timeout=30).text.splitlines()
    assert len(lines) == 36 and json.loads(lines[0])["format"] == "cardarena-match"
    page.select_option("form.filters select[name=game]", "duck-soup")
    page.click("form.filters button")
    page.wait_for_url("**/tournaments?game=duck-soup**")
    assert page.locator("#tournament-list").count() == 0 and "No tournament" in page.inner_text("main")
    page.goto(f"{api.live.url}/tournaments?game={GAME}")
    shot(page, "list-tournaments")
    page.click(f'#tournament-list a[href="/tournaments/{tid}"]')
    page.wait_for_selector("#crosstable")
    assert page.locator("a.download").count() == 1

    page.click("header.top nav >> text=Matches")
    page.wait_for_url("**/matches")
    first = [tr.get_attribute("data-match") for tr in page.locator("#match-list tbody tr").all()]
    assert len(first) == 25  # a page; the rest on the next
    page.click("#older")
    page.wait_for_url("**cursor=**")
    rest = [tr.get_attribute("data-match") for tr in page.locator("#match-list tbody tr").all()]
    listed = api.ok(api.get("/matches", params={"limit": 100}), 200)["matches"]
    assert first + rest == [m["id"] for m in listed] and len(listed) == 36
    page.goto(f"{api.live.url}/matches?bot={bots[0]}")
    seats = page.eval_on_selector_all("#match-list tbody tr", "trs => trs.map(tr => tr.cells[3].innerText)")
    assert len(seats) == 18 and all("heuristic" in s for s in seats)  # 3 opponents × 3 deals × 2 rotations
    assert all(w in names.values() for w in page.eval_on_selector_all(
        "#match-list tbody tr", "trs => trs.map(tr => tr.cells[4].innerText.trim())"))  # winners, now public
    shot(page, "list-matches-of-a-bot")
    page.click("#match-list tbody tr:first-child td:first-child a")  # on to its replay, on its table
    page.wait_for_selector("#replay #board .felt")
    assert page.locator("a.download").get_attribute("href").endswith("/export")

    response = page.goto(api.live.url + "/no/such/page")
    assert response.status == 404 and "404 · Not Found" in page.inner_text("h1")
    assert page.locator("header.top nav a", has_text="Matches").count() == 1
    shot(page, "page-404")
