"""Wake-ups for the event streams (`GET /matches/{id}/events`, `/tournaments/{id}/events`).

Keys (pub/sub channels: nothing is stored):
    match:{id}:events        published after each append to the match's log (the
                             message: the log's new length) and when the match
                             starts or ends ("status")
    tournament:{id}:events   published when one of its matches starts or ends (the
                             message: that match's id), when its standings are saved
                             and when its status changes ("tournament")

A message only says "look again": a stream reads what changed from the log
and the records, so a message lost between two reads costs nothing but a
moment (streams also look again on their own every few seconds). The writers
publish in the same transaction or Lua step as the change they announce, or
just after it — never before, so a stream woken always finds the change.
"""

from __future__ import annotations

STATUS = "status"
TOURNAMENT = "tournament"


def match_channel(match_id: str) -> str:
    return f"match:{match_id}:events"


def tournament_channel(tid: str) -> str:
    return f"tournament:{tid}:events"


def status_messages(match_id: str, tournament: str | None) -> list[list[str]]:
    """The wake-ups of a match whose status changed (and of its tournament): [channel, message]
    pairs, which a Lua step may publish itself (core/store/lua/lib/start_match.lua)."""
    out = [[match_channel(match_id), STATUS]]
    if tournament:
        out.append([tournament_channel(tournament), match_id])
    return out


def match_changed(pipe, match_id: str, tournament: str | None) -> None:
    """Queue on `pipe` the wake-ups of a match whose status changed (and of its tournament)."""
    for channel, message in status_messages(match_id, tournament):
        pipe.publish(channel, message)


def tournament_changed(pipe, tid: str) -> None:
    pipe.publish(tournament_channel(tid), TOURNAMENT)
