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
(gunicorn), so the count lives in Redis, not in one process's memory. A place
is taken atomically below a cap and given back in the view's `finally`; a
place whose server died lapses at its end (and the key with its last place),
so a crash never leaks a tenant's quota.
"""

from __future__ import annotations

import secrets

from core.store.keys import now_ms

#: KEYS[1] the tenant's places; ARGV: now ms, end ms, token, cap. 1 if taken, 0 if full.
TAKE_LUA = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
local ttl = tonumber(ARGV[2]) - tonumber(ARGV[1])
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1
"""

#: KEYS[1] a caller's wasted turn requests; ARGV[1] the window (ms). {count in the window, ms left}
WASTE_LUA = """
local n = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {n, left}
"""

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


class Quotas:
    def take_place(self, key: str, seconds: float, cap: int) -> str | None:
        """A token for one more place in `key` lasting up to `seconds`, or None when `cap`
        places are held already (atomic, shared by every API process)."""
        token = secrets.token_hex(8)
        now = now_ms()
        end = now + int(seconds * 1000) + SLACK_MS
        taken = self.script(TAKE_LUA)(keys=[key], args=[now, end, token, cap])
        return token if taken else None

    def give_place(self, key: str, token: str) -> None:
        self.r.zrem(key, token)

    def waste_turn(self, who: str, window_ms: int) -> tuple[int, int]:
        """One more wasted turn request of `who` (a request that brought or settled no decision):
        how many its window holds now, with this one, and the ms left until the window ends
        (one round trip; the window starts at its first)."""
        count, left = self.script(WASTE_LUA)(keys=[turn_waste_key(who)], args=[int(window_ms)])
        return int(count), int(left)

    def registering(self, account_id: str):
        """A lock held while one of the account's bots is counted and created (a context manager):
        parallel registrations of one account queue, so none slips past the cap. It lapses after
        10 s should its holder die."""
        return self.r.lock(registering_key(account_id), timeout=10, blocking_timeout=15)
