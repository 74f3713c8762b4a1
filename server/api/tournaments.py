"""Tournaments: `POST /tournaments`, `GET /tournaments/{id}` and its matches.

The request is validated whole (game, entrants, table size, options) before
anything is stored; the worker's `run_tournament` job then expands the
schedule into matches. Until the tournament is finished its matches show no
actions, no seed and no result: a finished duplicate twin must not reveal
the deal its other rotation is still playing.
"""

from __future__ import annotations

import math

import marshmallow as ma
from flask import current_app
from flask_smorest import Blueprint
from marshmallow import validate

import games
from core import liveness
from core.ratings import is_rated
from core.schedule_size import gauntlet_match_count, match_count, table_count
from sdk.clock import DEFAULT_TIME
from sdk.comparison import gauntlet_tables
from server.api.common import (
    ID,
    MAX_FAULTS,
    MOVE_TIMEOUT,
    NAME,
    SEED,
    TIME_BANK,
    PageQuerySchema,
    SeatSchema,
    check_consent,
    check_entrants,
    cursor_of,
    enqueue,
    errors,
    game_or_422,
    next_cursor_field,
    seats_of,
)
from server.api.crosstable import crosstable
from server.api.matches import ADMIN_STOP, draw_seed, seats_hidden
from server.auth import is_admin, require_account_or_admin, require_admin, store
from server.errors import fail

blp = Blueprint("tournaments", __name__, description="Round-robin tournaments with duplicate deals")

MAX_BOTS = 64
#: tournament formats (docs/api.md §5 "Scheduling")
FORMATS = ("round-robin", "gauntlet")
MAX_DEALS = 100
#: unfinished tournaments one account may have (docs/api.md Limits)
MAX_OPEN = 3
#: the most matches a tournament of an account may have (docs/api.md §5; the admin has no cap)
MAX_MATCHES = 10_000


class TournamentRequestSchema(ma.Schema):
    game = ma.fields.String(required=True, validate=NAME)
    bots = ma.fields.List(ma.fields.String(validate=ID), required=True,
                          validate=validate.Length(min=2, max=MAX_BOTS))
    format = ma.fields.String(load_default="round-robin", validate=validate.OneOf(FORMATS), metadata={
        "description": "round-robin: every table of entrants; gauntlet: `candidate` at every table, the "
                       "others filling its other seats in turn"})
    candidate = ma.fields.String(validate=ID, metadata={"description": "the gauntlet's candidate: one of bots"})
    seats = ma.fields.Integer(strict=True, validate=validate.Range(min=1, max=10),
                              metadata={"description": "table size; default the game's min_seats"})
    deals = ma.fields.Integer(strict=True, load_default=1, validate=validate.Range(min=1, max=MAX_DEALS))
    duplicate = ma.fields.Boolean(load_default=True, truthy={True}, falsy={False})
    seed = ma.fields.Integer(strict=True, validate=SEED)
    options = ma.fields.Dict(keys=ma.fields.String(validate=NAME), load_default=dict)
    move_timeout_ms = ma.fields.Integer(strict=True, load_default=DEFAULT_TIME.move_timeout_ms, validate=MOVE_TIMEOUT)
    time_bank_ms = ma.fields.Integer(strict=True, load_default=DEFAULT_TIME.time_bank_ms, validate=TIME_BANK, metadata={
        "description": "each seat's bank for the match: time a decision takes beyond move_timeout_ms"})
    max_faults = ma.fields.Integer(strict=True, load_default=DEFAULT_TIME.max_faults, validate=MAX_FAULTS)


class ProgressSchema(ma.Schema):
    done = ma.fields.Integer(required=True)
    total = ma.fields.Integer(required=True)


class MemorySchema(ma.Schema):
    diff = ma.fields.Float(allow_none=True, metadata={
        "description": "mean match points in rotations of deals the bot had already played, minus the "
                       "first rotation it played of the same deals (null before any such deal)"})
    ci95 = ma.fields.List(ma.fields.Float(), allow_none=True, metadata={"description": "its 95% interval"})
    flag = ma.fields.Boolean(metadata={
        "description": "true when the 99% interval lies above 0 with at least 30 deals: the bot seems to "
                       "remember deals (duplicate play's weakness)"})


class StandingSchema(ma.Schema):
    rank = ma.fields.Integer(required=True, metadata={"description": "equal points share a rank"})
    bot = ma.fields.String(required=True)
    points = ma.fields.Float(required=True, metadata={"description": "sum of match points: (seats ranked "
                             "above + ½ × seats tied with) / (seats − 1) per match"})
    matches = ma.fields.Integer(required=True)
    wins = ma.fields.Integer(metadata={"description": "matches where it alone ranked first"})
    draws = ma.fields.Integer(metadata={"description": "matches where it shared first place"})
    mean_score = ma.fields.Float(allow_none=True, metadata={"description": "mean game score"})
    ci95 = ma.fields.Float(allow_none=True, metadata={"description": "half-width of the mean score's 95% "
                           "confidence interval (null under two matches)"})
    faults = ma.fields.Integer()
    forfeits = ma.fields.Integer()
    memory = ma.fields.Nested(MemorySchema, metadata={"description": "docs/api.md §5 \"Scheduling\""})


class TournamentSchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    status = ma.fields.String(required=True, metadata={
        "description": "queued, running, finished, aborting (an abort ending its matches) or aborted"})
    format = ma.fields.String()
    candidate = ma.fields.String(metadata={"description": "a gauntlet's candidate"})
    bots = ma.fields.List(ma.fields.String())
    versions = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Integer(), metadata={
        "description": "each bot's version, as it was when the tournament was created: every match plays it"})
    seats = ma.fields.Integer()
    deals = ma.fields.Integer()
    duplicate = ma.fields.Boolean()
    rated = ma.fields.Boolean()
    move_timeout_ms = ma.fields.Integer()
    time_bank_ms = ma.fields.Integer(allow_none=True, metadata={"description": "null: created before the time bank"})
    max_faults = ma.fields.Integer()
    options = ma.fields.Dict()
    seed = ma.fields.Integer(allow_none=True, metadata={"description": "shown once finished"})
    schedule = ma.fields.String(allow_none=True, metadata={"description": "all tables, or how the sample was drawn"})
    progress = ma.fields.Nested(ProgressSchema, required=True)
    standings = ma.fields.List(ma.fields.Nested(StandingSchema), required=True)
    created = ma.fields.String(allow_none=True)
    started = ma.fields.String(allow_none=True)
    finished = ma.fields.String(allow_none=True)
    reason = ma.fields.String(allow_none=True, metadata={"description": "why it was aborted"})


class WarningSchema(ma.Schema):
    bot = ma.fields.String(required=True)
    name = ma.fields.String(required=True)
    status = ma.fields.String(required=True, metadata={"description": "offline or unknown"})
    message = ma.fields.String(required=True)


class QueuedTournamentSchema(ma.Schema):
    id = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    format = ma.fields.String(required=True, metadata={"description": "round-robin or gauntlet"})
    candidate = ma.fields.String(required=True, allow_none=True,
                                 metadata={"description": "a gauntlet's candidate; null for a round-robin"})
    schedule = ma.fields.String(required=True, metadata={
        "description": "all tables, a balanced sample of N tables (how balanced: GET once it runs), "
                       "or the gauntlet's tables"})
    total = ma.fields.Integer(required=True, metadata={"description": "the matches it will play"})
    warnings = ma.fields.List(ma.fields.Nested(WarningSchema), metadata={
        "description": "entrants that may forfeit: webhook bots that did not answer a ping now, "
                       "polling bots not seen in the last 2 minutes (the tournament is created anyway)"})
    game = ma.fields.String()
    seats = ma.fields.Integer()
    deals = ma.fields.Integer()
    duplicate = ma.fields.Boolean()
    rated = ma.fields.Boolean()


class TournamentMatchSchema(ma.Schema):
    id = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    seats = ma.fields.List(ma.fields.Nested(SeatSchema), required=True)
    result = ma.fields.Dict(allow_none=True, required=True)


class TournamentMatchesSchema(ma.Schema):
    matches = ma.fields.List(ma.fields.Nested(TournamentMatchSchema), required=True,
                             metadata={"description": "in schedule order"})
    next_cursor = next_cursor_field()


@blp.post("/tournaments")
@blp.arguments(TournamentRequestSchema)
@blp.response(202, QueuedTournamentSchema)
@errors(blp, 401, 403, 422, 429)
def create_tournament(body):
    """Schedule a round-robin (every table of `seats` entrants) or a gauntlet (`candidate` at every
    table): each table plays `deals` seeds, in every seat rotation with `duplicate`."""
    account = require_account_or_admin()
    s = store()
    game = game_or_422(body["game"])
    if account is not None and s.open_tournament_count(account["id"]) >= MAX_OPEN:
        fail(429, "too_many_tournaments", f"at most {MAX_OPEN} unfinished tournaments per account",
             {"Retry-After": "60"})
    bots = body["bots"]
    if len(set(bots)) != len(bots):
        fail(422, "duplicate_bot", "a bot may enter a tournament once")
    rated = is_rated("tournament", body.get("seed"), body["options"], by_admin=account is None, clock=body)
    check_entrants(s, game.name, bots, rated=rated)
    check_consent(s, account, bots, body)
    seats = body.get("seats", game.min_seats)
    if len(bots) < seats:
        fail(422, "too_few_bots", f"tables of {seats} need at least {seats} bots, not {len(bots)}")
    extra = {}
    if body["format"] == "gauntlet":
        if body.get("candidate") not in bots:
            fail(422, "invalid", "a gauntlet needs a `candidate`, one of its `bots`")
        extra["candidate"] = body["candidate"]
        size = gauntlet_match_count(len(bots), seats, body["deals"], body["duplicate"])
        others = [b for b in bots if b != body["candidate"]]
        schedule = f"gauntlet: {body['candidate']} at each of {len(gauntlet_tables(others, seats - 1))} tables"
    else:
        if "candidate" in body:
            fail(422, "invalid", "only a gauntlet has a `candidate`")
        size = match_count(len(bots), seats, body["deals"], body["duplicate"])
        schedule = round_robin_schedule(len(bots), seats)
    if account is not None and size > MAX_MATCHES:
        fail(422, "tournament_too_large", f"this tournament would have {size:,} matches; a tournament of an "
             f"account has at most {MAX_MATCHES:,} (fewer bots, deals or seat rotations)")
    seed = body.get("seed")
    if seed is None:
        seed = draw_seed()
    try:
        game.new(seats, seed, body["options"])
    except games.InvalidOptions as exc:
        fail(422, "invalid_options", str(exc))
    tournament = s.create_tournament(
        game.name, bots, seats=seats, deals=body["deals"], duplicate=body["duplicate"], seed=seed,
        options=body["options"], move_timeout_ms=body["move_timeout_ms"], time_bank_ms=body["time_bank_ms"],
        max_faults=body["max_faults"], format=body["format"],
        owner=account["id"] if account else None, rated=rated, **extra)
    enqueue("tournament", tournament["id"])
    public_only = bool(current_app.config.get("PUBLIC_URLS_ONLY"))
    return {**tournament, "candidate": tournament.get("candidate"), "schedule": schedule, "total": size,
            "warnings": liveness.warnings(s, s.get_bots(bots), public_only)}


def round_robin_schedule(bots: int, seats: int) -> str:
    """What `POST /tournaments` answers as a round-robin's `schedule`, before the worker draws
    it: the worker's own words (worker/schedules.py) as far as the count alone says them."""
    tables = table_count(bots, seats)
    if tables < math.comb(bots, seats):
        return f"balanced sample of {tables} tables"
    return "all tables"


def _tournament_or_404(tid: str) -> dict:
    tournament = store().get_tournament(tid)
    if tournament is None:
        fail(404, "not_found", f"there is no tournament {tid!r}")
    return tournament


def _finished(tournament: dict) -> bool:
    return tournament["status"] in ("finished", "aborted")


@blp.get("/tournaments/<string:tid>")
@blp.response(200, TournamentSchema)
@errors(blp, 404)
def get_tournament(tid: str):
    """Status, progress {done, total} and standings."""
    return tournament_record(_tournament_or_404(tid))


def tournament_record(tournament: dict) -> dict:
    """`GET /tournaments/{id}`'s answer: seed and deck only once it is over (or for the admin)."""
    tid = tournament["id"]
    public = _finished(tournament) or is_admin()
    out = {k: v for k, v in tournament.items() if k not in ("owner", "seed", "options")}
    options = dict(tournament.get("options") or {})
    if not public:
        options.pop("deck", None)
    out["options"] = options
    out["seed"] = tournament["seed"] if public else None
    out["progress"] = store().tournament_progress(tid)
    out["standings"] = store().standings(tid)
    return out


@blp.get("/tournaments/<string:tid>/matches")
@blp.arguments(PageQuerySchema, location="query")
@blp.response(200, TournamentMatchesSchema)
@errors(blp, 404, 422)
def tournament_matches(query, tid: str):
    """Its matches in schedule order, a page at a time: status and seats, and results
    once the tournament is finished."""
    tournament = _tournament_or_404(tid)
    matches, after = match_list_page(tournament, cursor_of(query) or 0, query["limit"], is_admin())
    return {"matches": matches, "next_cursor": None if after is None else str(after)}


def match_list_page(tournament: dict, start: int, limit: int, admin: bool = False) -> tuple[list[dict], int | None]:
    """Matches `start`… of the tournament as its list shows them, and where the next page starts."""
    s = store()
    public = _finished(tournament) or admin
    ids, after = s.tournament_match_page(tournament["id"], start, limit)
    matches = [m for m in s.get_matches(ids, ("id", "status", "seats", "versions", "result", "rated", "twins"))
               if m is not None]
    out = [{"id": m["id"], "status": m["status"], "seats": seats_of(m, hidden),
            "result": m.get("result") if public else None}
           for m, hidden in zip(matches, seats_hidden(matches), strict=True)]
    return out, after


class CrossCellSchema(ma.Schema):
    opponent = ma.fields.String(required=True)
    matches = ma.fields.Integer(required=True, metadata={"description": "matches where both sat at the table"})
    wins = ma.fields.Integer(required=True, metadata={"description": "of those, where this bot ranked above the opponent"})
    ties = ma.fields.Integer(required=True)
    losses = ma.fields.Integer(required=True)
    score = ma.fields.Float(allow_none=True, required=True,
                            metadata={"description": "(wins + ties/2) / matches; null without a match"})
    low = ma.fields.Float(allow_none=True, required=True, metadata={"description": "95% Wilson interval, lower end"})
    high = ma.fields.Float(allow_none=True, required=True, metadata={"description": "95% Wilson interval, upper end"})


class CrossRowSchema(CrossCellSchema):
    class Meta:
        exclude = ("opponent",)

    bot = ma.fields.String(required=True)
    cells = ma.fields.List(ma.fields.Nested(CrossCellSchema, allow_none=True), required=True,
                           metadata={"description": "one per bot in `bots` order; null on the diagonal"})


class CrosstableSchema(ma.Schema):
    id = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    confidence = ma.fields.Float(required=True, metadata={"description": "the intervals' level: 0.95"})
    bots = ma.fields.List(ma.fields.String(), required=True, metadata={"description": "in standings order"})
    rows = ma.fields.List(ma.fields.Nested(CrossRowSchema), required=True)


@blp.get("/tournaments/<string:tid>/crosstable")
@blp.response(200, CrosstableSchema)
@errors(blp, 404, 409)
def tournament_crosstable(tid: str):
    """Head-to-head results of every pair of entrants with 95% confidence intervals
    (409 until the tournament is finished: results stay hidden while it runs)."""

    tournament = _tournament_or_404(tid)
    if not (_finished(tournament) or is_admin()):
        fail(409, "not_finished", "the crosstable is published once the tournament is finished")
    return {"id": tid, "status": tournament["status"], "confidence": 0.95, **crosstable_of(tournament)}


def crosstable_of(tournament: dict) -> dict:
    """`{"bots", "rows"}` of the crosstable: computed from every match once the tournament is
    over and all its matches concluded, then stored (a large crosstable is slow to compute)."""
    s, tid = store(), tournament["id"]
    stored = s.tournament_summary(tid, "crosstable") if _finished(tournament) else None
    if stored is not None:
        return stored
    ranked = [row["bot"] for row in s.standings(tid)]
    bots = ranked + [b for b in tournament.get("bots") or [] if b not in ranked]
    matches = [{"seats": seats, "result": {"ranks": ranks}}
               for _, seats, ranks in s.match_ranks(s.tournament_matches(tid))]
    table = {"bots": bots, "rows": crosstable(bots, matches)}
    progress = s.tournament_progress(tid)
    if _finished(tournament) and progress["done"] >= progress["total"]:
        s.save_tournament_summary(tid, "crosstable", table)
    return table


@blp.post("/tournaments/<string:tid>/abort")
@blp.response(202, TournamentSchema)
@errors(blp, 401, 403, 404, 409)
def abort_tournament(tid: str):
    """Stop a tournament (admin only): 202 at once, status "aborting"; a job then ends each
    of its unfinished matches "aborted" and marks it "aborted". The finished ones keep their
    results, and the standings count only them. Again while it is aborting: 202, no change."""
    require_admin()
    tournament = _tournament_or_404(tid)
    if _finished(tournament):
        fail(409, "already_over", f"tournament {tid} is already {tournament['status']}")
    if store().begin_abort(tid, ADMIN_STOP) in ("finished", "aborted"):  # it ended meanwhile
        fail(409, "already_over", f"tournament {tid} is already over")
    return tournament_record(store().get_tournament(tid))
