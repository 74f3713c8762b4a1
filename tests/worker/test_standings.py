"""sdk/standings.py: standings from the tallies a tournament counted as its matches ended.

The mean and its interval are tested with the referee (tests/sdk/test_referee.py)."""

from __future__ import annotations

import math
import statistics

import pytest

from sdk.standings import standings_from_tallies


def tally(scores: list[float], points: float, wins: int = 0, draws: int = 0, faults: int = 0,
          forfeits: int = 0) -> dict[str, float]:
    """A bot's tally as the store keeps it: sums, never the list of scores."""
    return {"points": points, "matches": float(len(scores)), "wins": float(wins), "draws": float(draws),
            "faults": float(faults), "forfeits": float(forfeits),
            "score": float(sum(scores)), "score2": float(sum(s * s for s in scores))}


def test_points_are_summed_and_rows_carry_the_tallies():
    rows = standings_from_tallies({
        "b_a": tally([10, 20, 30], points=2.5, wins=2, draws=1, faults=4, forfeits=1),
        "b_b": tally([5, 5, 5], points=0.5),
    })
    assert [r["bot"] for r in rows] == ["b_a", "b_b"]
    first = rows[0]
    assert first["rank"] == 1
    assert first["points"] == 2.5
    assert first["matches"] == 3
    assert (first["wins"], first["draws"], first["faults"], first["forfeits"]) == (2, 1, 4, 1)
    assert first["mean_score"] == 20.0
    assert first["ci95"] == pytest.approx(round(1.96 * statistics.stdev([10, 20, 30]) / math.sqrt(3), 4))
    assert list(first)[0] == "rank"
    assert rows[1]["rank"] == 2
    assert rows[1]["ci95"] == 0.0
    assert all(isinstance(r[k], int) for r in rows for k in ("matches", "wins", "draws", "faults", "forfeits"))


def test_equal_points_share_a_rank_and_the_next_rank_is_skipped():
    rows = standings_from_tallies({
        "b_low_score": tally([1, 2], points=1.5),
        "b_high_score": tally([8, 9], points=1.5),
        "b_third": tally([20, 20], points=1.0),
        "b_last": tally([0, 0], points=0.0),
    })
    # the mean score orders tied rows, but they keep one rank
    assert [(r["rank"], r["bot"]) for r in rows] == [
        (1, "b_high_score"), (1, "b_low_score"), (3, "b_third"), (4, "b_last")]


def test_points_adding_up_the_same_in_another_order_still_tie():
    # 0.1 + 0.2 and 0.2 + 0.1 differ in the last bit before rounding
    rows = standings_from_tallies({"b_x": tally([1, 1], points=0.1 + 0.2),
                                   "b_y": tally([1, 1], points=0.3)})
    assert [r["rank"] for r in rows] == [1, 1]


def test_a_bot_with_a_single_match_has_no_interval():
    rows = standings_from_tallies({"b_once": tally([7.0], points=1.0, wins=1)})
    assert rows == [{"rank": 1, "bot": "b_once", "points": 1.0, "matches": 1, "wins": 1, "draws": 0,
                     "mean_score": 7.0, "ci95": None, "faults": 0, "forfeits": 0,
                     "memory": {"diff": None, "ci95": None, "flag": False}}]


def test_no_tallies_no_rows():
    assert standings_from_tallies({}) == []
