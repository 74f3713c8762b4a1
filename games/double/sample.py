"""DOUBLE's `sample()`: the other hands and the undealt cards, drawn from what a seat has seen.

A seat sees its hand, the turned-up trump card and every card played this
round. The cards it has not seen lie in the other hands (their sizes are
public) and among the undealt cards. One rule reveals more: a seat that did
not follow the led suit with a normal motif holds no card with that suit on
either half (POPE and IDIOT motifs may always be played, so they reveal
nothing), and no card joins a hand during a round. The sample deals the
unseen cards uniformly among the deals that respect every such void
(`games.sampling.ConstrainedDeal`).

The rounds to come are shuffled from the sample's seed; earlier rounds'
decks are in no view, and a sample's ``result()["decks"]`` shows the set in
its order for them. A view shows how many
rounds the match has and how many cards this one deals, not the whole
``rounds`` option: give `options` to `Game.sample` when you know it;
otherwise the default rounds are assumed when they agree with the view,
else the rounds to come deal as many cards as this one.
"""

from __future__ import annotations

from games.base import Game, State
from games.double.cards import ONE_SET, SET_ORDER, SUITS_OF, DoubleCard, double_sets, motif, suit_of
from games.double.state import DEFAULT_ROUNDS, MAX_SEATS, DoubleState
from games.double.tricks import DoublePlay
from games.sampling import ConstrainedDeal, card_reader, checked_view, require, sample_seed
from games.seats import left_of

_card = card_reader(ONE_SET, "DOUBLE")


def voids(view: dict) -> list[set[str]]:
    """The suits each seat is known not to hold this round (it did not follow them)."""
    out: list[set[str]] = [set() for _ in range(view["seats"])]
    tricks = [(h["led_suit"], h["plays"]) for h in view["history"]]
    if view["trick"]:
        tricks.append((view["led_suit"], view["trick"]))
    for led, plays in tricks:
        if led is None:
            continue
        for play in plays[1:]:
            suit = suit_of(play["motif"])
            if suit is not None and suit != led:
                out[play["seat"]].add(led)
    return out


def rounds_for(view: dict, options: dict) -> list[int]:
    """The match's ``rounds``: given, the default when it fits the view, else a stand-in."""
    past = [sum(r["tricks"]) for r in view["past_rounds"]]
    current = view["cards_per_seat"]
    if view["pending"] is not None:  # once over, the last round is among the past ones
        past.append(current)
    if options.get("rounds") is not None:
        rounds = list(options["rounds"])
    elif len(DEFAULT_ROUNDS) == view["rounds"] and DEFAULT_ROUNDS[:len(past)] == past:
        rounds = list(DEFAULT_ROUNDS)
    else:
        rounds = past + [current] * (view["rounds"] - len(past))
    require(len(rounds) == view["rounds"] and rounds[view["round"] - 1] == current,
            "the rounds do not agree with the view")
    return rounds


class DoubleSampler:
    """What one view says, worked out once; `sample(seed)` deals the rest."""

    def __init__(self, game: Game, view: dict, options: dict | None) -> None:
        view, self.seat = checked_view(view, lambda v: v["seats"])
        try:
            self._read(game, view, dict(options or {}))
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            require(False, f"not a DOUBLE view: {exc!r}")

    def _read(self, game: Game, view: dict, options: dict) -> None:
        self.game, self.view = game, view
        seats = view["seats"]
        require(type(seats) is int and 2 <= seats <= MAX_SEATS, "not a DOUBLE table")
        self.rounds = rounds_for(view, options)
        self.options = {**game.defaults, "decks": view["decks"], "rounds": self.rounds, "deck": None}
        if options.get("chips") is not None:
            self.options["chips"] = options["chips"]
        self.cards = double_sets(view["decks"])
        self.hand = [_card(c) for c in view["hand"]]
        self.trump_card = _card(view["trump_card"])
        self.trick = [DoublePlay(p["seat"], _card(p["card"]), motif(p["motif"])) for p in view["trick"]]
        self.history = [{**h, "plays": [{**p, "card": _card(p["card"]), "motif": motif(p["motif"])}
                                        for p in h["plays"]]} for h in view["history"]]
        seen = [*self.hand, self.trump_card, *(p.card for p in self.trick),
                *(p["card"] for h in self.history for p in h["plays"])]
        unseen = list(self.cards)
        for card in seen:
            require(card in unseen, f"{card} is shown more often than the sets hold it")
            unseen.remove(card)
        sizes = list(view["hand_sizes"])
        require(sizes[self.seat] == len(self.hand), "the hand sizes do not match the hand")
        self.others = [s for s in range(seats) if s != self.seat]
        undealt = len(self.cards) - seats * view["cards_per_seat"] - 1
        known_voids = voids(view)
        allowed = [None if not known_voids[s] else
                   {c for c in set(unseen) if not SUITS_OF[c] & known_voids[s]} for s in self.others]
        self.deal = ConstrainedDeal(unseen, [sizes[s] for s in self.others] + [undealt],
                                    [*allowed, None])

    def zones_of(self, state: DoubleState) -> list[list[DoubleCard]]:
        """A state's hidden cards in the deal's layout: the other hands, the undealt cards."""
        n = state.rounds[state.round] * state.seats
        return [list(state.hands[s]) for s in self.others] + [state.decks[state.round][n + 1:]]

    def sample(self, seed: int) -> DoubleState:
        view, seats = self.view, self.view["seats"]
        rng = sample_seed(seed)
        *others, undealt = self.deal.draw(rng)
        state = DoubleState.__new__(DoubleState)
        State.__init__(state, self.game, seats, seed, {**self.options, "rounds": list(self.rounds)})
        state.n_decks = view["decks"]
        state.rounds = list(self.rounds)
        state.round = view["round"] - 1
        state.points = list(view["points"])
        state.summaries = [{k: list(v) for k, v in r.items()} for r in view["past_rounds"]]
        state.dealer = view["dealer"]
        first = left_of(state.dealer, seats)
        hands: list[list[DoubleCard]] = [[] for _ in range(seats)]
        hands[self.seat] = list(self.hand)
        for s, cards in zip(self.others, others, strict=True):
            hands[s] = sorted(cards, key=SET_ORDER.__getitem__)
        state.hands = hands
        # the round's deck as dealt (what each hand was dealt is not known: the cards
        # played stand in order), the trump card, then the undealt cards
        played = [p.card for p in self.trick] + [p["card"] for h in self.history for p in h["plays"]]
        held = [c for h in hands for c in h] + played
        # earlier rounds' decks are in no view: the set in its order stands in for them
        state.cards = list(self.cards)
        state.decks = [list(self.cards) for _ in range(state.round)]
        state.decks.append(held + [self.trump_card] + undealt)
        state.trump_card = self.trump_card
        state.trump = view["trump"]
        state.bids = list(view["bids"])
        state.tricks = list(view["tricks"])
        state.trick = list(self.trick)
        state.history = [{**h, "plays": [dict(p) for p in h["plays"]]} for h in self.history]
        state.leader = view["leader"] if view["leader"] is not None else first
        state.pending = view["pending"]
        state._to_act = view["to_act"]
        return state
