"""What one tenant holds at once in the API, counted across every API process.

Keys:
    quota:polls:{account}       sorted set of the account's long-polls in progress (all its
                                bots), scored by when each must have ended (epoch ms)
    quota:streams:{address}     sorted set of the event streams open from one client address,
                                scored the same way
    quota:registering:{account} lock: one registration of the account at a time, so its bots
                                are counted and created without a race past the cap
    quota:turn_waste:{who}      count of the polling turn requests of one caller ("bot:{id}", or
                                "ip:{address}" without a credential) that brought or settled no
                                decision, in its current window (`TURN_WASTE_LIMIT`,
                                server/turn_waste.py): the window starts at its first and the key
                                expires with it

An account's polls and an address's streams may land on several API processes
(`cardarena serve` on several machines), so the count lives in Redis, not in one process's memory. A place
is taken atomically below a cap and given back in the view's `finally`; a
place whose server died lapses at its end (and the key with its last place),
so a crash never leaks a tenant's quota.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

import redis
from redis.commands.core import Script

from core.store.keys import now_ms
from core.store.lua import args, source

#: slack past a place's planned end for a slow answer before it lapses on its own
SLACK_MS = 5000


def polls_key(account_id: str) -> str:
    return f"quota:polls:{account_id}"


def streams_key(address: str) -> str:
    return f"quota:streams:{address}"


def registering_key(account_id: str) -> str:
    return f"quota:registering:{account_id}"


def turn_waste_key(who: str) -> str:
    return f"quota:turn_waste:{who}"


def new_place_token() -> str:
    return secrets.token_hex(8)


def give_on(pipe, places: Places) -> None:
    """On `pipe`: `places` given back (their token None from now on)."""
    for key in places.keys:
        pipe.zrem(key, places.token)
    places.token = None


def place_args(token: str, seconds: float, caps: list[int], now: int) -> dict[str, object]:
    """`take`'s places (core/store/lua/lib/take.lua): under `token`, from `now` (epoch ms), lasting up
    to `seconds` (and `SLACK_MS`), below `caps`."""
    return {"now": now, "ends_at": now + int(seconds * 1000) + SLACK_MS, "token": token, "caps": caps}


class Places:
    """Places taken under one token (`take_places`): `caps` (key, cap), `token` None once they
    are given back."""

    __slots__ = ("caps", "token")

    def __init__(self, caps: list[tuple[str, int]], token: str | None) -> None:
        self.caps, self.token = caps, token

    @property
    def keys(self) -> list[str]:
        return [key for key, _ in self.caps]


class Quotas:
    r: redis.Redis
    script: Callable[[str], Script]

    def take_place(self, key: str, seconds: float, cap: int) -> str | None:
        """A token for one more place in `key` lasting up to `seconds`, or None when `cap`
        places are held already (atomic, shared by every API process)."""
        token, _ = self.take_places([(key, cap)], seconds)
        return token

    def take_places(self, caps: list[tuple[str, int]], seconds: float) -> tuple[str | None, str | None]:
        """One place in each of `caps`' keys (key, cap) under one token, lasting up to `seconds`,
        or none: (token, None), or (None, the first key holding its cap already). One atomic
        round trip, shared by every API process (a long-poll's bot and account places at once)."""
        token = new_place_token()
        places = place_args(token, seconds, [cap for _, cap in caps], now_ms())
        full = int(self.script(source("take_places"))(keys=[key for key, _ in caps], args=[args(places=places)]))
        return (token, None) if full == 0 else (None, caps[full - 1][0])

    def give_place(self, key: str, token: str) -> None:
        self.r.zrem(key, token)

    def give_places(self, places: Places) -> None:
        """`places` back, unless they are already (one round trip)."""
        if places.token is None:
            return
        pipe = self.r.pipeline(transaction=False)
        give_on(pipe, places)
        pipe.execute()

    def waste_turn(self, who: str, window_ms: int) -> tuple[int, int]:
        """One more wasted turn request of `who` (a request that brought or settled no decision):
        how many its window holds now, with this one, and the ms left until the window ends
        (one round trip; the window starts at its first)."""
        count, left = self.script(source("waste_turn"))(keys=[turn_waste_key(who)], args=[args(window=int(window_ms))])
        return int(count), int(left)

    def registering(self, account_id: str):
        """A lock held while one of the account's bots is counted and created (a context manager):
        parallel registrations of one account queue, so none slips past the cap. It lapses after
        10 s should its holder die."""
        return self.r.lock(registering_key(account_id), timeout=10, blocking_timeout=15)
