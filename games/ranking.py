"""The arithmetic on ranks: an engine's ranks, forfeits, match points, a lone winner.

Shared by every engine (`ranks_of`) and every place that referees a match —
the worker pool, local play, standings — so a tie or a forfeit counts the same
everywhere (docs/api.md §1, §3, §4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def ranks_of(scores: Sequence[Any]) -> list[int]:
    """1 = best (the highest score); ties share a rank and the next is skipped (1, 1, 3).

    Scores may be any comparable values: numbers, or tuples where a game ranks
    by several keys (eliminated seats last, then the score).
    """
    return [1 + sum(1 for other in scores if other > mine) for mine in scores]


def forfeit_ranks(ranks: list[int], forfeits: list[int]) -> list[int]:
    """Ranks with forfeiting seats moved last, the others keeping their order."""
    if not forfeits:
        return list(ranks)
    order = sorted(range(len(ranks)), key=lambda s: (s in forfeits, ranks[s]))
    out = [0] * len(ranks)
    for position, seat in enumerate(order):
        prev = order[position - 1] if position else None
        if prev is not None and (prev in forfeits) == (seat in forfeits) and ranks[prev] == ranks[seat]:
            out[seat] = out[prev]
        else:
            out[seat] = position + 1
    return out


def match_points(ranks: list[int], seat: int) -> float:
    """(seats ranked below this one + ½ × seats tied with it) / (seats − 1)."""
    others = [r for i, r in enumerate(ranks) if i != seat]
    if not others:
        return 0.0
    mine = ranks[seat]
    above = sum(1 for r in others if r > mine)
    ties = sum(1 for r in others if r == mine)
    return (above + 0.5 * ties) / len(others)


def alone_first(ranks: list[int], seat: int) -> bool:
    """Whether `seat` ranks 1 and nobody else does: a win, not a shared first place."""
    return ranks[seat] == 1 and ranks.count(1) == 1
