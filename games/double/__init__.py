"""DOUBLE (2 to 10 seats): the cards (`cards`), the trick rules (`tricks`), the engine
(`state`) and its sampler (`sample`).

The rules page is `docs/rulings/double.md`; `games.double.state` follows it.
"""

from __future__ import annotations

from games.base import PIMC_BOT, RANDOM_BOT, Decision, Demo, Game
from games.double.cards import card_face
from games.double.sample import DoubleSampler
from games.double.state import (
    DEFAULT_ROUNDS,
    MAX_SEATS,
    MIN_SEATS,
    NAME,
    OPTIONS,
    DoubleState,
    score_round,
)
from games.double.table import table

__all__ = ["DEFAULT_ROUNDS", "GAME", "DoubleState", "score_round"]

GAME = Game(
    name=NAME,
    title="DOUBLE",
    min_seats=MIN_SEATS,
    max_seats=MAX_SEATS,
    options=OPTIONS,
    ladder_seats=4,
    state_class=DoubleState,
    description="Two-motif cards: predict exactly how many tricks you will take.",
    rules="double.md",
    card_face=card_face,
    table=table,
    demo=Demo(seats=3, deals=20),
    bots={"random": RANDOM_BOT, "heuristic": "example_bots.double:DoubleHeuristic",
          "pimc": PIMC_BOT},
    sampler=DoubleSampler,
    decisions=(
        Decision("bid", 'how many tricks you will take this round: {"bid": 2}',
                 words="Bid how many tricks you will take this round: from 0 to the smaller of your cards "
                       "and your points."),
        Decision("play", 'a card with the motif it makes active: {"play": "KS/4H", "motif": "4H"}',
                 words="Play a card and choose which of its two motifs is active; only the plays the suit "
                       "rule allows are offered."),
    ),
    result_keys={"rounds": "each round's bids, tricks and points after it"},
)
