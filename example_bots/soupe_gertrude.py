"""SoupeGertrudeHeuristic: a sensible Soupe & Gertrude player.

It values a lot by how much it helps its own soup (a vegetable it lacks is
worth far more than its printed value, the one that completes the soup most
of all), never bids more than it can pay with cards it does not need, pays
with its least useful cards (the fly first, then small money), and uses a
souris or Gertrude only where the public log (plus what it saw privately)
says a seat holds a vegetable it lacks.
"""

from __future__ import annotations

from collections import Counter

from games.soupe_gertrude.cards import VALUES, VEGETABLES
from sdk import Bot

HIDDEN_CARD_WORTH = 4  # a hidden lot card: about the average value of a card, plus a small veg chance


def known_vegetables(view: dict) -> dict[int, Counter]:
    """Vegetables each seat is known to hold this manche, from the events this seat saw."""
    known: dict[int, Counter] = {s: Counter() for s in range(view["seats"])}
    two_seats = view["seats"] == 2

    def gain(seat: int, card: str | None) -> None:
        if card in VEGETABLES:
            known[seat][card] += 1

    def lose(seat: int, card: str | None) -> None:
        if card in VEGETABLES and known[seat][card] > 0:
            known[seat][card] -= 1

    for e in view["log"]:
        kind = e["event"]
        if kind == "manche":
            known = {s: Counter() for s in range(view["seats"])}
        elif kind == "purchase":
            for card in e["cards"]:
                gain(e["seat"], card)
        elif kind == "give":
            lose(e["seat"], e["card"])
            if not two_seats:
                gain(e["to"], e["card"])
        elif kind == "received":
            gain(e["seat"], e["card"])
        elif kind == "souris_result" and e["taken"]:
            lose(e["target"], e["vegetable"])
            gain(e["seat"], e["vegetable"])
        elif kind == "given_back":
            lose(e["seat"], e["card"])
            gain(e["to"], e["card"])
        elif kind == "kept_card":
            lose(e["target"], e["card"])
            gain(e["seat"], e["card"])
        elif kind == "shown":
            known[e["seat"]] = Counter(c for c in e["hand"] if c in VEGETABLES)
        elif kind == "navet" and e["hit"]:
            lose(e["target"], e["vegetable"])
        elif kind == "eliminated":
            known[e["seat"]] = Counter()
    return known


class SoupeGertrudeHeuristic(Bot):
    game = "soupe-gertrude"

    def act(self, view: dict, legal_actions: list[dict]) -> dict:
        return self.choose(view, legal_actions)

    def choose(self, view: dict, legal_actions: list[dict],
               known: dict[int, Counter] | None = None) -> dict:
        """`act`, for a caller that may know each seat's vegetables (`known`: a search
        playing out a full state); without it they are read from the view's log."""
        pending = view["pending"]
        if pending in ("special", "navet"):
            known = known if known is not None else known_vegetables(view)
            action = (self.special if pending == "special" else self.navet)(view, legal_actions, known)
        else:
            decide = {
                "face_up": self.face_up,
                "bid": self.bid,
                "pay": self.pay,
                "cancel": self.cancel,
                "give-back": self.give_back,
                "keep": self.keep,
            }.get(pending)
            action = decide(view, legal_actions) if decide else None
        return action if action in legal_actions else legal_actions[0]

    # -- what a card is worth to this seat --------------------------------------
    @staticmethod
    def usefulness(card: str, hand: list[str]) -> float:
        """How much the seat wants to keep `card` (lowest is paid away first)."""
        if card == "mouche":
            return -10  # it blocks our soup: get rid of it
        if card in VEGETABLES:
            return 100 + VALUES[card] if hand.count(card) == 1 else VALUES[card] + 8
        if card in ("souris", "gertrude", "navet"):
            return VALUES[card] + 2
        return VALUES[card]

    def budget(self, hand: list[str]) -> int:
        """What the seat can pay without giving up a vegetable of its soup."""
        return sum(VALUES[c] for c in hand if self.usefulness(c, hand) < 100)

    def lot_worth(self, view: dict) -> float:
        hand = view["hand"]
        lot = view["lot"]
        seen = lot.get("cards") or ([lot["face_up"]] if lot["face_up"] else [])
        hidden = lot["count"] - len(seen)
        missing = [v for v in VEGETABLES if v not in hand]
        have = len(VEGETABLES) - len(missing)
        worth = hidden * HIDDEN_CARD_WORTH
        gained = set()
        for card in seen:
            worth += VALUES[card]
            if card == "mouche":
                worth -= 15
            if card in missing and card not in gained:
                gained.add(card)
                worth += 40 if have + len(gained) >= 3 else 12
        return worth - len(self.others(view)) + 1  # every other seat must get a card

    @staticmethod
    def others(view: dict) -> list[int]:
        me, n = view["seat"], view["seats"]
        return [(me + i) % n for i in range(1, n) if (me + i) % n not in view["eliminated"]]

    # -- decisions -------------------------------------------------------------
    def face_up(self, view: dict, legal: list[dict]) -> dict:
        """Show the least tempting card, so others bid less for the lot."""
        return min(legal, key=lambda a: (a["face_up"] in VEGETABLES, VALUES[a["face_up"]]))

    def bid(self, view: dict, legal: list[dict]) -> dict:
        limit = min(self.budget(view["hand"]), view["hand_value"], int(self.lot_worth(view)))
        high = view["high_bid"]
        want = 0 if high is None else high + 1
        if want <= limit and {"bid": want} in legal:
            return {"bid": want}
        return {"pass": True} if {"pass": True} in legal else {"bid": 0}

    def pay(self, view: dict, legal: list[dict]) -> dict:
        if {"done": True} in legal:
            return {"done": True}
        hand, payment = view["hand"], view["payment"]
        need = payment["bid"] - payment["given"]
        gives = [a for a in legal if "give" in a]
        waiting = {a["to"] for a in gives} - set(payment["received"])
        if waiting:
            gives = [a for a in gives if a["to"] in waiting] or gives
        cards = {a["give"] for a in gives}
        slots = max(1, len(waiting))
        enough = [c for c in cards if VALUES[c] * slots >= need]
        if need <= 0 or not enough:
            pool = cards if need <= 0 else {max(cards, key=lambda c: (VALUES[c] * (
                self.usefulness(c, hand) < 100), -self.usefulness(c, hand)))}
        else:
            pool = set(enough)
        card = min(pool, key=lambda c: (self.usefulness(c, hand), VALUES[c]))
        return next(a for a in gives if a["give"] == card)

    def special(self, view: dict, legal: list[dict], known: dict[int, Counter]) -> dict:
        hand = view["hand"]
        missing = [v for v in VEGETABLES if v not in hand]
        for vegetable in sorted(missing, key=lambda v: -VALUES[v]):
            holders = [s for s in self.others(view) if known[s][vegetable] > 0]
            for seat in holders:
                if {"souris": vegetable, "target": seat} in legal:
                    return {"souris": vegetable, "target": seat}
        sizes = view["hand_sizes"]
        for seat in sorted(self.others(view), key=lambda s: sizes[s]):
            if any(known[seat][v] for v in missing) and {"gertrude": seat} in legal:
                return {"gertrude": seat}
        return {"pass": True}

    def cancel(self, view: dict, legal: list[dict]) -> dict:
        if {"cancel": True} not in legal:
            return {"pass": True}
        hand, play = view["hand"], view["play"] or {}
        soup = [v for v in VEGETABLES if hand.count(v) == 1]
        if play.get("card") == "souris" and play.get("vegetable") in soup:
            return {"cancel": True}
        if play.get("card") == "gertrude" and len(soup) >= 2:
            return {"cancel": True}
        return {"pass": True}

    def give_back(self, view: dict, legal: list[dict]) -> dict:
        hand = view["hand"]
        return min(legal, key=lambda a: (self.usefulness(a["give"], hand), VALUES[a["give"]]))

    def keep(self, view: dict, legal: list[dict]) -> dict:
        hand = view["hand"]
        return max(legal, key=lambda a: (a["keep"] in VEGETABLES and a["keep"] not in hand,
                                         self.usefulness(a["keep"], hand + [a["keep"]]),
                                         VALUES[a["keep"]]))

    def navet(self, view: dict, legal: list[dict], known: dict[int, Counter]) -> dict:
        """Always spoil a rival's soup; aim at a vegetable it is known to hold, not one we hold."""
        options = [a for a in legal if "navet" in a]
        if not options:
            return {"pass": True}
        claimant = view["claimant"]
        known = known[claimant] if claimant is not None else Counter()
        hand = view["hand"]
        return max(options, key=lambda a: (known[a["navet"]] == 1, known[a["navet"]] > 0,
                                           -hand.count(a["navet"]), VALUES[a["navet"]]))


if __name__ == "__main__":
    from example_bots.run import main  # written by the SDK helper
    main(SoupeGertrudeHeuristic())
