"""The statistics the platform reports, in one place (standard library only).

* `mean_ci` — a mean and the half-width of its normal-approximation interval,
  from running sums (what the store keeps: n, Σx, Σx²); `wilson` — the
  interval of a proportion (a win rate);
* `Sprt` — the sequential probability ratio test of a comparison (docs/api.md §5,
  "Comparisons"): H0 mean ≤ delta0 against H1 mean ≥ delta1 on a stream of
  per-deal statistics whose variance is estimated from the deals themselves;
* `memory` — the flag for bots that remember deals: their match points in
  rotations of deals they had already played, minus the first rotation they
  played of the same deals (docs/api.md §5, "Scheduling").

Why this SPRT: the statistic of one deal (paired rotations, or candidate minus
baseline at the same seat) is roughly normal once a few deals are summed, so
the log-likelihood ratio of the two means under a common variance is
``n (d1 − d0) (2 x̄ − d0 − d1) / (2 σ²)`` — the generalised SPRT fishtest uses
with its normal approximation. The variance is the deals' own sample variance,
floored so that a stream of identical statistics (a bot that wins every deal)
decides after `MIN_DEALS` instead of dividing by zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: z of a two-sided 95% and 99% normal interval
Z95 = 1.96
Z99 = 2.576
#: a comparison never decides on fewer deals than this
MIN_DEALS = 10
#: the smallest variance the test assumes, as a share of the statistic's squared range
VARIANCE_FLOOR = 1e-3
#: the memory flag needs this many deals played in two rotations or more
MEMORY_MIN_DEALS = 30


def mean_ci(n: int, total: float, squares: float, z: float = Z95) -> tuple[float | None, float | None]:
    """Mean and half-width of its interval from n, Σx and Σx² (None, None for n = 0;
    no interval for n = 1)."""
    if n <= 0:
        return None, None
    mean = total / n
    if n == 1:
        return mean, None
    variance = max(0.0, (squares - n * mean * mean) / (n - 1))
    return mean, z * math.sqrt(variance / n)


def wilson(n: int, successes: float, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (None for n = 0): unlike the normal
    approximation it stays inside [0, 1] and is not empty at 0 or n successes, where a
    few dozen matches still leave real doubt."""
    if n <= 0:
        return None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds on the log-likelihood ratio: (ln(β/(1−α)), ln((1−β)/α))."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must lie strictly between 0 and 1")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


@dataclass(frozen=True)
class Sprt:
    """A sequential test of the mean of a per-deal statistic.

    `span` is the width of the statistic's range (1 for a head-to-head
    statistic in [−½, ½], 2 for candidate minus baseline in [−1, 1]); it only
    sets the variance floor.
    """

    delta0: float = 0.0
    delta1: float = 0.05
    alpha: float = 0.05
    beta: float = 0.05
    span: float = 1.0

    def __post_init__(self) -> None:
        if not self.delta1 > self.delta0:
            raise ValueError("delta1 must be greater than delta0")
        sprt_bounds(self.alpha, self.beta)  # checks alpha and beta

    @property
    def bounds(self) -> tuple[float, float]:
        return sprt_bounds(self.alpha, self.beta)

    def llr(self, n: int, total: float, squares: float) -> float:
        """The log-likelihood ratio of H1 against H0 after n deals (0 before two)."""
        if n < 2:
            return 0.0
        mean = total / n
        variance = max((squares - n * mean * mean) / (n - 1), VARIANCE_FLOOR * self.span ** 2)
        d0, d1 = self.delta0, self.delta1
        return n * (d1 - d0) * (2 * mean - d0 - d1) / (2 * variance)

    def decide(self, n: int, total: float, squares: float, max_deals: int | None = None) -> str | None:
        """"H1", "H0", "inconclusive" (max_deals reached undecided) or None (play on)."""
        llr = self.llr(n, total, squares)
        lower, upper = self.bounds
        if n >= MIN_DEALS:
            if llr >= upper:
                return "H1"
            if llr <= lower:
                return "H0"
        if max_deals is not None and n >= max_deals:
            return "inconclusive"
        return None


@dataclass(frozen=True)
class Memory:
    """docs/api.md's `memory` of one standings row."""

    diff: float | None
    ci95: tuple[float, float] | None
    flag: bool
    deals: int

    def as_dict(self) -> dict:
        return {"diff": self.diff, "ci95": list(self.ci95) if self.ci95 else None, "flag": self.flag}


def memory(n: int, total: float, squares: float) -> Memory:
    """The memory figure from the per-deal differences (later rotations' mean match
    points minus the first rotation's), as sums: flagged when the 99% interval lies
    above 0 with at least `MEMORY_MIN_DEALS` deals.

    An honest bot's difference averages 0: which rotation of a deal comes first
    is drawn at random, so holding a hand first is no advantage in expectation.
    """
    mean, half95 = mean_ci(n, total, squares, Z95)
    if mean is None:
        return Memory(None, None, False, 0)
    _, half99 = mean_ci(n, total, squares, Z99)
    ci95 = (mean - half95, mean + half95) if half95 is not None else None
    flag = n >= MEMORY_MIN_DEALS and half99 is not None and mean - half99 > 0
    return Memory(mean, ci95, flag, n)
