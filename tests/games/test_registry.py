"""Games are plug-ins, and the engine core's checks hold the same way for every game.

A fifth game is its own files and one line of `games.BUILTIN`
(docs/add-a-game.md): the toy game of the server tests
(tests/server/toygame.py) is registered here through the public
`games.register` and played by the SDK's local referee and drawn by the web's
card faces, none of which names it. What every game owes the engine contract
is checked once for all in test_conformance.py; here, what the project's own
games owe the platform besides.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import games
from games.base import State
from sdk.bot import load_bot_class
from sdk.local import play_local
from server.web.cards import face
from tests.games.builtin import builtin_names
from tests.server import toygame

BUILTIN_NAMES = builtin_names()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def toy():
    """The toy game registered for one test, and forgotten after it unless it was already there."""
    was_there = toygame.NAME in games.names()
    game = games.register(toygame.GAME)
    yield game
    if not was_there:
        games.unregister(toygame.NAME)


def test_a_registered_game_is_found_by_name_and_plays_through_the_sdk(toy):
    assert toygame.NAME in games.names() and games.get(toygame.NAME) is toy
    bots = [load_bot_class(toy.bots["random"])() for _ in range(2)]
    outcome = play_local(toygame.NAME, bots, seed=4)
    assert outcome.faults == [[], []]
    assert sorted(outcome.result["ranks"]) in ([1, 2], [1, 1])


def test_registering_the_same_game_again_is_harmless_and_another_under_its_name_is_refused(toy):
    assert games.register(toy) is toy
    impostor = games.Game(name=toy.name, title="impostor", min_seats=2, max_seats=2,
                          options=[], state_class=toygame.ToyState)
    with pytest.raises(ValueError, match="already registered"):
        games.register(impostor)
    with pytest.raises(TypeError):
        games.register("toy-high")


def test_unregistering_an_unknown_game_is_an_unknown_game():
    with pytest.raises(games.UnknownGame):
        games.unregister("no-such-game")


def test_the_web_draws_a_games_cards_through_its_own_hook(toy):
    assert face(toygame.NAME, "7") is None  # the toy game declares no card faces
    assert face("no-such-game", "QH") is None
    assert face("duck-soup", "QH")["title"] == "queen of hearts"
    assert face("double", "8H")["kind"] == "motif"


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_each_game_carries_what_the_platform_needs(name):
    game = games.get(name)
    assert game.rules == f"{name}.md"
    assert game.card_face is not None and game.demo is not None
    assert game.min_seats <= game.demo.seats <= game.max_seats and game.demo.deals > 0
    assert set(game.bots) >= {"random", "heuristic"}
    for spec in game.bots.values():
        module, _, cls = spec.partition(":")
        assert module.startswith("example_bots.") and cls


def test_a_game_that_redefines_a_shared_verb_is_refused_when_defined():
    with pytest.raises(TypeError, match="redefines view"):
        type("Leaky", (State,), {"view": lambda self, seat: {}})


def games_in_a_process(modules: str) -> subprocess.CompletedProcess:
    """`games.names()` in a fresh process whose environment names `modules` in CARDARENA_GAMES."""
    return subprocess.run([sys.executable, "-c", "import games; print(' '.join(games.names()))"],
                          cwd=ROOT, env={**os.environ, games.PLUGINS_ENV: modules}, capture_output=True,
                          text=True, timeout=60)


def test_a_game_module_named_in_the_environment_is_playable_in_every_process_that_sees_it():
    shown = games_in_a_process(" tests.server.toygame , ")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == sorted([*BUILTIN_NAMES, toygame.NAME])
    assert games_in_a_process("").stdout.split() == sorted(BUILTIN_NAMES)


@pytest.mark.parametrize("module, error", [("tests.server.no_such_game", "cannot be imported"),
                                           ("games.rng", "defines no games.Game called GAME")])
def test_a_game_module_that_does_not_load_is_named_in_the_error(module, error):
    failed = games_in_a_process(module)
    assert failed.returncode != 0 and f"CARDARENA_GAMES names {module}, which {error}" in failed.stderr
