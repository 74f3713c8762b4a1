"""Duck Soup — La soupe aux canards / Entensuppe (2 seats).

The rules page is `docs/rulings/duck-soup.md`; this module follows it.

A deal: 13 cards each, the rest a stock. The **low** phase is tricks with
drawing (the lowest card of the led suit wins, ace low); once the last stock
card is drawn the **high** phase plays the hands out (the highest wins, ace
high). A trick of two suits is worth 2, of one suit 1; the deal score is
low points × high points. Deal scores add up to `target` for a set; a deal
score of at least `pond` wins the set at once.

Decisions, each for `to_act` (``pending`` in the view says which):

* ``"lead"`` — ``{"play": c}``;
* ``"follow"`` — ``{"play": c}``, or on a card of the led rank
  ``{"play": c, "call": "coin"}`` (in ``"de"`` *only* with the call);
* ``"answer-coin"`` (the leader) — ``{"call": "soupe"}`` or
  ``{"play": c3, "call": "coin-coin"}`` with a third card of the rank;
* ``"answer-coin-coin"`` (the follower) — ``{"play": c}``, or the fourth card
  ``{"play": c4, "call": "soupe-aux-canards"}`` (in ``"de"`` only with the call).

A view (``view(seat)``; ``view(None)`` is the spectator's, with ``hand`` None):
``seat``, ``edition``, ``target``, ``pond``, ``sets``, ``deal`` and ``set``
(counted from 1), ``dealer``, ``phase`` (``"low"``/``"high"``), ``hand``,
``hand_sizes``, ``stock`` (a count), ``leader``, ``to_act``, ``pending``,
``trick`` (``[{"seat", "card", "call"}]`` in play order, ``call`` None when
there was none), ``points`` (``{"low": [s0, s1], "high": [s0, s1]}``, this
deal), ``set_totals``, ``set_points``, ``history`` (this deal's completed
tricks: ``{"phase", "cards": [{"seat", "card", "call"}, …], "winner",
"points", "case"}`` with ``case`` None, ``"A"``, ``"BA"``, ``"BBA"`` or
``"BBB"``; a coin-coin makes two entries) and ``deals`` (the finished deals,
as in ``result()["deals"]``).

``result()``: ``scores`` (set points, or the deal scores with ``deal_only``),
``ranks``, ``totals`` (each set's totals), ``set_points``, ``decks`` (every
deal's deck as dealt, top first), ``deals`` (``{"low", "high", "score",
"pond"}`` per deal) and ``capped`` (the match hit `MAX_DEALS`).

Choices this module settles where the rules page leaves them open:

* **Deals.** Deal k (0-based, across sets) is shuffled with
  ``Rng(seed, "duck-soup", "deal", k)``; the ``deck`` option replaces deal 0's
  shuffle only. Decks are made when a deal starts, but from (seed, options)
  alone, so they never depend on the actions played.
* **The leader's answer to a coin** is only ``soupe`` or ``coin-coin`` with a
  third card: neither book lets him play on in silence.
* **deal_only** scores the one deal (its ``pond`` entry says who would be in
  the pond) and adds it to the set totals, but awards no set points.
* **A bound on the match.** ``target`` and ``pond`` ≤ 10 000, ``sets`` ≤ 9,
  and a match ends after at most `MAX_DEALS` deals whatever happens. The book's
  options need a handful of deals (random play averages ~140 points a deal per
  seat); only equal totals or zero scores for ever, or the largest options
  between players who keep their scores low, could reach the cap. A match cut
  off by it ends as it stands: ``scores`` are the set points then (ties share
  a rank) and ``result()["capped"]`` is true.
* **Views** show the current deal's tricks and the finished deals' summaries
  (all public). ``hand`` is sorted by suit (S H D C), then from the best card
  of the current phase down (the ace first). Once over, a view stays on the
  last deal.
* ``result()`` is refused before the end (its ``decks`` hold deals to come).
"""

from __future__ import annotations

from typing import Any

from games import options as opts
from games.base import Game, State
from games.cards import RANKS_52, RANKS_ACE_HIGH, SUITS, Card, deck_52, rank_order
from games.ranking import ranks_of
from games.rng import Rng

NAME = "duck-soup"
SEATS = 2
HAND_SIZE = 13
DEALT = SEATS * HAND_SIZE  # deck[0..25] are dealt, deck[26] is the stock's top
MAX_DEALS = 1000
LOW, HIGH = "low", "high"

OPTIONS = (
    opts.Option("edition", "fr", opts.one_of("fr", "de"),
                '"fr": a call is a choice; "de": a card of the led rank (and the fourth '
                "after coin-coin) is played only with its call"),
    opts.Option("target", 250, opts.integer(1, 10_000), "set total that ends a set"),
    opts.Option("pond", 125, opts.integer(1, 10_000),
                "a deal score that wins the set at once (2 set points)"),
    opts.Option("sets", 1, opts.integer(1, 9), "set points that win the match"),
    opts.Option("deal_only", False, opts.boolean(),
                "play exactly one deal; the scores are the deal scores"),
    opts.Option("deck", None, opts.card_list(),
                "the first deal's 52 cards, top first (later deals are shuffled from the seed)"),
)

# -- card facts, looked up once (a Card is its notation string) -----------------
_RANK: dict[str, str] = {c: c.rank for c in deck_52()}  # by Card, which any text of it finds
_SUIT: dict[str, str] = {c: c.suit for c in deck_52()}
_LOW_ORDER, _HIGH_ORDER = rank_order(RANKS_52), rank_order(RANKS_ACE_HIGH)
#: how strongly a card beats others of its suit: the lower the better in the low phase
_STRENGTH = {
    LOW: {c: -_LOW_ORDER[c.rank] for c in deck_52()},
    HIGH: {c: _HIGH_ORDER[c.rank] for c in deck_52()},
}
#: the cards of each rank, to see at once that a hand holds none of the led rank
_OF_RANK = {r: frozenset(c for c in deck_52() if c.rank == r) for r in RANKS_52}
_SUIT_ORDER = rank_order(SUITS)
#: the view's hand order per phase: by suit, then the best card first
_HAND_KEY = {ph: {c: (_SUIT_ORDER[c.suit], -s) for c, s in st.items()}
             for ph, st in _STRENGTH.items()}


def trick_points(a: str, b: str) -> int:
    """2 for a trick of two suits, 1 for one suit."""
    return 1 if _SUIT[a] == _SUIT[b] else 2


def deal_deck(seed: int, options: dict[str, Any], k: int) -> list[Card]:
    """Deal k's deck, top first: a function of (seed, options) alone."""
    if k == 0 and options["deck"] is not None:
        return [Card(c) for c in options["deck"]]
    return Rng(seed, NAME, "deal", k).shuffled(deck_52())


class DuckSoupState(State):
    """What is true at the table; `view()` is the one place that hides it."""

    def __init__(self, game: Game, seats: int, seed: int, options: dict[str, Any]) -> None:
        super().__init__(game, seats, seed, options)
        if options["deck"] is not None:
            # plain strings, so a message names a card 'KC', not Card('KC')
            opts.check_deck("deck", options["deck"], [str(c) for c in deck_52()])
        self.edition: str = options["edition"]
        self.target: int = options["target"]
        self.pond: int = options["pond"]
        self.sets: int = options["sets"]
        self.deal_only: bool = options["deal_only"]
        self.decks: list[list[Card]] = []
        #: per finished deal: {"low", "high", "score", "pond"}
        self.deals: list[dict[str, Any]] = []
        self.totals: list[list[int]] = [[0, 0]]  # per set, the current one last
        self.set_points = [0, 0]
        self.capped = False
        self._start_deal()

    # -- the flow ----------------------------------------------------------
    @property
    def stock_size(self) -> int:
        return len(self.deck) - self.top

    def _start_deal(self) -> None:
        k = len(self.decks)
        self.deck = deal_deck(self.seed, self.options, k)
        self.decks.append(self.deck)
        self.dealer = (1 + k) % SEATS  # seat 1 deals first, then it alternates
        first = 1 - self.dealer
        self.hands: list[list[Card]] = [[], []]
        self.hands[first] = self.deck[0:DEALT:2]
        self.hands[self.dealer] = self.deck[1:DEALT:2]
        self.top = DEALT  # the stock is deck[top:], deck[top] on top
        self.phase = LOW
        self.points = {LOW: [0, 0], HIGH: [0, 0]}
        #: the cards on the table: (seat, card, call or None), in play order
        self.trick: list[tuple[int, Card, str | None]] = []
        self.history: list[dict[str, Any]] = []
        self.leader = first
        self.pending: str | None = "lead"
        self._to_act: int | None = first

    def _legal_actions(self) -> list[dict]:
        assert self._to_act is not None
        hand = self.hands[self._to_act]
        pending = self.pending
        if pending == "lead":
            return [{"play": c} for c in hand]
        rank = _RANK[self.trick[0][1]]
        if pending == "answer-coin":
            return [{"call": "soupe"}] + [
                {"play": c, "call": "coin-coin"} for c in hand if _RANK[c] == rank]
        if _OF_RANK[rank].isdisjoint(hand):  # the usual case: no card of the led rank
            return [{"play": c} for c in hand]
        call = "coin" if pending == "follow" else "soupe-aux-canards"
        silent = self.edition == "fr"
        out: list[dict] = []
        for c in hand:
            if _RANK[c] == rank:
                if silent:
                    out.append({"play": c})
                out.append({"play": c, "call": call})
            else:
                out.append({"play": c})
        return out

    def _apply(self, action: dict) -> None:
        assert self._to_act is not None
        assert self.pending is not None
        seat = self._to_act
        call = action.get("call")
        pending = self.pending
        if call is None and pending == "lead":  # the silent lead and follow first, inlined
            card = action["play"]
            self.hands[seat].remove(card)
            self.trick.append((seat, card, None))
            self.pending, self._to_act = "follow", 1 - seat
            return
        if call is None and pending == "follow":
            card = action["play"]
            self.hands[seat].remove(card)
            lead_seat, lead, lead_call = self.trick[0]
            # `trick_points`, inlined: an off-suit card never wins
            if _SUIT[card] == _SUIT[lead]:
                phase = self.phase
                strength = _STRENGTH[phase]
                winner = seat if strength[card] > strength[lead] else lead_seat
                points = 1
            else:
                phase = self.phase
                winner, points = lead_seat, 2
            # `_score`, inlined
            self.points[phase][winner] += points
            self.history.append({
                "phase": phase,
                "cards": [{"seat": lead_seat, "card": lead, "call": lead_call},
                          {"seat": seat, "card": card, "call": None}],
                "winner": winner,
                "points": points,
                "case": "A" if _RANK[card] == _RANK[lead] else None,
            })
            self._end_trick(winner, 1)
            return
        if call == "soupe":  # BA: the leader concedes the coin
            follower = 1 - self.trick[0][0]
            self._score(self.trick, follower, 2, "BA")
            self._end_trick(follower, 1)
            return
        card = action["play"]
        self.hands[seat].remove(card)
        self.trick.append((seat, card, call))
        if pending == "lead":
            self.pending, self._to_act = "follow", 1 - seat
        elif pending == "follow":  # a coin (a silent follow is handled above)
            self.pending, self._to_act = "answer-coin", 1 - seat
        elif pending == "answer-coin":  # BB: the leader's coin-coin
            self.pending, self._to_act = "answer-coin-coin", 1 - seat
        else:  # the follower's answer to the coin-coin: BBA or BBB
            third = self.trick[2][1]
            if call == "soupe-aux-canards":
                winner, case, second = seat, "BBA", 2
            else:
                winner, case, second = self.trick[0][0], "BBB", trick_points(third, card)
            self._score(self.trick[:2], winner, 2, case)
            self._score(self.trick[2:], winner, second, case)
            self._end_trick(winner, 2)

    def _score(self, plays: list[tuple], winner: int, points: int, case: str | None) -> None:
        """One completed trick (two plays): its points to the winner, its cards to the history."""
        self.points[self.phase][winner] += points
        self.history.append({
            "phase": self.phase,
            "cards": [{"seat": s, "card": c, "call": k} for s, c, k in plays],
            "winner": winner,
            "points": points,
            "case": case,
        })

    def _end_trick(self, winner: int, played: int) -> None:
        """Draw (low phase), switch phase on the last card, then the winner leads."""
        self.trick = []
        if self.phase == LOW:
            top, deck = self.top, self.deck
            each = 1 if len(deck) - top == 2 else played
            self.hands[winner].extend(deck[top:top + each])
            self.hands[1 - winner].extend(deck[top + each:top + 2 * each])
            self.top = top + 2 * each
            if self.top == len(deck):
                self.phase = HIGH
        elif not self.hands[winner]:
            self._end_deal()
            return
        self.leader = self._to_act = winner
        self.pending = "lead"

    def _end_deal(self) -> None:
        """Score the deal, settle the set (pond, then target), then deal again or stop."""
        low, high = self.points[LOW], self.points[HIGH]
        score = [low[0] * high[0], low[1] * high[1]]
        in_pond = [s for s in range(SEATS) if score[s] >= self.pond]
        pond = None
        if len(in_pond) == 1:
            pond = in_pond[0]
        elif len(in_pond) == 2 and score[0] != score[1]:
            pond = 0 if score[0] > score[1] else 1
        self.deals.append({"low": list(low), "high": list(high), "score": score, "pond": pond})
        totals = self.totals[-1]
        totals[0] += score[0]
        totals[1] += score[1]
        self.pending, self._to_act = None, None
        if self.deal_only:
            return
        set_winner, won = self._set_winner(pond, totals)
        if set_winner is not None:
            self.set_points[set_winner] += won
            if self.set_points[set_winner] >= self.sets:
                return
        if len(self.deals) >= MAX_DEALS:
            self.capped = True
            return
        if set_winner is not None:
            self.totals.append([0, 0])  # a new set starts from 0
        self._start_deal()

    def _set_winner(self, pond: int | None, totals: list[int]) -> tuple[int | None, int]:
        """Who wins the set after this deal and how many set points: pond, then target."""
        if pond is not None:
            return pond, 2
        if max(totals) >= self.target and totals[0] != totals[1]:
            winner = 0 if totals[0] > totals[1] else 1
            return winner, 2 if totals[1 - winner] < self.pond else 1
        return None, 0

    def _explain_illegal(self, action: Any) -> str | None:
        """Say which rule the action breaks, from what `to_act` sees."""
        seat, pending = self._to_act, self.pending
        assert seat is not None  # asked only while the match is on
        hand = self.hands[seat]
        shown = ", ".join(self._sorted(hand))
        if pending == "answer-coin":
            rank = _RANK[self.trick[0][1]]
            return (f"seat {seat} must answer the coin on the {rank}s: send "
                    f"{{'call': 'soupe'}} to concede, or {{'play': <a third {rank}>, "
                    f"'call': 'coin-coin'}}")
        if not isinstance(action, dict) or "play" not in action:
            return f"seat {seat} must play a card: send {{'play': card}} (your hand: {shown})"
        card, call = action["play"], action.get("call")
        if not isinstance(card, str) or card not in hand:
            return f"{card!r} is not in your hand: {shown}"
        extra = set(action) - {"play", "call"}
        if extra:
            return f"an action has only the keys 'play' and 'call', not {sorted(extra)!r}"
        if "call" in action and call is None:
            return "a play without a call has no 'call' key: send {'play': card}"
        if pending == "lead":
            return "the leader plays a card without a call: send {'play': card}"
        rank = _RANK[self.trick[0][1]]
        want = "coin" if pending == "follow" else "soupe-aux-canards"
        if _RANK[card] != rank:
            return (f"{card} is not a {rank}: only a card of the led rank is played "
                    f"with a call; send {{'play': {card!r}}}")
        if call is None and self.edition == "de":
            return (f"in the 'de' edition a {rank} is played only with its call: "
                    f"send {{'play': {card!r}, 'call': {want!r}}}")
        return f"the call with a {rank} now is {want!r}, not {call!r}"

    # -- what each seat sees -----------------------------------------------
    def _sorted(self, cards: list[Card]) -> list[Card]:
        return sorted(cards, key=_HAND_KEY[self.phase].__getitem__)

    def _view(self, seat: int | None) -> dict:
        """Public facts for everyone; a seat adds its own hand. Never the other
        hand, nor the stock's order (only its size)."""
        return {
            "seat": seat,
            "edition": self.edition,
            "target": self.target,
            "pond": self.pond,
            "sets": self.sets,
            "deal": len(self.decks),
            "set": len(self.totals),
            "dealer": self.dealer,
            "phase": self.phase,
            "hand": None if seat is None else self._sorted(self.hands[seat]),
            "hand_sizes": [len(h) for h in self.hands],
            "stock": self.stock_size,
            "leader": self.leader,
            "to_act": self._to_act,
            "pending": self.pending,
            "trick": [{"seat": s, "card": c, "call": k} for s, c, k in self.trick],
            "points": {ph: list(p) for ph, p in self.points.items()},
            "set_totals": list(self.totals[-1]),
            "set_points": list(self.set_points),
            "history": [{**h, "cards": [dict(p) for p in h["cards"]]} for h in self.history],
            "deals": [{k: (list(v) if isinstance(v, list) else v) for k, v in d.items()}
                      for d in self.deals],
        }

    def _result(self) -> dict:
        """The outcome (``decks`` holds every deal: `State.result` waits for the end)."""
        scores = list(self.deals[0]["score"]) if self.deal_only else list(self.set_points)
        return {
            "scores": scores,
            "ranks": ranks_of(scores),
            "totals": [list(t) for t in self.totals],
            "set_points": list(self.set_points),
            "decks": [list(d) for d in self.decks],
            "deals": [{k: (list(v) if isinstance(v, list) else v) for k, v in d.items()}
                      for d in self.deals],
            "capped": self.capped,
        }
