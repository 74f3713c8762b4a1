"""The REST API's blueprints, one per resource (docs/api.md §4), each with its schemas."""

from __future__ import annotations

from server.api import (
    accounts,
    bots,
    comparisons,
    debug,
    events,
    exports,
    games,
    health,
    invites,
    lists,
    matches,
    rankings,
    tournaments,
    turns,
)

BLUEPRINTS = [games.blp, rankings.blp, accounts.blp, bots.blp, turns.blp, matches.blp, tournaments.blp, lists.blp,
              events.blp, exports.blp, comparisons.blp, invites.blp, health.blp, debug.blp]

#: OpenAPI components no operation names directly (the event streams' data)
SCHEMAS = dict(events.SCHEMAS)
