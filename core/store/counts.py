"""Amounts to add to fields of hashes, fields to set, and entries to push onto capped lists,
gathered then applied in one step.

    counts = Counts()
    counts.add("bot:b1", "matches", 1)
    counts.set("bot:b1", "forfeit_streak", 0)
    counts.push("bot:b1:faults", '{"timeout":1}', keep=100)
    counts.queue(pipe, store.script(source("add_counts")))

A match's conclusion adds to dozens of fields (each seat's bot record, its
tournament's tallies) and pushes each seat's faults onto its bot's list of
recent ones: one script call in its transaction (lua/add_counts.lua) instead of
a command each. The additions and sets run in the order they were made (a
streak set back to 0 by one rotation of a deal and added to by the next ends
as the commands one by one would leave it). An integer is added as HINCRBY adds
it, any other number as HINCRBYFLOAT does, each sent as the text redis-py would
send, and a list's entries are pushed in the order given (LPUSH, then LTRIM to
what it keeps), so what is stored is what the commands one by one would leave.
"""

from __future__ import annotations

from redis.client import Pipeline
from redis.commands.core import Script

from core.store.lua import args


class Counts:
    """Amounts to add to hash fields (`add`), fields to set (`set`) and entries to push onto
    capped lists (`push`), queued as one step (`queue`)."""

    def __init__(self) -> None:
        self.keys: dict[str, int] = {}  # hash or list -> its index in the script's KEYS (from 1)
        self.ops: list[tuple[str, int, str, str]] = []  # (how, index, field, amount or value)
        self.pushes: dict[int, tuple[list[str], int]] = {}  # list's index -> (entries, keep)

    def add(self, key: str, field: str, amount: int | float) -> None:
        index = self.keys.setdefault(key, len(self.keys) + 1)
        if isinstance(amount, int):  # bool too: HINCRBY's integers
            self.ops.append(("i", index, field, str(int(amount))))
        else:
            self.ops.append(("f", index, field, repr(float(amount))))

    def set(self, key: str, field: str, value: int) -> None:
        """Set an integer field (after the additions made before, before those made after)."""
        self.ops.append(("s", self.keys.setdefault(key, len(self.keys) + 1), field, str(int(value))))

    def push(self, key: str, entry: str, keep: int) -> None:
        """Push `entry` onto the list `key` (its head: the newest first), which keeps `keep`."""
        index = self.keys.setdefault(key, len(self.keys) + 1)
        self.pushes.setdefault(index, ([], keep))[0].append(entry)

    def queue(self, pipe: Pipeline, script: Script) -> None:
        """The additions, sets and pushes on `pipe` (in its transaction, if it is in one), as
        `script` (`add_counts`) run once; nothing if there are none."""
        if self.keys:
            pushes = [(index, entries, keep) for index, (entries, keep) in self.pushes.items()]
            script(keys=list(self.keys), args=[args(ops=self.ops, pushes=pushes)], client=pipe)
