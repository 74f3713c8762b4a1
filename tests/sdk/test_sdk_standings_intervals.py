"""Local standings (`cardarena play`) show how sure they are: points and win rate with 95%
intervals, and for two bots their paired difference deal by deal with its interval."""

from __future__ import annotations

import json

from sdk import cli
from sdk.standings import intervals, paired_difference
from sdk.stats import wilson

HEURISTIC = "example_bots.duck_soup:DuckSoupHeuristic"
RANDOM = "example_bots.random:RandomBot"
QUICK = ["--option", "deal_only=true", "--games", "20"]


def play(capsys, *args: str, game: str = "duck-soup") -> str:
    assert cli.main(["play", game, *args]) == 0
    return capsys.readouterr().out


def test_the_table_shows_points_and_win_rate_with_their_intervals(capsys):
    out = play(capsys, HEURISTIC, RANDOM, *QUICK)
    header = next(line for line in out.splitlines() if line.startswith("#"))
    assert "points [95%]" in header and "win % [95%]" in header
    best = next(line for line in out.splitlines() if HEURISTIC in line and line.startswith("1"))
    assert "40.0 [" in best and "100.0 [" in best  # won all 40 matches, yet the intervals are not [x, x]


def test_two_bots_get_their_paired_difference_with_its_interval(capsys):
    out = play(capsys, RANDOM, RANDOM, *QUICK)
    [line] = [line for line in out.splitlines() if line.startswith("paired: ")]
    assert f"{RANDOM} #1 − {RANDOM} #2 = " in line and "95% [" in line and "over 20 deals" in line


def test_json_rows_carry_the_intervals_and_the_paired_difference(capsys):
    report = json.loads(play(capsys, HEURISTIC, RANDOM, *QUICK, "--json"))
    for row in report["standings"]:
        lo, hi = row["points_ci95"]
        assert lo <= row["points"] <= hi and 0 <= lo and hi <= row["matches"]
        lo, hi = row["win_rate_ci95"]
        assert lo <= row["win_rate"] <= hi and 0 <= lo and hi <= 1
    assert report["paired"]["bots"] == [HEURISTIC, RANDOM]
    assert report["paired"]["diff"] == 1.0 and report["paired"]["deals"] == 20


def test_three_bots_have_no_paired_difference(capsys):
    report = json.loads(play(capsys, RANDOM, RANDOM, RANDOM, "--games", "1", "--json", game="soupe-gertrude"))
    assert "paired" not in report
    out = play(capsys, RANDOM, RANDOM, RANDOM, "--games", "1", game="soupe-gertrude")
    assert "paired:" not in out


def test_a_perfect_record_still_has_an_interval_of_doubt():
    low, high = wilson(30, 30)
    assert 0.85 < low < 1.0 and high == 1.0
    figures = intervals(n=30, points=30.0, points2=30.0, wins=30)
    assert figures["points_ci95"][0] < 30.0 and figures["points_ci95"][1] == 30.0
    assert figures["win_rate_ci95"] == [round(low, 4), round(high, 4)]
    assert intervals(1, 1.0, 1.0, 1) == {"points_ci95": None, "win_rate_ci95": None}


def test_the_paired_difference_is_the_mean_of_the_per_deal_differences():
    paired = paired_difference([1.0, 0.5, 1.0, 0.5], [0.0, 0.5, 0.0, 0.5])
    assert paired["diff"] == 0.5 and paired["deals"] == 4
    lo, hi = paired["ci95"]
    assert lo < 0.5 < hi
    assert paired_difference([], [])["diff"] is None
    sweep = paired_difference([1.0] * 30, [0.0] * 30)
    assert sweep["diff"] == 1.0 and sweep["ci95"][0] < 1.0 and sweep["ci95"][1] == 1.0
