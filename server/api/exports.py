"""Downloads: `GET /matches/{id}/export` and `GET /tournaments/{id}/export` (docs/api.md §5).

A match's export is one JSON document holding enough to rebuild every
decision — game, options, seed, seats, the log, the result and the decks
(docs/api.md's fields), plus its time and fault rules (`move_timeout_ms`,
`max_faults`, `time_bank_ms`) so a replay rebuilds each decision's clock, and
for the owner of a seat's bot (or the admin) that seat's debug notes —
shown only once the match is public (finished, its tournament too, its comparison decided). A
tournament's export is its matches' documents as JSON Lines, once it is over,
streamed a batch of matches at a time so a 10,000-match tournament never sits
whole in memory.
"""

from __future__ import annotations

from collections.abc import Iterator

import marshmallow as ma
from flask import Response, stream_with_context
from flask_smorest import Blueprint

from sdk import export
from server.api.common import SeatSchema, errors
from server.api.matches import debug_seats, is_public, match_document
from server.auth import is_admin, store
from server.errors import fail

blp = Blueprint("exports", __name__, description="Matches and tournaments as files")

#: matches read per round trip while a tournament's export streams
BATCH = 100


class MatchExportSchema(ma.Schema):
    format = ma.fields.String(required=True, metadata={"description": '"cardarena-match"'})
    version = ma.fields.Integer(required=True, metadata={"description": "1"})
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    options = ma.fields.Dict(required=True, metadata={"description": "as the match was created (deck included)"})
    seed = ma.fields.Integer(required=True)
    seats = ma.fields.List(ma.fields.Nested(SeatSchema), required=True)
    log = ma.fields.List(ma.fields.Dict(), required=True, metadata={
        "description": "the log's entries whole, as stored: turn, seat, action, and fault or ms (the latency "
                       "charged) where present — a replay rebuilds every clock from them"})
    result = ma.fields.Dict(allow_none=True, required=True, metadata={"description": "null for an aborted match"})
    decks = ma.fields.List(ma.fields.Raw(), allow_none=True, required=True,
                           metadata={"description": "every deal's deck as dealt, top first"})
    move_timeout_ms = ma.fields.Integer(allow_none=True, metadata={
        "description": "the match's rules of time and faults, so a replay rebuilds every decision as the "
                       "seat received it"})
    max_faults = ma.fields.Integer(allow_none=True)
    time_bank_ms = ma.fields.Integer(allow_none=True, metadata={"description": "null: a match from before "
                                     "the time bank"})
    seat_clocks = ma.fields.List(ma.fields.Dict(allow_none=True), metadata={
        "description": "only where a seat had a clock of its own (a person's): each seat's "
                       "{move_timeout_ms, time_bank_ms}, or null for the match's"})
    debug = ma.fields.List(ma.fields.Dict(), metadata={
        "description": "with the token of a seat's bot's owner (or the admin's) only: that seat's debug "
                       "notes, {turn, seat, text} in turn order; absent when there are none"})


@blp.get("/matches/<string:match_id>/export")
@blp.response(200, MatchExportSchema)
@errors(blp, 404, 409)
def export_match(match_id: str):
    """A match as one JSON document (409 until it is public: finished, its tournament too, its comparison decided)"""
    match = store().get_match(match_id)
    if match is None:
        fail(404, "not_found", f"there is no match {match_id!r}")
    if not (is_admin() or is_public(match)):
        fail(409, "not_public", "a match is exported once it is finished (and its tournament too, or its comparison decided)")
    document = match_document(match, store().match_log(match_id), readable_debug(match))
    return document, 200, {"Content-Disposition": f'attachment; filename="{match_id}.json"'}


@blp.get("/tournaments/<string:tid>/export")
@blp.doc(responses={"200": {
    "description": "JSON Lines: one MatchExport document a line, in schedule order",
    "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
    "x-line": {"$ref": "#/components/schemas/MatchExport"}}})
@errors(blp, 404, 409)
def export_tournament(tid: str):
    """A tournament's matches as JSON Lines (409 until it is over)

    One `MatchExport` document a line, in schedule order, streamed."""
    tournament = store().get_tournament(tid)
    if tournament is None:
        fail(404, "not_found", f"there is no tournament {tid!r}")
    if tournament["status"] not in ("finished", "aborted") and not is_admin():
        fail(409, "not_finished", "a tournament is exported once it is over")
    response = Response(stream_with_context(_lines(tid)), mimetype="application/x-ndjson")
    response.headers["Content-Disposition"] = f'attachment; filename="{tid}.jsonl"'
    return response


def _lines(tid: str) -> Iterator[str]:
    s = store()
    ids = s.tournament_matches(tid)
    for start in range(0, len(ids), BATCH):
        for match in s.get_matches(ids[start:start + BATCH]):
            if match is not None:
                yield export.dumps(match_document(match, s.match_log(match["id"]), readable_debug(match))) + "\n"


def readable_debug(match: dict) -> list[dict] | None:
    """The match's debug notes of the seats the caller may read (its own bots'), or None."""
    seats = debug_seats(match)
    return (store().debug_notes(match["id"], seats) or None) if seats else None
