"""Dealing the unknown cards when bids bound what whole hands are worth.

A bid that did not eliminate its bidder proves the hand was worth at least
the bid; an eliminating bid proves the hand that left was worth less. Those
are facts about the *sum* of several cards' values, which per-card zones
(`games.sampling.ConstrainedDeal`) cannot say. `BoundedDeal` deals uniformly
among the deals of the zone dealer that also respect such bounds, each a
(zones of one card each, least value, most value):

* by rejection — draw whole deals from the zone dealer and keep the first
  within the bounds (exactly uniform, and cheap when most deals fit);
* by exact counting, where a pilot of `PILOT` deals (from a fixed stream, so
  the choice depends on the view alone) finds fewer than `PILOT_FITS` within
  the bounds, or after `TRIES` misses in a row: the bounded groups are filled one
  after the other, each with a multiset of cards chosen with the number of
  whole deals it leaves (its arrangements on the group's cards, the choice
  of copies, and the zone dealer's count for the cards left over), then the
  rest is dealt by a zone dealer built for what is left.

Either way the deal is uniform among those respecting every bound (a miss
says nothing about the deal that follows), and both are deterministic given
the random stream. The exact method is built once per view, the first time a
sample needs it; where its lists would grow past `LIMIT` (many loosely
bounded hands of any card — where rejection does well), rejection goes on
for `LAST_TRIES` more deals before `Unbounded` is raised.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from math import factorial, prod

from games.rng import Rng
from games.sampling import ConstrainedDeal, Inconsistent

#: rejected deals before the exact method takes over
TRIES = 32
#: deals of the pilot, and how many must fit for rejection to be the method
PILOT, PILOT_FITS = 64, 8
#: candidate multisets over all bounded groups before the exact method gives up
LIMIT = 20_000
#: rejected deals after that, before giving up
LAST_TRIES = 5_000


class Unbounded(Inconsistent):
    """No deal within the bounds was found (none exists, or they are too rare to find)."""


Bound = tuple[Sequence[int], int, int | None]


def _admits(allowed: Collection[str] | None, card: str) -> bool:
    """Whether a zone that takes `allowed` (None: any card) takes `card`."""
    return allowed is None or card in allowed


def _multisets(ids: Sequence[object], size: int, caps: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every vector of counts over `ids`, at most caps[i] each, summing to `size`."""
    if not ids:
        if size == 0:
            yield ()
        return
    for n in range(min(size, caps[0]) + 1):
        for rest in _multisets(ids[1:], size - n, caps[1:]):
            yield (n, *rest)


class BoundedDeal:
    """A zone dealer's deals, kept only where each bound's zones are worth least..most."""

    def __init__(self, cards: Sequence[str], sizes: Sequence[int],
                 allowed: Sequence[Collection[str] | None], bounds: Sequence[Bound],
                 values: dict[str, int]) -> None:
        self.deal = ConstrainedDeal(cards, sizes, allowed)
        self.cards, self.sizes, self.allowed = list(cards), list(sizes), list(allowed)
        self.bounds = [(list(zones), least, most) for zones, least, most in bounds]
        self.values = values
        self._exact: _Exact | None | bool = False  # False: not built yet; None: too large
        #: the method, chosen once from the view alone: a sample's deal never depends on
        #: which samples were drawn before it (the exact method may be built lazily)
        self.exact_first = False
        if self.bounds:
            pilot = Rng(0, "bounded-deal", "pilot")
            if sum(self.within(self.deal.draw(pilot)) for _ in range(PILOT)) < PILOT_FITS:
                self._exact = _Exact.build(self)
                self.exact_first = self._exact is not None

    def within(self, zones: Sequence[Sequence[str]]) -> bool:
        values = self.values
        for indices, least, most in self.bounds:
            worth = sum(values[c] for i in indices for c in zones[i])
            if worth < least or (most is not None and worth > most):
                return False
        return True

    def draw(self, rng: Rng) -> list[list[str]]:
        if self.exact_first and isinstance(self._exact, _Exact):
            return self._exact.draw(rng)
        for _ in range(TRIES if self.bounds else 1):
            zones = self.deal.draw(rng)
            if not self.bounds or self.within(zones):
                return zones
        if self._exact is False:
            self._exact = _Exact.build(self)
        if isinstance(self._exact, _Exact):
            return self._exact.draw(rng)
        for _ in range(LAST_TRIES):
            zones = self.deal.draw(rng)
            if self.within(zones):
                return zones
        raise Unbounded("no deal found within the bids' bounds")


class _Exact:
    """The counting method: bounded groups in turn, then the zone dealer for the rest."""

    @classmethod
    def build(cls, owner: BoundedDeal) -> _Exact | None:
        exact = cls(owner)
        return exact if exact.ok else None

    def __init__(self, owner: BoundedDeal) -> None:
        self.owner = owner
        self.ids = sorted(set(owner.cards))
        self.avail = tuple(owner.cards.count(c) for c in self.ids)
        bounded = {i for zones, _, _ in owner.bounds for i in zones}
        self.free_zones = [i for i in range(len(owner.sizes)) if i not in bounded]
        # per group: its zones' allowed ids (as index sets) and its candidate multisets
        self.groups: list[tuple[list[int], list[frozenset[int]], list[tuple[int, ...]]]] = []
        total = 0
        self.ok = True
        for zones, least, most in owner.bounds:
            if any(owner.sizes[i] != 1 for i in zones):
                raise ValueError("bounded zones hold one card each")
            slots = [frozenset(k for k, c in enumerate(self.ids) if _admits(owner.allowed[i], c)) for i in zones]
            union = sorted(frozenset().union(*slots))
            cands = []
            for counts in _multisets(union, len(zones), [self.avail[k] for k in union]):
                worth = sum(n * owner.values[self.ids[k]] for k, n in zip(union, counts, strict=True))
                if worth < least or (most is not None and worth > most):
                    continue
                full = [0] * len(self.ids)
                for k, n in zip(union, counts, strict=True):
                    full[k] = n
                cands.append(tuple(full))
                total += 1
                if total > LIMIT:
                    self.ok = False
                    return
            self.groups.append((list(zones), slots, cands))
        self._fill: dict = {}
        self._ways: dict = {}
        self._choices: dict = {}
        self._rest: dict[tuple[int, ...], ConstrainedDeal | None] = {}
        if self.ways(0, self.avail) == 0:
            raise Unbounded("no deal of the unseen cards is within the bids' bounds")

    # -- counting ----------------------------------------------------------------------
    def fill(self, g: int, j: int, counts: tuple[int, ...]) -> int:
        """Ways to lay the multiset `counts` on group g's zones j.. (each allows its ids)."""
        if j == len(self.groups[g][1]):
            return 1
        key = (g, j, counts)
        known = self._fill.get(key)
        if known is None:
            known = 0
            for k in self.groups[g][1][j]:
                if counts[k]:
                    left = list(counts)
                    left[k] -= 1
                    known += self.fill(g, j + 1, tuple(left))
            self._fill[key] = known
        return known

    def rest(self, avail: tuple[int, ...]) -> ConstrainedDeal | None:
        """The zone dealer for the cards left after the bounded groups (None: no deal)."""
        if avail not in self._rest:
            owner = self.owner
            cards = [c for c, n in zip(self.ids, avail, strict=True) for _ in range(n)]
            try:
                self._rest[avail] = ConstrainedDeal(
                    cards, [owner.sizes[i] for i in self.free_zones],
                    [owner.allowed[i] for i in self.free_zones])
            except Inconsistent:
                self._rest[avail] = None
        return self._rest[avail]

    def ways(self, g: int, avail: tuple[int, ...]) -> int:
        """Whole deals from group g on, with `avail` copies of each id left (up to a
        factor the same for every deal)."""
        key = (g, avail)
        known = self._ways.get(key)
        if known is not None:
            return known
        if g == len(self.groups):
            deal = self.rest(avail)
            total = 0 if deal is None else 1 if deal.free else deal.count(0, tuple(deal.caps))
            self._ways[key] = total
            return total
        total, choices = 0, []
        for counts in self.groups[g][2]:
            if any(n > a for n, a in zip(counts, avail, strict=True)):
                continue
            copies = prod(factorial(a) // factorial(a - n) for n, a in zip(counts, avail, strict=True) if n)
            left = tuple(a - n for n, a in zip(counts, avail, strict=True))
            w = self.fill(g, 0, counts) * copies
            if w:
                w *= self.ways(g + 1, left)
            if w:
                total += w
                choices.append((total, counts, left))
        self._ways[key], self._choices[key] = total, choices
        return total

    # -- drawing -----------------------------------------------------------------------
    def draw(self, rng: Rng) -> list[list[str]]:
        zones: list[list[str]] = [[] for _ in self.owner.sizes]
        avail = self.avail
        for g, (indices, slots, _) in enumerate(self.groups):
            choices = self._choices[(g, avail)]
            r = rng.below(choices[-1][0])
            counts, avail = next((c, left) for cum, c, left in choices if r < cum)
            for j, zone in enumerate(indices):  # each arrangement as often as it may be
                options = []
                for k in sorted(slots[j]):
                    if counts[k]:
                        left = list(counts)
                        left[k] -= 1
                        options.append((k, tuple(left)))
                weights = [self.fill(g, j + 1, left) for _, left in options]
                r = rng.below(sum(weights))
                pick = 0
                while r >= weights[pick]:
                    r -= weights[pick]
                    pick += 1
                k, counts = options[pick]
                zones[zone] = [self.ids[k]]
        rest = self.rest(avail)
        assert rest is not None  # `fill` counted deals of these cards: there is one
        for zone, cards in zip(self.free_zones, rest.draw(rng), strict=True):
            zones[zone] = cards
        return zones
