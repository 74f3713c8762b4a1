"""A card table as data: what one moment of a match looks like to a spectator.

Each game describes its own table (`Game.table`), from a view, as a generic
JSON-safe layout that a page draws without knowing the game:

    {"facts":  [{"label": "phase", "value": "low"}, …],        # headline: phase, deal k of n, target…
     "seats":  [{"seat": 0, "hand": [cards] | None, "count": n | None,
                 "badges": [{"label", "value"?, "kind"?}, …],  # dealer, to act, bid, tricks, score…
                 "to_act": bool, "last": bool, "out": bool}, …],
     "centre": [{"title", "cards": [{"card", "seat"?, "note"?, "last"?, "win"?}],
                 "backs": n, "note"?, "winner"?, "lines": [{"text", "seat"?, "to"?, "last"?}]}, …],
     "last":   {"seat", "text", "cards": [cards], "to"?} | None}   # the last action, as public

Seats are indexes (the page writes the bot's name: a line reads "<seat> <text>
<to>"); card strings are in the
game's own notation (the page draws them with `Game.card_face`); every other
value is plain text. A game's hook is `table(view, last, seat_views)`: `view`
is the spectator's view, `last` the log entry that led here (without its
`action` while the match is not public), and `seat_views` every seat's view —
given only for a public replay, where all hands are shown. From the
spectator's view alone a table must show nothing the view does not hold:
`card_strings` lists what a table shows, so tests can check it.

The helpers below build the pieces; `default_table` serves a game without a
hook of its own; `check` says whether a layout has the documented shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

#: Badge kinds a page may style; any other kind is drawn as a plain badge.
BADGE_KINDS = ("role", "turn", "bid", "count", "score", "warn")


def fact(label: str, value: Any) -> dict:
    """One headline fact, e.g. fact("deal", "2 of 10")."""
    return {"label": label, "value": _text(value)}


def badge(label: str, value: Any = None, kind: str | None = None) -> dict:
    """A seat's badge: a role ("dealer"), or a number ("bid", 3)."""
    out: dict[str, Any] = {"label": label}
    if value is not None:
        out["value"] = _text(value)
    if kind is not None:
        out["kind"] = kind
    return out


def card(text: str, seat: int | None = None, note: str | None = None, last: bool = False,
         win: bool = False) -> dict:
    """A card on the table: who played it, a note ("coin!"), the last one played, the winner."""
    out: dict[str, Any] = {"card": str(text)}
    if seat is not None:
        out["seat"] = seat
    if note:
        out["note"] = note
    if last:
        out["last"] = True
    if win:
        out["win"] = True
    return out


def line(text: str, seat: int | None = None, to: int | None = None, last: bool = False) -> dict:
    """A line of a feed (an auction, recent events): "<seat's name> <text> <to's name>"."""
    out: dict[str, Any] = {"text": text}
    if seat is not None:
        out["seat"] = seat
    if to is not None:
        out["to"] = to
    if last:
        out["last"] = True
    return out


def pile(title: str, cards: Iterable[dict] = (), backs: int = 0, note: str | None = None,
         winner: int | None = None, lines: Iterable[dict] = ()) -> dict:
    """Something in the middle of the table: a trick, the stock, a lot, an auction."""
    out: dict[str, Any] = {"title": title, "cards": list(cards), "backs": int(backs)}
    if note:
        out["note"] = note
    if winner is not None:
        out["winner"] = winner
    lines = list(lines)
    if lines:
        out["lines"] = lines
    return out


def seat(index: int, hand: Sequence[str] | None = None, count: int | None = None,
         badges: Iterable[dict] = (), to_act: bool = False, last: bool = False,
         out: bool = False) -> dict:
    """A seat: its cards when known (else how many it holds), its badges and flags."""
    return {"seat": index, "hand": None if hand is None else [str(c) for c in hand],
            "count": len(hand) if hand is not None else count, "badges": list(badges),
            "to_act": bool(to_act), "last": bool(last), "out": bool(out)}


def last_action(seat_index: int, text: str, cards: Iterable[str] = (), to: int | None = None) -> dict:
    """What the last action did, as a spectator may know it: "<name> <text> <cards> <to's name>"."""
    out: dict[str, Any] = {"seat": seat_index, "text": text, "cards": [str(c) for c in cards]}
    if to is not None:
        out["to"] = to
    return out


def layout(facts: Iterable[dict], seats: Iterable[dict], centre: Iterable[dict],
           last: dict | None = None) -> dict:
    return {"facts": list(facts), "seats": list(seats), "centre": list(centre), "last": last}


def hand_of(seat_views: Sequence[dict] | None, index: int) -> list[str] | None:
    """Seat `index`'s hand in a public replay (its own view's `hand`), else None."""
    if not seat_views:
        return None
    hand = seat_views[index].get("hand")
    return list(hand) if isinstance(hand, list) else None


def last_seat(last: dict | None) -> int | None:
    return last.get("seat") if isinstance(last, dict) else None


def last_move(last: dict | None) -> dict | None:
    """The last action when the entry shows it (a public match), else None."""
    action = last.get("action") if isinstance(last, dict) else None
    return action if isinstance(action, dict) else None


def default_table(view: dict, last: dict | None = None, seat_views: Sequence[dict] | None = None,
                  seats: int | None = None) -> dict:
    """A plain table for a game without its own hook: seats with their hands or
    `hand_sizes`, who is to act, and the view's top-level numbers and words as facts."""
    sizes = view.get("hand_sizes") if isinstance(view.get("hand_sizes"), list) else None
    n = seats or (len(seat_views) if seat_views else len(sizes) if sizes else view.get("seats"))
    n = n if isinstance(n, int) and n > 0 else 0
    acted = last_seat(last)
    facts = [fact(k, v) for k, v in view.items()
             if k not in ("seat", "to_act", "hand", "hand_sizes") and isinstance(v, (str, int, float))
             and not isinstance(v, bool)]
    out_seats = []
    for i in range(n):
        hand = hand_of(seat_views, i)
        count = sizes[i] if sizes and i < len(sizes) else None
        out_seats.append(seat(i, hand, count, to_act=view.get("to_act") == i, last=acted == i))
    return layout(facts, out_seats, [], last_action(acted, "acted") if acted is not None else None)


def card_strings(table: dict) -> list[str]:
    """Every card a table shows face up (hands, cards in the middle, the last action's)."""
    out: list[str] = []
    for s in table.get("seats", ()):
        out.extend(s.get("hand") or ())
    for p in table.get("centre", ()):
        out.extend(c["card"] for c in p.get("cards", ()))
    last = table.get("last")
    if last:
        out.extend(last.get("cards", ()))
    return out


def check(table: Any, seats: int) -> None:
    """Raise ValueError unless `table` has the documented shape for `seats` seats."""
    def need(ok: bool, what: str) -> None:
        if not ok:
            raise ValueError(f"a table {what}")

    need(isinstance(table, dict) and set(table) == {"facts", "seats", "centre", "last"},
         "has exactly facts, seats, centre and last")
    for f in table["facts"]:
        need(isinstance(f, dict) and isinstance(f.get("label"), str) and isinstance(f.get("value"), str),
             f"fact is {{label, value}} text, not {f!r}")
    need([s.get("seat") for s in table["seats"]] == list(range(seats)), f"has seats 0..{seats - 1} in order")
    for s in table["seats"]:
        need(s["hand"] is None or all(isinstance(c, str) for c in s["hand"]), "hand is card strings or None")
        need(s["count"] is None or isinstance(s["count"], int), "count is a number or None")
        for b in s["badges"]:
            need(isinstance(b.get("label"), str) and isinstance(b.get("value", ""), str)
                 and b.get("kind", "role") in BADGE_KINDS, f"badge is label/value text, not {b!r}")
    for p in table["centre"]:
        need(isinstance(p.get("title"), str) and isinstance(p.get("backs"), int), "pile has a title and backs")
        for c in p["cards"]:
            need(isinstance(c.get("card"), str) and _seat_ok(c.get("seat"), seats), f"card is wrong: {c!r}")
        for ln in p.get("lines", ()):
            need(isinstance(ln.get("text"), str) and _seat_ok(ln.get("seat"), seats)
                 and _seat_ok(ln.get("to"), seats), f"line is wrong: {ln!r}")
        need(_seat_ok(p.get("winner"), seats), "pile's winner is a seat")
    last = table["last"]
    need(last is None or (_seat_ok(last.get("seat"), seats) and _seat_ok(last.get("to"), seats)
                          and isinstance(last.get("text"), str)
                          and all(isinstance(c, str) for c in last.get("cards", ()))),
         f"last is {{seat, text, cards}}, not {last!r}")


def _seat_ok(value: Any, seats: int) -> bool:
    return value is None or (type(value) is int and 0 <= value < seats)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
