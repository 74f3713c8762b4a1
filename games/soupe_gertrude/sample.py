"""Soupe & Gertrude's `sample()`: the other hands, the hidden lot, the pile and the cards out.

`knowledge.Knowledge` reads what the seat's log says about each hidden card;
this module deals the unknown cards accordingly — uniform among the deals that
respect every slot and the bids' bounds on whole hands (a seat's hand is worth
at least what it bid and could pay, since; an eliminated hand was worth less
than its bid), by `bounded.BoundedDeal` — then keeps only deals that respect
the other facts about whole hands the rules reveal:

* no other seat holds a winning soup (three different vegetables, no fly)
  unless it is still to be checked (a payment's receivers, a souris's player
  before it gives back, the seats after a claimant) — every seat is checked
  after each change of its hand, and a winner ends the manche;
* a claimant the turnip round is about holds a winning soup;
* three cards drawn for a lot are not all vegetables while the pile holds
  other cards (they would have been shown and shuffled back).

Then it rebuilds the engine's state around them: the auction, the payment,
the special card in play and the claim, from the view and its log. Private
events between two other seats are not part of any sample's log (this seat
never saw them), and a sample's ``result()["decks"]`` shows stand-ins for the
manches dealt so far (`_STAND_IN`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from games.base import Game, State
from games.sampling import Inconsistent, checked_view, require, sample_seed
from games.seats import around
from games.soupe_gertrude.bounded import Bound, BoundedDeal
from games.soupe_gertrude.cards import MONEY, VALUES, VEGETABLES, full_deck, hand_value, sort_cards
from games.soupe_gertrude.knowledge import PRIVATE, Knowledge
from games.soupe_gertrude.state import SoupeState
from games.soupe_gertrude.winning import can_win

#: deals drawn before settling for one that breaks a whole-hand fact (a safety net)
MAX_TRIES = 200
SPECIALS = ("souris", "gertrude")
#: what a sample's ``result()["decks"]`` shows for manches already dealt (no view shows
#: how they were dealt): the box in a fixed order, money first as a deal starts
_STAND_IN = {v: tuple(sorted(full_deck(v), key=lambda c: c not in MONEY)) for v in (False, True)}


def _who(event: dict) -> frozenset | None:
    """Who sees a logged event: everyone, or the seats the engine logs a private one for."""
    keys = PRIVATE.get(event["event"])
    return None if keys is None else frozenset(event[k] for k in keys)


def _since_last(events: list[dict], kind: str) -> list[dict]:
    """The events after the last one of `kind` (all of them if there is none)."""
    for i in range(len(events) - 1, -1, -1):
        if events[i]["event"] == kind:
            return events[i + 1:]
    return events


class SoupeSampler:
    """What one view says, worked out once; `sample(seed)` deals the rest."""

    def __init__(self, game: Game, view: dict, options: dict | None) -> None:
        view, self.seat = checked_view(view, lambda v: v["seats"])
        try:
            self._read(game, view)
        except (KeyError, TypeError, AttributeError, IndexError, StopIteration) as exc:
            require(False, f"not a soupe-gertrude view: {exc!r}")

    def _read(self, game: Game, view: dict) -> None:
        self.game, self.view, me = game, view, self.seat
        know = self.know = Knowledge(view)
        self.turn_events = _since_last(know.events, "turn")
        self.hand = list(view["hand"])
        for s, hand in know.hands.items():
            require(hand.size() == view["hand_sizes"][s] or s in view["eliminated"],
                    f"seat {s}'s hand size does not follow from the log")
        lot = view["lot"]
        self.lot_known = list(lot.get("cards") or ([] if lot["face_up"] is None else [lot["face_up"]]))
        lot_hidden = lot["count"] - len(self.lot_known)
        # a redraw's cards are in the pile or the lot drawn after it: those not seen in the lot
        # are in the pile or among the lot's hidden cards
        pile_known = know.pile_known - Counter(self.lot_known)
        # the unknown cards: the whole box less every card whose place is known
        unknown = Counter(full_deck(view["navet_mouche"]))
        unknown -= Counter(self.hand)
        for hand in know.hands.values():
            unknown -= hand.known
        placed = know.out_known + pile_known + Counter(self.lot_known) + Counter(know.held)
        unknown -= placed
        others = [s for s in know.hands if know.hands[s].slots]
        self.others = others
        region = view["pile"] + lot_hidden - sum(pile_known.values())
        require(region >= 0, "the pile cannot hold the redrawn cards")
        slots = [(s, slot) for s in others for slot in know.hands[s].slots]
        out_free = sum(unknown.values()) - len(slots) - len(know.out_slots) - region
        require(out_free >= 0 and (out_free == 0 or me in view["eliminated"]),
                "the cards do not add up")
        cards = sorted(unknown.elements())
        sizes = [1] * len(slots) + [1] * len(know.out_slots) + [region, out_free]
        allowed: list[Any] = [slot for _, slot in slots] + list(know.out_slots) + [None, None]
        self.slot_seats = [s for s, _ in slots]
        self.deal = BoundedDeal(cards, sizes, allowed, self._bounds(know, view), VALUES)
        self.pile_known = sorted(pile_known.elements())
        self.lot_hidden = lot_hidden
        self.exempt, self.checks, self.after_checks = self._pending_checks(view)

    def _bounds(self, know: Knowledge, view: dict) -> list[Bound]:
        """The bids' facts as bounds on the values of the deal's zones: (zone indices,
        least, most) — the least a seat's slots must be worth for its hand to reach its
        bound, the most an eliminated hand's slots may be worth."""
        n_slots = len(self.slot_seats)
        bounds: list[Bound] = []
        for s, lower in know.lower.items():
            if s in view["eliminated"]:
                continue
            least = lower - hand_value(know.hands[s].known.elements())
            zones = [i for i, seat in enumerate(self.slot_seats) if seat == s]
            if least > 0:
                require(bool(zones), f"seat {s}'s hand is worth less than it bid")
                bounds.append((zones, least, None))
        for slots, most in know.out_bounds:
            if len(slots):
                bounds.append(([n_slots + i for i in slots], 0, most))
        return bounds

    # -- the engine's bookkeeping, from the view -------------------------------------
    def _pending_checks(self, view: dict) -> tuple[set[int], list[int], str]:
        """Seats not yet checked since their hand changed; the checks left and what follows."""
        pending, events = view["pending"], self.turn_events
        if pending == "pay" and view["payment"]:
            return set(view["payment"]["received"]), [], "end_turn"
        if pending == "give-back":
            return {view["play"]["seat"]}, [], "end_turn"
        if pending != "navet":
            return set(), [], "end_turn"
        claimant = view["claimant"]
        i = max(i for i, e in enumerate(events) if e["event"] == "soupe" and e["seat"] == claimant)
        trigger = next(e for e in reversed(events[:i]) if e["event"] in (
            "paid", "purchase", "souris_result", "give_back", "kept", "cancel"))
        if trigger["event"] == "paid":
            seats = self._receivers(trigger["seat"]) + [trigger["seat"]]
            after = "purchase"
        elif trigger["event"] == "purchase":
            seats, after = [trigger["seat"]], "lot_special"
        else:
            play = next(e for e in reversed(events[:i]) if e["event"] in SPECIALS)
            seats, after = [play["seat"], play["target"]], self._special_offer()[1]
        checks = seats[seats.index(claimant) + 1:]
        return set(checks), checks, after

    def _receivers(self, winner: int) -> list[int]:
        paid = _since_last(self.turn_events, "sold")
        received = {e["to"] for e in paid if e["event"] == "give"}
        others = around(winner + 1, self.view["seats"], set(self.view["eliminated"]) | {winner})
        return [s for s in others if s in received]

    def _special_offer(self) -> tuple[tuple[str, ...], str]:
        """The special cards last offered and the step after them: at the turn's start,
        or after a purchase (the lot's souris or gertrude)."""
        purchases = [e for e in self.turn_events if e["event"] == "purchase"]
        if purchases:
            return tuple(c for c in SPECIALS if c in purchases[-1]["cards"]), "end_turn"
        return SPECIALS, "draw"

    # -- a sample ----------------------------------------------------------------------
    def sample(self, seed: int) -> SoupeState:
        rng = sample_seed(seed)
        know = self.know
        for _ in range(MAX_TRIES):
            zones = self.deal.draw(rng)
            hands = {s: list(h.known.elements()) for s, h in know.hands.items()}
            for s, zone in zip(self.slot_seats, zones, strict=False):
                hands[s].extend(zone)
            n_slots = len(self.slot_seats)
            out = list(know.out_known.elements())
            for zone in zones[n_slots:n_slots + len(know.out_slots)]:
                out.extend(zone)
            region, out_free = zones[-2], zones[-1]
            out += out_free
            region = rng.shuffled(region + self.pile_known)
            lot = self.lot_known + region[:self.lot_hidden]
            pile = region[self.lot_hidden:]
            if self._possible(hands, lot, pile):
                break
        state = self._build(seed, rng, hands, lot, pile, out)
        return state

    def _possible(self, hands: dict[int, list[str]], lot: list[str], pile: list[str]) -> bool:
        view = self.view
        for s, hand in hands.items():
            if s in view["eliminated"] or s in self.exempt:
                continue
            if view["pending"] == "navet" and s == view["claimant"]:
                if not can_win(hand):
                    return False
            elif can_win(hand):
                return False
        if (len(lot) == 3 and all(c in VEGETABLES for c in lot)
                and any(c not in VEGETABLES for c in pile)):
            return False
        return True

    def _build(self, seed: int, rng: Any, hands: dict[int, list[str]], lot: list[str],
               pile: list[str], out: list[str]) -> SoupeState:
        view, me, seats = self.view, self.seat, self.view["seats"]
        know = self.know
        state = SoupeState.__new__(SoupeState)
        options = {"navet_mouche": view["navet_mouche"], "manches": view["manches"], "first": 0,
                   "deck": None}
        State.__init__(state, self.game, seats, seed, options)
        state.variant, state.manches = view["navet_mouche"], view["manches"]
        state.chosen_deck = None
        state.max_bid = view["max_bid"]
        state.manche = view["manche"]
        state.starter = know.events[0]["starter"]
        state.decks = [list(_STAND_IN[state.variant]) for _ in range(state.manche)]
        state.totals = list(view["scores"])
        state.manche_points = [list(p) for p in view["manche_points"]]
        state.log = [(_who(e), e) for e in view["log"]]
        state.final_scores, state.final_eliminated = None, []
        state.hands = [list(self.hand) if s == me else hands[s] for s in range(seats)]
        state.pile, state.out, state.lot = pile, out, lot
        state.eliminated = list(view["eliminated"])
        state.face_up = view["lot"]["face_up"]
        state.drawer = view["drawer"]
        state.reshuffles = sum(1 for e in know.events if e["event"] == "redraw")
        state.gertrudes = sum(1 for e in know.events if e["event"] == "kept") + (view["pending"] == "keep")
        state.pending, state._to_act = view["pending"], view["to_act"]
        state.checks, state.after_checks = list(self.checks), self.after_checks
        events = self.turn_events
        allowed, after = self._special_offer()
        state.special = {"seat": view["to_act"], "allowed": allowed, "after": after}
        purchases = [e for e in events if e["event"] == "purchase"]
        state.lot_specials = list(allowed) if purchases else []
        state.auction = None
        if view["pending"] == "bid" or any(e["event"] == "face_up" for e in events):
            bids = [dict(b) for b in view["bids"]]
            last = max((i for i, b in enumerate(bids) if "bid" in b and not b.get("void")), default=-1)
            state.auction = {"high": view["high_bid"], "bidder": view["high_bidder"], "bids": bids,
                             "passed": {b["seat"] for b in bids[last + 1:] if "pass" in b}}
        state.payment = None
        sold = [e for e in events if e["event"] == "sold"]
        if sold:
            gives = [e for e in _since_last(events, "sold") if e["event"] == "give"]
            state.payment = {"winner": sold[-1]["seat"], "bid": sold[-1]["bid"],
                             "given": sum(VALUES[e["card"]] for e in gives),
                             "received": list(dict.fromkeys(e["to"] for e in gives)),
                             "held": list(know.held)}
        state.play = None
        if view["play"] is not None:
            state.play = dict(view["play"])
            state.special["seat"] = state.play["seat"]
            if view["pending"] == "keep":
                state.play["drawn"] = self._drawn(rng, state)
        state.claim = None
        if view["pending"] == "navet":
            claimant = view["claimant"]
            asked = state.others(claimant)
            state.claim = {"seat": claimant, "asked": asked, "next": asked.index(view["to_act"])}
        if view["pending"] is None:
            ends = [e for e in know.events if e["event"] == "manche_end"]
            end: dict[str, Any] = ends[-1] if ends else {"winner": None, "values": [0] * seats}
            state.final_scores = (list(view["scores"]) if view["manches"] > 1 else
                                  [int(s == end["winner"]) for s in range(seats)]
                                  if end["winner"] is not None else list(end["values"]))
            state.final_eliminated = list(view["eliminated"])
        return state

    def _drawn(self, rng: Any, state: SoupeState) -> list[str]:
        """The cards a Gertrude drew: seen if this seat took part, else drawn from the target's hand."""
        play = state.play
        assert play is not None  # a Gertrude is being played
        if self.seat in (play["seat"], play["target"]):
            drawn = next(e for e in reversed(self.turn_events) if e["event"] == "drawn")
            return list(drawn["cards"])
        hand = state.hands[play["target"]]
        for _ in range(MAX_TRIES):
            drawn = sort_cards(rng.sample(sort_cards(hand), min(3, len(hand))))
            if any(c != "mouche" for c in drawn):
                return drawn
        raise Inconsistent("a Gertrude drew nothing to keep")
