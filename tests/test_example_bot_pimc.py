"""PIMC: one search bot for every game, within its time budget; the docs' search example runs.

The strength targets (>= 55% of match points against each heuristic over 200
deals) are measured with `cardarena play`, not here: no timing or strength
figures in unit tests. Here: it answers every decision of every game with a
listed action, it stops drawing worlds when its budget is spent (a fake clock
makes that exact), it finds the game from the view alone, and a failing
search costs it nothing but the search.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import games
from example_bots.pimc import PIMC, game_of

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "write-a-bot.md"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
#: the games PIMC can search: those that can `sample()` a world from a view
NAMES = [name for name in games.names() if games.get(name).sampler]
#: options that keep a long match short here (a game not listed: its defaults)
SHORT = {"duck-soup": {"deal_only": True}, "double": {"rounds": [2, 3]}}


class FakeClock:
    """Time that moves `step` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize("name", NAMES)
def test_pimc_is_listed_among_the_example_bots_of_each_game_that_can_sample(name):
    assert games.get(name).bots["pimc"] == "example_bots.pimc:PIMC"


@pytest.mark.parametrize("name", NAMES)
def test_it_finds_the_game_from_a_seat_view_alone(name):
    game = games.get(name)
    state = game.new(game.min_seats, 4)
    assert game_of(state.view(state.to_act)) is game
    with pytest.raises(ValueError):
        game_of({"seat": 0, "no": "such view"})


@pytest.mark.parametrize("name", NAMES)
def test_it_answers_every_decision_with_a_listed_action(name):
    game = games.get(name)
    bot = PIMC(max_worlds=2, seed=1, budget_ms=60_000)  # two worlds whatever the load: deterministic
    rng = random.Random(name)
    seats = game.demo.seats if game.demo else game.min_seats
    state = game.new(seats, 7, SHORT.get(name, {}))
    decisions = 0
    while not state.is_over and decisions < 120:
        legal = state.legal_actions()
        if state.to_act == 0:
            action = bot.act(state.view(0), legal)
            assert any(action is a for a in legal)
            decisions += 1
        else:
            action = rng.choice(legal)
        state.apply(action)
    assert decisions >= 3


def duck_decision():
    """A duck-soup decision where PIMC searches 4 candidate actions."""
    state = games.get("duck-soup").new(2, 3, {"deal_only": True})
    return state.view(state.to_act), state.legal_actions()


TICK = 1 / 64  # a fake clock's step: exact in binary, so no rounding decides a test


def test_it_stops_drawing_worlds_when_its_budget_is_spent():
    view, legal = duck_decision()
    bot = PIMC(budget_ms=8 * TICK * 1000, clock=FakeClock(TICK))
    bot.act(view, legal)
    # ticks: start 1 (deadline 9); world 1; 2; world 2 reads 3-6, one before each of its 4
    # candidates; 7; world 3 reads 8, then 9 before its second candidate: out of time, and
    # the half-played world is dropped (it would favour the actions tried in it)
    assert bot.worlds == 2
    slow = PIMC(budget_ms=100, clock=FakeClock(1.0))
    slow.act(view, legal)
    assert slow.worlds == 1  # always at least one world, however slow


def test_a_decisions_clock_caps_the_budget_at_half_its_move_time():
    """The SDK hands the whole decision to `decide`: the search spends half of move_ms."""
    view, legal = duck_decision()
    bot = PIMC(budget_ms=150, clock=FakeClock(TICK))
    action = bot.decide({"type": "turn", "game": "duck-soup", "view": view, "legal_actions": legal,
                         "clock": {"move_ms": 8 * TICK * 1000, "bank_ms": 0}})
    assert any(action is a for a in legal)
    assert bot.worlds == 1  # start 1, deadline 5 ticks: world 2 reads 3, 4, 5 and stops
    bot.act(view, legal)  # the next decision, told nothing: the bot's own 150 ms (9.6 ticks)
    assert bot.worlds == 2  # start 6: worlds at 7 and 12 begin; the third stops at 16


def test_a_failing_search_still_answers_a_listed_action():
    legal = [{"play": "2S"}, {"play": "3S"}]
    assert PIMC().act({"seat": 0, "not": "a view"}, legal) is legal[0]


def test_the_docs_search_example_runs(capsys):
    sources = [body for lang, body in FENCE.findall(PAGE.read_text()) if lang == "py"]
    assert len(sources) == 2
    bot_lines = [line for line in sources[0].splitlines() if line.strip()]
    assert len(bot_lines) <= 18  # "a PIMC bot in about 15 lines"
    namespace: dict = {"__name__": "search_example"}
    for source in sources:
        exec(compile(source, str(PAGE), "exec"), namespace)
    ranks = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(r"\[[12], [12]\]", ranks)
