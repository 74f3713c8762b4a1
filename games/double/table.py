"""DOUBLE's card table (`Game.table`): 2 to 10 seats bidding and playing tricks.

Built from the spectator's view (games/table.py says the layout): the turned
card and the trump, the trick being played with the motif each card was
played as (or the last trick with its winner, or the last round's outcome),
each seat's bid, tricks taken and points, who deals and who is to act.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.cards import SUIT_NAMES, SUIT_SYMBOLS
from games.table import (
    badge,
    card,
    fact,
    hand_of,
    last_action,
    last_move,
    last_seat,
    layout,
    line,
    pile,
    seat,
)

PENDING = {"bid": "to bid", "play": "to play"}


def motif_text(motif: str) -> str:
    """"4H" as "4♥"; POPE and IDIOT as they are."""
    if len(motif) >= 2 and motif[-1] in SUIT_SYMBOLS:
        return motif[:-1] + SUIT_SYMBOLS[motif[-1]]
    return motif


def _suit(suit: str | None) -> str:
    return f"{SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}" if suit in SUIT_SYMBOLS else "none"


def table(view: dict, last: dict | None = None, seat_views: Sequence[dict] | None = None) -> dict:
    acted = last_seat(last)
    facts = [fact("round", f"{view['round']} of {view['rounds']}"),
             fact("cards each", view["cards_per_seat"]),
             fact("trump", _suit(view["trump"]) if view["trump"] else "none this round")]
    if view["led_suit"]:
        facts.append(fact("led suit", _suit(view["led_suit"])))
    if view["pending"]:
        facts.append(fact("now", "bidding" if view["pending"] == "bid" else "playing tricks"))
    seats = []
    for s in range(view["seats"]):
        badges = []
        if view["dealer"] == s:
            badges.append(badge("dealer", kind="role"))
        if view["to_act"] == s:
            badges.append(badge(PENDING.get(view["pending"], "to act"), kind="turn"))
        bid = view["bids"][s]
        badges += [badge("bid", "—" if bid is None else bid, kind="bid"),
                   badge("tricks", view["tricks"][s], kind="count"),
                   badge("points", view["points"][s], kind="score")]
        seats.append(seat(s, hand_of(seat_views, s), view["hand_sizes"][s], badges,
                          to_act=view["to_act"] == s, last=acted == s))
    return layout(facts, seats, _centre(view, acted), _last(view, last, acted))


def _centre(view: dict, acted: int | None) -> list[dict]:
    centre = [pile("turned up", [card(view["trump_card"])],
                   note=f"trump {_suit(view['trump'])}" if view["trump"] else "no trump this round")]
    trick, history = view["trick"], view["history"]
    if trick:
        centre.append(pile("trick", [card(p["card"], p["seat"], "as " + motif_text(p["motif"]),
                                          last=i == len(trick) - 1 and p["seat"] == acted)
                                     for i, p in enumerate(trick)]))
    elif history:
        done = history[-1]
        plays = done["plays"]
        centre.append(pile("last trick", [card(p["card"], p["seat"], "as " + motif_text(p["motif"]),
                                               last=i == len(plays) - 1 and p["seat"] == acted,
                                               win=p["seat"] == done["winner"])
                                          for i, p in enumerate(plays)], winner=done["winner"]))
    elif view["past_rounds"]:
        k, done = len(view["past_rounds"]), view["past_rounds"][-1]
        centre.append(pile(f"round {k} scored", lines=[
            line(f"bid {done['bids'][s]}, took {done['tricks'][s]}"
                 + (" — made it" if done["bids"][s] == done["tricks"][s] else "")
                 + f" → {done['points'][s]} points", s)
            for s in range(len(done["points"]))]))
    return centre


def _last(view: dict, last: dict | None, acted: int | None) -> dict | None:
    if acted is None:
        return None
    move = last_move(last)
    if move is not None:
        if "bid" in move:
            return last_action(acted, f"bids {move['bid']}")
        return last_action(acted, f"plays (as {motif_text(move['motif'])})", [move["play"]])
    plays = view["trick"] or (view["history"][-1]["plays"] if view["history"] else [])
    if plays and plays[-1]["seat"] == acted:
        return last_action(acted, f"plays (as {motif_text(plays[-1]['motif'])})", [plays[-1]["card"]])
    if not view["history"] and not view["trick"] and view["bids"][acted] is not None:
        return last_action(acted, f"bids {view['bids'][acted]}")
    return last_action(acted, "plays")
