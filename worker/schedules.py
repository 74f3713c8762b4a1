"""Who plays whom: the round-robin, as a list of matches to create.

A *table* is a set of `seats` entrants. Each table plays `deals` seeds; with
duplicate play every seed is played once per seat rotation, so each entrant
holds each hand of the deal (card luck cancels). Without duplicate play each
seed is played once, the rotation advancing with the deal so nobody keeps the
first seat.

Tables:

* 2 seats: every pair of entrants ("all tables").
* k ≥ 3 seats: every k-subset while there are at most `MAX_TABLES`; beyond
  that a *balanced sample* (see `balanced_sample`), because the number of
  k-subsets grows too fast (64 bots, 4 seats: 635,376 tables).

The seed of table t, deal d is `derive_seed(seed, t, d)`: a function of the
tournament seed alone, so the schedule can be rebuilt (a retried expansion
creates exactly the same matches).
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field

from games.rng import derive_seed
from games.seats import rotate

#: above this many k-subsets (k ≥ 3), play a balanced sample of tables
MAX_TABLES = 200


@dataclass(frozen=True)
class ScheduledMatch:
    """One match of the schedule: `bots[i]` sits in seat i."""

    table: int
    deal: int
    rotation: int
    bots: tuple[str, ...]
    seed: int


@dataclass
class Schedule:
    tables: list[tuple[str, ...]]
    matches: list[ScheduledMatch]
    #: "all tables", or "balanced sample of N tables: …" saying how balanced
    description: str
    stats: dict = field(default_factory=dict)


def round_robin(bots: list[str], seats: int, deals: int, duplicate: bool, seed: int,
                max_tables: int = MAX_TABLES) -> Schedule:
    """The round-robin of `bots` at tables of `seats`, `deals` seeds a table."""
    if seats < 2 or len(bots) < seats:
        raise ValueError(f"a round-robin at {seats} seats needs at least {seats} bots, not {len(bots)}")
    if len(set(bots)) != len(bots):
        raise ValueError("a bot may enter a tournament only once")
    if deals < 1:
        raise ValueError("deals must be at least 1")
    if seats > 2 and math.comb(len(bots), seats) > max_tables:
        tables = balanced_sample(bots, seats, max_tables, seed)
        stats = table_stats(bots, tables)
        description = (
            f"balanced sample of {len(tables)} tables: every pair meets "
            f"{stats['pair_meetings'][0]}–{stats['pair_meetings'][1]} times, every bot plays "
            f"{stats['tables_per_bot'][0]}–{stats['tables_per_bot'][1]} tables"
        )
    else:
        tables = [tuple(t) for t in itertools.combinations(bots, seats)]
        stats = table_stats(bots, tables)
        description = "all tables"
    matches = []
    for t, table in enumerate(tables):
        for deal in range(deals):
            deal_seed = derive_seed(seed, t, deal)
            rotations = range(seats) if duplicate else [deal % seats]
            for r in rotations:
                matches.append(ScheduledMatch(t, deal, r, tuple(rotate(list(table), r)), deal_seed))
    return Schedule(tables, matches, description, stats)


def balanced_sample(bots: list[str], seats: int, count: int, seed: int) -> list[tuple[str, ...]]:
    """About `count` distinct tables in which pairs meet as evenly as a greedy can make them.

    Exactly balanced designs (every pair meeting equally often) exist only for
    some (bots, seats, tables) and are hard to build in general, so this is a
    seeded greedy: the number of tables is the largest ≤ `count` with
    tables × seats divisible by the number of bots (so every bot *can* play
    equally often); each table starts from a bot that has played least and
    adds, one at a time, the bot that has played least and has met the
    table's members least (ties broken by the seeded shuffle). In practice
    every bot plays the same number of tables (±1) and pair meetings differ by
    at most 1–2; `table_stats` measures what was achieved and the tournament
    record says it.
    """
    n = len(bots)
    tables_wanted = max(t for t in range(1, count + 1) if (t * seats) % n == 0 or t == 1)
    if tables_wanted * seats < n:  # fewer tables than it takes to seat everybody once
        tables_wanted = count
    rng = random.Random(derive_seed(seed, "balanced-sample"))
    order = list(range(n))
    rng.shuffle(order)
    played = [0] * n
    met = [[0] * n for _ in range(n)]
    chosen: list[tuple[int, ...]] = []
    seen: set[frozenset[int]] = set()
    attempts = 0
    while len(chosen) < tables_wanted and attempts < tables_wanted * 20:
        attempts += 1
        rng.shuffle(order)
        first = min(order, key=lambda b: played[b])
        table = [first]
        while len(table) < seats:
            candidates = [b for b in order if b not in table]
            table.append(min(candidates, key=lambda b: (played[b], sum(met[b][m] for m in table))))
        key = frozenset(table)
        if key in seen:  # the same table again: perturb by starting elsewhere next time
            played[first] += 0  # no change; the reshuffle above gives another start
            continue
        seen.add(key)
        chosen.append(tuple(sorted(table)))
        for b in table:
            played[b] += 1
        for a, b in itertools.combinations(table, 2):
            met[a][b] += 1
            met[b][a] += 1
    return [tuple(bots[i] for i in t) for t in chosen]


def table_stats(bots: list[str], tables: list[tuple[str, ...]]) -> dict:
    """How evenly `tables` mix the bots: (min, max) tables per bot and meetings per pair."""
    played = {b: 0 for b in bots}
    met = {frozenset(p): 0 for p in itertools.combinations(bots, 2)}
    for table in tables:
        for b in table:
            played[b] += 1
        for pair in itertools.combinations(table, 2):
            met[frozenset(pair)] += 1
    meetings = list(met.values()) or [0]
    return {
        "tables": len(tables),
        "tables_per_bot": [min(played.values()), max(played.values())],
        "pair_meetings": [min(meetings), max(meetings)],
    }
