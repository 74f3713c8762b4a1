"""Soupe & Gertrude (2 to 6 seats): bid on lots, pay in cards, cook a three-vegetable soup.

The rules page `docs/rulings/soupe-gertrude.md` is the authority; this package
splits the engine by concern: `cards` (the card set and set-up), `state`
(the turn and manches), `auction`, `payment`, `specials` (souris and
Gertrude), `winning` (claims, the turnip, ranks) and `views`.
"""

from __future__ import annotations

from games.base import PIMC_BOT, RANDOM_BOT, Decision, Demo, Game
from games.options import Option, boolean, card_list, integer, one_of
from games.soupe_gertrude.auction import bid_caution
from games.soupe_gertrude.cards import card_face
from games.soupe_gertrude.sample import SoupeSampler
from games.soupe_gertrude.state import SoupeState
from games.soupe_gertrude.table import table

OPTIONS = (
    Option("navet_mouche", False, boolean(), "the Navet et Mouche variant (adds the turnip and the fly)"),
    Option("manches", 1, one_of(1, 3), "1, or 3 for the En 3 manches variant"),
    Option("first", 0, integer(0, 5), "the seat that starts (the best cook)"),
    Option("deck", None, card_list(),
           "manche 1 only, top first: 4×seats money cards dealt 4 at a time, then the pile"),
)

GAME = Game(
    name="soupe-gertrude",
    title="Soupe & Gertrude",
    min_seats=2,
    max_seats=6,
    options=OPTIONS,
    ladder_seats=4,
    state_class=SoupeState,
    description="Auction lots of cards, pay in cards, and be first to hold three different vegetables.",
    rules="soupe-gertrude.md",
    card_face=card_face,
    table=table,
    caution=bid_caution,
    demo=Demo(seats=3, deals=30),
    bots={"random": RANDOM_BOT, "heuristic": "example_bots.soupe_gertrude:SoupeGertrudeHeuristic",
          "pimc": PIMC_BOT},
    sampler=SoupeSampler,
    decisions=(
        Decision("special", "play a souris or a Gertrude, or pass",
                 words="Play a special card (a mouse naming a vegetable, or a Gertrude) on another seat, or"
                       " pass."),
        Decision("face_up", 'the drawer shows one card of its lot: {"face_up": "carotte"}',
                 words="You drew a lot: show one of its cards face up."),
        Decision("bid", 'raise, {"bid": 12}, or pass (the opening bid cannot be a pass)',
                 words="Bid on the lot, or pass (the opening bid cannot be a pass). A bid above your hand's"
                       " value cannot be paid: it eliminates you."),
        Decision("pay", "the auction's winner gives a card to a seat, {\"give\": \"oseille-3\", \"to\": 2}, "
                 'until it may stop with {"done": true}',
                 words="You won the auction: give cards one at a time until their value reaches your bid "
                       "and every other seat has had one, then stop."),
        Decision("cancel", "the target of a mouse or a Gertrude cancels it with its own Gertrude, or passes",
                 words="A mouse or a Gertrude targets you: cancel it with a Gertrude of your own, or let it"
                       " happen."),
        Decision("give-back", 'a mouse took a vegetable: give a card back, {"give": "oseille-1"}',
                 words="Your mouse took a vegetable: give the target a card of your hand back."),
        Decision("keep", "a Gertrude drew cards from the target's hand: keep one, {\"keep\": \"tomate\"}",
                 words="Your Gertrude drew cards from the target's hand: keep one, the others go back."),
        Decision("navet", "a seat claims its soup: the turnip's holder may name a vegetable, "
                 '{"navet": "tomate"}, or pass', options={"navet_mouche": True},
                 words="Navet et Mouche only: a seat claims its soup; if you hold the turnip, you may play "
                       "it naming a vegetable, or pass."),
    ),
    result_keys={"manche_points": "each manche's points, one per seat"},
)

__all__ = ["GAME", "SoupeState"]
