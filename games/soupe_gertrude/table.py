"""Soupe & Gertrude's card table (`Game.table`): a lot for sale, an auction, payments
and special cards, around 2 to 6 seats.

Built from the spectator's view (games/table.py says the layout): the lot
(its face-up card and the others face down), the auction, the payment under
way, the special card being played, the pile, and the recent public events
in words; each seat's card count, role (drawer, high bidder), whether it is
out and its manche points. A public replay adds each seat's hand, its value,
and the whole lot.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.table import badge, card, fact, last_action, last_move, last_seat, layout, line, pile, seat

PENDING = {"special": "may play a special card", "face_up": "to choose the face-up card", "bid": "to bid",
           "pay": "to pay", "cancel": "may cancel", "give-back": "to give a card back", "keep": "to keep a card",
           "navet": "may play the navet"}
NOW = {"special": "special cards", "face_up": "the lot's face-up card", "bid": "the auction", "pay": "the payment",
       "cancel": "a special card may be cancelled", "give-back": "a card given back", "keep": "a card kept",
       "navet": "the navet may be played"}
PASSES = {"special": "plays no special card", "bid": "passes", "cancel": "does not cancel",
          "navet": "does not play the navet"}
#: the events shown in the feed, newest last
FEED = 8


def table(view: dict, last: dict | None = None, seat_views: Sequence[dict] | None = None) -> dict:
    acted = last_seat(last)
    facts = []
    if view["manches"] > 1:
        facts.append(fact("manche", f"{view['manche']} of {view['manches']}"))
    if view["pending"]:
        facts.append(fact("now", NOW.get(view["pending"], view["pending"])))
    if view["high_bid"] is not None:
        facts.append(fact("high bid", view["high_bid"]))
    if view["navet_mouche"]:
        facts.append(fact("variant", "navet et mouche"))
    seats = [_seat(view, s, seat_views[s] if seat_views else None, acted) for s in range(view["seats"])]
    return layout(facts, seats, _centre(view, seat_views, acted), _last(view, last, acted))


def _seat(view: dict, s: int, own: dict | None, acted: int | None) -> dict:
    """Seat `s`; `own` is its own view in a public replay (its hand and the hand's value)."""
    badges = []
    out = s in view["eliminated"]
    if out:
        badges.append(badge("eliminated", kind="warn"))
    if view["drawer"] == s and not out:
        badges.append(badge("drawer", kind="role"))
    if view["to_act"] == s:
        badges.append(badge(PENDING.get(view["pending"], "to act"), kind="turn"))
    if view["high_bidder"] == s:
        badges.append(badge("high bid", view["high_bid"], kind="bid"))
    if view["claimant"] == s:
        badges.append(badge("claims the soup", kind="role"))
    if view["manches"] > 1:
        badges.append(badge("points", view["scores"][s], kind="score"))
    hand = own["hand"] if own else None
    if own and own.get("hand_value") is not None:
        badges.append(badge("worth", own["hand_value"], kind="score"))
    return seat(s, hand, view["hand_sizes"][s], badges, to_act=view["to_act"] == s, last=acted == s, out=out)


def _centre(view: dict, seat_views: Sequence[dict] | None, acted: int | None) -> list[dict]:
    centre = []
    lot = view["lot"]
    if lot["count"]:
        face_up = lot["face_up"]
        known = None
        if seat_views and view["drawer"] is not None:
            known = seat_views[view["drawer"]]["lot"].get("cards")
        if known:
            rest = list(known)
            if face_up in rest:
                rest.remove(face_up)
            cards = ([card(face_up, note="face up")] if face_up else []) + [card(c, note="hidden") for c in rest]
            centre.append(pile("lot", cards, note=f"{lot['count']} cards"))
        else:
            cards = [card(face_up, note="face up")] if face_up else []
            centre.append(pile("lot", cards, backs=lot["count"] - len(cards), note=f"{lot['count']} cards"))
    if view["bids"]:
        bids = view["bids"]
        centre.append(pile("auction", lines=[
            line(_bid_text(b), b["seat"], last=i == len(bids) - 1 and b["seat"] == acted)
            for i, b in enumerate(bids)]))
    if view["payment"]:
        pay = view["payment"]
        centre.append(pile("payment", note=f"bid {pay['bid']}, {pay['given']} given so far",
                           lines=[line(e["text"], e["seat"], e["to"]) for e in _payment(view)]))
    if view["play"]:
        play = view["play"]
        what = f"plays a {play['card']}" + (f" for a {play['vegetable']}" if play.get("vegetable") else "") + " on"
        centre.append(pile("special card", [card(play["card"], play["seat"])],
                           lines=[line(what, play["seat"], play["target"])]))
    if view["pile"]:
        centre.append(pile("pile", backs=view["pile"], note=f"{view['pile']} cards"))
    log = view["log"]
    feed = [line(*event_text(e)[:3]) for e in log[-FEED:]]
    if feed:
        feed[-1]["last"] = True
        centre.append(pile("what happened", lines=feed))
    ends = [e for e in log if e["event"] == "manche_end"]
    if ends and view["to_act"] is None:
        end = ends[-1]
        centre.append(pile(f"manche {end['manche']} over", winner=end.get("winner"), lines=[
            line(f"vegetables {', '.join(end['vegetables'][s]) or 'none'} · value {end['values'][s]}"
                 f" · {end['points'][s]} point{'s' if end['points'][s] != 1 else ''}", s)
            for s in range(len(end["points"]))]))
    return centre


def _bid_text(b: dict) -> str:
    if b.get("pass"):
        return "passes"
    if b.get("void"):
        return f"bids {b['bid']} — cannot pay: eliminated"
    return f"bids {b['bid']}"


def _payment(view: dict) -> list[dict]:
    """The gives of the payment under way, from the public log (newest last)."""
    out: list[dict] = []
    for e in reversed(view["log"]):
        if e["event"] == "sold":
            break
        if e["event"] == "give":
            out.append({"text": f"gives {e['card']} to", "seat": e["seat"], "to": e["to"]})
    return out[::-1]


def event_text(e: dict) -> tuple[str, int | None, int | None]:
    """One public event in words: (text, seat, to) for a line "<seat> <text> <to>"."""
    kind, s, to = e.get("event"), e.get("seat"), e.get("target", e.get("to"))
    texts = {
        "manche": lambda: (f"starts manche {e['manche']}", e.get("starter"), None),
        "turn": lambda: (f"is the drawer · pile {e['pile']}", e.get("drawer"), None),
        "pass": lambda: (PASSES.get(str(e.get("decision")), "passes"), s, None),
        "draw": lambda: (f"draws {e['count']} card{'s' if e['count'] != 1 else ''}", s, None),
        "redraw": lambda: (f"draws three vegetables ({', '.join(e['cards'])}): shuffled back, draws again", s, None),
        "face_up": lambda: (f"shows {e['card']} face up, a lot of {e['count']}", s, None),
        "bid": lambda: (f"bids {e['bid']}", s, None),
        "eliminated": lambda: (f"bid {e['bid']} and cannot pay: eliminated", s, None),
        "last_seat": lambda: ("is the last seat left", s, None),
        "sold": lambda: (f"buys the lot for {e['bid']}", s, None),
        "give": lambda: (f"gives {e['card']} to", s, to),
        "received": lambda: (f"keeps {e['card']}, the highest card given", s, None),
        "discarded": lambda: (f"out of the game: {', '.join(e['cards'])}", None, None),
        "paid": lambda: (f"has paid {e['given']} for a bid of {e['bid']}", s, None),
        "purchase": lambda: (f"takes the lot: {', '.join(e['cards'])}", s, None),
        "souris": lambda: (f"plays a souris for a {e['vegetable']} on", s, to),
        "souris_result": lambda: ((f"takes a {e['vegetable']} from" if e.get("taken")
                                   else f"finds no {e['vegetable']} with"), s, to),
        "give_back": lambda: ("gives a card back to", s, to),
        "gertrude": lambda: ("plays a gertrude on", s, to),
        "kept": lambda: ((f"keeps one of {e['drawn']} cards drawn from" if e.get("taken")
                          else f"keeps none of {e['drawn']} cards drawn from"), s, to),
        "cancel": lambda: (f"cancels the {e['card']} with a gertrude", s, None),
        "soupe": lambda: ("claims: à la soupe!", s, None),
        "navet": lambda: (f"plays the navet for a {e['vegetable']} "
                          f"({'it hits' if e.get('hit') else 'it misses'}) against", s, to),
        "win": lambda: (f"wins with {', '.join(e['vegetables'])}!", s, None),
        "manche_end": lambda: (f"wins manche {e['manche']}" if e.get("winner") is not None
                               else f"manche {e['manche']} is over", e.get("winner"), None),
    }
    if kind in texts:
        return texts[kind]()
    rest = ", ".join(f"{k} {v}" for k, v in e.items() if k not in ("event", "seat"))
    return (f"{kind}: {rest}" if rest else str(kind), s if isinstance(s, int) else None, None)


def _last(view: dict, last: dict | None, acted: int | None) -> dict | None:
    if acted is None:
        return None
    move = last_move(last)
    if move is not None:
        return _describe_move(move, acted)
    for e in reversed(view["log"]):
        if e.get("seat") == acted:
            text, _, to = event_text(e)
            return last_action(acted, text, to=to)
    return last_action(acted, "acts")


def _describe_move(move: dict, acted: int) -> dict:
    """A public replay's action in words."""
    if move.get("pass"):
        return last_action(acted, "passes")
    if move.get("done"):
        return last_action(acted, "ends the payment")
    if move.get("cancel"):
        return last_action(acted, "cancels with a gertrude")
    if "bid" in move:
        return last_action(acted, f"bids {move['bid']}")
    if "face_up" in move:
        return last_action(acted, "shows face up", [move["face_up"]])
    if "give" in move and "to" in move:
        return last_action(acted, "gives", [move["give"]], to=move["to"])
    if "give" in move:
        return last_action(acted, "gives back", [move["give"]])
    if "souris" in move:
        return last_action(acted, f"plays a souris for a {move['souris']} on", to=move["target"])
    if "gertrude" in move:
        return last_action(acted, "plays a gertrude on", to=move["gertrude"])
    if "keep" in move:
        return last_action(acted, "keeps", [move["keep"]])
    if "navet" in move:
        return last_action(acted, f"plays the navet for a {move['navet']}")
    return last_action(acted, " ".join(f"{k} {v}" for k, v in move.items()))
