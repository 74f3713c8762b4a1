"""How a card looks on a page: each game's own card faces, asked generically.

Each game writes its cards in its own notation (its rules page) and says how
one is drawn through its `Game.card_face` hook. `face(game, text)` turns one
string of a view or an action into what the templates draw — or None when
the string is not a card of that game — so the replay viewer stays generic:
it walks whatever the engine's views hold and draws the card strings as
cards. This module names no game.
"""

from __future__ import annotations

import games
from games.cards import SUITS, suit_face

#: Longer strings are never cards: a view's free text is not looked up (nor cached).
MAX_CARD_TEXT = 20


def face(game: str, text: object) -> dict | None:
    """What to draw for `text` in `game`: a card face, or None for any other string."""
    if not isinstance(text, str) or len(text) > MAX_CARD_TEXT:
        return None
    try:
        card_face = games.get(game).card_face
    except games.UnknownGame:
        return None
    return card_face(text) if card_face is not None else None


def suit_of_key(key: object, value: object) -> dict | None:
    """A bare suit letter under a key that names a suit (`trump`, `led_suit`) drawn as its symbol."""
    if isinstance(key, str) and isinstance(value, str) and value in SUITS and (
            "suit" in key or "trump" in key):
        return suit_face(value)
    return None
