"""Smoke tests for bench/engines.py: it measures every engine and reports without OpenSpiel.

No speed is asserted here: the speed target lives in the benchmark itself.
"""

from __future__ import annotations

import json
import sys

import pytest

import games
from tests.scripts import load_script

bench = load_script("bench/engines.py", "bench_engines")


def test_every_engine_gets_a_row_with_decisions():
    rows = bench.measure_engines(seconds=0.05, seed=3)
    assert [row["game"] for row in rows] == games.names()
    for row in rows:
        game = games.get(row["game"])
        assert game.min_seats <= row["seats"] <= game.max_seats
        assert row["games"] >= 1
        assert row["decisions"] > 0
        assert row["decisions_per_s"] > 0
        assert row["decisions_per_game"] == row["decisions"] / row["games"]


def test_the_issues_seat_counts():
    seats = {name: bench.default_seats(games.get(name)) for name in games.names()}
    assert seats["double"] == 3
    assert seats["soupe-gertrude"] == 3
    assert seats["duck-soup"] == 2
    assert seats["double-carre"] == 2


def test_a_playout_is_reproducible_from_its_seed():
    one = bench.playout_engine("double-carre", 2, 0.0, seed=5)
    two = bench.playout_engine("double-carre", 2, 0.0, seed=5)
    assert (one["games"], one["decisions"]) == (two["games"], two["decisions"]) == (1, one["decisions"])


def test_without_open_spiel_the_engines_are_still_reported(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel -> ImportError
    assert bench.baseline_available()[0] is False
    assert bench.main(["--seconds", "0.03", "--rounds", "1", "--game", "duck-soup"]) == 0
    out = capsys.readouterr().out
    assert "baseline MISSING" in out
    assert "pip install -e '.[bench]'" in out
    line = next(line for line in out.splitlines() if line.startswith("duck-soup"))
    assert "n/a" in line


def test_json_report(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    assert bench.main(["--seconds", "0.03", "--rounds", "2", "--game", "double:4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["open_spiel"] is None and report["baseline"] is None
    (row,) = report["rows"]
    assert (row["game"], row["seats"], row["ratio"]) == ("double", 4, None)
    assert len(row["parts"]) == 2 and row["decisions"] > 0
    assert row["deal_us"] > 0 and "deal_share" not in row  # a share of a budget needs the baseline


def test_dealing_alone_is_timed_per_deal():
    dealt = bench.measure_dealing("soupe-gertrude", 3, 0.0, seed=2)
    assert dealt["deals"] == 1 and dealt["deal_us"] > 0


def test_oh_hell_baseline_when_installed(capsys):
    pytest.importorskip("pyspiel")
    row = bench.playout_oh_hell(0.0, seed=1)
    assert row["seats"] == 3 and row["games"] == 1
    # 3 bids and 3 plays a trick; chance: the trick count, the dealer, the deal and the trump
    assert row["decisions"] % 3 == 0 and row["decisions"] >= 6
    report = bench.run(0.03, seed=1, targets=[("duck-soup", 2)], rounds=1)
    assert report["rows"][0]["ratio"] > 0
    text = bench.format_report(report)
    assert "oh_hell(players=3)" in text and "(baseline)" in text


def test_sample_rates_are_measured_at_a_live_position_of_every_game():
    for name in games.names():
        game = games.get(name)
        if game.sampler is None:
            continue
        seats = bench.default_seats(game)
        view = bench.mid_deal_view(name, seats, seed=2)
        assert view["to_act"] == view["seat"]  # the seat to act, mid-game
        assert game.sample(view, 1).view(view["seat"]) == view
        row = bench.measure_sample(name, seats, 0.02, seed=2)
        assert row["calls"] >= 1 and row["samples_per_s"] > 0


def test_the_report_prints_the_sample_rates(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    assert bench.main(["--seconds", "0.03", "--rounds", "1", "--game", "duck-soup"]) == 0
    out = capsys.readouterr().out
    assert "sample(view, seed)" in out
    assert next(line for line in out.splitlines() if "sample()/s" in line).startswith("duck-soup")
