"""What several blueprints share: field limits, the rating shape, the queue, games."""

from __future__ import annotations

import marshmallow as ma
from flask import current_app
from marshmallow import validate

import games
from server.errors import fail

NAME = validate.Length(min=1, max=64)
ID = validate.Length(min=1, max=64)
SEED = validate.Range(min=-(2**63), max=2**63 - 1)
MOVE_TIMEOUT = validate.Range(min=100, max=10000)
MAX_FAULTS = validate.Range(min=1, max=10)



class RatingSchema(ma.Schema):
    mu = ma.fields.Float(required=True)
    sigma = ma.fields.Float(required=True)
    ordinal = ma.fields.Float(required=True, metadata={"description": "mu - 3 sigma: the ladder's order"})


class SeatSchema(ma.Schema):
    seat = ma.fields.Integer(required=True)
    bot = ma.fields.String(required=True)


def seats_of(bot_ids: list[str]) -> list[dict]:
    return [{"seat": i, "bot": b} for i, b in enumerate(bot_ids)]


def game_or_422(name: str):
    try:
        return games.get(name)
    except games.UnknownGame:
        fail(422, "unknown_game", f"unknown game {name!r}; the games are: {', '.join(games.names())}")


def enqueue(kind: str, ident: str) -> None:
    """Queue the worker job running match or tournament `ident` on the app's queue
    (the server never imports the worker)."""
    current_app.extensions["cardarena.store"].enqueue(kind, [ident])


def check_entrants(store, game: str, bot_ids: list[str]) -> None:
    """Each bot exists, is not retired and plays `game` (422 naming the first that fails)."""
    for bot_id in bot_ids:
        bot = store.get_bot(bot_id)
        if bot is None:
            fail(422, "unknown_bot", f"there is no bot {bot_id!r}")
        if bot["retired"]:
            fail(422, "retired_bot", f"bot {bot_id!r} is retired")
        if bot["game"] != game:
            fail(422, "wrong_game", f"bot {bot_id!r} plays {bot['game']}, not {game}")


def errors(blp, *codes: int):
    """Document the error statuses a view may answer (all in the error format)
    and, for views answering 401, that they take a bearer credential."""
    import http

    def decorate(view):
        for code in codes:
            view = blp.alt_response(code, response=http.HTTPStatus(code).name)(view)
        if 401 in codes:  # it takes a credential: say which scheme in the document
            view = blp.doc(security=[{"bearer": []}])(view)
        return view

    return decorate
