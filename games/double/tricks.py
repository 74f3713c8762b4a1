"""DOUBLE's trick rules as pure functions: what may be played, and who takes a trick.

Kept apart from the state so the rules read in one screen, the tests can hit
them directly, and a bot can ask "would this play win?" with the engine's own
answer instead of a copy of the rules.

* **Follow suit** — if the led motif has a suit and the hand holds a card with
  that suit on either half, the seat plays such a card *with that half
  active*, or a POPE / IDIOT motif (always allowed). The normal half of those
  two cards (``8H``, ``8C``) follows suit like any motif. A void seat plays
  any card with either motif.
* **Winner** — IDIOT, then POPE, then the highest trump, then the highest
  motif of the led suit. A POPE or IDIOT led leaves the trick with no led
  suit and no trump. Identical motifs (two sets) rank by who played first,
  which `games.tricks.winning_play` already does (earliest among equals).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple, cast

from games.cards import Card, deck_52
from games.double.cards import (
    HALVES,
    IDIOT,
    POPE,
    RANK_STRENGTH,
    SUITS_OF,
    DoubleCard,
    Motif,
    sort_cards,
    suit_of,
)
from games.tricks import winning_play


class DoublePlay(NamedTuple):
    """One card put on a trick by one seat, with the motif it made active."""

    seat: int
    card: str
    motif: str

    def to_json(self) -> dict:
        return {"seat": self.seat, "card": self.card, "motif": self.motif}


def led_suit(plays: Sequence[DoublePlay]) -> str | None:
    """The suit to follow: the first motif's suit; None if nothing led or POPE/IDIOT led."""
    return suit_of(plays[0].motif) if plays else None


def trick_trump(plays: Sequence[DoublePlay], trump: str | None) -> str | None:
    """The trump that counts in this trick: none when a POPE or IDIOT was led."""
    if plays and suit_of(plays[0].motif) is None:
        return None
    return trump


def legal_plays(hand: Iterable[str], led: str | None, in_order: bool = False) -> list[tuple[DoubleCard, Motif]]:
    """Every (card, motif) the hand may play, each pair once, in the hand's order.

    `led` is the led suit (None when leading, or after a POPE / IDIOT lead).
    Two identical cards in one hand (two sets) give the same pairs: they are
    listed once, since which copy is played changes nothing. `in_order` says
    the hand is already `DoubleCard`s in the set's order (the engine keeps its
    hands so), which spares sorting it again at every play.
    """
    ordered = cast(Iterable[DoubleCard], hand) if in_order else sort_cards(list(hand))  # in_order: DoubleCards
    cards = dict.fromkeys(ordered)
    if led is None or not any(led in SUITS_OF[c] for c in cards):  # free to play anything
        return [(card, m) for card in cards for m, _ in HALVES[card]]
    return [(card, m) for card in cards for m, suit in HALVES[card] if suit is None or suit == led]


def play_strength(play: DoublePlay, led: str | None, trump: str | None) -> tuple | None:
    """How strongly a play bids for the trick; None if it cannot win it."""
    if play.motif == IDIOT:
        return (3, 0)
    if play.motif == POPE:
        return (2, 0)
    try:
        suit, rank = _SUIT_RANK[play.motif]
    except (KeyError, TypeError):  # not a normal motif: let `Card` say what is wrong
        suit, rank = _suit_rank(play.motif)
    if trump is not None and suit == trump:
        return (1, rank)
    if led is not None and suit == led:
        return (0, rank)
    return None


def _suit_rank(motif: str) -> tuple[str, int]:
    """A normal motif's suit and rank strength, parsed (and checked) by `Card`."""
    card = Card(motif)
    return card.suit, RANK_STRENGTH[card.rank]


#: normal motif -> (suit, rank strength): every completed trick ranks its plays.
_SUIT_RANK: dict[str, tuple[str, int]] = {c: _suit_rank(c) for c in deck_52()}


def trick_winner(plays: Sequence[DoublePlay], trump: str | None) -> DoublePlay:
    """The play that takes the trick so far (the whole trick once everyone played)."""
    led = led_suit(plays)
    in_force = trick_trump(plays, trump)
    return winning_play(plays, lambda p: play_strength(p, led, in_force))
