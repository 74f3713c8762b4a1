"""`GET /games`: the games, their seat ranges and options with defaults."""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint

import games

blp = Blueprint("games", __name__, description="The card games the referee judges")


class GameSchema(ma.Schema):
    name = ma.fields.String(required=True)
    title = ma.fields.String()
    min_seats = ma.fields.Integer(required=True)
    max_seats = ma.fields.Integer(required=True)
    options = ma.fields.Dict(keys=ma.fields.String(), values=ma.fields.Raw(allow_none=True), required=True,
                             metadata={"description": "name: default (JSON; deck is null, a seat-dependent default is \"auto\")"})
    rules_url = ma.fields.String(required=True, metadata={
        "description": "the game's rules for bot authors, as a web page (an absolute path on this server)"})


class GamesSchema(ma.Schema):
    games = ma.fields.List(ma.fields.Nested(GameSchema), required=True)


def rules_url(game: str) -> str:
    """Where the web pages show a game's rules (server/web/pages.py `rules_page`)."""
    return f"/games/{game}/rules"


@blp.get("/games")
@blp.response(200, GamesSchema)
def list_games():
    """The registered games, each with the web page of its rules (`rules_url`)."""
    return {"games": [{**games.get(name).describe(), "rules_url": rules_url(name)} for name in games.names()]}
