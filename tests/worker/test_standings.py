"""sdk/standings.py: standings from the tallies a tournament counted as its matches ended.

The mean and its interval are tested with the referee (tests/sdk/test_referee.py)."""

from __future__ import annotations

import math
import statistics

import pytest

from sdk.standings import (
    TALLY_FIELDS,
    once_per_bot,
    seat_records,
    standing_scores,
    standings_from_tallies,
    tally_increments,
)


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


# -- a forfeiting seat's score (docs/api.md §4 "Meanings") ---------------------------

def test_a_forfeiting_seat_never_scores_above_a_seat_that_played_on():
    # the case: the autopilot earned 1 for the forfeiting seat, the winner 0
    result = {"scores": [1, 0], "ranks": [2, 1], "forfeits": [0], "faults": [3, 0]}
    records = seat_records(result, ["b_forfeit", "b_winner"])
    assert [r["score"] for r in records] == [0.0, 0.0]
    assert result["scores"] == [1, 0]  # the engine's own scores stay in the result
    rows = standings_from_tallies({r["bot"]: {**dict.fromkeys(TALLY_FIELDS, 0.0), **{
        k: float(v) for k, v in tally_increments(r).items()}} for r in records})
    assert [(row["bot"], row["mean_score"]) for row in rows] == [("b_winner", 0.0), ("b_forfeit", 0.0)]


def test_a_forfeiting_seat_is_capped_at_the_lowest_seat_that_played_on():
    assert standing_scores([9, 5, 7, 8], forfeits=[0, 3]) == [5.0, 5.0, 7.0, 5.0]
    assert standing_scores([1, 5, 7], forfeits=[0]) == [1.0, 5.0, 7.0]  # already lower: kept
    assert standing_scores([4, 2], forfeits=[0, 1]) == [4.0, 2.0]  # nobody played on: as scored


# -- a bot's record counts a match once (docs/api.md §4 "Meanings") ---------------------

def record(bot: str, won: bool, faults: int = 0, forfeit: bool = False, **extra) -> dict:
    return {"bot": bot, "won": won, "faults": faults, "forfeit": forfeit, **extra}


def test_two_seats_of_one_bot_count_one_match_with_faults_summed():
    merged = once_per_bot([record("b_x", True, 1, faults_by_kind={"timeout": 1}),
                           record("b_y", False),
                           record("b_x", False, 2, True, faults_by_kind={"timeout": 1, "illegal": 1})])
    assert [(r["bot"], r["won"], r["faults"], r["forfeit"]) for r in merged] == [
        ("b_x", True, 3, True), ("b_y", False, 0, False)]
    assert merged[0]["faults_by_kind"] == {"timeout": 2, "illegal": 1}


def test_beating_only_itself_is_no_win():
    merged = once_per_bot([record("b_x", True), record("b_x", False)])
    assert [(r["bot"], r["won"]) for r in merged] == [("b_x", False)]


def test_one_seat_per_bot_keeps_the_records_as_they_are():
    records = [record("b_x", True, 1), record("b_y", False, 0, True)]
    assert once_per_bot(records) == records
