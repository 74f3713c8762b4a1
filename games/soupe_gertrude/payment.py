"""Step 5, payment: the auction's winner hands over cards one at a time.

Paying card by card (rather than naming a whole set at once) keeps the list
of legal actions small and lets the one-card-each rule be checked as it is
played: while some other seat has received nothing, a card may go to a seat
already paid only if the winner keeps one card for each seat still waiting.

In a game of two seats (from the start) the cards given are held aside until
the payment ends; then the other seat receives only the highest-value one
(the first given among equals) and the rest leave the game in view of both.
"""

from __future__ import annotations

from games.soupe_gertrude.cards import VALUES
from games.soupe_gertrude.fields import Fields


class PaymentMixin(Fields):
    """The payment's decisions (mixed into `SoupeState`)."""

    def _start_payment(self, winner: int, bid: int) -> None:
        self.payment = {"winner": winner, "bid": bid, "given": 0, "received": [], "held": []}
        if self.hands[winner]:
            self._ask("pay", winner)
        else:  # an empty hand (a bid of 0) ends the payment at once
            self._end_payment()

    @property
    def _two_seat_payment(self) -> bool:
        return self.seats == 2

    def _waiting(self) -> list[int]:
        """Other seats that have received nothing from the winner yet."""
        assert self.payment is not None
        received = self.payment["received"]
        return [s for s in self.others(self.payment["winner"]) if s not in received]

    def _pay_actions(self) -> list[dict]:
        pay = self.payment
        assert pay is not None
        hand = self.hands[pay["winner"]]
        waiting = self._waiting()
        actions: list[dict] = []
        if pay["given"] >= pay["bid"] and not waiting:
            actions.append({"done": True})
        spare = len(hand) - 1 >= len(waiting)  # may a card go to a seat already paid?
        for card in dict.fromkeys(sorted(hand)):
            for seat in self.others(pay["winner"]):
                if seat in waiting or spare:
                    actions.append({"give": card, "to": seat})
        return actions

    def _explain_pay(self, action: dict) -> str | None:
        """Why a payment step is refused (the winner's own hand and public facts only)."""
        pay, waiting = self.payment, self._waiting()
        assert pay is not None  # asked during the payment
        if "done" in action:
            return (f"the payment ends once {pay['bid']} is given (so far {pay['given']}) and "
                    f"every other seat has a card (still waiting: {waiting})")
        card, to = action.get("give"), action.get("to")
        if card not in self.hands[pay["winner"]]:
            return f"you hold no {card!r} to give"
        if to not in self.others(pay["winner"]):
            return f"cards go to another seat in the game: {self.others(pay['winner'])}"
        if to not in waiting:
            return f"keep a card for each seat still waiting ({waiting}) before paying seat {to} again"
        return None

    def _apply_pay(self, action: dict) -> None:
        pay = self.payment
        assert pay is not None
        winner = pay["winner"]
        if "done" in action:
            self._end_payment()
            return
        card, to = action["give"], action["to"]
        self._take(winner, card)
        pay["given"] += VALUES[card]
        if to not in pay["received"]:
            pay["received"].append(to)
        if self._two_seat_payment:
            pay["held"].append(card)
        else:
            self.hands[to].append(card)
        self._event({"event": "give", "seat": winner, "to": to, "card": card})
        if self.hands[winner]:
            self._ask("pay", winner)
        else:
            self._end_payment()

    def _end_payment(self) -> None:
        """Settle a two-seat payment, then check the receivers (from W's left) and W."""
        pay = self.payment
        assert pay is not None
        winner = pay["winner"]
        if self._two_seat_payment and pay["held"]:
            held = pay["held"]
            best = max(range(len(held)), key=lambda i: (VALUES[held[i]], -i))
            kept = held.pop(best)
            other = pay["received"][0]
            self.hands[other].append(kept)
            self._event({"event": "received", "seat": other, "card": kept})
            if held:
                self._event({"event": "discarded", "cards": sorted(held)})
            self.out.extend(held)
            pay["held"] = []
        self._event({"event": "paid", "seat": winner, "bid": pay["bid"], "given": pay["given"]})
        receivers = [s for s in self.others(winner) if s in pay["received"]]
        self._run_checks([*receivers, winner], after="purchase")
