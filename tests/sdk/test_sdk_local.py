"""`play_local` calls a bot's hooks in the same order as the platform does."""

from __future__ import annotations

from sdk.cards import RANKS_ACE_HIGH, Card, parse_cards, rank_order
from sdk.local import play_local
from tests.sdk.conftest import Recorder


def test_on_match_start_comes_once_per_seat_before_its_first_act_and_over_comes_last():
    a, b = Recorder(), Recorder()
    match = play_local("double-carre", [a, b], seed=3)
    for seat, bot in enumerate((a, b)):
        assert bot.calls[0] == ("start", "local", seat)
        assert [c[0] for c in bot.calls[1:-1]] == ["act"] * (len(bot.calls) - 2)
        assert bot.calls[-1] == ("over", "local", match.result)


def test_sdk_cards_are_the_engines_cards():
    import games.cards

    assert Card is games.cards.Card
    hand = parse_cards(["10H", "AS"])
    assert hand == ["10H", "AS"] and hand[0].rank == "10" and hand[1].suit == "S"
    strength = rank_order(RANKS_ACE_HIGH)
    assert max(hand, key=lambda c: strength[c.rank]) == "AS"
