"""The match: set-up, the drawer's turn, manches and the result.

`apply` is a short dispatch on the pending decision; each family of
decisions lives in its own mixin (auction, payment, special cards, winning,
views). Between decisions the engine runs the automatic steps itself (draw,
purchase, win checks) and always stops at the next question to a seat.

Steps that have to wait for a seat's answer (a win check interrupted by the
turnip round, a special card interrupted by a cancel) resume through
`_continue(step)`, a named step: "draw", "purchase", "lot_special" or
"end_turn". Naming the continuation keeps the state plain data, so a match
can be replayed and compared.
"""

from __future__ import annotations

from games.base import State
from games.errors import InvalidOptions
from games.ranking import ranks_of
from games.rng import Rng
from games.seats import around, next_in_game
from games.soupe_gertrude.auction import AuctionMixin
from games.soupe_gertrude.cards import (
    VEGETABLES,
    check_deck_option,
    count_cards,
    deal,
    distinct_vegetables,
    soup_value,
    total_value,
)
from games.soupe_gertrude.payment import PaymentMixin
from games.soupe_gertrude.specials import SpecialsMixin
from games.soupe_gertrude.views import ViewMixin
from games.soupe_gertrude.winning import WinningMixin


class SoupeState(AuctionMixin, PaymentMixin, SpecialsMixin, WinningMixin, ViewMixin, State):
    """One match of Soupe & Gertrude (one manche, or three)."""

    def __init__(self, game, seats: int, seed: int, options: dict) -> None:
        super().__init__(game, seats, seed, options)
        self.variant: bool = options["navet_mouche"]
        self.manches: int = options["manches"]
        if options["first"] >= seats:
            raise InvalidOptions(f"option 'first' must be a seat from 0 to {seats - 1}, "
                                 f"not {options['first']}")
        self.chosen_deck = None
        if options["deck"] is not None:
            self.chosen_deck = check_deck_option(options["deck"], seats, self.variant)
        self.max_bid: int = total_value(self.variant)
        self.decks: list[list[str]] = []
        self.totals: list[int] = [0] * seats
        self.manche_points: list[list[int]] = []
        self.log: list[tuple[frozenset | None, dict]] = []
        self.final_scores: list[int] | None = None
        self.final_eliminated: list[int] = []  # ranks: eliminated seats last (one manche only)
        self.pending: str | None = None
        self._set_up(1, options["first"])

    # -- the State contract --------------------------------------------------
    def _legal_actions(self) -> list[dict]:
        assert self.pending is not None
        return {
            "special": self._special_actions,
            "face_up": self._face_up_actions,
            "bid": self._bid_actions,
            "pay": self._pay_actions,
            "cancel": self._cancel_actions,
            "give-back": self._give_back_actions,
            "keep": self._keep_actions,
            "navet": self._navet_actions,
        }[self.pending]()

    def _apply(self, action: dict) -> None:
        assert self.pending is not None
        {
            "special": self._apply_special,
            "face_up": self._apply_face_up,
            "bid": self._apply_bid,
            "pay": self._apply_pay,
            "cancel": self._apply_cancel,
            "give-back": self._apply_give_back,
            "keep": self._apply_keep,
            "navet": self._apply_navet,
        }[self.pending](action)

    def _explain_illegal(self, action) -> str | None:
        """A rule-specific reason for the auction and payment (the rest: the generic message)."""
        assert self.pending is not None
        if not isinstance(action, dict):
            return None
        explain = {"bid": self._explain_bid, "pay": self._explain_pay}.get(self.pending)
        return explain(action) if explain else None

    # -- small helpers shared by the mixins -----------------------------------
    def _ask(self, pending: str, seat: int) -> None:
        self.pending, self._to_act = pending, seat

    def _event(self, event: dict, seats=None) -> None:
        """Log an event: public, or seen only by `seats` (and never by spectators)."""
        self.log.append((None if seats is None else frozenset(seats), event))

    def in_game(self) -> list[int]:
        return [s for s in range(self.seats) if s not in self.eliminated]

    def others(self, seat: int) -> list[int]:
        """The other seats in the game, from `seat`'s left round the table."""
        return list(around(seat + 1, self.seats, skip=set(self.eliminated) | {seat}))

    def _take(self, seat: int, card: str) -> str:
        self.hands[seat].remove(card)
        return card

    def cards_in_play(self):
        """Every card's whereabouts counted together (for the conservation check)."""
        held = self.payment["held"] if self.payment else []
        return count_cards([*self.hands, self.pile, self.lot, self.out, held])

    # -- set-up and the drawer's turn -----------------------------------------
    def _set_up(self, manche: int, starter: int) -> None:
        """A fresh set-up of every seat; eliminated seats come back."""
        dealt = deal(self.seats, self.seed, manche, self.variant,
                     self.chosen_deck if manche == 1 else None)
        self.manche, self.starter = manche, starter
        self.hands = [list(h) for h in dealt.hands]
        self.pile = list(dealt.pile)
        self.out: list[str] = []
        self.eliminated: list[int] = []
        self.lot: list[str] = []
        self.face_up: str | None = None
        self.auction: dict | None = None
        self.payment: dict | None = None
        self.special: dict | None = None
        self.play: dict | None = None
        self.claim: dict | None = None
        self.lot_specials: list[str] = []
        self.reshuffles = 0  # counters name the seeded streams of in-play randomness
        self.gertrudes = 0
        self.decks.append(dealt.deck)
        self._event({"event": "manche", "manche": manche, "starter": starter})
        self._start_turn(starter)

    def _start_turn(self, drawer: int) -> None:
        """Step 1: the drawer is always asked about a special card."""
        self.drawer = drawer
        self.lot, self.face_up, self.auction, self.payment = [], None, None, None
        self._event({"event": "turn", "drawer": drawer, "pile": len(self.pile)})
        self._ask_special(drawer, ("souris", "gertrude"), after="draw")

    def _draw(self) -> None:
        """Step 2: three cards, drawn again while all are vegetables and the pile has other cards."""
        if not self.pile:
            self._end_manche(None)
            return
        while True:
            n = min(3, len(self.pile))
            drawn, self.pile = self.pile[:n], self.pile[n:]
            only_vegetables = all(c in VEGETABLES for c in drawn)
            if n == 3 and only_vegetables and any(c not in VEGETABLES for c in self.pile):
                self._event({"event": "redraw", "seat": self.drawer, "cards": list(drawn)})
                self.reshuffles += 1
                rng = Rng(self.seed, "manche", self.manche, "reshuffle", self.reshuffles)
                self.pile = rng.shuffled(self.pile + drawn)
                continue
            break
        self.lot = drawn
        self._event({"event": "draw", "seat": self.drawer, "count": n})
        self._ask("face_up", self.drawer)

    def _face_up_actions(self) -> list[dict]:
        return [{"face_up": c} for c in dict.fromkeys(sorted(self.lot))]

    def _apply_face_up(self, action: dict) -> None:
        """Step 3: one card of the lot lies face up; then the drawer opens the auction."""
        self.face_up = action["face_up"]
        self._event({"event": "face_up", "seat": self.drawer, "card": self.face_up,
                     "count": len(self.lot)})
        self._open_auction(self.drawer)

    def _purchase(self) -> None:
        """Step 6: the lot is revealed and joins the winner's hand."""
        assert self.payment is not None
        winner = self.payment["winner"]
        self.lot_specials = [c for c in ("souris", "gertrude") if c in self.lot]
        self._event({"event": "purchase", "seat": winner, "cards": sorted(self.lot)})
        self.hands[winner].extend(self.lot)
        self.lot, self.face_up = [], None
        self._run_checks([winner], after="lot_special")

    def _lot_special(self) -> None:
        """Step 7: a souris or gertrude bought in the lot may be played at once."""
        assert self.payment is not None
        if self.lot_specials:
            self._ask_special(self.payment["winner"], tuple(self.lot_specials), after="end_turn")
        else:
            self._end_turn()

    def _end_turn(self) -> None:
        """Step 8: the seat to the drawer's left draws next (not the auction's winner)."""
        drawer = next_in_game(self.drawer, self.seats, set(self.eliminated))
        assert drawer is not None  # a turn ends with at least two seats in the game
        self._start_turn(drawer)

    def _continue(self, step: str) -> None:
        {
            "draw": self._draw,
            "purchase": self._purchase,
            "lot_special": self._lot_special,
            "end_turn": self._end_turn,
        }[step]()

    # -- the end of a manche and of the match -----------------------------------
    def _end_manche(self, winner: int | None) -> None:
        """Score the manche, then deal the next one or end the match."""
        alive = self.in_game()
        points = [len(distinct_vegetables(self.hands[s]))
                  if s in alive and "mouche" not in self.hands[s] else 0
                  for s in range(self.seats)]
        values = [soup_value(self.hands[s]) if s in alive else 0 for s in range(self.seats)]
        self.manche_points.append(points)
        self._event({
            "event": "manche_end", "manche": self.manche, "winner": winner,
            "vegetables": [distinct_vegetables(h) for h in self.hands],
            "values": values, "points": points,
        })
        self.pending = self._to_act = None
        if self.manches == 1:
            self.final_scores = ([int(s == winner) for s in range(self.seats)]
                                 if winner is not None else values)
            self.final_eliminated = list(self.eliminated)
            return
        self.totals = [t + p for t, p in zip(self.totals, points, strict=True)]
        if self.manche == self.manches:
            self.final_scores = list(self.totals)
            return
        self._set_up(self.manche + 1, winner if winner is not None else self._top_scorer(points))

    def _top_scorer(self, points: list[int]) -> int:
        """After an empty pile: the top scorer, the first from the last starter's left among equals."""
        order = list(around(self.starter + 1, self.seats))
        best = max(points)
        return next(s for s in order if points[s] == best)

    def _result(self) -> dict:
        scores = list(self.final_scores or [0] * self.seats)
        eliminated = self.final_eliminated
        keys = [(0, eliminated.index(s)) if s in eliminated else (1, scores[s])
                for s in range(self.seats)]
        return {
            "scores": scores,
            "ranks": ranks_of(keys),
            "decks": [list(d) for d in self.decks],
            "manche_points": [list(p) for p in self.manche_points],
        }
