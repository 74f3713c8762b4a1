"""People at the table: a signed-in person plays a match against bots in the browser
(docs/api.md §6 "People at the table").

A person's seat is a polling seat whose answers come from clicks. Each
account has one *person seat* per game, created the first time it plays
that game: a polling bot marked `person`, accepting matches from its owner
only, whose secret nobody is ever shown. Its decisions are published by the
worker like any polling bot's (core/store/waits.py) and answered here, with
the session, along the very path `POST /matches/{id}/turns/{turn}` takes —
judged by `core.answers.answered`, landed by `Store.settle` against the
deadline — so the match is refereed exactly as any match: same referee, same
log, same replay, same faults.

The person thinks on a person's clock (`PERSON_CLOCK`: 60 s a move, a 300 s
bank), the bots beside them on the standard one (`sdk.clock.DEFAULT_TIME`,
the only clock another account's bot may be entered on): the match keeps
each seat's own clock (`seat_clocks`, sdk/clock.py). People's matches are
never rated: they never move the ladder.

    GET  /play                     choose a game, its options, the seats and the opponents
    POST /play                     start (the form; its CSRF field) → 303 /play/{id}
    GET  /play/{id}                the person's table (the event stream moves it on)
    GET  /play/{id}/state          JSON: the table from the person's seat, their pending
                                   decision (legal actions, time left), the status
    POST /play/{id}/turns/{turn}   JSON {action} (X-CSRF-Token): the referee judges it
    POST /play/{id}/again          the same deal, seats rotated (duplicate) → 303 /play/{new}
    GET  /account                  who is signed in, and their matches at the table
"""

from __future__ import annotations

import json
import time

from flask import current_app, g, jsonify, redirect, request, url_for

import games
from core.conclusion import due_twin
from core.store.bots import NameTaken, accepts_of
from core.store.keys import now_ms
from core.store.matches import OVER
from games.seats import rotate
from sdk.clock import DEFAULT_TIME, seat_times
from server.api.bots import recent_matches
from server.api.common import (
    SHORTER,
    check_consent,
    check_entrants,
    check_standard_options,
    claim_guest_places,
    enqueue,
)
from server.api.matches import MAX_QUEUED, draw_seed, is_public, match_step, public_entry
from server.api.turns import settle_answer
from server.auth import check_csrf, csrf_token, session_account, store
from server.errors import fail
from server.match_table import faces_of, seat_table_of
from server.web import bp
from server.web.owners import person_seat
from server.web.pages import names_of, render
from server.web.seating import regions, winners
from server.web.sessions import safe_next

#: a person's clock: 60 s a move and a 300 s bank (beyond the bots' ranges on purpose)
PERSON_CLOCK = {"move_timeout_ms": 60_000, "time_bank_ms": 300_000}
#: matches a person seat may play at once (a few tabs)
PERSON_MATCHES = 4
#: how long `/state` waits for the person's decision to be published after their turn comes
STATE_WAIT_S = 8.0
#: the longest action a page may send (the largest legal action is far smaller)
MAX_ACTION = 4096


# -- whose seat ----------------------------------------------------------------------

def person_name(account: dict) -> str:
    return f"{account['name']} (person)"[:64]


def person_bot(account: dict, game: str) -> dict:
    """The account's person seat for `game`, created on first use."""
    s = store()
    bot_id = s.person_seat(account["id"], game)
    bot = s.bot_record(bot_id) if bot_id else None
    if bot is not None and not bot.get("retired"):
        return bot
    if bot_id:
        s.forget_person_seat(account["id"], game)
    name = person_name(account)
    try:
        created, _secret = s.create_bot(account["id"], name, game, "polling", max_concurrent=PERSON_MATCHES,
                                        accepts="owner", person=True, ladder=False)
    except NameTaken:  # a bot took the name: the account id makes it the person's own
        created, _secret = s.create_bot(account["id"], f"{name[:40]} {account['id']}", game, "polling",
                                        max_concurrent=PERSON_MATCHES, accepts="owner", person=True, ladder=False)
    held = s.claim_person_seat(account["id"], game, created["id"])
    if held != created["id"]:  # another request made one first: keep that one
        s.retire_bot(created["id"])
        return s.bot_record(held)
    return s.bot_record(created["id"])


def _my_match(match_id: str) -> tuple[dict, dict, int, dict]:
    """(account, match, seat, person bot) for a page request about the person's own match."""
    account = g.get("checked_account") or session_account()
    if account is None:
        fail(401, "unauthorized", "sign in first (your account token, at /signin)")
    match = store().get_match(match_id)
    if match is None:
        fail(404, "not_found", f"there is no match {match_id!r}")
    mine = person_seat(match, account)
    if mine is None:
        fail(403, "forbidden", f"you have no seat in match {match_id}")
    seat, bot = mine
    return account, match, seat, bot


# -- choosing a match ------------------------------------------------------------------

def opponents_for(game: str, account: dict | None) -> list[dict]:
    """The bots a person may sit down against: the game's active bots that accept everyone,
    and the account's own; no person seat. The highest ordinal (μ − 3σ, the ladder's order)
    first; bots that have played no match yet last."""
    mine = account["id"] if account else None
    found = [b for b in store().list_bots(game)
             if not b.get("retired") and not b.get("person")
             and (accepts_of(b) == "everyone" or (mine is not None and b.get("owner") == mine))]

    def order(bot: dict):
        rating = bot.get("rating") or {}
        ordinal = rating.get("ordinal") if bot.get("matches") else None
        return (ordinal is None, -(ordinal or 0.0), str(bot.get("name", "")).casefold())

    return sorted(found, key=order)


def _form_options(game, form) -> dict:
    """The options the form gives (`opt-<name>`): checkboxes for true/false ones, JSON text
    (or plain text, for a word) for the rest; a field left empty keeps the default."""
    out = {}
    for name, default in game.describe()["options"].items():
        field = f"opt-{name}"
        if isinstance(default, bool):
            out[name] = form.get(field) in ("on", "true", "1")
            continue
        raw = (form.get(field) or "").strip()
        if not raw or (isinstance(default, str) and raw == default):
            continue
        try:
            out[name] = json.loads(raw)
        except ValueError:
            out[name] = raw
    return out


def _option_fields(game, chosen: dict) -> list[dict]:
    helps = {option.name: option.help for option in game.options}
    fields = []
    for name, default in game.describe()["options"].items():
        value = chosen.get(name, default)
        kind = "bool" if isinstance(default, bool) else "text"
        fields.append({"name": name, "kind": kind, "value": value, "text": _plain(value, ""),
                       "default": _plain(default, "none"), "help": helps.get(name, "")})
    return fields


def _plain(value, none: str) -> str:
    """An option's value as a person reads and types it: a word as itself (fr, not "fr"),
    yes/no, a list as [2, 1]; `none` for no value."""
    if value is None:
        return none
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value if isinstance(value, str) else json.dumps(value)


def _int_arg(value, default: int, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return max(low, min(high, number))


def _play_form(account: dict | None, values, error: str | None = None, status: int = 200):
    names = games.names()
    game_name = values.get("game") if values.get("game") in names else names[0]
    game = games.get(game_name)
    wanted = [b for b in (values.get("bots") or "").split(",") if b] if isinstance(values.get("bots"), str) else []
    if hasattr(values, "getlist") and values.getlist("opponent"):
        wanted = [b for b in values.getlist("opponent") if b]
    seats = _int_arg(values.get("seats"), max(game.min_seats, min(game.max_seats, len(wanted) + 1)),
                     game.min_seats, game.max_seats)
    my_seat = _int_arg(values.get("seat"), 0, 0, seats - 1)
    bots = opponents_for(game_name, account)
    known = {b["id"] for b in bots}
    chosen = [b for b in wanted if b in known][:seats - 1]
    for bot in bots:  # the best bots not chosen yet fill the other seats
        if len(chosen) >= seats - 1:
            break
        if bot["id"] not in chosen:
            chosen.append(bot["id"])
    while bots and len(chosen) < seats - 1:
        chosen.append(bots[0]["id"])
    options = _form_options(game, values) if any(k.startswith("opt-") for k in values) else {}
    context = {
        "account": account, "games": [{"name": n, "title": games.get(n).describe().get("title") or n}
                                      for n in names],
        "game": game_name, "title": game.describe().get("title") or game_name,
        "min_seats": game.min_seats, "max_seats": game.max_seats, "seats": seats, "my_seat": my_seat,
        "bots": bots, "chosen": chosen, "options": _option_fields(game, options), "error": error,
        "clock": PERSON_CLOCK, "standard": DEFAULT_TIME,
        "shorter": [name for name in SHORTER if name in game.describe()["options"]],
        "decisions": [{"kind": d.kind, "text": d.words} for d in game.decisions],
    }
    return render("web/play.html", status=status, **context)


@bp.get("/play")
def play_page():
    """Choose a game, its options and seats, and the bots to play against; then start."""
    return _play_form(session_account(), request.args)


@bp.post("/play")
def start_play():
    """Start a person's match from the form (its `csrf` field): 303 to its table."""
    account = check_csrf()
    form = request.form
    names = games.names()
    if form.get("game") not in names:
        return _play_form(account, form, f"choose one of the games: {', '.join(names)}", 422)
    game = games.get(form["game"])
    seats = _int_arg(form.get("seats"), game.min_seats, game.min_seats, game.max_seats)
    my_seat = _int_arg(form.get("seat"), 0, 0, seats - 1)
    opponents = [b for b in form.getlist("opponent") if b][:seats - 1]
    if len(opponents) != seats - 1:
        return _play_form(account, form, f"choose {seats - 1} opponent{'s' if seats > 2 else ''}", 422)
    s = store()
    if s.queued_match_count(account["id"]) >= MAX_QUEUED:
        return _play_form(account, form, f"you have {MAX_QUEUED} matches waiting to start already", 429)
    try:
        check_entrants(s, game.name, opponents)
        check_consent(s, account, opponents, {})
    except Exception as exc:  # the API's refusal (an HTTPException with its message): on the form
        data = getattr(exc, "data", None)
        if not isinstance(data, dict):
            raise
        return _play_form(account, form, data.get("message") or "these opponents cannot be chosen", 422)
    if any((s.bot_record(b) or {}).get("person") for b in opponents):
        return _play_form(account, form, "a person seat plays only for its own person", 422)
    options = _form_options(game, form)
    seed = draw_seed()
    try:
        game.new(seats, seed, options)
    except games.InvalidOptions as exc:
        return _play_form(account, form, str(exc), 422)
    try:
        others = [b for b in opponents if (s.bot_record(b) or {}).get("owner") != account["id"]]
        if others:
            check_standard_options(game.name, others[0], options)
        match_id = claim_guest_places(s, account, opponents)
    except Exception as exc:  # the API's refusal (an HTTPException with its message): on the form
        data = getattr(exc, "data", None)
        if not isinstance(data, dict):
            raise
        return _play_form(account, form, data.get("message") or "these opponents cannot be chosen",
                          getattr(exc, "code", None) or 422)
    me = person_bot(account, game.name)
    bots = list(opponents)
    bots.insert(my_seat, me["id"])
    match = _create(game.name, bots, seed, options, [PERSON_CLOCK if i == my_seat else None
                                                     for i in range(seats)], account, match_id)
    return redirect(url_for("web.person_table", match_id=match["id"]), 303)


def _create(game: str, bots: list[str], seed: int, options: dict, clocks: list, account: dict,
            match_id: str) -> dict:
    match = store().create_match(game, bots, seed, options, move_timeout_ms=DEFAULT_TIME.move_timeout_ms,
                                 max_faults=DEFAULT_TIME.max_faults, time_bank_ms=DEFAULT_TIME.time_bank_ms,
                                 rated=False, owner=account["id"], seat_clocks=clocks, match_id=match_id)
    enqueue("match", match["id"])
    return match


@bp.post("/play/<string:match_id>/again")
def play_again(match_id: str):
    """The same deal again with the seats rotated one place (duplicate: the person now holds
    the hand a bot held), once the match is over and no other rotation of its deal (a
    tournament's, a comparison's) is still being played: 303 to the new table."""
    g.checked_account = check_csrf()
    account, match, _seat, _bot = _my_match(match_id)
    if match["status"] not in OVER:
        fail(409, "not_over", "the match is still being played")
    s = store()
    if due_twin(s, match) is not None:  # a new match would show the deal's cards while they are played
        fail(409, "deal_in_play", "another rotation of this deal is still being played: play it again "
                                  "once that match is over")
    if s.queued_match_count(account["id"]) >= MAX_QUEUED:
        fail(429, "too_many_matches", f"you have {MAX_QUEUED} matches waiting to start already")
    others = [b for b in match["seats"] if not (s.bot_record(b) or {}).get("person")]
    check_entrants(s, match["game"], others)
    check_consent(s, account, others, {"options": match["options"]})
    clocks = match.get("seat_clocks") or [None] * len(match["seats"])
    again = _create(match["game"], rotate(list(match["seats"]), 1), match["seed"], match["options"],
                    rotate(list(clocks), 1), account, claim_guest_places(s, account, others))
    return redirect(url_for("web.person_table", match_id=again["id"]), 303)


# -- the table -----------------------------------------------------------------------

def _seat_state(match: dict, seat: int, bot: dict, wait_s: float = 0.0) -> dict:
    """What the person's page draws: the table from their seat after the log as it stands,
    their pending decision (waiting up to `wait_s` for it to be published when their turn
    has come), each seat's time, the status."""
    s = store()
    mid = match["id"]
    log = s.match_log(mid)
    state = _state_after(match, log)
    decision = None
    if state.to_act == seat and match["status"] not in OVER:
        decision = _pending(bot["id"], mid, len(log), wait_s)
        if wait_s:  # the match moved on meanwhile (it started: its status says so, with the decision)
            match = s.get_match(mid) or match
        if decision is None and wait_s:  # the log may have moved on too: look again
            log = s.match_log(mid)
            state = _state_after(match, log)
            if state.to_act == seat and match["status"] not in OVER:
                decision = _pending(bot["id"], mid, len(log), 0)
    public = is_public(match)
    entry = public_entry(log[-1], public) if log else None
    table = seat_table_of(match["game"], len(match["seats"]), state.view(None), entry, seat, state.view(seat))
    times = seat_times(log, len(match["seats"]), match["move_timeout_ms"], match.get("time_bank_ms"),
                       match.get("seat_clocks"))
    return {"id": mid, "status": match["status"], "turns": len(log), "seat": seat, "to_act": state.to_act,
            "entry": entry, "table": table, "decision": decision, "times": times,
            "reason": match.get("reason")}


def _state_after(match: dict, log: list[dict]):
    state = games.get(match["game"]).new(len(match["seats"]), match["seed"], match["options"])
    for entry in log:
        state.apply(entry["action"])
    return state


def _pending(bot_id: str, match_id: str, turn: int, wait_s: float) -> dict | None:
    """The person's decision of `turn` as the page needs it, once published (waiting up to
    `wait_s` on the bot's wake channel, never in a loop of sleeps)."""
    s = store()
    end = time.monotonic() + wait_s
    slots = current_app.extensions.get("cardarena.poll_slots")
    held = False
    try:
        while True:
            record = s.pending_record(bot_id, match_id, turn)
            left = end - time.monotonic()
            if record is not None or left <= 0 or s.log_length(match_id) > turn:
                break
            if not held:
                held = slots is None or slots.acquire(blocking=False)
                if not held:  # the server's waiting places are taken: the page asks again later
                    break
            others = {(d["match_id"], d["turn"]) for d in s.pending_decisions(bot_id)}
            s.wait_decisions(bot_id, min(1.0, left), skip=others)
    finally:
        if held and slots is not None:
            slots.release()
    if record is None:
        return None
    decision = record["decision"]
    clock = decision.get("clock") or {}
    return {"turn": decision["turn"], "legal_actions": decision["legal_actions"],
            "faces": faces_of(decision["game"], _strings(decision["legal_actions"])),
            "cautions": cautions_of(decision["game"], decision["view"], decision["legal_actions"]),
            "deadline_ms": decision["deadline_ms"], "left_ms": max(0, int(record["deadline_at"]) - now_ms()),
            "move_ms": clock.get("move_ms"), "bank_ms": clock.get("bank_ms"),
            "pending": decision["view"].get("pending")}


def cautions_of(game: str, view: dict, actions: list[dict]) -> list[dict]:
    """The legal actions the game marks for the seat (`Game.caution`, from the seat's own view:
    the one its decision carries), each caution once: [{"text", "actions": [indices]}]."""
    caution = games.get(game).caution
    marked: dict[str, list[int]] = {}
    for i, action in enumerate(actions if caution else ()):
        text = caution(view, action)
        if text:
            marked.setdefault(text, []).append(i)
    return [{"text": text, "actions": indices} for text, indices in marked.items()]


def _strings(actions: list[dict]) -> list[str]:
    """The strings of legal actions (a key, a value, or in a list): the cards among them are drawn
    (a key may name a card: `{"gertrude": 1}` plays that card on seat 1)."""
    out = []
    for action in actions:
        out.extend(action)
        for value in action.values():
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, list):
                out.extend(v for v in value if isinstance(v, str))
    return out


@bp.get("/play/<string:match_id>")
def person_table(match_id: str):
    """The person's seat at the table: their hand and every legal action to click, moved on by
    the match's event stream; at the end the result, the replay and "play again"."""
    account = session_account()
    if account is None:
        return redirect(url_for("web.signin_page", next=request.full_path.rstrip("?")), 303)
    _account, match, seat, bot = _my_match(match_id)
    n = len(match["seats"])
    names = names_of(match["seats"])
    seat_names = [names[b] for b in match["seats"]]
    over = match["status"] in OVER
    public = is_public(match)
    state = _seat_state(match, seat, bot)
    outcome = winners(match.get("result"), seat_names) if public else None
    if over and public:  # the end: every hand shown, as in the replay
        step = match_step(match, state["turns"])
        state["table"], state["entry"] = step["table"], step["entry"]
    page = {"names": seat_names, "bots": match["seats"], "outcome": outcome, "seat": seat,
            "match": match["id"], "decision": state["decision"], "status": match["status"],
            "turns": state["turns"], "to_act": state["to_act"], "table": state["table"], "clocks": _clocks(match),
            "urls": {"state": url_for("web.person_state", match_id=match["id"]),
                     "answer": url_for("web.person_table", match_id=match["id"]) + "/turns/",
                     "events": f"/api/v1/matches/{match['id']}/events"}}
    return render("web/play_table.html", m=match, seat=seat, names=names, seat_names=seat_names, state=state,
                  regions=regions(n, seat), outcome=outcome, page=page, over=over, public=public,
                  clocks=page["clocks"], deal_in_play=over and due_twin(store(), match) is not None)


def _clocks(match: dict) -> list[dict]:
    own = match.get("seat_clocks") or [None] * len(match["seats"])
    return [{"move_ms": (c or {}).get("move_timeout_ms", match["move_timeout_ms"]),
             "bank_ms": (c or {}).get("time_bank_ms", match.get("time_bank_ms") or 0)} for c in own]


@bp.get("/play/<string:match_id>/state")
def person_state(match_id: str):
    """JSON: the table from the person's seat now and their pending decision; `?wait=1` waits a
    few seconds for the decision when their turn has come but it is not published yet."""
    _account, match, seat, bot = _my_match(match_id)
    wait = STATE_WAIT_S if request.args.get("wait") in ("1", "true") else 0.0
    response = jsonify(_seat_state(match, seat, bot, wait))
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.post("/play/<string:match_id>/turns/<int:turn>")
def person_answer(match_id: str, turn: int):
    """The person's action for `turn` (JSON `{"action"}`, X-CSRF-Token), judged by the referee
    as a polling bot's answer is: 200 played; 422 illegal (a fault: the referee played its own
    choice, and says so); 409 not pending (already played, or its time ran out)."""
    g.checked_account = check_csrf()
    _account, match, _seat, bot = _my_match(match_id)
    body = request.get_json(silent=True) if request.content_length and request.content_length <= MAX_ACTION \
        else None
    action = body.get("action") if isinstance(body, dict) else None
    if not isinstance(action, dict):
        fail(400, "bad_request", "send the action to play: {\"action\": {…}} (one of the legal actions)")
    s = store()
    record = s.pending_record(bot["id"], match_id, turn)
    if record is None:
        fail(409, "not_pending", f"turn {turn} is not yours to play now: it was played, or its time ran out")
    entry = settle_answer(s, record, match_id, action=action, for_you=" for you")
    return jsonify({"match_id": match_id, "turn": turn, "action": entry["action"]})


# -- the account -----------------------------------------------------------------------

#: matches the account page lists per person seat
ACCOUNT_MATCHES = 30


@bp.get("/account")
def account_page():
    """Who is signed in, and their matches at the table (newest first)."""
    account = session_account()
    if account is None:
        return redirect(url_for("web.signin_page", next="/account"), 303)
    s = store()
    matches = []
    for _game, bot_id in sorted(s.person_seats(account["id"]).items()):
        found, _ = recent_matches(bot_id, ACCOUNT_MATCHES)
        matches += [{**m, "person": bot_id} for m in found]
    matches.sort(key=lambda m: m.get("created") or "", reverse=True)
    names = names_of([b for m in matches for b in m["seats"]])
    return render("web/account.html", account=account, matches=matches, names=names)



# -- signing in ------------------------------------------------------------------------

@bp.get("/signin")
def signin_page():
    """Sign in with an account token (or create an account first)."""
    return render("web/signin.html", next=safe_next(request.args.get("next")), account=session_account(),
                  invite_only=current_app.config["SIGNUP"] == "invite")


@bp.app_context_processor
def who_is_signed_in() -> dict:
    """Every page says who is signed in, and carries the session's CSRF token for its forms."""
    return {"signed_in": session_account(), "csrf_token": csrf_token()}
