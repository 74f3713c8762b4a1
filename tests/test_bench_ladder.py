"""bench/ladder.py's measure: Kendall's τ against the true order, ties counting for neither side.

No accuracy is asserted here: the target lives in the benchmark itself.
"""

from __future__ import annotations

from tests.scripts import load_script

bench = load_script("bench/ladder.py", "bench_ladder")


def test_tau_is_one_for_the_true_order_and_minus_one_for_its_reverse():
    n = bench.FIELD
    assert bench.kendall_tau({b: n - b for b in range(n)}) == 1.0
    assert bench.kendall_tau({b: b for b in range(n)}) == -1.0


def test_a_tie_is_neither_right_nor_wrong_whatever_the_bots_numbers():
    """The true order is the bots' numbers: a tie must not be broken by them (a stable sort did,
    crediting the side whose standings tie most with what it never measured)."""
    n = bench.FIELD
    assert bench.kendall_tau(dict.fromkeys(range(n), 0.0)) == 0.0
    score = {b: n - b for b in range(n)}
    score[1] = score[0]  # the two best tied: one pair of 66 counts 0
    assert bench.kendall_tau(score) == (n * (n - 1) // 2 - 1) / (n * (n - 1) // 2)


def test_matches_needed_is_where_tau_reaches_the_target_for_good():
    assert bench.needed([(40, 0.5), (80, 0.92), (120, 0.85), (160, 0.91), (200, 0.95)]) == 160
    assert bench.needed([(40, 0.95), (80, 0.5)]) is None
