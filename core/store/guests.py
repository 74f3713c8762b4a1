"""Guest matches: matches an account starts with another account's bot (a challenge, a person at
/play, its tournament's or comparison's), `started_by`. Challenges and /play matches are counted
per (account, bot), so no account holds another's bot in more than a few at once; the slots guest
matches may hold are core/store/slots.py's.

Keys:
    bot:{id}:guest:{account}   set of the unfinished match ids `account` started with the bot
                               (a match over, or gone, is taken out at the next claim)

The claim is one Lua step over every guest bot of the new match, all or none, so two
challenges racing for a bot's last place cannot both take it.
"""

from __future__ import annotations

from collections.abc import Callable

import redis
from redis.commands.core import Script

from core.store.keys import text
from core.store.lua import args, source


def guest_key(bot_id: str, account_id: str) -> str:
    return f"bot:{bot_id}:guest:{account_id}"


class Guests:
    r: redis.Redis
    script: Callable[[str], Script]
    tournament_owner: Callable[[str], str | None]
    get_comparison: Callable[[str], dict | None]

    def started_by(self, match: dict) -> str | None:
        """The account on whose say the match is played: the challenger, the person at /play, the
        account that made its tournament or comparison; None for the ladder's, and "admin" (or
        None) for the admin's. A match is a guest match of each seated bot of another account."""
        if match.get("owner"):
            return match["owner"]
        if match.get("tournament"):
            return self.tournament_owner(match["tournament"])
        if match.get("comparison"):
            return (self.get_comparison(match["comparison"]) or {}).get("owner")
        return None

    def claim_guest_places(self, account_id: str, bot_ids: list[str], match_id: str, most: int) -> str | None:
        """Take a place for `match_id` (about to be created) with each of `bot_ids` (another
        account's bots) for `account_id`: None when taken, else the first bot with `most` unfinished
        matches of the account already (nothing taken)."""
        bots = list(dict.fromkeys(bot_ids))
        if not bots:
            return None
        full = int(self.script(source("claim_guest_places"))(keys=[guest_key(b, account_id) for b in bots],
                                                             args=[args(match=match_id, most=most)]))
        return bots[full - 1] if full else None

    def guest_matches(self, bot_id: str, account_id: str) -> list[str]:
        """The match ids `account_id` started with the bot and last found unfinished."""
        return sorted(text(m) for m in self.r.smembers(guest_key(bot_id, account_id)))
