"""Match slots: no remote bot is ever in more matches at once than its `max_concurrent`.

Keys:
    bot:{id}:playing   set of the match ids holding one of the bot's slots
    bot:{id}:playing:guests   those of them that are guest matches (core/store/guests.py:
                       another account started them), which hold at most the bot's guest share
    bot:{id}:waiting   sorted set of match ids waiting for one, scored by when they began
                       to wait (first come, first served)
    slots:waiting      set of the bots that have matches waiting (the recovery sweep's list)

A match runner takes the slots of all its remote bots at once, or none
(`take_slots`, one Lua step; with the match's start in the same step:
core/store/matches.py `take_slots_and_start`): a match never holds one bot's slot while waiting
for another's, so two matches can never wait on each other — a bot in two
tournaments with one slot plays them in turn. A match that finds a bot full
waits in that bot's queue and its job ends: no worker waits for a slot. The
slots of a match are given back when it ends (`release_slots`), which wakes
the oldest match waiting for each of those bots — one slot freed, one match
woken; a woken match that finds another of its bots full waits for that one
and passes the wake-up on to the oldest match waiting for each of its other
bots with a slot free (`pass_wake`), so a freed slot is not left idle behind
a match that cannot use it, and the recovery sweep wakes what a dead worker
dropped (`wake_stalled`). A match keeps its slots between its runs
(a remote bot's turn pending, or settled and its next run queued: it has a
waiting record); a slot whose match has neither that nor a lease (its worker
died mid-run) is free again, its match taking it back when it resumes.
In-process bots run on the platform: they have no slots.

Guest matches — matches another account started with the bot — hold at most its guest share of
its slots (the caller marks such a bot's record with `guest_share`: core/store/bots.py
`guest_share`, worker/match_runner.py `guest_seats`), so the rest stays for the ladder (and the owner's own matches) whatever others
queue: a guest match finds the bot full when its guest matches hold its share, even with slots
free.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

import redis
from redis.commands.core import Script

from core.store.bots import DEFAULT_MAX_CONCURRENT, guest_share
from core.store.jobs import lease_key
from core.store.keys import text
from core.store.lua import args, source

#: the kinds of bot whose matches take slots: those running on their authors' machines, and hosted
#: bots (a sandboxed process per match: an author's bot is in at most its max_concurrent at once)
SLOTTED = ("webhook", "polling", "hosted")

def release_step(match_id: str | None, bots: list[str], each: int | None = None) -> tuple[list[str], dict]:
    """lua/lib/release_and_wake.lua's keys and arguments: `match_id`'s slots of `bots` (ids, each
    once) given back (None: none), and `each` of the matches waiting for each bot taken off its
    queue (None: all of them)."""
    keys = [playing_key(b) for b in bots] + [waiting_key(b) for b in bots] + [WAITING_BOTS]
    named: dict = {"bots": bots}
    if match_id is not None:
        named["match"] = match_id
    if each is not None:
        named["each"] = each
    return keys, named


def woken_from(reply) -> list[str]:
    """The matches a slot step woke, from its script's reply (`Slots.release_slots`)."""
    return list(dict.fromkeys(text(m) for m in reply or ()))


class Slots:
    r: redis.Redis
    script: Callable[[str], Script]
    bot_record: Callable[[str], dict | None]
    waiting_on: Callable[[str], dict | None]
    started_by: Callable[[dict], str | None]
    get_matches: Callable[..., list[dict | None]]

    def take_slots(self, match_id: str, bots: list[dict]) -> dict | None:
        """Take one slot of each slotted bot among `bots` (records, seats in order) for the
        match, all or none: None when taken, else the first full bot (the match now waits
        in its queue; `release_slots` of one of its matches wakes it)."""
        slotted, keys, slots = slots_step(match_id, bots)
        if not slotted:
            return None
        full = self.script(source("take_slots"))(keys=keys, args=[args(**slots)])
        return slotted[int(full) - 1] if full else None

    def release_slots(self, match_id: str, bot_ids: list[str]) -> list[str]:
        """Give the match's slots back; the oldest match waiting for each of these bots, taken
        off its queue, to enqueue again: one slot each freed, one match each woken (it tries
        again; one that finds another bot full waits for that one and passes the wake-up on:
        `pass_wake`). One round trip (a match's end makes it with its reads: core/store/runs.py
        `read_end`)."""
        return self._release_and_wake(match_id, bot_ids, each=1)

    def waiting_for(self, bot_ids: list[str]) -> list[str]:
        """The matches waiting for any of these bots, oldest first, taken off their queues."""
        return self._release_and_wake(None, bot_ids)

    def pass_wake(self, match_id: str, bots: list[dict], full: dict) -> list[str]:
        """The match found `full` full and waits for it now: for each other slotted bot among
        `bots` (records) that has a slot free, the oldest match waiting for it, taken off its
        queue, to enqueue: the wake-up that reached this match goes on to one that may use the
        slot. One round trip."""
        others = [b for b in slots_step(match_id, bots)[0] if b["id"] != full["id"]]
        if not others:
            return []
        keys = [playing_key(b["id"]) for b in others] + [waiting_key(b["id"]) for b in others] + [WAITING_BOTS]
        entries = [{"id": b["id"], "cap": int(b.get("max_concurrent") or DEFAULT_MAX_CONCURRENT)} for b in others]
        woken = self.script(source("pass_wake"))(keys=keys, args=[args(match=match_id, bots=entries)])
        return [text(m) for m in woken]

    def _release_and_wake(self, match_id: str | None, bot_ids: list[str], each: int | None = None) -> list[str]:
        bots = list(dict.fromkeys(bot_ids))
        if not bots:
            return []
        keys, named = release_step(match_id, bots, each)
        return woken_from(self.script(source("release_and_wake"))(keys=keys, args=[args(**named)]))

    def bots_with_waiting_matches(self) -> list[str]:
        return sorted(text(b) for b in self.r.smembers(WAITING_BOTS))

    def wake_stalled(self) -> list[str]:
        """The waiting matches of bots that have a free slot, taken off their queues: a wake-up
        lost when a worker died between giving slots back and enqueueing (the sweep's net)."""
        woken: list[str] = []
        for bot_id in self.bots_with_waiting_matches():
            bot = self.bot_record(bot_id)
            cap = int((bot or {}).get("max_concurrent") or DEFAULT_MAX_CONCURRENT)
            live = [m for m in self.playing(bot_id)
                    if self.r.exists(lease_key("match", m)) or self.waiting_on(m) is not None]
            if bot is None or (len(live) < cap and not self._only_guests_wait(bot, live)):
                woken += [m for m in self.waiting_for([bot_id]) if m not in woken]
        return woken

    def _only_guests_wait(self, bot: dict, live: list[str]) -> bool:
        """Whether every match waiting for the bot is a guest match (another account's: core/store/guests.py)
        and its live guest matches hold its guest share already: then a free slot is the ladder's, and
        waking them would only have them wait again."""
        guests = {text(m) for m in self.r.smembers(guests_key(bot["id"]))}
        if sum(1 for m in live if m in guests) < max(1, guest_share(bot)):
            return False
        waiting = [text(m) for m in cast(list[bytes], self.r.zrange(waiting_key(bot["id"]), 0, -1))]
        starters = [self.started_by(m) if m is not None else None
                    for m in self.get_matches(waiting, ("id", "owner", "tournament", "comparison", "kind"))]
        return all(s not in (None, "admin", bot.get("owner")) for s in starters)

    def slot_use(self, bot_ids: list[str]) -> dict[str, tuple[int, bool]]:
        """For each bot: how many of its slots are held by a live match (one with a lease or a
        waiting record, as `take_slots` counts them), and whether a match waits for one. Two
        round trips (the matchmaker asks before taking a bot's slot: worker/matchmaker.py)."""
        if not bot_ids:
            return {}
        pipe = self.r.pipeline(transaction=False)
        for bot_id in bot_ids:
            pipe.smembers(playing_key(bot_id))
            pipe.exists(waiting_key(bot_id))
        replies = pipe.execute()
        playing = {b: [text(m) for m in ms] for b, ms in zip(bot_ids, replies[::2], strict=True)}
        pipe = self.r.pipeline(transaction=False)
        for ms in playing.values():
            for m in ms:
                pipe.exists(lease_key("match", m), f"match:{m}:waiting")
        live = iter(pipe.execute())
        return {b: (sum(1 for _ in ms if next(live)), bool(w))
                for (b, ms), w in zip(playing.items(), replies[1::2], strict=True)}

    def playing(self, bot_id: str) -> list[str]:
        """The matches holding one of the bot's slots (a dead worker's may linger until taken again)."""
        return sorted(text(m) for m in self.r.smembers(playing_key(bot_id)))


WAITING_BOTS = "slots:waiting"
#: what comes before and after a match's id in its waiting hash's key (core/store/waits.py
#: `waiting_key`, which imports what imports this module): a match holding it is between runs
MATCH_WAITING_AROUND = ["match:", ":waiting"]


def slots_step(match_id: str, bots: list[dict]) -> tuple[list[dict], list[str], dict]:
    """The slotted bots among `bots` (records, each once), and lua/lib/take_slots.lua's keys and
    slots: a bot's cap is its max_concurrent, and for a bot the match is a guest of (its
    `guest_share` set) its guest share too."""
    slotted = list({b["id"]: b for b in bots if b.get("kind") in SLOTTED}.values())
    keys = [playing_key(b["id"]) for b in slotted] + [waiting_key(b["id"]) for b in slotted] + [WAITING_BOTS]
    entries = []
    for bot in slotted:
        entry = {"id": bot["id"], "cap": int(bot.get("max_concurrent") or DEFAULT_MAX_CONCURRENT)}
        if bot.get("guest_share") is not None:
            entry["share"] = int(bot["guest_share"])
        entries.append(entry)
    slots = {"match": match_id, "lease_prefix": lease_key("match", ""), "now": time.time(), "bots": entries,
             "waiting_around": MATCH_WAITING_AROUND}
    return slotted, keys, slots


def playing_key(bot_id: str) -> str:
    return f"bot:{bot_id}:playing"


def waiting_key(bot_id: str) -> str:
    return f"bot:{bot_id}:waiting"


def guests_key(bot_id: str) -> str:
    """The guest matches among those holding the bot's slots (lua/lib/take_slots.lua names it from the
    playing set's)."""
    return f"{playing_key(bot_id)}:guests"
