"""The special cards: souris (ask a seat for a vegetable) and Gertrude (rob three cards).

A special card is offered at the drawer's turn start (always asked, so the
question itself reveals nothing) and to an auction's winner who bought one.
The target is always asked whether to cancel, for the same reason. What
changes hands privately is logged for the two seats only: the card given back
to a souris's target, the cards Gertrude drew and the one kept, and the hand
shown after a failed souris (seen by the souris's player alone).
"""

from __future__ import annotations

from games.rng import Rng
from games.soupe_gertrude.cards import VEGETABLES, sort_cards
from games.soupe_gertrude.fields import Fields


class SpecialsMixin(Fields):
    """Special-card decisions (mixed into `SoupeState`)."""

    def _ask_special(self, seat: int, allowed: tuple[str, ...], after: str) -> None:
        """Offer `allowed` special cards to `seat`; then resume at step `after`."""
        self.special = {"seat": seat, "allowed": allowed, "after": after}
        self._ask("special", seat)

    def _special_actions(self) -> list[dict]:
        assert self.special is not None
        seat, allowed = self.special["seat"], self.special["allowed"]
        hand, targets = self.hands[seat], self.others(seat)
        actions: list[dict] = [{"pass": True}]
        if "souris" in allowed and "souris" in hand:
            actions += [{"souris": v, "target": t} for v in VEGETABLES for t in targets]
        if "gertrude" in allowed and "gertrude" in hand:
            actions += [{"gertrude": t} for t in targets]
        return actions

    def _apply_special(self, action: dict) -> None:
        assert self.special is not None
        seat = self.special["seat"]
        if "pass" in action:
            self._event({"event": "pass", "seat": seat, "decision": "special"})
            self._continue(self.special["after"])
            return
        card = "souris" if "souris" in action else "gertrude"
        target = action["target"] if card == "souris" else action["gertrude"]
        self.out.append(self._take(seat, card))
        self.play = {"card": card, "seat": seat, "target": target,
                     "vegetable": action.get("souris")}
        self._event({"event": card, "seat": seat, "target": target,
                     **({"vegetable": action["souris"]} if card == "souris" else {})})
        self._ask("cancel", target)

    # -- the target's reaction -------------------------------------------------
    def _cancel_actions(self) -> list[dict]:
        assert self.play is not None
        actions: list[dict] = [{"pass": True}]
        if "gertrude" in self.hands[self.play["target"]]:
            actions.append({"cancel": True})
        return actions

    def _apply_cancel(self, action: dict) -> None:
        play = self.play
        assert play is not None
        if "cancel" in action:  # a cancelling Gertrude cannot itself be cancelled
            self.out.append(self._take(play["target"], "gertrude"))
            self._event({"event": "cancel", "seat": play["target"], "card": play["card"]})
            self._special_done()
        elif play["card"] == "souris":
            self._resolve_souris()
        else:
            self._resolve_gertrude()

    def _resolve_souris(self) -> None:
        play = self.play
        assert play is not None
        seat, target, vegetable = play["seat"], play["target"], play["vegetable"]
        hit = vegetable in self.hands[target]
        self._event({"event": "souris_result", "seat": seat, "target": target,
                     "vegetable": vegetable, "taken": hit})
        if not hit:
            self._event({"event": "shown", "seat": target, "to": seat,
                         "hand": sort_cards(self.hands[target])}, seats=[seat])
            self._special_done()
            return
        self.hands[seat].append(self._take(target, vegetable))
        if self._give_back_actions():
            self._ask("give-back", seat)
        else:
            self._event({"event": "give_back", "seat": seat, "to": target, "card": None})
            self._special_done()

    def _give_back_actions(self) -> list[dict]:
        """Any card but the id just taken and the fly."""
        assert self.play is not None
        barred = {self.play["vegetable"], "mouche"}
        return [{"give": c} for c in dict.fromkeys(sorted(self.hands[self.play["seat"]]))
                if c not in barred]

    def _apply_give_back(self, action: dict) -> None:
        assert self.play is not None
        seat, target = self.play["seat"], self.play["target"]
        card = self._take(seat, action["give"])
        self.hands[target].append(card)
        self._event({"event": "given_back", "seat": seat, "to": target, "card": card},
                    seats=[seat, target])
        self._event({"event": "give_back", "seat": seat, "to": target})
        self._special_done()

    def _resolve_gertrude(self) -> None:
        """Three random cards of the target's hand (seeded), seen by the two seats."""
        play = self.play
        assert play is not None
        seat, target = play["seat"], play["target"]
        hand = sort_cards(self.hands[target])
        self.gertrudes += 1
        rng = Rng(self.seed, "manche", self.manche, "gertrude", self.gertrudes)
        drawn = sort_cards(rng.sample(hand, min(3, len(hand))))
        play["drawn"] = drawn
        self._event({"event": "drawn", "seat": seat, "target": target, "cards": drawn},
                    seats=[seat, target])
        if any(c != "mouche" for c in drawn):
            self._ask("keep", seat)
        else:
            self._event({"event": "kept", "seat": seat, "target": target, "drawn": len(drawn),
                         "taken": False})
            self._special_done()

    def _keep_actions(self) -> list[dict]:
        assert self.play is not None
        return [{"keep": c} for c in dict.fromkeys(self.play["drawn"]) if c != "mouche"]

    def _apply_keep(self, action: dict) -> None:
        assert self.play is not None
        seat, target = self.play["seat"], self.play["target"]
        card = action["keep"]
        self.hands[seat].append(self._take(target, card))
        self._event({"event": "kept_card", "seat": seat, "target": target, "card": card},
                    seats=[seat, target])
        self._event({"event": "kept", "seat": seat, "target": target,
                     "drawn": len(self.play["drawn"]), "taken": True})
        self._special_done()

    def _special_done(self) -> None:
        """After a special card: check its player, then the target; then resume."""
        assert self.special is not None
        assert self.play is not None
        seat, target = self.play["seat"], self.play["target"]
        self.play = None
        self._run_checks([seat, target], after=self.special["after"])
