"""Soupe & Gertrude's cards as data, and the set-up of one manche.

Cards of one id are identical, so a card *is* its id string and a hand is a
list of ids. Everything the rules page states about the card set (counts,
values, which are vegetables) lives here once, so the engine, the views and
the example bot never disagree about it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from games.errors import InvalidOptions
from games.options import check_deck
from games.rng import Rng

VEGETABLES: tuple[str, ...] = ("tomate", "carotte", "poireau", "patate")
MONEY: tuple[str, ...] = ("oseille-1", "oseille-3", "oseille-4", "oseille-5")
SPECIALS: tuple[str, ...] = ("souris", "gertrude")
VARIANT_CARDS: tuple[str, ...] = ("navet", "mouche")

#: card id -> how many copies the box holds
COUNTS: dict[str, int] = {
    "tomate": 2, "carotte": 2, "poireau": 2, "patate": 2,
    "oseille-1": 6, "oseille-3": 12, "oseille-4": 6, "oseille-5": 3,
    "souris": 4, "gertrude": 3,
    "navet": 1, "mouche": 1,
}

#: card id -> its market value (what it pays in an auction, what it scores if a vegetable)
VALUES: dict[str, int] = {
    "tomate": 2, "carotte": 4, "poireau": 6, "patate": 8,
    "oseille-1": 1, "oseille-3": 3, "oseille-4": 4, "oseille-5": 5,
    "souris": 5, "gertrude": 5,
    "navet": 5, "mouche": 0,
}

#: a fixed order to list cards in (views sort hands so order never leaks history)
ORDER: dict[str, int] = {card: i for i, card in enumerate(COUNTS)}

HAND_SIZE = 4  # money cards dealt to each seat


def card_ids(variant: bool) -> tuple[str, ...]:
    """The ids in play: the variant adds the turnip and the fly."""
    return tuple(c for c in COUNTS if variant or c not in VARIANT_CARDS)


def _build_deck(variant: bool) -> tuple[str, ...]:
    return tuple(c for c in card_ids(variant) for _ in range(COUNTS[c]))


#: The full deck with and without the variant, built once: every deal starts from it.
_DECKS: dict[bool, tuple[str, ...]] = {v: _build_deck(v) for v in (False, True)}
#: The deck split as `deal` uses it: the money cards, then all the others (deck order kept).
_MONEY_CARDS = {v: tuple(c for c in deck if c in MONEY) for v, deck in _DECKS.items()}
_OTHER_CARDS = {v: tuple(c for c in deck if c not in MONEY) for v, deck in _DECKS.items()}
_TOTAL_VALUES = {v: sum(VALUES[c] for c in deck) for v, deck in _DECKS.items()}


def full_deck(variant: bool) -> list[str]:
    """Every card of the game once per copy, in a fixed order."""
    return list(_DECKS[bool(variant)])


def total_value(variant: bool) -> int:
    """156, or 161 with the variant: the highest bid ever offered."""
    return _TOTAL_VALUES[bool(variant)]


def hand_value(cards: Iterable[str]) -> int:
    return sum(VALUES[c] for c in cards)


def sort_cards(cards: Iterable[str]) -> list[str]:
    return sorted(cards, key=ORDER.__getitem__)


def distinct_vegetables(cards: Iterable[str]) -> list[str]:
    """The different vegetables among `cards`, in the table's order."""
    held = set(cards)
    return [v for v in VEGETABLES if v in held]


def soup_value(cards: Iterable[str]) -> int:
    """The empty-pile score: the values of the *different* vegetables (0 with the fly)."""
    cards = list(cards)
    if "mouche" in cards:
        return 0
    return sum(VALUES[v] for v in distinct_vegetables(cards))


@dataclass(frozen=True)
class Deal:
    """One manche's set-up: four money cards per seat and the pile, top first."""

    hands: list[list[str]]
    pile: list[str]

    @property
    def deck(self) -> list[str]:
        """The deck as dealt, in the `deck` option's notation (replays this deal)."""
        return [c for hand in self.hands for c in hand] + list(self.pile)


def check_deck_option(deck: list[str], seats: int, variant: bool) -> list[str]:
    """The `deck` option must be the full deck and open with 4×seats money cards."""
    deck = check_deck("deck", deck, full_deck(variant))
    dealt = deck[: HAND_SIZE * seats]
    bad = [c for c in dealt if c not in MONEY]
    if bad:
        raise InvalidOptions(
            f"option 'deck' must open with {HAND_SIZE * seats} money cards (oseille-…), "
            f"dealt 4 at a time to seat 0, 1, …; found {bad[0]!r} among them"
        )
    return deck


def deal(seats: int, seed: int, manche: int, variant: bool, deck: list[str] | None = None) -> Deal:
    """Set up manche `manche`: from `deck` if given, else with `Rng(seed, "manche", manche, …)`.

    The money is shuffled on its own first (the rule book deals the opening
    purse from the 27 money cards alone), then the undealt money joins the
    other cards in a second shuffle that makes the pile.
    """
    if deck is not None:
        n = HAND_SIZE * seats
        hands = [list(deck[i * HAND_SIZE:(i + 1) * HAND_SIZE]) for i in range(seats)]
        return Deal(hands, list(deck[n:]))
    variant = bool(variant)
    money = Rng(seed, "manche", manche, "money").shuffled(_MONEY_CARDS[variant])
    hands = [money[i * HAND_SIZE:(i + 1) * HAND_SIZE] for i in range(seats)]
    rest = [*money[HAND_SIZE * seats:], *_OTHER_CARDS[variant]]
    return Deal(hands, Rng(seed, "manche", manche, "pile").shuffled(rest))


def count_cards(zones: Iterable[Iterable[str]]) -> Counter:
    """Card counts over several zones (hands, pile, lot, out of the game)."""
    total: Counter = Counter()
    for zone in zones:
        total.update(zone)
    return total


@cache
def card_face(text: str) -> dict | None:
    """How a card id is drawn on a page (`Game.card_face`): its name, family and
    value; None for any other text."""
    if text not in COUNTS:
        return None
    if text in VEGETABLES or text == "navet":
        family = "vegetable"
    elif text in MONEY:
        family = "money"
    else:
        family = "special"
    return {"kind": "named", "text": text, "name": text.replace("-", " "), "family": family,
            "value": VALUES[text], "title": f"{text} (value {VALUES[text]})"}
