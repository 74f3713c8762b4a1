"""Playing cards: small immutable values whose text form is the rules' notation.

A `Card` *is* its notation string (`Card("10H") == "10H"`), so cards are
JSON-safe as they are, hash and compare as fast as strings, and print the way
the rules pages write them. Rank orderings differ from game to game (the ace is
low in one phase of Duck Soup and high in the next), so a card carries no
order of its own: each game ranks cards with a tuple from this module.
"""

from __future__ import annotations

from functools import cache

SUITS: tuple[str, ...] = ("S", "H", "D", "C")
SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}

#: The 52-card ranks, ace low (the order the rules pages list them in).
RANKS_52: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
#: The same ranks, ace high.
RANKS_ACE_HIGH: tuple[str, ...] = RANKS_52[1:] + ("A",)
#: The 32-card (piquet) ranks, low to high.
RANKS_32: tuple[str, ...] = ("7", "8", "9", "10", "J", "Q", "K", "A")


class Card(str):
    """One card of a French-suited deck, e.g. ``Card("QH")``.

    Instances are interned: ``Card("QH") is Card("QH")``. An unknown text
    raises ``ValueError`` with the notation that was expected.
    """

    __slots__ = ()

    def __new__(cls, text: str) -> Card:
        try:
            return _CARDS[text]
        except (KeyError, TypeError):
            raise ValueError(
                f"{text!r} is not a card: write rank then suit, ranks "
                f"{' '.join(RANKS_52)}, suits {' '.join(SUITS)} (e.g. '10H', 'QS')"
            ) from None

    @classmethod
    def parse(cls, text: str) -> Card:
        """The card written `text` (the same as ``Card(text)``)."""
        return cls(text)

    @property
    def rank(self) -> str:
        return self[:-1]

    @property
    def suit(self) -> str:
        return self[-1]

    @property
    def symbol(self) -> str:
        """A human form with the suit symbol, e.g. ``'Q♥'``."""
        return self[:-1] + SUIT_SYMBOLS[self[-1]]

    def __repr__(self) -> str:
        return f"Card({str.__repr__(self)})"


def _make_cards() -> dict[str, Card]:
    cards: dict[str, Card] = {}
    for suit in SUITS:
        for rank in RANKS_52:
            text = rank + suit
            cards[text] = str.__new__(Card, text)
    return cards


_CARDS: dict[str, Card] = _make_cards()


def deck_52() -> list[Card]:
    """The 52 cards in a fixed order (suit by suit, ace low)."""
    return [_CARDS[r + s] for s in SUITS for r in RANKS_52]


def deck_32() -> list[Card]:
    """The 32 cards of a piquet deck (7 to ace) in a fixed order."""
    return [_CARDS[r + s] for s in SUITS for r in RANKS_32]


#: How a card is drawn on a page (`Game.card_face`): red suits, and the ranks spelt out in titles.
RED_SUITS = ("H", "D")
RANK_NAMES = {"A": "ace", "J": "jack", "Q": "queen", "K": "king"}


def suit_face(suit: str) -> dict:
    """A suit as drawn: its symbol, colour and name."""
    return {"symbol": SUIT_SYMBOLS[suit], "colour": "red" if suit in RED_SUITS else "black",
            "name": SUIT_NAMES[suit]}


@cache
def card_face(text: str) -> dict | None:
    """The face of a rank+suit card (``"QH"``), or None for any other text.

    The `card_face` of every game written in this notation (duck-soup, double-carre).
    """
    try:
        card = Card(text)
    except ValueError:
        return None
    suit = suit_face(card.suit)
    return {"kind": "french", "text": text, "rank": card.rank, "suit": suit["symbol"],
            "colour": suit["colour"],
            "title": f"{RANK_NAMES.get(card.rank, card.rank)} of {suit['name']}"}


def rank_order(ranks: tuple[str, ...]) -> dict[str, int]:
    """A lookup `rank -> strength` for one of the rank tuples above."""
    return {rank: i for i, rank in enumerate(ranks)}
