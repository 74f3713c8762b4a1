"""Playing the ladder's pairings by hand through the store: each match ended along the one path
(core/conclusion.py `end_match`) with the result a test decides, so ratings, pauses and the
pairing's settling are the platform's own, without workers."""

from __future__ import annotations

from core.conclusion import end_match
from sdk.standings import seat_records


def house_bot(store, name: str, game: str, owner: str = "admin", **fields) -> str:
    """An in-process bot (always online, no slots) of `owner`; never run: no worker listens."""
    return store.create_bot(owner, name, game, "python", entrypoint="example_bots.random:RandomBot",
                            **fields)[0]["id"]


def finish(store, match_id: str, ranks: list[int], forfeits: list[int] = ()) -> None:
    """End the match finished with these ranks (and seats forfeited), as its runner would."""
    match = store.get_match(match_id)
    result = {"scores": [float(-r) for r in ranks], "ranks": list(ranks), "forfeits": list(forfeits)}
    end_match(store, match_id, "finished", result, records=seat_records(result, match["seats"]))


def play_pairings(store, game: str, outcome) -> int:
    """Play every pairing in play to its end, each rotation in its order; `outcome(seats)` gives a
    match's ranks (or (ranks, forfeits)). The matches played."""
    played = 0
    for pairing in store.pairings_in_play(game):
        for mid in pairing["matches"]:
            match = store.get_match(mid)
            if match["status"] in ("finished", "aborted"):
                continue
            got = outcome(match["seats"])
            ranks, forfeits = got if isinstance(got, tuple) else (got, [])
            finish(store, mid, ranks, forfeits)
            played += 1
    return played
