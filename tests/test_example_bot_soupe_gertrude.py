"""The Soupe & Gertrude heuristic beats random play at three seats, and only ever plays legal actions."""

from __future__ import annotations

from example_bots.soupe_gertrude import SoupeGertrudeHeuristic, known_vegetables
from sdk.local import play_local
from sdk.play import run_matches
from tests.games.test_soupe_gertrude_support import GAME, act, new, sell

RANDOM = "example_bots.random:RandomBot"
HEURISTIC = "example_bots.soupe_gertrude:SoupeGertrudeHeuristic"


def test_the_heuristic_wins_most_three_seat_games_against_random_bots():
    records = run_matches("soupe-gertrude", [RANDOM, RANDOM, HEURISTIC], deals=30, seed=7, options={})
    heuristic = records[2]
    assert heuristic.faults == 0
    assert heuristic.wins / heuristic.matches >= 0.7  # the full run shows far more (see the report)


def test_the_heuristic_plays_every_variant_without_a_fault():
    bots = [SoupeGertrudeHeuristic() for _ in range(4)]
    for options in ({"navet_mouche": True}, {"manches": 3}):
        outcome = play_local("soupe-gertrude", bots, seed=3, options=options)
        assert outcome.faults == [[], [], [], []]


def test_the_heuristic_never_bids_more_than_it_can_pay():
    bot = SoupeGertrudeHeuristic()
    state = GAME.new(seats=3, seed=11)
    while state.pending != "bid":
        state.apply(bot.act(state.view(state.to_act), state.legal_actions()))
    for _ in range(6):
        if state.pending != "bid":
            break
        seat = state.to_act
        action = bot.act(state.view(seat), state.legal_actions())
        assert action.get("bid", 0) <= state.view(seat)["hand_value"]
        state.apply(action)


def test_the_heuristic_tracks_who_holds_a_vegetable_and_sends_its_souris_there():
    state = new(top=["tomate", "oseille-1", "oseille-5", "souris", "oseille-5", "oseille-5"])
    sell(state, winner=1, bid=1)
    sell(state, winner=0, bid=1, special_pass=False)
    view = state.view(0)
    assert known_vegetables(view)[1]["tomate"] == 1
    action = SoupeGertrudeHeuristic().act(view, state.legal_actions())
    assert action == {"souris": "tomate", "target": 1}
    act(state, 0, action)
