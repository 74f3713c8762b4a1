"""sdk/stats.py against known values and simulated streams of known mean."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from sdk.stats import MEMORY_MIN_DEALS, MIN_DEALS, Sprt, mean_ci, memory, sprt_bounds


def sums(values):
    return len(values), sum(values), sum(v * v for v in values)


def test_sprt_bounds_are_walds_for_the_standard_error_rates():
    lower, upper = sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95)) == pytest.approx(-2.944438979)
    assert upper == pytest.approx(math.log(0.95 / 0.05)) == pytest.approx(2.944438979)
    lower, upper = sprt_bounds(0.01, 0.2)
    assert lower == pytest.approx(math.log(0.2 / 0.99))
    assert upper == pytest.approx(math.log(0.8 / 0.01))


@pytest.mark.parametrize("alpha, beta", [(0, 0.05), (0.05, 1), (-0.1, 0.5)])
def test_sprt_refuses_error_rates_outside_zero_one(alpha, beta):
    with pytest.raises(ValueError):
        Sprt(alpha=alpha, beta=beta)


def test_sprt_refuses_delta1_not_above_delta0():
    with pytest.raises(ValueError):
        Sprt(delta0=0.05, delta1=0.05)


def test_llr_is_the_normal_log_likelihood_ratio_with_the_sample_variance():
    values = [0.5, -0.5, 0.0, 0.5, 0.5, -0.5, 0.0, 0.5]
    n, total, squares = sums(values)
    mean, var = statistics.fmean(values), statistics.variance(values)
    d0, d1 = 0.0, 0.05
    # log N(x̄; d1, σ²/n) − log N(x̄; d0, σ²/n)
    expected = (n / (2 * var)) * ((mean - d0) ** 2 - (mean - d1) ** 2)
    assert Sprt(d0, d1).llr(n, total, squares) == pytest.approx(expected)


def test_llr_is_zero_at_the_midpoint_and_before_two_deals():
    test = Sprt(0.0, 0.1)
    assert test.llr(4, 4 * 0.05, 4 * 0.05 ** 2 + 0.3) == pytest.approx(0.0)
    assert test.llr(1, 0.5, 0.25) == 0.0


def test_a_bot_winning_every_deal_decides_h1_after_the_minimum_deals():
    test = Sprt()
    for n in range(1, MIN_DEALS):
        assert test.decide(n, 0.5 * n, 0.25 * n) is None
    assert test.decide(MIN_DEALS, 0.5 * MIN_DEALS, 0.25 * MIN_DEALS) == "H1"


def test_max_deals_ends_undecided_as_inconclusive():
    values = [0.5, -0.5] * 20  # mean 0.025, right between the hypotheses
    assert Sprt().decide(*sums(values), max_deals=40) == "inconclusive"
    assert Sprt().decide(*sums(values), max_deals=41) is None


def simulate(mean: float, sd: float, seed: int, test: Sprt, max_deals: int = 20_000) -> str:
    rng = random.Random(seed)
    n = total = squares = 0
    while True:
        x = rng.gauss(mean, sd)
        n, total, squares = n + 1, total + x, squares + x * x
        verdict = test.decide(n, total, squares, max_deals)
        if verdict:
            return verdict


def test_simulated_streams_decide_at_about_the_stated_error_rates():
    """Under H0 (mean = delta0) H1 is accepted at most about alpha of the time, and
    under H1 (mean = delta1) H0 at most about beta; 300 seeded runs each."""
    test = Sprt(0.0, 0.1, alpha=0.05, beta=0.05, span=2.0)
    runs = 300
    false_h1 = sum(simulate(0.0, 0.5, seed, test) == "H1" for seed in range(runs))
    false_h0 = sum(simulate(0.1, 0.5, 10_000 + seed, test) == "H0" for seed in range(runs))
    # binomial(300, 0.05): mean 15, sd 3.8; Wald's test is conservative, so well below 30
    assert false_h1 <= 30, false_h1
    assert false_h0 <= 30, false_h0


def test_clear_differences_decide_the_right_way():
    test = Sprt(0.0, 0.05, span=1.0)
    assert all(simulate(0.2, 0.3, seed, test) == "H1" for seed in range(20))
    assert all(simulate(-0.2, 0.3, seed, test) == "H0" for seed in range(20))


def test_mean_ci_matches_statistics():
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]
    mean, half = mean_ci(*sums(values))
    assert mean == pytest.approx(statistics.fmean(values))
    assert half == pytest.approx(1.96 * statistics.stdev(values) / math.sqrt(len(values)))
    assert mean_ci(1, 2.0, 4.0) == (2.0, None)
    assert mean_ci(0, 0.0, 0.0) == (None, None)


def test_memory_flags_a_clear_gain_in_later_rotations_with_enough_deals():
    honest = [0.0, 1.0, -1.0, 0.0] * 10
    cheat = [1.0, 1.0, 0.0, 1.0, 0.5] * 8
    assert not memory(*sums(honest)).flag
    assert memory(*sums(cheat)).flag
    few = cheat[: MEMORY_MIN_DEALS - 1]
    assert not memory(*sums(few)).flag  # too few deals, however clear


def test_memory_reports_the_mean_difference_and_its_95_interval():
    values = [1.0, 0.0, 0.5, 1.0]
    m = memory(*sums(values)).as_dict()
    mean, half = mean_ci(*sums(values))
    assert m["diff"] == pytest.approx(0.625)
    assert m["ci95"] == pytest.approx([mean - half, mean + half])
    assert memory(0, 0.0, 0.0).as_dict() == {"diff": None, "ci95": None, "flag": False}
