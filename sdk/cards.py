"""Card helpers for bot authors: the very types and orderings the engines judge with.

    from sdk.cards import Card, parse_cards, rank_order, RANKS_ACE_HIGH
    hand = parse_cards(view["hand"])            # ["10H", "QS"] -> [Card("10H"), Card("QS")]
    strength = rank_order(RANKS_ACE_HIGH)       # {"2": 0, …, "A": 12}
    best = max(hand, key=lambda c: strength[c.rank])

A `Card` *is* its notation string, so cards from a view and cards in an
action compare equal to the plain strings the protocol carries: a bot may
answer with them as they are. Each game's own orderings live beside its
engine (`games.<game>`); this module re-exports the shared ones from
`games.cards` so a bot can never disagree with the referee about a card.
"""

from __future__ import annotations

from collections.abc import Iterable

from games.cards import (
    RANKS_32,
    RANKS_52,
    RANKS_ACE_HIGH,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    SUITS,
    Card,
    deck_32,
    deck_52,
    rank_order,
)

__all__ = [
    "RANKS_32",
    "RANKS_52",
    "RANKS_ACE_HIGH",
    "SUITS",
    "SUIT_NAMES",
    "SUIT_SYMBOLS",
    "Card",
    "deck_32",
    "deck_52",
    "parse_cards",
    "rank_order",
]


def parse_cards(texts: Iterable[str]) -> list[Card]:
    """Cards from their notation (a view's hand); ValueError naming the first bad one."""
    return [Card(text) for text in texts]
