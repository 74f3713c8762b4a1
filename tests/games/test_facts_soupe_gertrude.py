"""Soupe & Gertrude: the facts of its rules page's "What a seat can infer", checked on
true states and on samples (`tests/games/fact_checks.py`), and the uniformity of
`sample()` where a bid bounds a hand's value."""

from __future__ import annotations

import math
import random
from collections import Counter
from itertools import combinations

import pytest

import games
from example_bots.soupe_gertrude import SoupeGertrudeHeuristic
from games.soupe_gertrude.cards import MONEY, full_deck, hand_value
from games.soupe_gertrude.knowledge import Knowledge
from tests.games.fact_checks import Fact, check_facts, positions
from tests.games.test_sample_uniformity import P_MIN, chi_square_p
from tests.games.test_soupe_gertrude_support import make_deck

GAME = games.get("soupe-gertrude")


def facts(view: dict) -> list[Fact]:
    """The bids' facts, read from the view's own fields (not from `Knowledge`):

    * in an auction, a seat still in the game holds a hand worth at least its
      highest bid (a bid it could not pay would have eliminated it);
    * during a payment, the winner's hand is worth at least what is still owed;
    * a souris's player that gave nothing back holds only the vegetable it took
      and the fly (when the give-back is the last thing that happened).
    """
    me, out = view["seat"], []
    if view["pending"] == "bid":
        best: dict[int, int] = {}
        for b in view["bids"]:
            if "bid" in b and not b.get("void"):
                best[b["seat"]] = max(best.get(b["seat"], 0), b["bid"])
        for seat, bid in best.items():
            if seat != me and seat not in view["eliminated"]:
                out.append((f"seat {seat} bid {bid}: its hand is worth that",
                            lambda s, seat=seat, bid=bid: hand_value(s.hands[seat]) >= bid))
    payment = view["payment"]
    if view["pending"] == "pay" and payment and payment["winner"] != me:
        owed, winner = payment["bid"] - payment["given"], payment["winner"]
        out.append((f"seat {winner} still owes {owed} and can pay it",
                    lambda s: hand_value(s.hands[winner]) >= owed))
    last = view["log"][-1] if view["log"] else {}
    if last.get("event") == "give_back" and last.get("card", 1) is None and last["seat"] != me:
        souris = next(e for e in reversed(view["log"]) if e["event"] == "souris_result")
        only = {souris["vegetable"], "mouche"}
        out.append((f"seat {last['seat']} gave nothing back: it holds only {only}",
                    lambda s, seat=last["seat"]: set(s.hands[seat]) <= only))
    return out


def bound_facts(view: dict) -> list[Fact]:
    """`Knowledge`'s running bounds (every bid of the manche, moved by each change of
    hand since): checked on the true state, they show the bookkeeping is right."""
    know = Knowledge(view)
    return [(f"seat {seat}'s hand is worth at least {least} (Knowledge)",
             lambda s, seat=seat, least=least: hand_value(s.hands[seat]) >= least)
            for seat, least in know.lower.items() if seat not in view["eliminated"]]


class CheapBidder:
    """Bids anywhere within its means (often at the top), so bounds are often tight."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def act(self, view: dict, legal: list[dict]) -> dict:
        if view["pending"] == "bid":
            fair = [a for a in legal if "pass" in a or a["bid"] <= hand_value(view["hand"])]
            if self.rng.random() < 0.3 and len(fair) > 1:
                return max(fair, key=lambda a: a.get("bid", -1))
            return self.rng.choice(fair)
        return self.rng.choice(legal)


@pytest.mark.parametrize("variant", [False, True])
@pytest.mark.parametrize("seats", [2, 3, 4, 6])
@pytest.mark.parametrize("bot", ["heuristic", "cheap"])
def test_the_facts_hold_in_the_true_state_and_in_every_sample(seats, variant, bot):
    player = SoupeGertrudeHeuristic() if bot == "heuristic" else CheapBidder(seats)
    rng, checked = random.Random(31), 0
    # random bids would mostly eliminate their bidders: each bot plays its own moves
    for state, seat in positions(GAME, seats, {"navet_mouche": variant}, 4, player, every=2, mix=0):
        view = state.view(seat)
        check_facts(GAME, state, seat, bound_facts(view), 0, rng)
        checked += check_facts(GAME, state, seat, facts(view), 3, rng)
    assert checked > 10


def money_hands(left: Counter, least: int) -> dict[tuple, float]:
    """Each 4-card money hand from `left` worth at least `least`, with its probability
    (a hypergeometric draw, conditioned on the bound)."""
    weights = {}
    for hand in set(combinations(sorted(left.elements()), 4)):
        if hand_value(hand) >= least:
            weights[hand] = math.prod(math.comb(left[c], k) for c, k in Counter(hand).items())
    total = sum(weights.values())
    return {h: w / total for h, w in weights.items()}


@pytest.mark.parametrize("bid", [13, 18])  # about 1 purse in 5 may pay 13; 1 in 300 may pay 18
def test_a_bid_bounds_the_bidders_purse_and_the_rest_is_uniform(bid):
    """Two seats, the first auction: seat 0 bid `bid` on a money card. Seat 1 sees four
    unknown money cards worth at least `bid`, each such multiset as often as the copies
    left allow (the rejection method at 13, the exact one at 18)."""
    hands = [["oseille-5", "oseille-5", "oseille-5", "oseille-4"], ["oseille-1"] * 2 + ["oseille-3"] * 2]
    deck = make_deck(2, ["oseille-3", "souris", "tomate"], hands)
    state = GAME.new(2, 1, {"deck": deck})
    state.apply({"pass": True})
    state.apply({"face_up": "oseille-3"})
    state.apply({"bid": bid})
    view = state.view(1)
    assert view["to_act"] == 1 and view["high_bid"] == bid
    assert GAME.sampler(GAME, view, None).deal.exact_first == (bid == 18)  # the method named
    left = Counter(c for c in full_deck(False) if c in MONEY) - Counter(view["hand"])
    expected = money_hands(left, bid)
    n = 60 * len(expected)
    observed = Counter(tuple(sorted(GAME.sample(view, i).hands[0])) for i in range(n))
    assert chi_square_p(observed, expected, n) > P_MIN
    assert min(hand_value(h) for h in observed) >= bid and len(expected) < 300


def knowledge(seat: int, seats: int, *events: dict) -> Knowledge:
    """What `seat` knows after a made-up log (only the fields `Knowledge` reads)."""
    log = [{"event": "manche", "manche": 1, "starter": 0}, *events]
    return Knowledge({"seat": seat, "seats": seats, "navet_mouche": True, "log": log})


def test_a_bound_follows_the_hand_through_seen_and_unseen_changes():
    know = knowledge(0, 3,
                     {"event": "bid", "seat": 1, "bid": 12},
                     {"event": "sold", "seat": 1, "bid": 12},
                     {"event": "give", "seat": 1, "to": 2, "card": "oseille-5"},
                     {"event": "give", "seat": 1, "to": 0, "card": "oseille-4"},
                     {"event": "purchase", "seat": 1, "cards": ["patate", "souris", "tomate"]})
    assert know.lower[1] == 12 - 5 - 4 + 8 + 5 + 2
    # a Gertrude between seats 2 and 1, unseen by seat 0: seat 1 may lose its patate
    know = knowledge(0, 3, {"event": "bid", "seat": 1, "bid": 12},
                     {"event": "purchase", "seat": 1, "cards": ["patate", "tomate", "tomate"]},
                     {"event": "purchase", "seat": 2, "cards": ["gertrude", "oseille-1", "oseille-1"]},
                     {"event": "gertrude", "seat": 2, "target": 1},
                     {"event": "kept", "seat": 2, "target": 1, "drawn": 3, "taken": True})
    assert know.lower[1] == 12 + 12 - 8
    assert 2 not in know.lower  # it never bid


def test_an_eliminating_bid_bounds_the_hand_that_left():
    know = knowledge(0, 3, {"event": "eliminated", "seat": 2, "bid": 9})
    [(slots, most)] = know.out_bounds
    assert len(slots) == 4 and most == 8 and 2 not in know.lower


def test_a_souris_that_gets_nothing_back_leaves_only_the_vegetable_and_the_fly():
    paid = [{"event": "give", "seat": 1, "to": 2, "card": "oseille-1"}] * 4
    know = knowledge(0, 3, *paid,
                     {"event": "purchase", "seat": 1, "cards": ["gertrude", "mouche", "souris"]},
                     {"event": "purchase", "seat": 2, "cards": ["oseille-1", "tomate", "tomate"]},
                     {"event": "gertrude", "seat": 1, "target": 2},  # seat 1 keeps a card unseen
                     {"event": "kept", "seat": 1, "target": 2, "drawn": 3, "taken": True},
                     {"event": "souris", "seat": 1, "target": 2, "vegetable": "tomate"},
                     {"event": "souris_result", "seat": 1, "target": 2, "vegetable": "tomate",
                      "taken": True},
                     {"event": "give_back", "seat": 1, "to": 2, "card": None})
    assert len(know.hands[1].slots) == 1 and know.hands[1].slots[0] <= {"tomate", "mouche"}
