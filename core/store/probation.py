"""Probation: a bot that forfeits ladder matches in a row is paused from rated play until its
owner resumes it (`POST /bots/{id}/resume`). Its record's `forfeit_streak` counts them
(core/store/bots.py `count_result`)."""

from __future__ import annotations

#: ladder matches forfeited in a row that pause a bot from the ladder (and rated tournaments) until
#: its owner resumes it: forfeits elsewhere never count (docs/api.md §6), or anyone could pause a
#: bot by entering it where it cannot play
PROBATION = 5


def is_paused(bot: dict) -> bool:
    """Whether the bot is paused from rated play (its record: `forfeit_streak`)."""
    return int(bot.get("forfeit_streak") or 0) >= PROBATION


def paused_reason(bot: dict) -> str:
    """Why a paused bot plays no rated match, and how its owner resumes it (its `status_reason`)."""
    return (f"paused: it forfeited {PROBATION} ladder matches in a row, so the ladder pairs it with "
            f"nobody and it enters no rated match until its owner resumes it: POST "
            f"/api/v1/bots/{bot['id']}/resume (Client.resume_bot)")
