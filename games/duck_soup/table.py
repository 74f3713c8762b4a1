"""Duck Soup's card table (`Game.table`): two seats, the trick between them, the stock.

Built from the spectator's view (games/table.py says the layout): the trick
being played with each card's call, or the last completed trick with its
winner and points; the stock; each seat's points per phase, set total and
who deals, leads or must answer a coin. Hands come only from the seats' own
views, in a public replay.
"""

from __future__ import annotations

from collections.abc import Sequence

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

PHASES = {"low": "low — the lowest card of the led suit wins",
          "high": "high — the highest card of the led suit wins"}
PENDING = {"lead": "to lead", "follow": "to follow", "answer-coin": "to answer the coin",
           "answer-coin-coin": "to answer the coin-coin"}
CALLS = {"coin": "coin!", "coin-coin": "coin-coin!", "soupe": "soupe!",
         "soupe-aux-canards": "soupe aux canards!"}
CASES = {"A": "same rank, no call", "BA": "the coin conceded", "BBA": "soupe aux canards: both tricks",
         "BBB": "the coin-coin stood: both tricks"}


def table(view: dict, last: dict | None = None, seat_views: Sequence[dict] | None = None) -> dict:
    acted = last_seat(last)
    facts = [fact("deal", view["deal"])]
    if view["sets"] > 1:
        facts.append(fact("set", f"{view['set']} · {view['sets']} set points win"))
    facts += [fact("phase", PHASES.get(view["phase"], view["phase"])),
              fact("target", f"{view['target']} · pond {view['pond']}"),
              fact("edition", view["edition"])]
    seats = []
    for s in range(len(view["hand_sizes"])):
        badges = []
        if view["dealer"] == s:
            badges.append(badge("dealer", kind="role"))
        if view["to_act"] == s:
            badges.append(badge(PENDING.get(view["pending"], "to act"), kind="turn"))
        points = view["points"]
        badges.append(badge("points", f"low {points['low'][s]} · high {points['high'][s]}", kind="score"))
        badges.append(badge("set total", view["set_totals"][s], kind="score"))
        if view["sets"] > 1 or any(view["set_points"]):
            badges.append(badge("set points", view["set_points"][s], kind="score"))
        seats.append(seat(s, hand_of(seat_views, s), view["hand_sizes"][s], badges,
                          to_act=view["to_act"] == s, last=acted == s))
    return layout(facts, seats, _centre(view, acted), _last(view, last, acted))


def _centre(view: dict, acted: int | None) -> list[dict]:
    centre = []
    trick, history = view["trick"], view["history"]
    if trick:
        cards = [card(p["card"], p["seat"], CALLS.get(p["call"] or ""),
                      last=i == len(trick) - 1 and p["seat"] == acted) for i, p in enumerate(trick)]
        centre.append(pile("trick", cards))
    elif history:
        done = _last_tricks(history)
        winner = done[-1]["winner"]
        plays = [p for t in done for p in t["cards"]]
        cards = [card(p["card"], p["seat"], CALLS.get(p["call"] or ""),
                      last=i == len(plays) - 1 and p["seat"] == acted, win=p["seat"] == winner)
                 for i, p in enumerate(plays)]
        points = sum(t["points"] for t in done)
        note = f"{points} point{'s' if points != 1 else ''}"
        if done[-1]["case"] in CASES:
            note += " · " + CASES[done[-1]["case"]]
        centre.append(pile("last trick" if len(done) == 1 else "last two tricks", cards, note=note,
                           winner=winner))
    if view["stock"]:
        centre.append(pile("stock", backs=view["stock"], note=f"{view['stock']} cards"))
    if view["deals"] and (not history or view["to_act"] is None):
        k, deal = len(view["deals"]), view["deals"][-1]
        lines = [line(f"low {deal['low'][s]} × high {deal['high'][s]} = {deal['score'][s]}"
                      + (" — in the pond!" if deal["pond"] == s else ""), s)
                 for s in range(len(deal["score"]))]
        centre.append(pile(f"deal {k} scored", lines=lines))
    return centre


def _last_tricks(history: list[dict]) -> list[dict]:
    """The trick(s) the last play completed: two after a coin-coin, else one."""
    if len(history) >= 2 and history[-1]["case"] in ("BBA", "BBB") and history[-2]["case"] == history[-1]["case"]:
        return history[-2:]
    return history[-1:]


def _last(view: dict, last: dict | None, acted: int | None) -> dict | None:
    if acted is None:
        return None
    move = last_move(last)
    if move is not None:
        call = CALLS.get(move.get("call") or "")
        if "play" not in move:
            return last_action(acted, f"concedes the trick — {call}")
        return last_action(acted, "plays" + (f" ({call})" if call else ""), [move["play"]])
    played = [p for p in view["trick"] if p["seat"] == acted][-1:]
    if not played and view["history"] and not view["trick"]:
        plays = [p for t in _last_tricks(view["history"]) for p in t["cards"]]
        if plays and plays[-1]["seat"] == acted:
            played = plays[-1:]
        elif view["history"][-1]["case"] == "BA":
            return last_action(acted, "concedes the trick — soupe!")
    if played:
        call = CALLS.get(played[0]["call"] or "")
        return last_action(acted, "plays" + (f" ({call})" if call else ""), [played[0]["card"]])
    return last_action(acted, "plays")
