"""`GET /games/{game}/rankings`: the ladder of one game."""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint

import games
from server.api.common import RatingSchema, errors
from server.auth import store
from server.errors import fail

blp = Blueprint("rankings", __name__, description="The ladder: ratings from rated matches")


class RankingSchema(ma.Schema):
    rank = ma.fields.Integer(required=True)
    bot = ma.fields.String(required=True)
    name = ma.fields.String()
    rating = ma.fields.Nested(RatingSchema, required=True)
    matches = ma.fields.Integer(required=True)
    wins = ma.fields.Integer(required=True)
    faults = ma.fields.Integer(metadata={"description": "faults the referee recorded against the bot, all matches"})


class RankingsSchema(ma.Schema):
    game = ma.fields.String(required=True)
    rankings = ma.fields.List(ma.fields.Nested(RankingSchema), required=True)


@blp.get("/games/<string:game>/rankings")
@blp.response(200, RankingsSchema)
@errors(blp, 404)
def rankings(game: str):
    """Rank, bot, rating (mu, sigma, ordinal = mu - 3 sigma), matches, wins and faults."""
    if game not in games.names():
        fail(404, "not_found", f"unknown game {game!r}")
    return {"game": game, "rankings": ladder(game)}


def ladder(game: str) -> list[dict]:
    """The store's ladder, each bot's fault count included (the leaderboard page shows it too),
    read in one round trip."""
    return store().rankings(game)
