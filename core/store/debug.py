"""Debug notes: the text a bot sent with its answer, kept beside its turn for the bot's owner.

Keys:
    match:{id}:debug    hash turn -> JSON {"seat", "text"}: the debug text of the answer that
                        made that turn's entry (docs/api.md §6 "Debug output"); only turns
                        whose answer carried some

Kept apart from the log on purpose: the log is public once the match is, and
the replay digest and the event stream are built from it, while a bot's
debug text is shown to its owner only (`GET /matches/{id}/steps/{k}` and the
exports, read with the owner's token). The text is written only by the code
that lands the turn's entry, after it landed (`Store.settle` for a remote
answer, the match runner's flush for an in-process one), so a turn has debug
only if its answer is the one played; it is already made safe by
`sdk.debug.debug_text`. An archived match's notes are in its archive file
(core/store/archive.py), read from there the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import redis


def debug_key(match_id: str) -> str:
    return f"match:{match_id}:debug"


def write_debug(pipe, match_id: str, turn: int, seat: int, text: str | None) -> None:
    """On `pipe`: keep `text` as turn `turn`'s debug (nothing when there is none)."""
    if text:
        pipe.hset(debug_key(match_id), *debug_note(turn, seat, text))


def debug_note(turn: int, seat: int, text: str) -> tuple[str, str]:
    """The field and value that keep `text` as turn `turn`'s debug (in a script: core/store/waits.py)."""
    return str(int(turn)), json.dumps({"seat": int(seat), "text": text})


class Debug:
    r: redis.Redis
    redis_or_archived: Callable[[str, Callable[[Any], Any]], tuple[Any, dict | None]]  # core/store/matches.py: an archived match's notes are in its file

    def note_debug(self, match_id: str, notes: Iterable[tuple[int, int, str | None]]) -> None:
        """Keep each `(turn, seat, text)` of turns that landed (the in-process bots' answers)."""
        pipe = self.r.pipeline(transaction=False)
        for turn, seat, text in notes:
            write_debug(pipe, match_id, turn, seat, text)
        pipe.execute()

    def _notes(self, match_id: str) -> dict[str, dict]:
        """turn (str) -> {"seat", "text"}: from Redis, or the archive once the match is archived."""
        raw, doc = self.redis_or_archived(match_id, lambda pipe: pipe.hgetall(debug_key(match_id)))
        if doc is not None:
            return doc["debug"]
        return {(t.decode() if isinstance(t, bytes) else t): json.loads(v) for t, v in raw.items()}

    def debug_notes(self, match_id: str, seats: Iterable[int] | None = None) -> list[dict]:
        """The match's debug notes `{"turn", "seat", "text"}` in turn order, only `seats`' if given."""
        wanted = None if seats is None else set(seats)
        out = []
        for turn, note in self._notes(match_id).items():
            if wanted is None or note["seat"] in wanted:
                out.append({"turn": int(turn), "seat": note["seat"], "text": note["text"]})
        return sorted(out, key=lambda n: n["turn"])

    def turn_debug(self, match_id: str, turn: int) -> dict | None:
        """Turn `turn`'s debug note `{"seat", "text"}`, or None."""
        value, doc = self.redis_or_archived(match_id, lambda pipe: pipe.hget(debug_key(match_id), str(int(turn))))
        if doc is not None:
            return doc["debug"].get(str(int(turn)))
        return json.loads(value) if value else None
