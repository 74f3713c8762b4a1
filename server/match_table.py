"""A match's card table at one step, as the pages and the event stream show it.

The game describes its own table (`Game.table`, layout in games/table.py);
this adds what a client needs to draw it without knowing the game: `faces`,
how each card string of the table is drawn (the game's `card_face`). Nothing
here names a game. `seat_table_of` is the table one seat sees (a person
playing at it): the spectator's, with what that seat's own view adds (its
hand, and what else it alone knows).
"""

from __future__ import annotations

import games
from games.table import card_strings, default_table


def table_of(game: str, seats: int, view: dict, last: dict | None = None,
             seat_views: list[dict] | None = None) -> dict:
    """The layout of `game`'s table for `view` (the spectator's), the entry `last` that led
    there, and — in a public replay only — every seat's view; plus `faces`."""
    hook = games.get(game).table
    if hook is not None:
        table = hook(view, last, seat_views)
    else:
        table = default_table(view, last, seat_views, seats=seats)
    return {**table, "faces": faces_of(game, card_strings(table))}


def seat_table_of(game: str, seats: int, view: dict, last: dict | None, seat: int, seat_view: dict) -> dict:
    """The table as seat `seat` sees it: the game's hook given that seat's own view and the
    spectator's `view` for every other seat (which shows no hand), so nothing another seat
    holds is drawn."""
    views = [seat_view if i == seat else view for i in range(seats)]
    return table_of(game, seats, view, last, views)


def faces_of(game: str, cards: list[str]) -> dict[str, dict]:
    """card string -> how it is drawn (None-free: strings the game does not know are left out)."""
    card_face = games.get(game).card_face
    out: dict[str, dict] = {}
    if card_face is None:
        return out
    for text in cards:
        if text not in out:
            face = card_face(text)
            if face is not None:
                out[text] = face
    return out
