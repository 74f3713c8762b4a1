"""A comparison's deals and test (docs/api.md §5 "Comparisons"), written once for the platform
(core/comparisons.py) and for `cardarena compare` at home, so both decide alike.

* `deal_seatings` — who sits where in each match of one deal: head to head (the deal in both
  rotations, the candidate holding each hand), or with opponents at each table of the field
  (`gauntlet_tables`), once with the candidate and once with the baseline in the same seat;
* `deal_statistic` — one deal's statistic from the candidate's (and baseline's) match points;
* `sprt` — the test on that statistic (`sdk.stats.Sprt`, its span set by the statistic's range);
* `figures` — what a comparison shows while it runs: deals, llr, bounds, mean and its 95% interval.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from games.rng import derive_seed
from sdk.stats import Sprt, mean_ci

#: the platform's defaults for a comparison's test (`POST /comparisons`)
DELTA0 = 0.0
DELTA1 = 0.05
ALPHA = 0.05
BETA = 0.05
MAX_DEALS = 2000


def gauntlet_tables(others: list, seats: int) -> list[tuple]:
    """The groups of `seats` entrants that join a gauntlet's candidate at its tables: each
    opponent alone at 1 other seat; else consecutive groups, cyclically, so every opponent
    fills `seats` tables (all of them together when there are no more than `seats`)."""
    if seats < 1 or len(others) < seats:
        return []
    if seats == 1:
        return [(o,) for o in others]
    if len(others) == seats:
        return [tuple(others)]
    return [tuple(others[(i + j) % len(others)] for j in range(seats)) for i in range(len(others))]


@dataclass(frozen=True)
class Seating:
    """One match of a deal: `entrants` by seat ("candidate", "baseline" or an opponent), `who`
    (candidate or baseline) plays `seat`; `table` and `index` (0 or 1 of the table's pair) name it."""

    entrants: tuple
    who: str
    seat: int
    table: int
    index: int


def deal_seatings(seed: int, deal: int, opponents: list | None = None, seats: int = 2,
                  candidate: object = "candidate", baseline: object = "baseline"
                  ) -> tuple[int, list[Seating], list[list[int]]]:
    """The deal's seed, its matches (pairs in table order: the statistic reads them so) and,
    per table, the order its two matches are played in (seeded, as the platform's twins)."""
    deal_seed = derive_seed(seed, "deal", deal)
    plans: list[Seating] = []
    orders: list[list[int]] = []
    if not opponents:
        for j, entrants in enumerate(((candidate, baseline), (baseline, candidate))):
            plans.append(Seating(entrants, "candidate", j, 0, j))
        order = [0, 1]
        random.Random(derive_seed(seed, "twins", deal)).shuffle(order)
        return deal_seed, plans, [order]
    for t, table in enumerate(gauntlet_tables(list(opponents), seats - 1)):
        seat = (deal + t) % seats
        for j, (who, entrant) in enumerate((("candidate", candidate), ("baseline", baseline))):
            seated = list(table)
            seated.insert(seat, entrant)
            plans.append(Seating(tuple(seated), who, seat, t, j))
        order = [2 * t, 2 * t + 1]
        random.Random(derive_seed(seed, "twins", deal, t)).shuffle(order)
        orders.append(order)
    return deal_seed, plans, orders


def deal_statistic(points: list[float], field: bool) -> float:
    """One deal's statistic from the match points of the seat each match's plan names, in plan
    order. Head to head: the candidate's points over the two rotations, minus 1, halved (in
    [−½, ½]). In a field: the candidate's points minus the baseline's at each table, averaged
    (in [−1, 1])."""
    if not field:
        return (points[0] + points[1] - 1) / 2
    diffs = [points[i] - points[i + 1] for i in range(0, len(points), 2)]
    return sum(diffs) / len(diffs)


def sprt(delta0: float = DELTA0, delta1: float = DELTA1, alpha: float = ALPHA, beta: float = BETA,
         field: bool = False) -> Sprt:
    """The comparison's test; its variance floor follows the statistic's range."""
    return Sprt(delta0, delta1, alpha, beta, span=2.0 if field else 1.0)


def figures(test: Sprt, n: int, total: float, squares: float) -> dict:
    """A comparison's running figures from its sums: `deals`, `llr`, `bounds`, `mean`, `ci95`."""
    mean, half = mean_ci(n, total, squares)
    return {"deals": n, "llr": round(test.llr(n, total, squares), 4), "bounds": list(test.bounds),
            "mean": mean, "ci95": None if mean is None or half is None else [mean - half, mean + half]}
