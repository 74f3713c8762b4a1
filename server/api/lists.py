"""Finding things: `GET /matches` and `GET /tournaments`, newest first, a page at a time.

`?limit=` (at most 100) and `?cursor=` (a page's `next_cursor`) page through
the list; `?game=` and `?bot=` filter it. Each list is one sorted set of the
store (server/store/lists.py), so a page costs the same however many records
there are. A match's result shows only once it is public, as everywhere.
"""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint
from marshmallow import validate

from server.api.common import ID, NAME, SeatSchema, errors, game_or_422, seats_of
from server.api.tournaments import ProgressSchema
from server.auth import is_admin, store
from server.store.lists import MATCHES, TOURNAMENTS

blp = Blueprint("lists", __name__, description="Finding matches and tournaments")

MAX_LIMIT = 100
OVER = ("finished", "aborted")


class ListQuerySchema(ma.Schema):
    limit = ma.fields.Integer(load_default=MAX_LIMIT, validate=validate.Range(min=1, max=MAX_LIMIT))
    cursor = ma.fields.String(validate=validate.Regexp(r"^[0-9]{1,18}$", error="not a cursor of this list"),
                              metadata={"description": "the previous page's next_cursor"})
    game = ma.fields.String(validate=NAME, metadata={"description": "only this game's"})
    bot = ma.fields.String(validate=ID, metadata={"description": "only those this bot plays in"})


class MatchItemSchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    seats = ma.fields.List(ma.fields.Nested(SeatSchema), required=True)
    tournament = ma.fields.String(allow_none=True)
    rated = ma.fields.Boolean()
    created = ma.fields.String(allow_none=True)
    finished = ma.fields.String(allow_none=True)
    public = ma.fields.Boolean(required=True)
    result = ma.fields.Dict(allow_none=True, required=True,
                            metadata={"description": "scores, ranks and forfeits once public"})


class MatchListSchema(ma.Schema):
    matches = ma.fields.List(ma.fields.Nested(MatchItemSchema), required=True, metadata={"description": "newest first"})
    next_cursor = ma.fields.String(allow_none=True, required=True,
                                   metadata={"description": "pass as ?cursor= for the next page; null on the last"})


class TournamentItemSchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    format = ma.fields.String()
    seats = ma.fields.Integer()
    deals = ma.fields.Integer()
    duplicate = ma.fields.Boolean()
    rated = ma.fields.Boolean()
    bots = ma.fields.List(ma.fields.String(), required=True)
    progress = ma.fields.Nested(ProgressSchema, required=True)
    created = ma.fields.String(allow_none=True)
    finished = ma.fields.String(allow_none=True)


class TournamentListSchema(ma.Schema):
    tournaments = ma.fields.List(ma.fields.Nested(TournamentItemSchema), required=True,
                                 metadata={"description": "newest first"})
    next_cursor = ma.fields.String(allow_none=True, required=True,
                                   metadata={"description": "pass as ?cursor= for the next page; null on the last"})


def _page(kind: str, query: dict) -> tuple[list[dict], str | None]:
    if query.get("game"):
        game_or_422(query["game"])
    before = int(query["cursor"]) if query.get("cursor") else None
    ids, after = store().newest(kind, query["limit"], before, query.get("game"), query.get("bot"))
    records = [r for r in store().records(kind, ids) if r is not None]
    if query.get("game") and query.get("bot"):
        records = [r for r in records if r["game"] == query["game"]]
    return records, None if after is None else str(after)


def list_page_of_matches(query: dict) -> dict:
    """A page of `GET /matches` (the /matches page shows the same)."""
    matches, after = _page(MATCHES, query)
    over = {m["tournament"] for m in matches if m.get("tournament")}
    tournaments = dict(zip(over, store().records(TOURNAMENTS, list(over)), strict=True))
    admin = is_admin()
    out = []
    for m in matches:
        t = tournaments.get(m.get("tournament"))
        public = admin or (m["status"] in OVER and (t is None or t["status"] in OVER))
        result = m.get("result") if public and isinstance(m.get("result"), dict) else None
        out.append({"id": m["id"], "game": m["game"], "status": m["status"], "seats": seats_of(m["seats"]),
                    "tournament": m.get("tournament"), "rated": bool(m.get("rated")),
                    "created": m.get("created"), "finished": m.get("finished"), "public": public,
                    "result": {k: result[k] for k in ("scores", "ranks", "forfeits") if k in result}
                    if result else None})
    return {"matches": out, "next_cursor": after}


def list_page_of_tournaments(query: dict) -> dict:
    """A page of `GET /tournaments` (the /tournaments page shows the same)."""
    tournaments, after = _page(TOURNAMENTS, query)
    out = []
    for t in tournaments:
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
