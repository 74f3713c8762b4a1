"""Matches: `POST /matches` (a challenge) and `GET /matches/{id}`.

A challenge is validated completely here — game, bots, seat count, options
(by building the match's first state) — so a bad one is a 4xx now and never
a failing job later. A match's actions stay hidden until it is public: some
are secret (a discard), and a tournament match would reveal its duplicate
twin's deal. Until then anyone sees its status, seats and the spectator view.
"""

from __future__ import annotations

import secrets

import marshmallow as ma
from flask_smorest import Blueprint
from marshmallow import validate

import games
from core.conclusion import end_match
from core.ratings import KINDS, is_rated, kind_of
from core.store.comparisons import OVER as DECIDED
from core.store.matches import OVER
from core.store.versions import match_versions
from sdk import export
from sdk.clock import DEFAULT_TIME, seat_times
from sdk.faults import fault_kind
from sdk.replay import Replay
from server.api.common import (
    ID,
    MAX_FAULTS,
    MOVE_TIMEOUT,
    NAME,
    SEED,
    TIME_BANK,
    SeatSchema,
    check_consent,
    check_entrants,
    claim_guest_places,
    enqueue,
    errors,
    game_or_422,
    seats_of,
)
from server.api.table_schema import TableSchema
from server.auth import current_account, is_admin, require_account_or_admin, store
from server.errors import fail
from server.match_table import table_of

blp = Blueprint("matches", __name__, description="Single matches (challenges) and every match's record")

KIND_DESCRIPTION = ("ladder (the matchmaker's: rated), tournament, comparison or challenge (POST /matches); "
                    "only ladder matches and the admin's tournaments on the standard clock are rated")
#: queued matches one account may have at a time (docs/api.md Limits)
MAX_QUEUED = 50
MAX_SEATS = 10


class ChallengeSchema(ma.Schema):
    game = ma.fields.String(required=True, validate=NAME)
    bots = ma.fields.List(ma.fields.String(validate=ID), required=True,
                          validate=validate.Length(min=1, max=MAX_SEATS),
                          metadata={"description": "bot ids in seat order"})
    seed = ma.fields.Integer(strict=True, validate=SEED,
                             metadata={"description": "omit it and the server draws one (a challenge is never "
                                                      "rated: only the ladder's matches are)"})
    options = ma.fields.Dict(keys=ma.fields.String(validate=NAME), load_default=dict)
    move_timeout_ms = ma.fields.Integer(strict=True, load_default=DEFAULT_TIME.move_timeout_ms, validate=MOVE_TIMEOUT)
    time_bank_ms = ma.fields.Integer(strict=True, load_default=DEFAULT_TIME.time_bank_ms, validate=TIME_BANK, metadata={
        "description": "each seat's bank for the match: time a decision takes beyond move_timeout_ms"})
    max_faults = ma.fields.Integer(strict=True, load_default=DEFAULT_TIME.max_faults, validate=MAX_FAULTS)


class QueuedSchema(ma.Schema):
    id = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    rated = ma.fields.Boolean()


class LogEntrySchema(ma.Schema):
    turn = ma.fields.Integer(required=True)
    seat = ma.fields.Integer(required=True)
    action = ma.fields.Dict(required=True)
    fault = ma.fields.String()
    ms = ma.fields.Integer(metadata={"description": "the time the referee charged the seat for this "
                                                    "decision (absent where nobody was asked)"})


class LatencySchema(ma.Schema):
    p50 = ma.fields.Integer(allow_none=True)
    max = ma.fields.Integer(allow_none=True)


class MatchSeatSchema(SeatSchema):
    latency_ms = ma.fields.Nested(LatencySchema, metadata={
        "description": "the times the referee charged this seat's decisions (null before its first)"})
    bank_ms = ma.fields.Integer(allow_none=True, metadata={
        "description": "what is left of its time bank (null: a match from before the bank)"})


class MatchSchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    status = ma.fields.String(required=True, metadata={"description": "queued, running, finished or aborted"})
    seats = ma.fields.List(ma.fields.Nested(MatchSeatSchema), required=True)
    rated = ma.fields.Boolean(required=True)
    kind = ma.fields.String(required=True, validate=validate.OneOf(KINDS), metadata={"description": KIND_DESCRIPTION})
    tournament = ma.fields.String(allow_none=True)
    public = ma.fields.Boolean(required=True, metadata={"description": "whether log, seed and decks are shown"})
    move_timeout_ms = ma.fields.Integer()
    time_bank_ms = ma.fields.Integer(allow_none=True, metadata={"description": "null: created before the time bank"})
    max_faults = ma.fields.Integer()
    seat_clocks = ma.fields.List(ma.fields.Dict(allow_none=True), allow_none=True, metadata={
        "description": "seats on a clock of their own (a person's: docs/api.md §6), each "
                       "{move_timeout_ms, time_bank_ms} or null for the match's; null when none is"})
    options = ma.fields.Dict(metadata={"description": "without deck until the match is public"})
    turns = ma.fields.Integer(metadata={"description": "actions played so far"})
    created = ma.fields.String(allow_none=True)
    started = ma.fields.String(allow_none=True)
    finished = ma.fields.String(allow_none=True)
    reason = ma.fields.String(allow_none=True)
    view = ma.fields.Dict(allow_none=True, metadata={"description": "the spectator view while running"})
    result = ma.fields.Dict(allow_none=True, required=True)
    log = ma.fields.List(ma.fields.Nested(LogEntrySchema), allow_none=True, required=True)
    seed = ma.fields.Integer(allow_none=True)
    decks = ma.fields.List(ma.fields.Raw(), allow_none=True)


def draw_seed() -> int:
    """A seed from the CSPRNG: nobody, not even the challenger, knows the deal."""
    return secrets.randbits(63)


@blp.post("/matches")
@blp.arguments(ChallengeSchema)
@blp.response(202, QueuedSchema)
@errors(blp, 401, 403, 422, 429)
def create_match(body):
    """Challenge: one match between the given bots, seat i = bots[i]."""
    account = require_account_or_admin()
    s = store()
    game = game_or_422(body["game"])
    if account is not None and s.queued_match_count(account["id"]) >= MAX_QUEUED:
        fail(429, "too_many_matches", f"at most {MAX_QUEUED} queued matches per account",
             {"Retry-After": "10"})
    seed = body.get("seed")
    rated = is_rated("challenge", seed, body["options"])  # never: docs/api.md §6
    check_entrants(s, game.name, body["bots"], rated)
    check_consent(s, account, body["bots"], body)
    if seed is None:
        seed = draw_seed()
    try:
        game.new(len(body["bots"]), seed, body["options"])
    except games.InvalidOptions as exc:
        fail(422, "invalid_options", str(exc))
    match_id = claim_guest_places(s, account, body["bots"])
    match = s.create_match(game.name, body["bots"], seed, body["options"],
                           move_timeout_ms=body["move_timeout_ms"], max_faults=body["max_faults"],
                           time_bank_ms=body["time_bank_ms"], rated=rated, owner=account["id"] if account else None,
                           match_id=match_id)
    enqueue("match", match["id"])
    return {"id": match["id"], "status": match["status"], "rated": rated}


def is_public(match: dict) -> bool:
    """May everyone see this match's actions, seed and deals now?

    Once it is over — and, for a tournament's match, its tournament is over; for a
    comparison's, the comparison is decided; for another duplicate deal's (a ladder
    pairing's), every rotation of the deal is over: until then a rotation still to play
    deals the same cards, and a bot told them could play it knowing every hand."""
    return are_public([match])[0]


def are_public(matches: list[dict]) -> list[bool]:
    """`is_public` of many matches, their tournaments, comparisons and twins read in one round
    trip each."""
    over = [m for m in matches if m["status"] in OVER]
    tournaments = store().tournament_statuses(sorted({m["tournament"] for m in over if m.get("tournament")}))
    comparisons = store().comparison_statuses(sorted({m["comparison"] for m in over if m.get("comparison")}))
    twins = sorted({t for m in over if not (m.get("tournament") or m.get("comparison"))
                    for t in m.get("twins") or ()})
    played = {t: (m or {}).get("status") for t, m in zip(twins, store().get_matches(twins, ("status",)), strict=True)}
    return [m["status"] in OVER
            and (not m.get("tournament") or tournaments.get(m["tournament"]) in (None, *OVER))
            and (not m.get("comparison") or comparisons.get(m["comparison"]) in (None, *DECIDED))
            and (bool(m.get("tournament") or m.get("comparison"))
                 or all(played.get(t) in (None, *OVER) for t in m.get("twins") or ()))
            for m in matches]


def seats_hidden(matches: list[dict]) -> list[bool]:
    """Whether each match's seats are hidden from the caller now: a rated match whose deal is
    not over — it, or a twin of it (another rotation of its deal), still to play. Until then
    nobody but the admin learns which bots sit at a rated table (docs/api.md, the ladder):
    a bot that knew its opponent could throw its deals to an accomplice."""
    if is_admin():
        return [False] * len(matches)
    live = [m for m in matches if m.get("rated")]
    twins = sorted({t for m in live for t in m.get("twins") or ()})
    status = {t: (m or {}).get("status") for t, m in zip(twins, store().get_matches(twins, ("status",)), strict=True)}
    return [bool(m.get("rated")) and not (m["status"] in OVER and all(status.get(t) in (None, *OVER)
                                                                      for t in m.get("twins") or ()))
            for m in matches]


def is_hidden(match: dict) -> bool:
    """`seats_hidden` of one match."""
    return seats_hidden([match])[0]


def public_entry(entry: dict, public: bool) -> dict:
    """A log entry as the public log shows it: whole once the match is public; before, only
    its turn, its seat and the kind of its fault — never the action (some are secret, like a
    discard) nor a fault's detail (an illegal action's reason tells what the seat holds)."""
    if public:
        return entry
    shown = {"turn": entry["turn"], "seat": entry["seat"]}
    if entry.get("fault"):
        shown["fault"] = fault_kind(entry["fault"])
    return shown


def match_record(match: dict, admin: bool = False) -> dict:
    """`GET /matches/{id}`'s answer: everything once public, the spectator's share before."""
    s = store()
    public = admin or is_public(match)
    hidden = not admin and is_hidden(match)
    log = s.match_log(match["id"])
    times = seat_times(log, len(match["seats"]), match["move_timeout_ms"], match.get("time_bank_ms"),
                       match.get("seat_clocks"))
    out = {
        "id": match["id"], "game": match["game"], "status": match["status"],
        "seats": [{**seat, **time} for seat, time in zip(seats_of(match, hidden), times, strict=True)],
        "rated": match["rated"], "kind": kind_of(match),
        "tournament": match.get("tournament"), "public": public,
        "move_timeout_ms": match["move_timeout_ms"], "max_faults": match["max_faults"],
        "time_bank_ms": match.get("time_bank_ms"), "seat_clocks": match.get("seat_clocks"),
        "turns": len(log),
        "created": match.get("created"), "started": match.get("started"),
        "finished": match.get("finished"), "reason": match.get("reason"),
        "result": None, "log": None, "view": None, "seed": None, "decks": None,
    }
    options = dict(match["options"])
    if not public:
        options.pop("deck", None)
    out["options"] = options
    if match["status"] == "running":
        out["view"] = s.replay(match["id"]).view(None)
    if public:
        result = match.get("result")
        out["result"] = result
        out["log"] = log
        out["seed"] = match["seed"]
        out["decks"] = result.get("decks") if isinstance(result, dict) else None
    return out


@blp.get("/matches/<string:match_id>")
@blp.response(200, MatchSchema)
@errors(blp, 404)
def get_match(match_id: str):
    """Status and seats; the spectator view while running; log, seed, decks, result once public."""
    match = store().get_match(match_id)
    if match is None:
        fail(404, "not_found", f"there is no match {match_id!r}")
    return match_record(match, admin=is_admin())


class StepSchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    step = ma.fields.Integer(required=True, metadata={"description": "the state after the log's first `step` actions"})
    turns = ma.fields.Integer(required=True, metadata={"description": "the log's length: steps go 0..turns"})
    entry = ma.fields.Nested(LogEntrySchema, allow_none=True, required=True,
                             metadata={"description": "the action that led here (log[step-1]); null at step 0"})
    to_act = ma.fields.Integer(allow_none=True, required=True)
    hands = ma.fields.List(ma.fields.Raw(allow_none=True), required=True,
                           metadata={"description": "each seat's hand at this step (its view's `hand`)"})
    view = ma.fields.Dict(required=True, metadata={"description": "the spectator view at this step"})
    views = ma.fields.List(ma.fields.Dict(), required=True, metadata={"description": "each seat's view at this step"})
    table = ma.fields.Nested(TableSchema, required=True,
                             metadata={"description": "the game's card table at this step, every hand shown"})
    decision = ma.fields.Dict(allow_none=True, required=True, metadata={
        "description": "the decision the seat to act received here (view, legal actions, deadline, and "
                       "clock once matches have one), exactly as sent; null at the end and for a seat "
                       "that had forfeited (the referee played for it, nobody was asked)"})
    debug = ma.fields.String(allow_none=True, metadata={
        "description": "what the seat to act wrote with its answer to `decision` (its `debug`): only "
                       "for the owner of that seat's bot (and the admin), else null"})


def debug_seats(match: dict) -> list[int]:
    """The seats whose debug text the caller may read (docs/api.md §6 "Debug output"): every
    seat for the admin, the seats of the calling account's own bots, none for anyone else."""
    if is_admin():
        return list(range(len(match["seats"])))
    account = current_account()
    if account is None:
        return []
    owned = {b["id"] for b in store().get_bots(sorted(set(match["seats"]))) if b.get("owner") == account["id"]}
    return [seat for seat, bot_id in enumerate(match["seats"]) if bot_id in owned]


def match_step(match: dict, step: int) -> dict:
    """The replayed state after `step` actions: what the replay viewer shows.

    Call only for a public match: hands and seat views are the hidden part.
    """
    s = store()
    log = s.match_log(match["id"])
    if not 0 <= step <= len(log):
        fail(404, "not_found", f"match {match['id']} has steps 0 to {len(log)}, not {step}")
    replay = Replay(match_document(match, log))
    referee = replay.referee().replay(log[:step])
    state = referee.state
    views = [state.view(seat) for seat in range(len(match["seats"]))]
    view, entry = state.view(None), log[step - 1] if step else None
    return {"id": match["id"], "game": match["game"], "step": step, "turns": len(log),
            "entry": entry, "to_act": state.to_act,
            "hands": [v.get("hand") for v in views], "view": view, "views": views,
            "table": table_of(match["game"], len(match["seats"]), view, entry, views),
            "decision": replay.step(step).decision if step < len(log) else None,
            "debug": step_debug(match, step) if step < len(log) else None}


def step_debug(match: dict, step: int) -> str | None:
    """The debug text the seat to act at `step` sent with its answer, if the caller may read it."""
    note = store().turn_debug(match["id"], step)
    return note["text"] if note and note["seat"] in debug_seats(match) else None


def match_document(match: dict, log: list[dict], debug: list[dict] | None = None) -> dict:
    """The export of one match (the format is sdk/export.py's, which the SDK's replay reads);
    `debug`: the notes the caller may read, if any (`debug_seats`)."""
    return export.document(match["id"], match["game"], match["seats"], match["seed"], match["options"], log,
                           match.get("result"), match.get("move_timeout_ms"), match.get("time_bank_ms"),
                           match.get("max_faults"), match_versions(match), debug=debug,
                           seat_clocks=match.get("seat_clocks"))


@blp.get("/matches/<string:match_id>/steps/<int:step>")
@blp.response(200, StepSchema)
@errors(blp, 404, 409)
def get_match_step(match_id: str, step: int):
    """Replay: the state after the first `step` actions, every seat's hand included
    (409 until the match is public: finished, and its tournament too)."""
    match = store().get_match(match_id)
    if match is None:
        fail(404, "not_found", f"there is no match {match_id!r}")
    if not (is_admin() or is_public(match)):
        fail(409, "not_public", "a match's hands are shown once it is finished (and its tournament too, or its comparison decided)")
    return match_step(match, step)


ADMIN_STOP = "stopped by the admin"


def stop_match(match_id: str) -> bool:
    """End a match as "aborted" (it counts for nobody), along the one path a match ends by
    (core/conclusion.py: its pending call and deadline cancelled, its slots given back, the
    next twin due); False if it was already over."""
    return end_match(store(), match_id, "aborted", reason=ADMIN_STOP)


#: the newest matches of a bot looked at for queued ones to cancel (`end_queued_guest_matches`)
GUEST_SCAN = 20_000
NO_LONGER_ACCEPTS = "its bot {bot} no longer accepts matches from other accounts"


def end_queued_guest_matches(s, bot: dict) -> list[str]:
    """End "aborted" the bot's queued matches (not started) that another account started — its
    challenges, /play matches, tournaments', comparisons' — now that the bot accepts its owner only;
    the ids ended. The admin's are left (the admin is not bound by `accepts`)."""
    ended: list[str] = []
    starters: dict[tuple, str | None] = {}
    before, seen = None, 0
    while seen < GUEST_SCAN:
        ids, before = s.bot_match_page(bot["id"], 500, before)
        seen += len(ids)
        for match in s.get_matches(ids, ("id", "status", "owner", "tournament", "comparison")):
            if match is None or match.get("status") != "queued":
                continue
            key = (match.get("owner"), match.get("tournament"), match.get("comparison"))
            if key not in starters:
                starters[key] = s.started_by(match)
            if starters[key] in (None, "admin", bot["owner"]):
                continue
            if end_match(s, match["id"], "aborted", reason=NO_LONGER_ACCEPTS.format(bot=bot["id"])):
                ended.append(match["id"])
        if before is None:
            break
    return ended


@blp.post("/matches/<string:match_id>/abort")
@blp.response(200, MatchSchema)
@errors(blp, 401, 403, 404, 409)
def abort_match(match_id: str):
    """Stop a match: it ends "aborted" and counts for nobody (no fault to any seat); its worker
    stops at its next step and a polling bot's pending answer is refused (409). The admin may stop
    any match; the owner of a bot seated in a match another account started (a challenge, /play,
    that account's tournament or comparison) may stop that one."""
    account = require_account_or_admin()
    s = store()
    match = s.get_match(match_id)
    if match is None:
        fail(404, "not_found", f"there is no match {match_id!r}")
    reason = ADMIN_STOP
    if account is not None:
        starter = s.started_by(match)
        bots = s.bot_records(list(dict.fromkeys(match["seats"])))
        mine = [b for b, bot in bots.items() if bot.get("owner") == account["id"]]
        if not mine or starter in (None, "admin", account["id"]):
            fail(403, "forbidden", "only the admin, or the owner of a bot seated in a match another account "
                 "started (a challenge, /play, that account's tournament or comparison), may stop it")
        reason = f"stopped by the owner of bot {mine[0]}"
    if not end_match(s, match_id, "aborted", reason=reason):
        fail(409, "already_over", f"match {match_id} is already {match['status']}")
    return match_record(s.get_match(match_id), admin=account is None)
