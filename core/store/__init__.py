"""The Redis store: every read and write of cardarena's data goes through `Store`.

    store = Store(redis.Redis.from_url(url), secret_key(client))

One module per concept, each naming its own Redis keys: `accounts`, `invites` (invite-only sign-up), `bots`, `versions`
(each version of a bot, how to reach it),
`matches` (the event log; a finished one moves to `archive`, files outside Redis), `debug` (bots' debug text per turn, for their owners), `decisions` (polling bots' pending turns),
`waits` (a match between runs, waiting on a remote bot: its deadline, its webhook call),
`people` (page sign-in sessions, accounts' person seats),
`tournaments`, `comparisons` (candidate against baseline, deal by deal), `ratings`,
`ladder` (the matchmaker's pairings),
`jobs` (RQ's queue, what is active, the runners' locks), `slots` (no bot in more matches
at once than it allows), `guests` (matches an account starts with another's bot), `lists` (finding matches and
tournaments by game and bot), `events` (wake-ups of the event streams). `Store` only puts them
behind one object, so the server, the workers and the web pages share one
facade and one key layout.
"""

from __future__ import annotations

import os
import secrets

from redis.commands.core import Script

from core.store.accounts import Accounts
from core.store.bots import Bots
from core.store.comparisons import Comparisons
from core.store.debug import Debug
from core.store.decisions import Decisions
from core.store.guests import Guests
from core.store.invites import Invites
from core.store.jobs import Jobs, queue_name
from core.store.ladder import Ladder
from core.store.lists import Lists
from core.store.matches import Matches
from core.store.people import People
from core.store.quotas import Quotas
from core.store.ratings import Ratings
from core.store.slots import Slots
from core.store.tournaments import Tournaments
from core.store.versions import Versions
from core.store.waits import Waits

SECRET_KEY_KEY = "cardarena:secret_key"


def secret_key(redis_client) -> bytes:
    """The server key: `CARDARENA_SECRET_KEY`, else one random key kept in Redis.

    The API and every worker call this, so they all derive the same bot secrets.
    """
    configured = os.environ.get("CARDARENA_SECRET_KEY")
    if configured:
        return configured.encode()
    redis_client.set(SECRET_KEY_KEY, secrets.token_hex(32), nx=True)
    key = redis_client.get(SECRET_KEY_KEY)
    return key.encode() if isinstance(key, str) else key


class Store(Accounts, Bots, Versions, Matches, Decisions, Waits, Tournaments, Comparisons, Ratings, Ladder, Jobs,
            Lists, Slots, Quotas, Debug, People, Invites, Guests):
    """cardarena's data in one Redis. `redis_client` must not decode responses."""

    def __init__(self, redis_client, secret_key: bytes, queue: str | None = None) -> None:
        self.queue = queue_name(queue)  # the RQ queue its jobs go to (core/store/jobs.py)
        if isinstance(secret_key, str):
            secret_key = secret_key.encode()
        if not secret_key:
            raise ValueError("the store needs a non-empty secret key")
        self.r = redis_client
        self.secret_key = secret_key
        self.scripts: dict[str, Script] = {}

    def script(self, source: str) -> Script:
        """`source` as redis-py's `Script` (`register_script`), made once per store: called with
        `keys` and `args`, it runs by its SHA and loads the source again if Redis lost it."""
        found = self.scripts.get(source)
        if found is None:
            found = self.scripts[source] = self.r.register_script(source)
        return found


__all__ = ["Store", "secret_key"]
