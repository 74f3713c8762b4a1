"""`GET /games/{game}/rankings`: the ladder of one game, and its matches in play.

Rows are the bots on the ladder (`ladder` true, not retired) with a rating
of their latest version; ratings move only by ladder matches and the admin's
tournaments on the standard clock (core/ratings.py `is_rated`)."""

from __future__ import annotations

import bisect

import marshmallow as ma
from flask_smorest import Blueprint

import games
from core.store.ratings import PROVISIONAL_SIGMA
from server.api.common import RatingSchema, SeatSchema, errors, seats_of
from server.api.matches import seats_hidden
from server.auth import require_admin, store
from server.errors import fail

blp = Blueprint("rankings", __name__, description="The ladder: ratings from ladder matches (and the admin's "
                                                  "tournaments on the standard clock)")


class RankingSchema(ma.Schema):
    rank = ma.fields.Integer(required=True)
    bot = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True, metadata={"description": "the bot's latest version, whose rating this is"})
    name = ma.fields.String()
    rating = ma.fields.Nested(RatingSchema, required=True)
    matches = ma.fields.Integer(required=True, metadata={
        "description": "rated matches the bot played (the ladder's, the admin's tournaments on the standard clock)"})
    wins = ma.fields.Integer(required=True, metadata={"description": "rated matches it won alone"})
    other_matches = ma.fields.Integer(required=True, metadata={
        "description": "unrated matches it played (challenges, accounts' tournaments, comparisons): not its ladder record"})
    other_wins = ma.fields.Integer(required=True, metadata={"description": "unrated matches it won alone"})
    faults = ma.fields.Integer(metadata={"description": "faults the referee recorded against the bot, all matches"})
    tied_from = ma.fields.Integer(allow_none=True, metadata={
        "description": "statistically tied: the best rank whose bot's interval μ ± 3σ overlaps this "
                       "bot's (every bot ranked between them overlaps it too); null when no bot above does"})
    ladder_matches = ma.fields.Integer(required=True, metadata={
        "description": "ladder matches this version finished (counted when the last rotation of each deal is over)"})
    paused = ma.fields.Boolean(required=True, metadata={
        "description": "paused (ladder matches forfeited in a row): it keeps its place but is paired by nobody "
                       "until its owner resumes it"})
    provisional = ma.fields.Boolean(required=True, metadata={
        "description": f"its σ is above {PROVISIONAL_SIGMA:.4g} (25/3 × 0.5): too few matches to trust its place yet"})


class InPlaySchema(ma.Schema):
    id = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    seats = ma.fields.List(ma.fields.Nested(SeatSchema), required=True)
    pairing = ma.fields.String(required=True, metadata={"description": "its duplicate deal (a ladder pairing)"})
    rotation = ma.fields.Integer(required=True, metadata={"description": "which rotation of the deal it is, from 1"})
    rotations = ma.fields.Integer(required=True, metadata={"description": "the deal's rotations, played one after another"})


class RankingsSchema(ma.Schema):
    game = ma.fields.String(required=True)
    rankings = ma.fields.List(ma.fields.Nested(RankingSchema), required=True)
    in_play = ma.fields.List(ma.fields.Nested(InPlaySchema), required=True, metadata={
        "description": "the ladder's matches being played (or due) now: one per duplicate deal in play"})


@blp.get("/games/<string:game>/rankings")
@blp.response(200, RankingsSchema)
@errors(blp, 404)
def rankings(game: str):
    """Rank, bot, rating (mu, sigma, ordinal = mu - 3 sigma), rated matches and wins (unrated ones
    apart), faults, ladder matches, provisional; and the ladder's matches in play."""
    if game not in games.names():
        fail(404, "not_found", f"unknown game {game!r}")
    return {"game": game, "rankings": ladder(game), "in_play": in_play(game)}


class FlagSchema(ma.Schema):
    accounts = ma.fields.List(ma.fields.String(), required=True, metadata={"description": "the two accounts"})
    deals = ma.fields.Integer(required=True, metadata={"description": "rated deals their bots played together"})
    score = ma.fields.Float(required=True, metadata={"description": "what the first account's bots scored in them"})
    expected = ma.fields.Float(required=True, metadata={
        "description": "what the ladder expected of them, each bot rated from its deals with everyone else"})
    z = ma.fields.Float(required=True, metadata={"description": "(score − expected) over its standard deviation"})
    at = ma.fields.String(required=True, metadata={"description": "when the pair was flagged"})


class FlagsSchema(ma.Schema):
    game = ma.fields.String(required=True)
    flags = ma.fields.List(ma.fields.Nested(FlagSchema), required=True)


@blp.get("/games/<string:game>/collusion")
@blp.response(200, FlagsSchema)
@errors(blp, 401, 403, 404)
def collusion_flags(game: str):
    """The pairs of accounts the collusion test flagged (admin only): their deals are out of the
    ratings and their bots are never seated together again."""
    require_admin()
    if game not in games.names():
        fail(404, "not_found", f"unknown game {game!r}")
    flags = sorted(store().collusion_flags(game).values(), key=lambda f: f["at"])
    return {"game": game, "flags": flags}


def in_play(game: str) -> list[dict]:
    """The ladder's matches in play (one per pairing: the rotation being played or due)."""
    matches = store().ladder_matches_in_play(game)
    return [{"id": m["id"], "status": m["status"], "seats": seats_of(m, hidden), "pairing": m["pairing"],
             "rotation": m["rotation"], "rotations": m["rotations"]}
            for m, hidden in zip(matches, seats_hidden(matches), strict=True)]


def ladder(game: str) -> list[dict]:
    """The store's ladder, each bot's fault count and whether it is `paused` (it keeps its place,
    paired by nobody until its owner resumes it) included (the leaderboard page shows them too);
    with the bots each one is statistically tied with."""
    rows = store().rankings(game)
    mark_ties(rows)
    return rows


def mark_ties(rows: list[dict]) -> None:
    """Give each row `tied_from`: the best rank above it whose μ ± 3σ overlaps its own.

    The ladder sorts by the ordinal μ − 3σ, a cautious estimate; two bots whose
    intervals overlap may well be in either order, so the page says so rather
    than let a rank suggest a difference the matches have not shown. Rows come
    sorted by their interval's low end, so a bot above overlaps this one exactly
    when its low end is at most this one's high end: those bots are a run that
    ends just above it, found by bisection.
    """
    lows = [-(r["rating"]["mu"] - 3 * r["rating"]["sigma"]) for r in rows]  # ascending
    for i, row in enumerate(rows):
        high = row["rating"]["mu"] + 3 * row["rating"]["sigma"]
        first = bisect.bisect_left(lows, -high, 0, i)
        row["tied_from"] = rows[first]["rank"] if first < i else None
