"""Le double carré's card table (`Game.table`): four cards revealed, two seats taking
and discarding.

Built from the spectator's view (games/table.py says the layout): the opening
draw, the four revealed cards with who took which, the stock, and for each
seat how many cards it holds, whether it is active and what it must do.
Discards are face down: the spectator sees that two were discarded, never
which; a public replay shows each seat's hand, its discards and its groups.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from games.cards import RANKS_32
from games.table import badge, card, fact, hand_of, last_action, last_move, last_seat, layout, pile, seat

HAND = 8
PENDING = {"take": "to take two", "discard": "to discard two"}


def groups(hand: Sequence[str]) -> str:
    """The hand's groups of equal ranks, largest first ("3-2-1-1-1"), and the points of its
    distinct ranks — the two things the rules compare at the end."""
    counts = Counter(c[:-1] for c in hand)
    points = sum(RANKS_32.index(r) for r in counts)
    return "-".join(str(n) for n in sorted(counts.values(), reverse=True)) + f" · {points} points"


def _counts(view: dict) -> list[int]:
    """Cards each seat holds: 8, and 10 between taking and discarding."""
    counts = [HAND, HAND]
    if view["pending"] == "discard":
        other = 1 - view["active"]
        counts[other] = HAND + 2
        if view["to_act"] == view["active"]:
            counts[view["active"]] = HAND + 2
    return counts


def table(view: dict, last: dict | None = None, seat_views: Sequence[dict] | None = None) -> dict:
    acted = last_seat(last)
    facts = [fact("turn", f"{view['turn']} of {view['turns']}")]
    if view["advanced"]:
        facts.append(fact("version", "advanced: turns 1–4 set cards aside, turns 5–8 bring them back"))
    taken_now = view["taken"][-1] if view["taken"] and view["taken"][-1]["turn"] == view["turn"] else None
    discarded = _discarded_now(view)
    seats = []
    for s, count in enumerate(_counts(view)):
        badges = []
        if view["active"] == s:
            badges.append(badge("active: chooses first", kind="role"))
        if view["to_act"] == s:
            badges.append(badge(PENDING.get(view["pending"], "to act"), kind="turn"))
        if s in discarded:
            badges.append(badge("discarded", "2 face down", kind="count"))
        if view["advanced"]:
            badges.append(badge("set aside", view["set_aside_sizes"][s], kind="count"))
        hand = hand_of(seat_views, s)
        if hand is not None and len(hand) == HAND:
            badges.append(badge("groups", groups(hand), kind="score"))
        seats.append(seat(s, hand, count, badges, to_act=view["to_act"] == s, last=acted == s))
    centre = []
    if view["draw"] and view["turn"] == 1 and not view["taken"]:
        centre.append(pile("draw for the first turn",
                           [card(c, s, win=s == view["first"]) for pair in view["draw"] for s, c in enumerate(pair)],
                           winner=view["first"]))
    if view["revealed"]:
        owner, active = {}, None
        if taken_now:
            owner = {c: s for s, cards in enumerate(taken_now["cards"]) for c in cards}
            active = taken_now["active"]
        centre.append(pile("revealed", [card(c, owner.get(c), "taken" if c in owner else None,
                                             last=c in owner and owner[c] == acted == active)
                                        for c in view["revealed"]]))
    if seat_views:
        out = [card(c, s) for s, v in enumerate(seat_views) for c in v.get("discards", [])]
        if out:
            centre.append(pile("discarded (shown in the replay)", out))
    if view["stock"]:
        centre.append(pile("stock", backs=view["stock"], note=f"{view['stock']} cards"))
    return layout(facts, seats, centre, _last(view, last, acted, taken_now))


def _discarded_now(view: dict) -> set[int]:
    """The seats that have discarded this turn (the active seat discards first)."""
    if view["pending"] == "discard" and view["to_act"] != view["active"]:
        return {view["active"]}
    return set()


def _last(view: dict, last: dict | None, acted: int | None, taken_now: dict | None) -> dict | None:
    if acted is None:
        return None
    move = last_move(last)
    if move is not None:
        if "take" in move:
            return last_action(acted, "takes", move["take"])
        return last_action(acted, "discards", move["discard"])
    if taken_now and view["pending"] == "discard" and view["to_act"] == acted == taken_now["active"]:
        return last_action(acted, "takes", taken_now["cards"][acted])
    return last_action(acted, "discards two cards face down")
