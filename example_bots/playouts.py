"""What a PIMC playout is in each game: how far it goes, what it counts, how it plays.

A `Plan` is made per decision from the view and the legal actions. The base
plays uniformly random actions to the end of the match and counts the seat's
match points; each game's plan plays to a nearer horizon (the deal, the
round, the turn) with a quicker and better policy, and counts what that
horizon decides.

The policies play the example heuristics' rules on the sampled state itself:
a playout's world is a full state, so they read its attributes (hands, the
trick, the payment) where the heuristics read a view — thousands of decisions
a second instead of hundreds. That ties these examples to the engines'
state, which `tests/test_example_bot_pimc.py` plays through for every game.
"""

from __future__ import annotations

import random
from collections import Counter

import games
from example_bots.double import DoubleHeuristic, best_bid, choose_play
from example_bots.double import Table as DoubleTable
from example_bots.double_carre import DoubleCarreHeuristic
from example_bots.duck_soup import KEEP_HIGH, KEEP_LOW, LEAD, LEAD_POINTS, DuckSoupHeuristic
from example_bots.duck_soup import STRENGTH as DUCK_STRENGTH
from example_bots.soupe_gertrude import SoupeGertrudeHeuristic
from games.double_carre.state import POINTS as CARRE_POINTS
from games.ranking import match_points
from games.soupe_gertrude.cards import VALUES as SOUPE_VALUES
from games.soupe_gertrude.cards import VEGETABLES as SOUPE_VEGETABLES


def listed(legal: list[dict], action: dict) -> dict:
    """The listed action equal to `action`: a heuristic may build its answer as a new dict
    (a bid), and a bot answers with one of the actions it was given."""
    return next((a for a in legal if a == action), legal[0])

class Plan:
    """Random playouts to the end of the match; the outcome is the seat's match points."""

    def __init__(self, game: games.Game, view: dict, legal: list[dict]) -> None:
        self.game, self.view, self.legal = game, view, legal

    def candidates(self) -> list[dict]:
        """The actions worth searching (all of them unless a game says otherwise)."""
        return self.legal

    def done(self, state: games.State) -> bool:
        return state.is_over

    def utility(self, state: games.State, seat: int) -> float:
        return match_points(state.result()["ranks"], seat)

    def policy(self, state: games.State, rng: random.Random) -> dict:
        legal = state.legal_actions()
        return legal[rng.randrange(len(legal))]

    def playout(self, state: games.State, seat: int, rng: random.Random) -> float:
        while not self.done(state):
            state.apply(self.policy(state, rng))
        return self.utility(state, seat)


def top(legal: list[dict], values: list[float], k: int) -> list[dict]:
    """The `k` actions with the best values, best first (ties: the order listed)."""
    order = sorted(range(len(legal)), key=lambda i: (-values[i], i))
    return [legal[i] for i in order[:k]]


class DuckSoupPlan(Plan):
    """To the end of the deal; the outcome is the deal score's difference (low × high each).
    It searches the example heuristic's `CANDIDATES` favourite actions."""

    CANDIDATES = 4

    def __init__(self, game: games.Game, view: dict, legal: list[dict]) -> None:
        super().__init__(game, view, legal)
        self.deals = len(view["deals"])

    def candidates(self) -> list[dict]:
        return top(self.legal, DuckSoupHeuristic().values(self.view, self.legal), self.CANDIDATES)

    def policy(self, state, rng: random.Random) -> dict:
        return duck_policy(state, rng)

    def done(self, state) -> bool:
        return len(state.deals) > self.deals or state.is_over

    def utility(self, state, seat: int) -> float:
        score = state.deals[self.deals]["score"]
        return (score[seat] - score[1 - seat]) / 100.0


def duck_policy(state, rng: random.Random) -> dict:
    """`DuckSoupHeuristic`'s rules on a full state: the same values for each action, with the
    other hand known (a playout's world is a full state) instead of guessed, and read from
    the state instead of a view — fast enough for thousands of decisions a decision."""
    legal = state.legal_actions()
    seat, pending, phase = state.to_act, state.pending, state.phase
    strength = DUCK_STRENGTH[phase]
    other = state.hands[1 - seat]
    mine = state.hands[seat]
    if phase == "high":
        low = state.points["low"]
        mean = max(1.0, (low[0] + low[1]) / 2)
        worth_mine, worth_theirs = low[seat] / mean, low[1 - seat] / mean
    else:
        worth_mine = worth_theirs = 1.0

    def win(points: float) -> float:
        return worth_mine * points + LEAD

    def lose(points: float) -> float:
        return -worth_theirs * points - LEAD

    def beaters(card: str) -> int:
        suit, s = card[-1], strength[card[:-1]]
        return sum(1 for o in other if o[-1] == suit and strength[o[:-1]] > s)

    def keep(card: str) -> float:
        rank = card[:-1]
        if phase == "low":
            return KEEP_HIGH.get(rank, 0.0) + KEEP_LOW.get(rank, 0.0)
        return 2.0 / (1 + beaters(card)) + 0.05 * strength[rank]

    def held(rank: str, hand: list[str], but: str = "") -> int:
        return sum(1 for c in hand if c[:-1] == rank and c != but)

    def value(action: dict) -> float:
        card, call = action.get("play"), action.get("call")
        if pending == "answer-coin":
            if call == "soupe":
                return lose(2)
            fourth = held(card[:-1], other) > 0
            return (lose(4) if fourth else win(2 + LEAD_POINTS)) - keep(card)
        if pending == "answer-coin-coin":
            if call == "soupe-aux-canards":
                return win(4) + 10.0
            second = 1 if card[-1] == state.trick[2][1][-1] else 2
            return lose(2 + second) - keep(card)
        rank = card[:-1]
        if pending == "lead":
            coined = held(rank, other) > 0 and not (held(rank, mine, card) and held(rank, other) == 1)
            if coined:
                return lose(2) - keep(card)
            return (lose(1) if beaters(card) else win(LEAD_POINTS)) - keep(card)
        led = state.trick[0][1]
        if call == "coin":
            risk = held(rank, mine, card) == 0 and held(rank, other) > 0
            return (lose(3.5) - 0.5 if risk else win(2)) - keep(card)
        if card[-1] != led[-1]:
            return lose(2) - keep(card)
        if strength[rank] > strength[led[:-1]]:
            return win(1) - keep(card)
        return lose(1) - keep(card)

    return max(legal, key=value)


def _groups(hand: list[str]) -> float:
    """A hand's group score: sum of 10 ** (cards of a rank), the points as a fraction."""
    counts: dict[str, int] = {}
    for card in hand:
        counts[card[:-1]] = counts.get(card[:-1], 0) + 1
    return sum(10 ** c for c in counts.values()) + sum(CARRE_POINTS[r] for r in counts) / 100


def carre_policy(state, rng: random.Random) -> dict:
    """A quick Double carré player for playouts: take the pair that joins the largest
    groups in hand, discard the two cards of the smallest, least valuable groups."""
    legal = state.legal_actions()
    hand = state.hands[state.to_act]
    counts: dict[str, int] = {}
    for card in hand:
        counts[card[:-1]] = counts.get(card[:-1], 0) + 1
    if state.pending == "take":
        def gain(action: dict) -> float:
            a, b = action["take"]
            ra, rb = a[:-1], b[:-1]
            return 10 ** counts.get(ra, 0) + 10 ** (counts.get(rb, 0) + (ra == rb))
        return max(legal, key=gain)
    order = sorted(hand, key=lambda c: (counts[c[:-1]], CARRE_POINTS[c[:-1]]))
    drop = set(order[:2])
    return next((a for a in legal if set(a["discard"]) == drop), legal[0])


class DoubleCarrePlan(Plan):
    """To the end of the match (a few turns); the outcome is the result, with the hands'
    strength as a tie-break. It searches the example heuristic's `CANDIDATES` favourites."""

    CANDIDATES = 8

    def candidates(self) -> list[dict]:
        return top(self.legal, DoubleCarreHeuristic().values(self.view, self.legal), self.CANDIDATES)

    def policy(self, state, rng: random.Random) -> dict:
        return carre_policy(state, rng)

    def utility(self, state, seat: int) -> float:
        """The result, half of it; the other half how far the hands' group scores lie apart
        (a smoother signal than win or lose, so fewer worlds tell the candidates apart)."""
        result = state.result()
        mine, theirs = (_groups(state.hands[s]) for s in (seat, 1 - seat))
        return 0.5 * match_points(result["ranks"], seat) + 0.5 * (mine - theirs) / (mine + theirs)


def double_policy(state, rng: random.Random) -> dict:
    """`DoubleHeuristic`'s bids and plays, read from the state instead of a view."""
    legal = state.legal_actions()
    seat = state.to_act
    hand = state.hands[seat]
    table = DoubleTable({"seats": state.seats, "trump": state.trump, "hand": hand})
    if state.pending == "bid":
        n = best_bid([table.card_power(c) for c in hand], [a["bid"] for a in legal])
        return legal[n]
    need = state.bids[seat] - state.tricks[seat]
    return choose_play(seat, need, state.trick, state.seats, state.trump, legal, table)


class DoublePlan(Plan):
    """To the end of the round; the outcome is the points the seat gains there less the
    others' mean gain (the match is a race for points). Every action is searched, the
    heuristic's first (it wins ties)."""

    def __init__(self, game: games.Game, view: dict, legal: list[dict]) -> None:
        super().__init__(game, view, legal)
        self.round = view["round"]
        self.before = list(view["points"])

    def candidates(self) -> list[dict]:
        favourite = listed(self.legal, DoubleHeuristic().act(self.view, self.legal))
        return [favourite] + [a for a in self.legal if a is not favourite]

    def done(self, state) -> bool:
        return state.round + 1 > self.round or state.is_over

    def policy(self, state, rng: random.Random) -> dict:
        return double_policy(state, rng)

    def utility(self, state, seat: int) -> float:
        after = state.summaries[self.round - 1]["points"]
        gains = [a - b for a, b in zip(after, self.before, strict=True)]
        others = [g for s, g in enumerate(gains) if s != seat]
        return (gains[seat] - sum(others) / len(others)) / 10.0


_SOUPE = SoupeGertrudeHeuristic()


def soupe_view(state, seat: int) -> dict:
    """The few fields `SoupeGertrudeHeuristic` reads, from a full state. The lot stays
    hidden but for its drawer, as in a real view: the face-up card a seat shows, and the
    bids it draws, depend on it."""
    hand = state.hands[seat]
    pay = state.payment
    return {
        "seat": seat, "seats": state.seats, "pending": state.pending, "hand": hand,
        "hand_value": sum(SOUPE_VALUES[c] for c in hand), "hand_sizes": [len(h) for h in state.hands],
        "lot": {"face_up": state.face_up, "count": len(state.lot),
                **({"cards": state.lot} if seat == state.drawer and state.lot else {})},
        "eliminated": state.eliminated,
        "high_bid": state.auction["high"] if state.auction else None,
        "payment": {"bid": pay["bid"], "given": pay["given"], "received": pay["received"]} if pay else None,
        "play": state.play, "claimant": state.claim["seat"] if state.claim else None,
    }


def soupe_policy(state, rng: random.Random) -> dict:
    """`SoupeGertrudeHeuristic`'s decisions on a full state: every seat's vegetables known."""
    seat = state.to_act
    known = None
    if state.pending in ("special", "navet"):
        known = {s: Counter(c for c in h if c in SOUPE_VEGETABLES) for s, h in enumerate(state.hands)}
    return _SOUPE.choose(soupe_view(state, seat), state.legal_actions(), known)


def soupe_worth(state, seat: int, money: float = 0.5) -> float:
    """How near a seat is to its soup: its different vegetables count most, the fly
    spoils them, money (`money` a point of value) buys the next lots."""
    hand = state.hands[seat]
    if seat in state.eliminated:
        return -100.0
    vegetables = len({c for c in hand if c in SOUPE_VEGETABLES})
    worth = 30.0 * vegetables + (25.0 if vegetables >= 2 else 0.0)
    worth += money * sum(SOUPE_VALUES[c] for c in hand) + 4.0 * sum(c in ("souris", "gertrude") for c in hand)
    return worth - (40.0 if "mouche" in hand else 0.0)


class SoupePlan(Plan):
    """To the end of the turn (the next drawer, or the manche's end); the outcome is how
    much nearer the seat is to its soup than the nearest rival (a won manche counts most).
    Bids are searched among a few amounts, the heuristic's first."""

    #: the decisions searched; the others follow the heuristic (the payment has too many
    #: ways and little at stake; the face-up card and what to keep or give back act
    #: through what the other seats know, which a playout of full states cannot show)
    SEARCHED = ("special", "bid", "cancel", "navet")
    BIDS = 5
    MONEY = 0.5  # what a point of card value is worth, against 30 for a new vegetable
    TURNS = 1  # how many drawers' turns a playout runs for

    def __init__(self, game: games.Game, view: dict, legal: list[dict]) -> None:
        super().__init__(game, view, legal)
        self.manche, self.drawer = view["manche"], view["drawer"]
        self.drawers = 0

    def candidates(self) -> list[dict]:
        pending, legal = self.view["pending"], self.legal
        favourite = listed(legal, _SOUPE.act(self.view, legal))
        if pending not in self.SEARCHED:
            return [favourite]
        if pending != "bid":
            return [favourite] + [a for a in legal if a != favourite]
        bids = [a for a in legal if "bid" in a]
        if not bids:
            return legal
        low = bids[0]["bid"]
        limit = min(self.view["hand_value"], low + 40)
        amounts = sorted({low + round(i * (limit - low) / (self.BIDS - 1)) for i in range(self.BIDS)})
        chosen = [a for a in legal if "pass" in a or a.get("bid") in amounts]
        return [favourite] + [a for a in chosen if a is not favourite and a != favourite]

    def done(self, state) -> bool:
        if state.is_over or state.manche != self.manche:
            return True
        if state.drawer != self.drawer:
            self.drawer = state.drawer
            self.drawers += 1
        return self.drawers >= self.TURNS

    def playout(self, state, seat: int, rng: random.Random) -> float:
        self.drawer, self.drawers = self.view["drawer"], 0
        return super().playout(state, seat, rng)

    def policy(self, state, rng: random.Random) -> dict:
        return soupe_policy(state, rng)

    def utility(self, state, seat: int) -> float:
        if state.is_over or state.manche != self.manche:
            points = state.manche_points[self.manche - 1]
            ends = [e for _, e in state.log if e["event"] == "manche_end"]
            winner = ends[-1]["winner"] if ends else None
            if winner is not None:
                return 3.0 if winner == seat else -3.0
            best = max(p for s, p in enumerate(points) if s != seat)
            return 1.0 * (points[seat] - best)
        worth = [soupe_worth(state, s, self.MONEY) for s in range(state.seats)]
        rival = max(w for s, w in enumerate(worth) if s != seat and s not in state.eliminated)
        return (worth[seat] - rival) / 100.0


PLANS: dict[str, type[Plan]] = {
    "soupe-gertrude": SoupePlan,
    "double": DoublePlan,
    "double-carre": DoubleCarrePlan,
    "duck-soup": DuckSoupPlan,
}
