"""How big a round-robin or a gauntlet is, computed without building it.

The API must refuse a tournament that is too large before it stores
anything (an account entering 64 bots with 100 deals scheduled 403,200
matches, ~4 GB of Redis), and the worker builds the schedule itself: both
need the same count. The server never imports the worker, so the count
lives here and `worker/schedules.py` takes `MAX_TABLES` and `table_count`
from this module — one definition of how many tables a round-robin has.
Who joins a gauntlet's candidate at each table is `sdk.comparison.gauntlet_tables`
(`cardarena compare` seats its field with it too).
"""

from __future__ import annotations

import math

from sdk.comparison import gauntlet_tables

#: above this many k-subsets (k ≥ 3), play a balanced sample of tables
MAX_TABLES = 200


def table_count(bots: int, seats: int, max_tables: int = MAX_TABLES) -> int:
    """The number of tables of a round-robin of `bots` entrants at tables of `seats`.

    Every `seats`-subset while there are at most `max_tables` (always for 2
    seats); else the balanced sample's size: the largest count ≤ `max_tables`
    with count × seats divisible by `bots`, so every bot plays equally often
    (see `worker.schedules.balanced_sample`).
    """
    if seats < 1 or bots < seats:
        return 0
    subsets = math.comb(bots, seats)
    if seats <= 2 or subsets <= max_tables:
        return subsets
    return sample_size(bots, seats, max_tables)


def sample_size(bots: int, seats: int, count: int) -> int:
    """The tables of a balanced sample of about `count`: the largest t ≤ `count` with
    t × seats divisible by `bots` (every bot then plays equally often), never more than
    there are tables."""
    wanted = max(t for t in range(1, count + 1) if (t * seats) % bots == 0 or t == 1)
    if wanted * seats < bots:  # fewer tables than it takes to seat everybody once
        wanted = count
    return min(wanted, math.comb(bots, seats))


def match_count(bots: int, seats: int, deals: int, duplicate: bool, max_tables: int = MAX_TABLES) -> int:
    """The matches of the round-robin: tables × deals × (seats rotations with duplicate play, else 1)."""
    return table_count(bots, seats, max_tables) * deals * (seats if duplicate else 1)


def gauntlet_match_count(bots: int, seats: int, deals: int, duplicate: bool) -> int:
    """The matches of a gauntlet of `bots` entrants (the candidate among them)."""
    return len(gauntlet_tables(list(range(bots - 1)), seats - 1)) * deals * (seats if duplicate else 1)
