"""Step 4, the auction, turned into turns a referee can run.

The table game's open outcry becomes a rotation from the drawer's left (the
drawer included) that skips the high bidder; it closes when every other seat
has passed in a row since the last bid. A bid above the bidder's hand value
eliminates the bidder at once and is void: it neither raises the price nor
breaks a run of passes. Every whole bid up to the value of all the cards is
a listed action, so the list is finite and a bot can overbid (and lose) as a
person at the table could.
"""

from __future__ import annotations

from games.seats import next_in_game
from games.soupe_gertrude.cards import hand_value
from games.soupe_gertrude.fields import Fields


def bid_caution(view: dict, action: dict) -> str | None:
    """A bid the bidder cannot pay (above its hand's value) eliminates it: said from its own
    view, whose `hand_value` is the value `_apply_bid` compares the bid with."""
    bid, worth = action.get("bid"), view.get("hand_value")
    if type(bid) is int and type(worth) is int and bid > worth:
        return f"more than your hand is worth ({worth}): you cannot pay it, and are eliminated"
    return None


class AuctionMixin(Fields):
    """The auction's decisions and eliminations (mixed into `SoupeState`)."""

    _bid_cache: list[dict] | None = None  # see `_every_bid`

    def _open_auction(self, opener: int) -> None:
        self.auction = {"high": None, "bidder": None, "passed": set(), "bids": []}
        self._ask("bid", opener)

    def _bid_actions(self) -> list[dict]:
        assert self.auction is not None
        bids = self._every_bid()
        high = self.auction["high"]
        if high is None:  # an opening: a bid of any amount, no pass
            return bids[:]
        return [{"pass": True}, *bids[high + 1:]]

    def _every_bid(self) -> list[dict]:
        """``{"bid": n}`` for n from 0 to `max_bid`, built once per match.

        Every auction lists up to ~160 of these, often more than once a turn
        (a void opening passes the opening on), and they depend on n alone, so
        the match keeps one set and lists slices of it. Listed actions are not
        to be mutated (`State.legal_actions`), so sharing them is safe.
        """
        if self._bid_cache is None:
            self._bid_cache = [{"bid": n} for n in range(self.max_bid + 1)]
        return self._bid_cache

    def _explain_bid(self, action: dict) -> str | None:
        """Why a bid is refused, from public facts only (the auction is public)."""
        assert self.auction is not None
        high = self.auction["high"]
        if "pass" in action and high is None:
            return "an opening cannot be passed: bid 0 or more"
        bid = action.get("bid")
        if type(bid) is not int:
            return "a bid is {\"bid\": n} with a whole number n, or {\"pass\": true}"
        if high is not None and bid <= high:
            return f"a raise must be above the high bid of {high}"
        if bid < 0 or bid > self.max_bid:
            return f"bids go from 0 to {self.max_bid}"
        return None

    def _apply_bid(self, action: dict) -> None:
        seat, auction = self._to_act, self.auction
        assert seat is not None and auction is not None  # a bid is asked during the auction
        if "pass" in action:
            auction["passed"].add(seat)
            auction["bids"].append({"seat": seat, "pass": True})
            self._event({"event": "pass", "seat": seat, "decision": "bid"})
            self._next_bidder(seat)
            return
        bid = action["bid"]
        if bid > hand_value(self.hands[seat]):
            auction["bids"].append({"seat": seat, "bid": bid, "void": True})
            if self._eliminate(seat, bid):  # the last seat left has won
                return
            if auction["high"] is None:  # the opening was void: the next seat opens
                opener = next_in_game(seat, self.seats, set(self.eliminated))
                assert opener is not None  # the bidder's elimination left two seats at least
                self._ask("bid", opener)
            else:
                self._next_bidder(seat)
            return
        auction["high"], auction["bidder"], auction["passed"] = bid, seat, set()
        auction["bids"].append({"seat": seat, "bid": bid})
        self._event({"event": "bid", "seat": seat, "bid": bid})
        self._next_bidder(seat)

    def _next_bidder(self, seat: int) -> None:
        """Ask the next seat round the table, or close once all others passed in a row."""
        auction = self.auction
        assert auction is not None
        if set(self.others(auction["bidder"])) <= auction["passed"]:
            self._event({"event": "sold", "seat": auction["bidder"], "bid": auction["high"]})
            self._start_payment(auction["bidder"], auction["high"])
            return
        bidder = next_in_game(seat, self.seats, set(self.eliminated) | {auction["bidder"]})
        assert bidder is not None  # someone besides the high bidder has not passed
        self._ask("bid", bidder)

    def _eliminate(self, seat: int, bid: int) -> bool:
        """A bid the seat cannot pay: its cards leave unseen. True if that ended the manche."""
        self.out.extend(self.hands[seat])
        self.hands[seat] = []
        self.eliminated.append(seat)
        self._event({"event": "eliminated", "seat": seat, "bid": bid})
        alive = self.in_game()
        if len(alive) == 1:
            self._event({"event": "last_seat", "seat": alive[0]})
            self._end_manche(alive[0])
            return True
        return False
