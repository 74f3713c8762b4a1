"""The pages' views: each gathers its data through the store and the API's
helpers (so page and JSON twin agree), then renders one template.

Stored data is rendered whatever it holds: `render` encodes with
replacement, so a name stored before names were checked (a lone surrogate)
shows as "?" instead of turning every page that names it into a 500.
"""

from __future__ import annotations

import base64

from flask import Response, abort, jsonify, redirect, render_template, request, url_for
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

import games
from core.store.ratings import entrant
from sdk.clock import seat_times
from server.api.bots import UPLOAD_BODY, BotPatchSchema, apply_update, recent_matches, shown, upload_version
from server.api.comparisons import comparison_record
from server.api.lists import ListQuerySchema, list_page_of_matches, list_page_of_tournaments
from server.api.matches import is_hidden, is_public, match_step, public_entry
from server.api.rankings import in_play, ladder
from server.api.tournaments import crosstable_of, match_list_page
from server.auth import check_csrf, session_account, store
from server.match_table import table_of
from server.web import bp
from server.web.chart import SPARK_POINTS, interval_bars, llr_chart, rating_chart, sparkline
from server.web.owners import signed_in_seats
from server.web.seating import regions, winners

RECENT = 20
#: matches listed on a tournament's page (the rest: its JSON twin's next pages)
PAGE_MATCHES = 100


def render(template: str, status: int = 200, **context) -> Response:
    """`render_template`, encoded so that no stored string can fail the page."""
    html = render_template(template, **context)
    return Response(html.encode("utf-8", "replace"), status=status, mimetype="text/html")


def names_of(bot_ids) -> dict[str, str]:
    """Bot id -> name for the ids shown on a page (the id itself for an unknown bot)."""
    wanted = [b for b in dict.fromkeys(bot_ids) if b is not None]  # None: a seat hidden (`seats_hidden`)
    names = {bot["id"]: bot["name"] for bot in store().get_bots(wanted)}
    return {bot_id: names.get(bot_id, bot_id) for bot_id in wanted}


@bp.errorhandler(HTTPException)
def page_error(error: HTTPException):
    """Any error on a page — and any unknown path outside the API — as an HTML page; as the
    API's JSON error to a page's own script (which asks for JSON: the table's requests)."""
    data = getattr(error, "data", None)
    message = data.get("message") if isinstance(data, dict) and isinstance(data.get("message"), str) else None
    if request.accept_mimetypes.best_match(["text/html", "application/json"]) == "application/json":
        code = data.get("code") if isinstance(data, dict) and isinstance(data.get("code"), str) else None
        body = {"error": {"code": code or (error.name or "error").lower().replace(" ", "_"),
                          "message": message or error.description or error.name}}
        response = jsonify(body)
        response.status_code = error.code or 500
        for name, value in ((data or {}).get("headers") or {}).items() if isinstance(data, dict) else ():
            response.headers[name] = value
        return response
    return render("web/error.html", status=error.code or 500, error=error, message=message or error.description)


@bp.app_context_processor
def rules_links() -> dict:
    """Every page's navigation links the games' rules."""
    return {"rules_games": games.names()}


@bp.get("/games/<string:game>/rules")
def rules_page(game: str):
    """A game's rules for bot authors (docs/rules/<game>.md) as HTML.
    JSON twin: GET /api/v1/games (each game's `rules_url`)."""
    from server.web.markdown import render
    from server.web.rules import rules_markdown

    if game not in games.names():
        abort(404, f"There is no game {game!r}; the games are {', '.join(games.names())}.")
    text = rules_markdown(game)
    if text is None:
        abort(404, f"The rules page of {game} is not installed with this copy of cardarena.")
    return render_template("web/rules.html", game=game, title=games.get(game).describe().get("title") or game,
                           body=render(text))


@bp.get("/favicon.ico")
def favicon():
    """The site's icon where browsers look for it: an SVG (every page also links it)."""
    return bp.send_static_file("favicon.svg")


@bp.get("/")
def leaderboard():
    """One ladder per game, each bot's ladder history as a line, and the ladder's matches in play
    (followed by the page's script). JSON twin: GET /api/v1/games/{game}/rankings."""
    boards = []
    for game in games.names():
        rows = ladder(game)
        playing = in_play(game)
        names = names_of([s["bot"] for m in playing for s in m["seats"]])
        histories = store().rating_histories([(r["bot"], r["version"]) for r in rows], SPARK_POINTS)
        boards.append({"game": game, "title": games.get(game).describe().get("title") or game, "rows": rows,
                       "bars": interval_bars(rows), "lines": [sparkline(h) for h in histories],
                       "in_play": playing, "names": names})
    return render("web/leaderboard.html", boards=boards)


#: rows on a page of the /matches and /tournaments lists
LIST_PAGE = 25


def _list_query() -> dict:
    """?game=, ?bot=, ?cursor= as the API reads them (a bad one is a 400 page)."""
    try:
        query = ListQuerySchema().load({k: v for k, v in request.args.items() if k in ("game", "bot", "cursor")
                                        and v != ""})
    except ValidationError as exc:
        abort(400, "; ".join(f"{k}: {' '.join(v) if isinstance(v, list) else v}" for k, v in exc.messages.items()))
    if query.get("game") and query["game"] not in games.names():
        abort(404, f"There is no game {query['game']!r}; the games are {', '.join(games.names())}.")
    query["limit"] = LIST_PAGE
    return query


def _list_context(query: dict, bots: list[str]) -> dict:
    bot = store().get_bot(query["bot"]) if query.get("bot") else None
    return {"query": query, "names": names_of(bots + ([query["bot"]] if query.get("bot") else [])),
            "games": games.names(), "filter_bot": bot}


@bp.get("/matches")
def matches_page():
    """Matches, newest first, by game and bot. JSON twin: GET /api/v1/matches."""
    query = _list_query()
    found = list_page_of_matches(query)
    bots = [s["bot"] for m in found["matches"] for s in m["seats"]]
    return render("web/matches.html", matches=found["matches"], next_cursor=found["next_cursor"],
                           **_list_context(query, bots))


@bp.get("/tournaments")
def tournaments_page():
    """Tournaments, newest first, by game and bot. JSON twin: GET /api/v1/tournaments."""
    query = _list_query()
    found = list_page_of_tournaments(query)
    bots = [b for t in found["tournaments"] for b in t["bots"][:6]]
    return render("web/tournaments.html", tournaments=found["tournaments"],
                           next_cursor=found["next_cursor"], **_list_context(query, bots))


@bp.get("/bots/<string:bot_id>")
def bot_page(bot_id: str):
    """JSON twins: GET /api/v1/bots/{id}, /bots/{id}/matches, /bots/{id}/ratings."""
    bot = store().get_bot(bot_id)
    if bot is None:
        abort(404, f"There is no bot {bot_id!r}.")
    matches, _ = recent_matches(bot_id, RECENT)
    names = names_of([b for m in matches for b in m["seats"]])
    latest = shown(bot)["version"]
    chart = rating_chart([p for p in store().rating_history(bot_id) if p.get("version", 1) == latest])
    ladder_key = entrant(bot_id, latest)
    bot = {**shown(bot), "faults_by_kind": store().faults_by_kind(bot_id), "versions": store().bot_versions(bot),
           "ladder_matches": store().ladder_match_counts(bot["game"], [ladder_key])[ladder_key]}
    switchable = not bot.get("retired") and _owns(session_account(), bot)
    saved = request.args.get("saved") == "1" and switchable
    uploaded = request.args.get("uploaded") == "1" and switchable
    return render("web/bot.html", bot=bot, matches=matches, names=names, chart=chart, switchable=switchable,
                  saved=saved, uploaded=uploaded, probe_error=bot.get("probe_failure") if switchable else None)


def _owns(account: dict | None, bot: dict) -> bool:
    """Whether the account signed in on the page may change the bot: its owner's. (The admin
    changes any bot through the API: pages sign in with account tokens only.)"""
    return account is not None and bot.get("owner") == account["id"]


def _owned_bot(account: dict | None, bot_id: str, doing: str) -> dict:
    """The bot a signed-in owner's form changes: 404 if there is none, 403 unless `account` owns it."""
    bot = store().get_bot(bot_id)
    if bot is None:
        abort(404, f"There is no bot {bot_id!r}.")
    if not _owns(account, bot):
        abort(403, f"Only the bot's owner may {doing}.")
    return bot


#: the bot page's switch values -> PATCH /bots/{id}'s
LADDER_VALUES = {"on": True, "off": False}


@bp.post("/bots/<string:bot_id>/switches")
def switch_bot(bot_id: str):
    """Its owner switches the bot on or off the ladder and chooses whom it accepts matches from
    (the form's `ladder` on|off, `accepts` everyone|owner, `csrf`): checked and stored as
    `PATCH /api/v1/bots/{id}` does (server/api/bots.py `apply_update`), then 303 back to the page."""
    bot = _owned_bot(check_csrf(), bot_id, "switch it")
    if bot.get("retired"):
        abort(409, "This bot is retired: there is nothing to switch.")
    form = {}
    if "ladder" in request.form:
        form["ladder"] = LADDER_VALUES.get(request.form["ladder"], request.form["ladder"])
    if "accepts" in request.form:
        form["accepts"] = request.form["accepts"]
    try:
        changes = BotPatchSchema().load(form)
    except ValidationError as exc:
        abort(422, "; ".join(f"{k}: {' '.join(v) if isinstance(v, list) else v}" for k, v in exc.messages.items()))
    apply_update(bot, changes)
    return redirect(url_for("web.bot_page", bot_id=bot_id, saved=1, _anchor="switches"), 303)


@bp.post("/bots/<string:bot_id>/code")
def upload_code(bot_id: str):
    """Its owner uploads a hosted bot's new version (the form's `code` file, .py or .zip, its
    `entrypoint`, `csrf`): checked, stored and probed as `POST /api/v1/bots/{id}/versions` does
    (server/api/bots.py `upload_version`), then 303 back to the page, which shows the probe's
    outcome."""
    bot = _owned_bot(check_csrf(), bot_id, "upload its code")
    if bot.get("retired") or bot.get("kind") != "hosted":
        abort(409, "Only an active hosted bot takes uploaded code.")
    upload = request.files.get("code")
    data = upload.read(UPLOAD_BODY + 1) if upload is not None else b""
    if not data:
        abort(422, "Choose the file to upload: a .py file or a .zip of a package.")
    entrypoint = (request.form.get("entrypoint") or "").strip() or bot.get("entrypoint")
    upload_version(bot, base64.b64encode(data).decode("ascii"), entrypoint)
    return redirect(url_for("web.bot_page", bot_id=bot_id, uploaded=1, _anchor="upload"), 303)


@bp.get("/comparisons/<string:cid>")
def comparison_page(cid: str):
    """JSON twin: GET /api/v1/comparisons/{id}. The log-likelihood ratio drawn against its bounds."""
    c = comparison_record(cid)
    if c is None:
        abort(404, f"There is no comparison {cid!r}.")
    names = names_of([c["candidate"], c["baseline"], *(c.get("opponents") or [])])
    return render("web/comparison.html", c=c, names=names, chart=llr_chart(c["history"], tuple(c["bounds"])))


@bp.get("/tournaments/<string:tid>")
def tournament_page(tid: str):
    """JSON twins: GET /api/v1/tournaments/{id}, its /matches and its /crosstable."""
    s = store()
    tournament = s.get_tournament(tid)
    if tournament is None:
        abort(404, f"There is no tournament {tid!r}.")
    finished = tournament["status"] in ("finished", "aborted")
    standings = s.standings(tid)
    bots = [row["bot"] for row in standings]
    bots += [b for b in tournament.get("bots") or [] if b not in bots]
    rows = None
    if finished:
        table = crosstable_of(tournament)
        bots, rows = table["bots"], table["rows"]
    listed, more = match_list_page(tournament, 0, PAGE_MATCHES)
    matches = [{**m, "seats": [seat["bot"] for seat in m["seats"]]} for m in listed]
    return render("web/tournament.html", t=tournament, progress=s.tournament_progress(tid),
                  standings=standings, names=names_of(bots), rows=rows, bots=bots,
                  matches=matches, more_matches=more is not None, finished=finished, page_matches=PAGE_MATCHES)


def _match_or_404(match_id: str) -> dict:
    match = store().get_match(match_id)
    if match is None:
        abort(404, f"There is no match {match_id!r}.")
    return match


def _step_arg(turns: int) -> int:
    raw = request.args.get("step", "0")
    try:
        step = int(raw)
    except ValueError:
        abort(400, f"step must be a whole number from 0 to {turns}, not {raw!r}.")
    return max(0, min(turns, step))


@bp.get("/matches/<string:match_id>")
def match_page(match_id: str):
    """The replay on its card table once public; the live table (by the event stream) while it
    runs. JSON twins: GET /api/v1/matches/{id}, /steps/{k}, /events and /export."""
    match = _match_or_404(match_id)
    s = store()
    public = is_public(match)
    signed_in = signed_in_seats(match, public)
    if is_hidden(match):  # a rated table before its deal is over: seat numbers only
        match = {**match, "seats": [None] * len(match["seats"])}
    names = names_of(match["seats"])
    seat_names = [names[b] if b is not None else f"seat {i}" for i, b in enumerate(match["seats"])]
    outcome = winners(match.get("result"), seat_names) if public else None
    log = s.match_log(match_id)  # read once: the times, the replay, the live table
    times = seat_times(log, len(match["seats"]), match["move_timeout_ms"], match.get("time_bank_ms"),
                       match.get("seat_clocks"))
    context = {"m": match, "names": names, "public": public, "step": None, "log": None, "live": None,
               "tournament": None, "faults": None, "outcome": outcome, "times": times,
               "regions": regions(len(match["seats"])), "seat_names": seat_names,
               "page": {"names": seat_names, "bots": match["seats"], "outcome": outcome}}
    if match.get("tournament"):
        context["tournament"] = s.get_tournament(match["tournament"])
    context["person_seat"], context["debug"] = signed_in
    if public:
        context["log"] = log
        context["step"] = match_step(match, _step_arg(len(log)))
        context["faults"] = [sum(1 for e in log if e.get("fault") and e["seat"] == seat)
                             for seat in range(len(match["seats"]))]
    elif match["status"] in ("running", "queued"):
        turns = len(log)
        state = s.replay(match_id, upto=turns)  # the log as read: an entry landing meanwhile comes by the stream
        entry = public_entry(log[-1], False) if log else None
        view = state.view(None)
        context["live"] = {"turns": turns, "entry": entry, "to_act": state.to_act,
                           "table": table_of(match["game"], len(match["seats"]), view, entry)}
    return render("web/match.html", turns=len(log), **context)
