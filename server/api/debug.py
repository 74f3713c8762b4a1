"""`GET /matches/{id}/debug`: a match's debug output, for the owners of its seats' bots.

What a bot writes with its answers (`Bot.debug`, an answer's `"debug"`, a
polling bot's reported error) is kept apart from the public log
(core/store/debug.py) and read here by its owner — the seats of the calling
account's own bots, every seat for the admin — while the match plays and
after, in the order of the log. Nobody else reads it.
"""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint

from server.api.common import errors
from server.api.matches import debug_seats
from server.auth import require_account_or_admin, store
from server.errors import fail

blp = Blueprint("debug", __name__, description="Bots' debug output, for their owners")


class DebugNoteSchema(ma.Schema):
    turn = ma.fields.Integer(required=True, metadata={"description": "the log entry it was written with"})
    seat = ma.fields.Integer(required=True)
    text = ma.fields.String(required=True)


class DebugSchema(ma.Schema):
    id = ma.fields.String(required=True)
    seats = ma.fields.List(ma.fields.Integer(), required=True,
                           metadata={"description": "the seats whose notes the caller may read"})
    debug = ma.fields.List(ma.fields.Nested(DebugNoteSchema), required=True, metadata={"description": "by turn"})


@blp.get("/matches/<string:match_id>/debug")
@blp.response(200, DebugSchema)
@errors(blp, 401, 404)
def match_debug(match_id: str):
    """The debug notes of the match's seats the caller's bots sit in (the admin: every seat), by turn;
    401 without a credential, an empty list for an account that owns none of its bots."""
    require_account_or_admin()
    match = store().get_match(match_id) if len(match_id) <= 64 else None
    if match is None:
        fail(404, "not_found", f"there is no match {match_id!r}")
    seats = debug_seats(match)
    notes = store().debug_notes(match_id, seats) if seats else []
    return {"id": match_id, "seats": seats, "debug": notes}
