"""Winning: "À la soupe !", the turnip's answer, and ranks.

Wins are checked at fixed points (a payment's end, a purchase, a special
card) for a list of seats in the rules' order; the first seat that holds
three different vegetables and no fly claims. In the variant every other
seat is then asked, from the claimant's left, whether to play the turnip:
everyone is asked so nobody learns who holds it. A turnip that spoils the
soup lets the checks go on where they stood.
"""

from __future__ import annotations

from games.soupe_gertrude.cards import VEGETABLES, distinct_vegetables
from games.soupe_gertrude.fields import Fields


def can_win(hand: list[str]) -> bool:
    """Three different vegetables, and not the fly."""
    return "mouche" not in hand and len(distinct_vegetables(hand)) >= 3


class WinningMixin(Fields):
    """Win checks and the turnip round (mixed into `SoupeState`)."""

    def _run_checks(self, seats: list[int], after: str) -> None:
        """Check `seats` in order, then resume at step `after` if nobody won."""
        self.checks, self.after_checks = list(seats), after
        self._resume_checks()

    def _resume_checks(self) -> None:
        while self.checks:
            seat = self.checks.pop(0)
            if seat not in self.eliminated and can_win(self.hands[seat]):
                self._claim(seat)
                return
        self._continue(self.after_checks)

    def _claim(self, seat: int) -> None:
        self._event({"event": "soupe", "seat": seat})
        if not self.variant:
            self._win(seat)
            return
        self.claim = {"seat": seat, "asked": self.others(seat), "next": 0}
        self._ask("navet", self.claim["asked"][0])

    def _win(self, seat: int) -> None:
        self._event({"event": "win", "seat": seat,
                     "vegetables": distinct_vegetables(self.hands[seat])})
        self.claim = None
        self._end_manche(seat)

    def _navet_actions(self) -> list[dict]:
        assert self._to_act is not None
        actions: list[dict] = [{"pass": True}]
        if "navet" in self.hands[self._to_act]:
            actions += [{"navet": v} for v in VEGETABLES]
        return actions

    def _apply_navet(self, action: dict) -> None:
        claim, seat = self.claim, self._to_act
        assert claim is not None and seat is not None  # asked while a claim is checked
        claimant = claim["seat"]
        if "pass" in action:
            self._event({"event": "pass", "seat": seat, "decision": "navet"})
            claim["next"] += 1
            if claim["next"] < len(claim["asked"]):
                self._ask("navet", claim["asked"][claim["next"]])
            else:
                self._win(claimant)
            return
        vegetable = action["navet"]
        self.out.append(self._take(seat, "navet"))
        hit = vegetable in self.hands[claimant]
        self._event({"event": "navet", "seat": seat, "target": claimant,
                     "vegetable": vegetable, "hit": hit})
        if not hit:
            self._win(claimant)
            return
        self.out.append(self._take(claimant, vegetable))
        self.claim = None
        if can_win(self.hands[claimant]):
            self._win(claimant)
        else:
            self._resume_checks()
