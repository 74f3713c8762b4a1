"""Finding things: `GET /matches` and `GET /tournaments`, newest first, a page at a time.

`?limit=` (at most 100) and `?cursor=` (a page's `next_cursor`) page through
the list; `?game=` and `?bot=` filter it. Each list is one sorted set of the
store (core/store/lists.py), so a page costs the same however many records
there are. A match's result shows only once it is public, as everywhere.
"""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint

from core.ratings import kind_of
from core.store.lists import MATCHES, TOURNAMENTS
from server.api.common import (
    ID,
    NAME,
    PageQuerySchema,
    SeatSchema,
    cursor_of,
    errors,
    game_or_422,
    next_cursor_field,
    seats_of,
)
from server.api.matches import KIND_DESCRIPTION, are_public, seats_hidden
from server.api.tournaments import TournamentSchema
from server.auth import is_admin, store

blp = Blueprint("lists", __name__, description="Finding matches and tournaments")



class ListQuerySchema(PageQuerySchema):
    game = ma.fields.String(validate=NAME, metadata={"description": "only this game's"})
    bot = ma.fields.String(validate=ID, metadata={"description": "only those this bot plays in"})


class MatchItemSchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    seats = ma.fields.List(ma.fields.Nested(SeatSchema), required=True)
    tournament = ma.fields.String(allow_none=True)
    rated = ma.fields.Boolean()
    kind = ma.fields.String(required=True, metadata={"description": KIND_DESCRIPTION})
    created = ma.fields.String(allow_none=True)
    finished = ma.fields.String(allow_none=True)
    public = ma.fields.Boolean(required=True)
    result = ma.fields.Dict(allow_none=True, required=True,
                            metadata={"description": "scores, ranks and forfeits once public"})


class MatchListSchema(ma.Schema):
    matches = ma.fields.List(ma.fields.Nested(MatchItemSchema), required=True, metadata={"description": "newest first"})
    next_cursor = next_cursor_field()


class TournamentItemSchema(TournamentSchema):
    """A tournament as lists show it: `GET /tournaments/{id}` without its standings and rules."""

    class Meta:
        exclude = ("standings", "options", "seed", "schedule", "move_timeout_ms", "time_bank_ms", "max_faults", "started",
                   "reason")


class TournamentListSchema(ma.Schema):
    tournaments = ma.fields.List(ma.fields.Nested(TournamentItemSchema), required=True,
                                 metadata={"description": "newest first"})
    next_cursor = next_cursor_field()


def _page(kind: str, query: dict) -> tuple[list[str], str | None]:
    if query.get("game"):
        game_or_422(query["game"])
    ids, after = store().newest(kind, query["limit"], cursor_of(query), query.get("game"), query.get("bot"))
    return ids, None if after is None else str(after)


def _of_game(records: list[dict | None], query: dict) -> list[dict]:
    """The records found (a bot's list also holds its other games' ones if ever a bot changed game)."""
    return [r for r in records if r is not None and (not query.get("game") or r["game"] == query["game"])]


def list_page_of_matches(query: dict) -> dict:
    """A page of `GET /matches` (the /matches page shows the same)."""
    ids, after = _page(MATCHES, query)
    matches = _of_game(store().get_matches(ids, brief=True), query)  # an archived match's too, from Redis
    hidden = seats_hidden(matches)
    if query.get("bot"):  # a live rated match in a bot's list would say who sits there
        matches = [m for m, h in zip(matches, hidden, strict=True) if not h]
        hidden = [False] * len(matches)
    out = []
    for m, public, secret in zip(matches, [True] * len(matches) if is_admin() else are_public(matches), hidden,
                                 strict=True):
        result = m.get("result") if public and isinstance(m.get("result"), dict) else None
        out.append({"id": m["id"], "game": m["game"], "status": m["status"], "seats": seats_of(m, secret),
                    "tournament": m.get("tournament"), "rated": bool(m.get("rated")), "kind": kind_of(m),
                    "created": m.get("created"), "finished": m.get("finished"), "public": public,
                    "result": {k: result[k] for k in ("scores", "ranks", "forfeits") if k in result}
                    if result else None})
    return {"matches": out, "next_cursor": after}


def list_page_of_tournaments(query: dict) -> dict:
    """A page of `GET /tournaments` (the /tournaments page shows the same)."""
    ids, after = _page(TOURNAMENTS, query)
    out = []
    for t in _of_game(store().get_tournaments(ids), query):
        out.append({"id": t["id"], "game": t["game"], "status": t["status"], "format": t.get("format"),
                    "seats": t.get("seats"), "deals": t.get("deals"), "duplicate": t.get("duplicate"),
                    "rated": bool(t.get("rated")), "bots": t.get("bots") or [],
                    "progress": store().tournament_progress(t["id"]),
                    "created": t.get("created"), "finished": t.get("finished")})
    return {"tournaments": out, "next_cursor": after}


@blp.get("/matches")
@blp.arguments(ListQuerySchema, location="query")
@blp.response(200, MatchListSchema)
@errors(blp, 422)
def list_matches(query):
    """Matches, newest first, a page at a time (?game=, ?bot= filter)"""
    return list_page_of_matches(query)


@blp.get("/tournaments")
@blp.arguments(ListQuerySchema, location="query")
@blp.response(200, TournamentListSchema)
@errors(blp, 422)
def list_tournaments(query):
    """Tournaments, newest first, a page at a time (?game=, ?bot= filter)"""
    return list_page_of_tournaments(query)
