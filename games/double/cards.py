"""DOUBLE's two-motif cards: small immutable values whose text is the rules' notation.

A `DoubleCard` *is* its text ``"high/low"`` (``DoubleCard("KS/4H") == "KS/4H"``),
the way `Card` is its own notation, so cards are JSON-safe as they are and
print the way `docs/rulings/double.md` writes them. Each half is a *motif*:
a normal `Card` (``Card("KS")``) or one of the two colourless motifs
``"POPE"`` and ``"IDIOT"``.

Only the 27 cards of the project's set exist: the rules page fixes the printed
pairs, and refusing any other text catches a typo in a ``deck`` option or an
action at once instead of letting an unknown card into a match.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from games.cards import RANKS_52, RANKS_ACE_HIGH, SUITS, Card, rank_order
from games.cards import card_face as french_face

POPE = "POPE"
IDIOT = "IDIOT"
SPECIALS: tuple[str, ...] = (POPE, IDIOT)

#: Rank strength of a normal motif: 2 lowest, ace highest (the rule book's order).
RANK_STRENGTH = rank_order(RANKS_ACE_HIGH)

Motif = str  # a Card, or POPE / IDIOT

#: The 27 cards of one set, as the rules page lists them (high motif first).
SET_TEXT: tuple[str, ...] = (
    "AS/2D", "AH/2C", "AD/2S", "AC/2H",
    "KS/4H", "KH/4D", "KD/4C", "KC/4S",
    "QS/7D", "QH/7C", "QD/7S", "QC/7H",
    "JS/3C", "JH/3S", "JD/3H", "JC/3D",
    "10S/5C", "10H/5S", "10D/5H", "10C/5D",
    "9S/6H", "9H/6D", "9D/6C", "9C/8S",
    "8D/6S", "POPE/8H", "IDIOT/8C",
)


def motif(text: str) -> Motif:
    """The motif written `text`: a `Card`, or POPE / IDIOT (ValueError otherwise)."""
    if text in SPECIALS:
        return str(text)
    return Card(text)


def suit_of(m: Motif) -> str | None:
    """The suit of a motif; None for POPE and IDIOT, which have no suit."""
    try:
        return _SUIT_OF[m]
    except (KeyError, TypeError):  # not a motif: let `Card` say what is wrong
        return None if m in SPECIALS else Card(m).suit


class DoubleCard(str):
    """One card of the set, e.g. ``DoubleCard("KS/4H")``; instances are interned."""

    __slots__ = ()

    def __new__(cls, text: str) -> DoubleCard:
        try:
            return _CARDS[text]
        except (KeyError, TypeError):
            raise ValueError(
                f"{text!r} is not a DOUBLE card: write 'high/low' as the rules list them "
                f"(e.g. 'KS/4H', 'POPE/8H')"
            ) from None

    @classmethod
    def parse(cls, text: str) -> DoubleCard:
        return cls(text)

    @property
    def motifs(self) -> tuple[Motif, Motif]:
        """(high, low): the two halves, either of which may be played."""
        return _MOTIFS[self]

    @property
    def high(self) -> Motif:
        """The higher motif: the one that names trump when this card is turned up."""
        return _MOTIFS[self][0]

    @property
    def low(self) -> Motif:
        return _MOTIFS[self][1]

    def __repr__(self) -> str:
        return f"DoubleCard({str.__repr__(self)})"


def _make() -> tuple[dict[str, DoubleCard], dict[str, tuple[Motif, Motif]]]:
    cards: dict[str, DoubleCard] = {}
    motifs: dict[str, tuple[Motif, Motif]] = {}
    for text in SET_TEXT:
        high, low = text.split("/")
        cards[text] = str.__new__(DoubleCard, text)
        motifs[text] = (motif(high), motif(low))
    return cards, motifs


_CARDS, _MOTIFS = _make()
#: motif -> its suit (None for POPE and IDIOT): asked for every card of every
#: hand at every play, so looked up rather than parsed.
_SUIT_OF: dict[str, str | None] = {
    **{m: m.suit for m in (Card(r + s) for s in SUITS for r in RANKS_52)},
    POPE: None, IDIOT: None,
}
#: card -> its halves as (motif, suit) pairs, high first: what `legal_plays` filters.
HALVES: dict[str, tuple[tuple[Motif, str | None], ...]] = {
    card: tuple((m, _SUIT_OF[m]) for m in motifs) for card, motifs in _MOTIFS.items()
}
#: card -> the suits on its halves, for the "does this hand hold the led suit?" test.
SUITS_OF: dict[str, frozenset[str]] = {
    card: frozenset(s for _, s in halves if s is not None) for card, halves in HALVES.items()
}
#: One set in the rules page's order.
ONE_SET: tuple[DoubleCard, ...] = tuple(_CARDS[t] for t in SET_TEXT)
#: Where each card sits in the set: the order hands are shown in.
SET_ORDER: dict[str, int] = {c: i for i, c in enumerate(ONE_SET)}


def double_sets(decks: int) -> list[DoubleCard]:
    """`decks` sets (1 or 2) in a fixed order; identical cards are equal values."""
    return list(ONE_SET) * decks


def sort_cards(cards: Iterable[str]) -> list[DoubleCard]:
    """Cards in the set's order, so a hand reads the same way every time."""
    return sorted(map(DoubleCard, cards), key=SET_ORDER.__getitem__)


def _motif_face(text: str) -> dict:
    if text in SPECIALS:
        return {"rank": text, "suit": "", "colour": "special", "title": text}
    card = french_face(text)
    assert card is not None, text  # every card of the set but the specials is a French card
    return {"rank": card["rank"], "suit": card["suit"], "colour": card["colour"], "title": card["title"]}


@cache
def card_face(text: str) -> dict | None:
    """How DOUBLE draws `text` on a page: a two-motif card, one motif (a play's
    active half), or None for any other text (`Game.card_face`)."""
    try:
        card = DoubleCard(text)
    except ValueError:
        if text in SPECIALS or french_face(text) is not None:  # one half, e.g. a played motif
            return {"kind": "motif", "text": text, **_motif_face(text)}
        return None
    high, low = (_motif_face(m) for m in card.motifs)
    return {"kind": "double", "text": text, "high": high, "low": low,
            "title": f"{high['title']} / {low['title']}"}
