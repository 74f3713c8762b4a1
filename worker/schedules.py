"""Who plays whom: the round-robin or the gauntlet, as a list of matches to create.

A *table* is a set of `seats` entrants. Each table plays `deals` seeds; with
duplicate play every seed is played once per seat rotation, so each entrant
holds each hand of the deal (card luck cancels). Without duplicate play each
seed is played once, the rotation advancing with the deal so nobody keeps the
first seat.

Tables:

* 2 seats: every pair of entrants ("all tables").
* k ≥ 3 seats: every k-subset while there are at most `MAX_TABLES`; beyond
  that a *balanced sample* (see `balanced_sample`): every bot plays the same
  number of tables and pairs meet as evenly as a seeded search makes them,
  because the number of k-subsets grows too fast (64 bots, 4 seats: 635,376
  tables).

A gauntlet (`gauntlet`) seats one candidate at every table, the other
entrants filling its other seats in turn.

The seed of table t, deal d is `derive_seed(seed, t, d)`: a function of the
tournament seed alone, so the schedule can be rebuilt (a retried expansion
creates exactly the same matches).
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass, field

from core.schedule_size import MAX_TABLES, sample_size, table_count
from games.rng import derive_seed
from games.seats import rotate, rotations
from sdk.comparison import gauntlet_tables


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
    _check("round-robin", bots, seats, deals)
    if table_count(len(bots), seats, max_tables) < math.comb(len(bots), seats):
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
    return Schedule(tables, _matches(tables, seats, deals, duplicate, seed), description, stats)


def gauntlet(bots: list[str], candidate: str, seats: int, deals: int, duplicate: bool, seed: int) -> Schedule:
    """The gauntlet of `candidate` (docs/api.md §5 "Scheduling"): it sits at every table, the
    other entrants filling its other seats in turn (`gauntlet_tables`), `deals` seeds a table."""
    if candidate not in bots:
        raise ValueError(f"the candidate {candidate!r} is not an entrant")
    _check("gauntlet", bots, seats, deals)
    others = [b for b in bots if b != candidate]
    tables = [(candidate, *group) for group in gauntlet_tables(others, seats - 1)]
    description = f"gauntlet: {candidate} at each of {len(tables)} tables"
    return Schedule(tables, _matches(tables, seats, deals, duplicate, seed), description,
                    table_stats(bots, tables))


def _check(format: str, bots: list[str], seats: int, deals: int) -> None:
    if seats < 2 or len(bots) < seats:
        raise ValueError(f"a {format} at {seats} seats needs at least {seats} bots, not {len(bots)}")
    if len(set(bots)) != len(bots):
        raise ValueError("a bot may enter a tournament only once")
    if deals < 1:
        raise ValueError("deals must be at least 1")


def _matches(tables: list[tuple[str, ...]], seats: int, deals: int, duplicate: bool,
             seed: int) -> list[ScheduledMatch]:
    """Each table's deals, in each rotation played (`games.seats.rotations`)."""
    matches = []
    for t, table in enumerate(tables):
        for deal in range(deals):
            deal_seed = derive_seed(seed, t, deal)
            for r in rotations(seats, duplicate, deal):
                matches.append(ScheduledMatch(t, deal, r, tuple(rotate(list(table), r)), deal_seed))
    return matches


def twin_groups(schedule: Schedule, seed: int) -> list[list[int]]:
    """The twins of the schedule: for each table's deal played in more than one rotation,
    the indexes of its matches in the order they are played, one after another.

    The order is seeded and random (a function of the tournament's seed, so a
    retried expansion finds the same): no bot can count on playing a deal
    before or after its rotation. Twins never overlap in time, so no bot ever
    holds, in one match, the hand its opponent holds in the other.
    """
    groups: dict[tuple[int, int], list[int]] = {}
    for index, planned in enumerate(schedule.matches):
        groups.setdefault((planned.table, planned.deal), []).append(index)
    out = []
    for (table, deal), indexes in groups.items():
        if len(indexes) > 1:
            random.Random(derive_seed(seed, "twins", table, deal)).shuffle(indexes)
            out.append(indexes)
    return out


#: candidate tables weighed for each table of a balanced sample
CANDIDATES = 48


def balanced_sample(bots: list[str], seats: int, count: int, seed: int) -> list[tuple[str, ...]]:
    """About `count` distinct tables in which every bot plays as often and pairs meet as evenly as it can.

    Exactly balanced designs (every pair meeting equally often) exist only for
    some (bots, seats, tables) and are hard to build in general, so this is a
    seeded search, table by table. The number of tables is the largest ≤
    `count` with tables × seats divisible by the number of bots, so every bot
    can play equally often — and does: each table takes every bot that has
    played fewer tables than the `seats`-th least played one, and fills up
    from the bots at that count. Which of those is the search: `CANDIDATES`
    tables built greedily (adding the bot that has met the table's members
    least, with seeded noise), those already chosen dropped, the one whose
    pairs have met least kept (squared, so one pair meeting often costs more
    than two meeting a little more). Then swaps of bots between tables even
    out who meets whom (`_even_out`). `table_stats` measures what was
    achieved and the tournament record says it.
    """
    n = len(bots)
    tables_wanted = sample_size(n, seats, count)
    rng = random.Random(derive_seed(seed, "balanced-sample"))
    played = [0] * n
    met = [[0] * n for _ in range(n)]
    chosen: list[tuple[int, ...]] = []
    seen: set[frozenset[int]] = set()
    while len(chosen) < tables_wanted:
        table = _next_table(n, seats, played, met, seen, rng)
        seen.add(frozenset(table))
        chosen.append(tuple(sorted(table)))
        for b in table:
            played[b] += 1
        for a, b in itertools.combinations(table, 2):
            met[a][b] += 1
            met[b][a] += 1
    tables = _rebalance([list(t) for t in chosen], played, met, seen)
    tables = _even_out(tables, met, seen, rng)
    return [tuple(bots[i] for i in sorted(t)) for t in tables]


def _rebalance(tables: list[list[int]], played: list[int], met: list[list[int]],
               seen: set[frozenset[int]]) -> list[list[int]]:
    """Where the search had to seat a bot more often (all tables of the least
    played were used), hand a most played bot's seat to a least played one."""
    while max(played) - min(played) > 1:
        most, least = played.index(max(played)), played.index(min(played))
        for i in range(len(tables)):
            table = tables[i]
            if most in table and least not in table:
                new = [least if m == most else m for m in table]
                if frozenset(new) not in seen:
                    break
        else:
            return tables  # no such table: leave it (table_stats reports the spread)
        seen.discard(frozenset(table))
        seen.add(frozenset(new))
        tables[i] = new
        played[most] -= 1
        played[least] += 1
        for m in table:
            if m != most:
                met[most][m] -= 1
                met[m][most] -= 1
                met[least][m] += 1
                met[m][least] += 1
    return tables


#: swaps tried per table when evening out pair meetings
SWAPS_PER_TABLE = 300


def _even_out(tables: list[list[int]], met: list[list[int]], seen: set[frozenset[int]],
              rng: random.Random) -> list[list[int]]:
    """Swap bots between tables while that lowers the sum of squared pair meetings.

    A swap keeps every bot's number of tables, so the balance of play stays
    exact; only who meets whom improves (the greedy cannot look ahead).
    """
    if len(tables) < 2:
        return tables
    for _ in range(SWAPS_PER_TABLE * len(tables)):
        i, j = rng.randrange(len(tables)), rng.randrange(len(tables))
        a, b = tables[i], tables[j]
        if i == j:
            continue
        x, y = a[rng.randrange(len(a))], b[rng.randrange(len(b))]
        if y in a or x in b:
            continue
        # the pairs that change: x leaves a's other bots for b's, y the reverse (a bot at both
        # tables meets x and y as often as before); each meeting count moves by one
        only_a = [m for m in a if m != x and m not in b]
        only_b = [m for m in b if m != y and m not in a]
        met_x, met_y = met[x], met[y]
        delta = (sum(2 * (met_y[m] - met_x[m]) + 2 for m in only_a)
                 + sum(2 * (met_x[m] - met_y[m]) + 2 for m in only_b))
        if delta >= 0:
            continue
        new_a, new_b = [y if m == x else m for m in a], [x if m == y else m for m in b]
        if frozenset(new_a) in seen or frozenset(new_b) in seen:
            continue
        seen.difference_update((frozenset(a), frozenset(b)))
        seen.update((frozenset(new_a), frozenset(new_b)))
        tables[i], tables[j] = new_a, new_b
        for leaving, joining, others in ((x, y, only_a), (y, x, only_b)):
            for m in others:
                met[leaving][m] -= 1
                met[m][leaving] -= 1
                met[joining][m] += 1
                met[m][joining] += 1
    return tables


def _next_table(n: int, seats: int, played: list[int], met: list[list[int]],
                seen: set[frozenset[int]], rng: random.Random) -> list[int]:
    """The best new table of the least played bots (see `balanced_sample`)."""
    level = sorted(played)[seats - 1]
    must = [b for b in range(n) if played[b] < level]
    pool = [b for b in range(n) if played[b] == level]
    best = None
    for attempt in range(CANDIDATES):
        table = _fill(must, pool, seats, met, rng, noise=0.0 if attempt == 0 else 0.3 + attempt / 8)
        if frozenset(table) in seen:
            continue
        cost = sum(met[a][b] ** 2 for a, b in itertools.combinations(table, 2))
        if best is None or cost < best[0]:
            best = (cost, table)
    if best is not None:
        return best[1]
    for extra in itertools.combinations(pool, seats - len(must)):  # the search found only used tables
        if frozenset(must + list(extra)) not in seen:
            return must + list(extra)
    # every table of the least played bots is used: the unused table of the least played there is
    order = sorted(range(n), key=lambda b: (played[b], rng.random()))
    return list(next(t for t in itertools.combinations(order, seats) if frozenset(t) not in seen))


def _fill(must: list[int], pool: list[int], seats: int, met: list[list[int]], rng: random.Random,
          noise: float) -> list[int]:
    """`must`, then the bot of `pool` that met the table least (with `noise`) until it is full."""
    table = list(must)
    candidates = list(pool)
    rng.shuffle(candidates)
    met_table = {b: sum(met[b][m] for m in table) for b in candidates}  # meetings with the table so far
    while len(table) < seats:
        pick, least = -1, 0.0
        for b in candidates:  # the first of the least, each drawing its noise in turn
            if b in table:
                continue
            cost = met_table[b] + noise * rng.random()
            if pick < 0 or cost < least:
                pick, least = b, cost
        table.append(pick)
        for b in candidates:
            met_table[b] += met[b][pick]
    return table


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
