"""The honest ladder: `tied_from` marks bots the ratings cannot tell apart yet."""

from __future__ import annotations

import random

from server.api.rankings import mark_ties


def ladder(*ratings: tuple[float, float]) -> list[dict]:
    """Rows as the store gives them: best ordinal (μ − 3σ) first, rank by position."""
    rows = [{"bot": f"b{i}", "rating": {"mu": mu, "sigma": sigma, "ordinal": mu - 3 * sigma}}
            for i, (mu, sigma) in enumerate(ratings)]
    rows.sort(key=lambda r: -r["rating"]["ordinal"])
    for i, row in enumerate(rows):
        row["rank"] = i + 1
    mark_ties(rows)
    return rows


def test_the_issues_example_is_a_statistical_tie():
    # 21.8 ± 13.7 sorts above 29.9 ± 23.5 (ordinal 8.1 > 6.4): their intervals overlap
    rows = ladder((29.9, 23.5 / 3), (21.8, 13.7 / 3))
    assert [(r["rating"]["mu"], r["tied_from"]) for r in rows] == [(21.8, None), (29.9, 1)]


def test_bots_whose_intervals_do_not_overlap_are_not_tied():
    rows = ladder((40.0, 1.0), (20.0, 1.0), (19.0, 1.0), (5.0, 1.0))
    assert [r["tied_from"] for r in rows] == [None, None, 2, None]


def test_tied_from_is_the_best_rank_above_whose_interval_overlaps():
    rng = random.Random(3)
    for _ in range(500):
        rows = ladder(*[(rng.uniform(0, 50), rng.uniform(0.3, 9)) for _ in range(rng.randint(1, 9))])
        spans = [(r["rating"]["mu"] - 3 * r["rating"]["sigma"], r["rating"]["mu"] + 3 * r["rating"]["sigma"])
                 for r in rows]
        for j, (low, high) in enumerate(spans):
            above = [i for i in range(j) if spans[i][0] <= high and low <= spans[i][1]]
            assert rows[j]["tied_from"] == (rows[above[0]]["rank"] if above else None)
            assert above == list(range(above[0], j)) if above else True  # a run just above it
