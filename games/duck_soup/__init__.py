"""Duck Soup — La soupe aux canards / Entensuppe (2 seats): the engine (`state`) and its sampler (`sample`).

The rules page is `docs/rulings/duck-soup.md`; `games.duck_soup.state` follows it.
"""

from __future__ import annotations

from games.base import PIMC_BOT, RANDOM_BOT, Decision, Demo, Game
from games.cards import card_face
from games.duck_soup.sample import DuckSoupSampler
from games.duck_soup.state import (
    HAND_SIZE,
    MAX_DEALS,
    NAME,
    OPTIONS,
    SEATS,
    DuckSoupState,
    deal_deck,
    trick_points,
)
from games.duck_soup.table import table

__all__ = ["GAME", "HAND_SIZE", "MAX_DEALS", "SEATS", "DuckSoupState", "deal_deck", "trick_points"]

GAME = Game(
    name=NAME,
    title="Duck Soup (La soupe aux canards)",
    min_seats=SEATS,
    max_seats=SEATS,
    options=OPTIONS,
    state_class=DuckSoupState,
    description="Two-player tricks: low then high, deal score = low × high; coin, coin-coin!",
    rules="duck-soup.md",
    card_face=card_face,
    table=table,
    demo=Demo(seats=2, deals=20),
    bots={"random": RANDOM_BOT, "heuristic": "example_bots.duck_soup:DuckSoupHeuristic",
          "pimc": PIMC_BOT},
    sampler=DuckSoupSampler,
    decisions=(
        Decision("lead", 'the leader plays any card of its hand: {"play": "QH"}',
                 words="You lead: play any card of your hand."),
        Decision("follow", "the follower plays any card, or one of the led rank with the call "
                 '{"call": "coin"}',
                 words="You follow: play any card. A card of the rank just led may also be played with the "
                       "call coin (in the German edition only with it)."),
        Decision("answer-coin", 'the leader concedes, {"call": "soupe"}, or plays a third card of '
                 'the rank with {"call": "coin-coin"}',
                 words="Your opponent called coin: concede the trick (soupe), or play a third card of that "
                       "rank with the call coin-coin."),
        Decision("answer-coin-coin", "the follower plays any card, or the fourth of the rank with "
                 '{"call": "soupe-aux-canards"}',
                 words="Your opponent called coin-coin: play any card, or the fourth card of the rank with "
                       "the call soupe aux canards."),
    ),
    result_keys={
        "totals": "each set's deal-score totals",
        "set_points": "each seat's set points",
        "deals": "every deal, as in the view",
        "capped": "true only if the match hit the engine's bound on the number of deals",
    },
)
