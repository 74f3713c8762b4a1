"""What every trick-taking game shares: who played what, and who takes it.

The games differ in *what beats what* (Duck Soup: the lower card of the led
suit in one phase, the higher in the next; DOUBLE: trumps, the POPE and the
IDIOT), so each game passes a `strength` function; the walk over the plays
and the "first played wins among equals" rule live here once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

Play = TypeVar("Play")


def winning_play(plays: Sequence[Play], strength: Callable[[Play], tuple | None]) -> Play:
    """The play with the greatest `strength` (earliest among equals).

    `strength(play)` returns a comparable value, or None for a play that
    cannot win (an off-suit card). The first play must be able to win.
    """
    best = plays[0]
    best_strength = strength(best)
    if best_strength is None:
        raise ValueError("the led card must be able to win its own trick")
    for play in plays[1:]:
        s = strength(play)
        if s is not None and s > best_strength:
            best, best_strength = play, s
    return best
