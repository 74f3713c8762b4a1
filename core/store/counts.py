"""Amounts to add to fields of hashes, gathered then added in one step.

    counts = Counts()
    counts.add("bot:b1", "matches", 1)
    counts.queue(pipe, store.script(source("add_counts")))

A match's conclusion adds to dozens of fields (each seat's bot record, its
tournament's tallies): one script call in its transaction (lua/add_counts.lua)
instead of a command each. An integer is added as HINCRBY adds it, any other
number as HINCRBYFLOAT does, each sent as the text redis-py would send, so the
stored values are those the commands one by one would leave.
"""

from __future__ import annotations

from redis.client import Pipeline
from redis.commands.core import Script

from core.store.lua import args


class Counts:
    """Amounts to add to hash fields (`add`), queued as one step (`queue`)."""

    def __init__(self) -> None:
        self.keys: dict[str, int] = {}  # hash -> its index in the script's KEYS (from 1)
        self.ints: list[tuple[int, str, str]] = []
        self.floats: list[tuple[int, str, str]] = []

    def add(self, key: str, field: str, amount: int | float) -> None:
        index = self.keys.setdefault(key, len(self.keys) + 1)
        if isinstance(amount, int):  # bool too: HINCRBY's integers
            self.ints.append((index, field, str(int(amount))))
        else:
            self.floats.append((index, field, repr(float(amount))))

    def queue(self, pipe: Pipeline, script: Script) -> None:
        """The additions on `pipe` (in its transaction, if it is in one), as `script`
        (`add_counts`) run once; nothing if there are none."""
        if self.keys:
            script(keys=list(self.keys), args=[args(ints=self.ints, floats=self.floats)], client=pipe)
