"""How a card looks on a page: the faces of every game's cards, as data.

Each game writes its cards in its own notation (rules pages): rank+suit for
duck-soup and double-carre (``"QH"``, ``"10S"``), two motifs for DOUBLE
(``"KS/4H"``, ``"POPE/8H"``), names for Soupe & Gertrude (``"tomate"``,
``"oseille-3"``). `face(game, text)` turns one string of a view or an action
into what the templates draw — or None when the string is not a card of that
game, so the replay viewer can stay generic: it walks whatever the engine's
views hold and draws the card strings as cards.
"""

from __future__ import annotations

from functools import cache

from games.cards import SUIT_NAMES, SUIT_SYMBOLS, SUITS

RED = ("H", "D")
FRENCH_GAMES = ("duck-soup", "double-carre")
RANK_NAMES = {"A": "ace", "J": "jack", "Q": "queen", "K": "king"}


def suit_face(suit: str) -> dict:
    return {"symbol": SUIT_SYMBOLS[suit], "colour": "red" if suit in RED else "black",
            "name": SUIT_NAMES[suit]}


@cache
def _french(text: str) -> dict | None:
    from games.cards import Card

    try:
        card = Card(text)
    except ValueError:
        return None
    suit = suit_face(card.suit)
    return {"kind": "french", "text": text, "rank": card.rank, "suit": suit["symbol"],
            "colour": suit["colour"],
            "title": f"{RANK_NAMES.get(card.rank, card.rank)} of {suit['name']}"}


def _motif(text: str) -> dict:
    if text in ("POPE", "IDIOT"):
        return {"rank": text, "suit": "", "colour": "special", "title": text}
    card = _french(text)
    return {"rank": card["rank"], "suit": card["suit"], "colour": card["colour"], "title": card["title"]}


@cache
def _double(text: str) -> dict | None:
    from games.double_cards import SPECIALS, DoubleCard

    try:
        card = DoubleCard(text)
    except ValueError:
        if text in SPECIALS or _french(text) is not None:  # one half, e.g. a played motif
            return {"kind": "motif", "text": text, **_motif(text)}
        return None
    high, low = (_motif(m) for m in card.motifs)
    return {"kind": "double", "text": text, "high": high, "low": low,
            "title": f"{high['title']} / {low['title']}"}


@cache
def _named(text: str) -> dict | None:
    from games.soupe_gertrude import cards

    if text not in cards.COUNTS:
        return None
    if text in cards.VEGETABLES or text == "navet":
        family = "vegetable"
    elif text in cards.MONEY:
        family = "money"
    else:
        family = "special"
    return {"kind": "named", "text": text, "name": text.replace("-", " "), "family": family,
            "value": cards.VALUES[text], "title": f"{text} (value {cards.VALUES[text]})"}


def face(game: str, text: object) -> dict | None:
    """What to draw for `text` in `game`: a card face, or None for any other string."""
    if not isinstance(text, str) or len(text) > 20:
        return None
    if game in FRENCH_GAMES:
        return _french(text)
    if game == "double":
        return _double(text)
    if game == "soupe-gertrude":
        return _named(text)
    return _french(text)  # a game added later: rank+suit is the common notation


def suit_of_key(key: object, value: object) -> dict | None:
    """A bare suit letter under a key that names a suit (`trump`, `led_suit`) drawn as its symbol."""
    if isinstance(key, str) and isinstance(value, str) and value in SUITS and (
            "suit" in key or "trump" in key):
        return suit_face(value)
    return None
