"""Deterministic randomness: the same seed gives the same deals everywhere.

`random.shuffle` and `random.choice` are not promised to stay the same across
Python versions, so engines shuffle with the Fisher–Yates below, driven only
by `getrandbits` (whose output for a given seed Python does keep stable).
Every independent stream (deal 3, the draw for first player, …) gets its own
seed derived from the match seed and a label, so the deals never depend on
how many random numbers the actions happened to use.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def derive_seed(seed: int, *labels: object) -> int:
    """A seed below 2**63 for the stream named by `labels` within match `seed`.

    63 bits, not 64, so that a derived seed is itself a valid match seed
    (`Game.new` and the API take seeds in ``0 ≤ seed < 2**63``).
    """
    text = ":".join([str(seed), *map(str, labels)]).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") >> 1


class Rng:
    """A seeded random stream with version-stable shuffles and draws."""

    __slots__ = ("_random",)

    def __init__(self, seed: int, *labels: object) -> None:
        # only `getrandbits` is drawn from: stable for an integer seed across Python versions
        self._random = random.Random(derive_seed(seed, *labels))

    def below(self, n: int) -> int:
        """A uniform integer in ``range(n)``."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        bits = n.bit_length()
        while True:
            r = self._random.getrandbits(bits)
            if r < n:
                return r

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A shuffled copy of `items`."""
        out = list(items)
        getrandbits = self._random.getrandbits
        for i in range(len(out) - 1, 0, -1):
            # `below(i + 1)`, inlined: the same draws, so the same shuffle for every seed
            n = i + 1
            bits = n.bit_length()
            j = getrandbits(bits)
            while j >= n:
                j = getrandbits(bits)
            out[i], out[j] = out[j], out[i]
        return out

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """`k` distinct items, in random order."""
        return self.shuffled(items)[:k]
