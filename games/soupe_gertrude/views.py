"""What a seat may know, built in one place so hidden information is audited here.

A seat sees its own hand, counts of everyone else's, the lot's face-up card
and size (all of it when it drew the lot), the auction, the payment, and the
log of public events plus the private events it took part in. It never sees
another hand (except one shown to it by a failed souris, through its log),
another drawer's hidden lot cards, or the order of the pile. The spectator
(`seat=None`) sees public events only.
"""

from __future__ import annotations

from games.soupe_gertrude.cards import hand_value, sort_cards
from games.soupe_gertrude.fields import Fields


def _copy(event: dict) -> dict:
    """A copy a bot may mutate without touching the match."""
    return {k: (list(v) if isinstance(v, list) else v) for k, v in event.items()}


class ViewMixin(Fields):
    """`_view(seat)` (mixed into `SoupeState`; `State.view` checks the seat)."""

    def _view(self, seat: int | None) -> dict:
        auction = self.auction or {}
        lot: dict = {"face_up": self.face_up, "count": len(self.lot)}
        if seat is not None and seat == self.drawer and self.lot:
            lot["cards"] = sort_cards(self.lot)
        payment = None
        if self.payment and self.pending == "pay":
            pay = self.payment
            payment = {"winner": pay["winner"], "bid": pay["bid"], "given": pay["given"],
                       "received": sorted(pay["received"])}
        play = None
        if self.play is not None:
            play = {k: self.play[k] for k in ("card", "seat", "target", "vegetable")}
        return {
            "seat": seat,
            "seats": self.seats,
            "navet_mouche": self.variant,
            "manche": self.manche,
            "manches": self.manches,
            "hand": None if seat is None else sort_cards(self.hands[seat]),
            "hand_value": None if seat is None else hand_value(self.hands[seat]),
            "pile": len(self.pile),
            "hand_sizes": [len(h) for h in self.hands],
            "drawer": self.drawer,
            "to_act": self._to_act,
            "pending": self.pending,
            "lot": lot,
            "bids": [dict(b) for b in auction.get("bids", [])],
            "high_bid": auction.get("high"),
            "high_bidder": auction.get("bidder"),
            "payment": payment,
            "play": play,
            "claimant": self.claim["seat"] if self.claim else None,
            "max_bid": self.max_bid,
            "eliminated": list(self.eliminated),
            "scores": list(self.totals),
            "manche_points": [list(p) for p in self.manche_points],
            "log": [_copy(e) for who, e in self.log if who is None or seat in who],
        }
