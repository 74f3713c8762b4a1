"""Le double carré (2 seats): the engine (`state`) and its sampler (`sample`).

The rules page is `docs/rulings/double-carre.md`; `games.double_carre.state` follows it.
"""

from __future__ import annotations

from games.base import PIMC_BOT, RANDOM_BOT, Decision, Demo
from games.cards import card_face
from games.double_carre.sample import DoubleCarreSampler
from games.double_carre.state import (
    NAME,
    OPTIONS,
    SEATS,
    DoubleCarreGame,
    DoubleCarreState,
    pattern,
    points,
    strength,
)
from games.double_carre.table import table

__all__ = ["GAME", "DoubleCarreState", "pattern", "points", "strength"]

GAME = DoubleCarreGame(
    name=NAME,
    title="Le double carré",
    min_seats=SEATS,
    max_seats=SEATS,
    options=OPTIONS,
    state_class=DoubleCarreState,
    description="Take two of four revealed cards, discard two, build the largest groups.",
    rules="double-carre.md",
    card_face=card_face,
    table=table,
    demo=Demo(seats=2, deals=20),
    bots={"random": RANDOM_BOT, "heuristic": "example_bots.double_carre:DoubleCarreHeuristic",
          "pimc": PIMC_BOT},
    sampler=DoubleCarreSampler,
    decisions=(
        Decision("take", 'the active seat takes 2 of the 4 revealed cards: {"take": ["9S", "AD"]}',
                 words="Take 2 of the 4 revealed cards."),
        Decision("discard", "each seat, the active one first, discards 2 of its 10 cards: "
                 '{"discard": ["7C", "8H"]}',
                 words="Discard 2 of your 10 cards (the active seat discards first)."),
    ),
    result_keys={
        "first": "the seat that was active first",
        "hands": "each seat's final 8 cards",
        "patterns": "each hand's counts of equal ranks, largest first",
        "points": "each hand's points (the tie-break)",
        "draw": "the draws, as in the view",
    },
)
