"""`GET /games`: the games, their seat ranges, options with defaults, and standard clock.

The standard clock is what a match entering another account's bot must use
(docs/api.md §6, consent): listed here so a client can read it rather than guess.
"""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint

import games
from sdk.clock import DEFAULT_TIME

blp = Blueprint("games", __name__, description="The card games the referee judges")


class LadderSchema(ma.Schema):
    seats = ma.fields.Integer(required=True, metadata={"description": "a ladder table's seats"})
    move_timeout_ms = ma.fields.Integer(required=True)
    time_bank_ms = ma.fields.Integer(required=True)
    max_faults = ma.fields.Integer(required=True)


class GameSchema(ma.Schema):
    name = ma.fields.String(required=True)
    title = ma.fields.String()
    min_seats = ma.fields.Integer(required=True)
    max_seats = ma.fields.Integer(required=True)
    options = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Raw(allow_none=True), required=True,
                             metadata={"description": "name: default (JSON; deck is null, a seat-dependent default is \"auto\")"})
    rules_url = ma.fields.String(required=True, metadata={
        "description": "the game's rules for bot authors, as a web page (an absolute path on this server)"})
    ladder = ma.fields.Nested(LadderSchema, required=True, metadata={
        "description": "the standard clock (required when entering another account's bot) and a ladder table's seats"})


class GamesSchema(ma.Schema):
    games = ma.fields.List(ma.fields.Nested(GameSchema), required=True)


def standard_clock() -> dict:
    """The clock every game's ladder and every cross-account match is played on."""
    return {"move_timeout_ms": DEFAULT_TIME.move_timeout_ms, "time_bank_ms": DEFAULT_TIME.time_bank_ms,
            "max_faults": DEFAULT_TIME.max_faults}


def ladder_of(name: str) -> dict:
    """`GET /games`' `ladder`: a ladder table's seats and the standard clock."""
    return {"seats": games.get(name).ladder_seats, **standard_clock()}


def rules_url(game: str) -> str:
    """Where the web pages show a game's rules (server/web/pages.py `rules_page`)."""
    return f"/games/{game}/rules"


@blp.get("/games")
@blp.response(200, GamesSchema)
def list_games():
    """The registered games, each with the web page of its rules (`rules_url`)."""
    return {"games": [{**games.get(name).describe(), "rules_url": rules_url(name),
                       "ladder": ladder_of(name)} for name in games.names()]}
