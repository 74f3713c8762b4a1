"""What every game's `sample()` shares: dealing the unseen cards uniformly under constraints.

A seat that cannot see some cards knows how many lie in each hidden zone (the
other hands, a stock, a discard pile) and, from the rules, that some cards
cannot lie in some zones (a suit a seat did not follow, a card already seen
leaving the stock). `ConstrainedDeal` draws the unseen cards into the zones
*uniformly among every deal that respects those facts*, exactly, by counting:

* zones that accept the same cards are merged into groups (two hands with no
  known void are one group), cards accepted by the same groups into classes;
* the number of deals is a sum over how many cards of each class go to each
  group, of products of multinomials; a dynamic programme over the classes
  counts them, with exact integers;
* a draw walks the same programme choosing each class's split with the
  probability of the deals it leads to, then deals each class's cards at
  random within its split and each group's cards at random among its zones.

Without constraints this is a shuffle. The counting is done once per view
(`ConstrainedDeal` is built by a game's sampler and reused for every seed).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from math import factorial
from typing import Any, Generic, TypeVar

from games.rng import Rng

T = TypeVar("T", bound=Hashable)


class Inconsistent(ValueError):
    """No full state agrees with the view (it was edited, or is not this game's)."""


def _splits(n: int, caps: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every way to put `n` cards in len(caps) groups, at most caps[g] in group g."""
    if len(caps) == 1:
        if n <= caps[0]:
            yield (n,)
        return
    rest = sum(caps[1:])
    for first in range(max(0, n - rest), min(n, caps[0]) + 1):
        for tail in _splits(n - first, caps[1:]):
            yield (first, *tail)


class ConstrainedDeal(Generic[T]):
    """Deals `cards` into zones of the given `sizes`, uniformly among the deals
    where every card lies in a zone whose `allowed` holds it (None: any card).

    `cards` is a multiset (identical copies are separate cards, as in a real
    deck); `sum(sizes)` must be `len(cards)`. `Inconsistent` if no deal exists.
    """

    def __init__(self, cards: Sequence[T], sizes: Sequence[int],
                 allowed: Sequence[Collection[T] | None]) -> None:
        if sum(sizes) != len(cards) or len(sizes) != len(allowed) or min(sizes, default=0) < 0:
            raise Inconsistent(f"{len(cards)} unseen cards cannot fill zones of sizes {list(sizes)}")
        self.cards = list(cards)
        self.sizes = list(sizes)
        # -- zones with the same constraint form one group --------------------------
        keys: dict[Any, int] = {}
        self.zone_group: list[int] = []
        self.group_allowed: list[Collection[T] | None] = []
        for zone_allowed in allowed:
            key = None if zone_allowed is None else frozenset(zone_allowed)
            if key not in keys:
                keys[key] = len(self.group_allowed)
                self.group_allowed.append(key)
            self.zone_group.append(keys[key])
        self.caps = [0] * len(self.group_allowed)
        for zone, group in enumerate(self.zone_group):
            self.caps[group] += sizes[zone]
        self.free = all(a is None for a in self.group_allowed)
        if self.free:
            return
        # -- cards accepted by the same groups form one class -------------------------
        by_class: dict[tuple[int, ...], list[T]] = {}
        for card in self.cards:
            sig = tuple(g for g, a in enumerate(self.group_allowed) if a is None or card in a)
            if not sig:
                raise Inconsistent(f"{card!r} fits in no hidden zone")
            by_class.setdefault(sig, []).append(card)
        self.classes = sorted(by_class.items(), key=lambda item: (len(item[0]), item[0]))
        self._memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self._choices: dict[tuple[int, tuple[int, ...]], list[tuple[int, tuple[int, ...]]]] = {}
        if self.count(0, tuple(self.caps)) == 0:
            raise Inconsistent("no deal of the unseen cards agrees with what this seat knows")

    def admits(self, zones: Sequence[Sequence[T]]) -> bool:
        """Whether `zones` (cards per zone, in this deal's layout) is one of its deals."""
        if [len(z) for z in zones] != self.sizes:
            return False
        if sorted(map(repr, (c for z in zones for c in z))) != sorted(map(repr, self.cards)):
            return False
        for i, zone in enumerate(zones):
            allowed = self.group_allowed[self.zone_group[i]]
            if allowed is not None and not all(c in allowed for c in zone):
                return False
        return True

    def count(self, i: int, caps: tuple[int, ...]) -> int:
        """The number of deals of classes i.. into groups with `caps` places left."""
        if i == len(self.classes):
            return 1 if not any(caps) else 0
        key = (i, caps)
        known = self._memo.get(key)
        if known is not None:
            return known
        sig, cards = self.classes[i]
        n = len(cards)
        total = 0
        choices = []
        for split in _splits(n, [caps[g] for g in sig]):
            left = list(caps)
            for g, x in zip(sig, split, strict=True):
                left[g] -= x
            ways = self.count(i + 1, tuple(left))
            if ways:
                weight = factorial(n)
                for x in split:
                    weight //= factorial(x)
                total += weight * ways
                choices.append((total, split))
        self._memo[key] = total
        self._choices[key] = choices
        return total

    def draw(self, rng: Rng) -> list[list[T]]:
        """One deal: the cards of each zone, in random order."""
        groups: list[list[T]] = [[] for _ in self.caps]
        if self.free:
            groups[0] = rng.shuffled(self.cards)
        else:
            caps = tuple(self.caps)
            for i, (sig, cards) in enumerate(self.classes):
                choices = self._choices[(i, caps)]
                r = rng.below(choices[-1][0])
                split = next(s for cumulative, s in choices if r < cumulative)
                shuffled = rng.shuffled(cards)
                left = list(caps)
                start = 0
                for g, x in zip(sig, split, strict=True):
                    groups[g].extend(shuffled[start:start + x])
                    start += x
                    left[g] -= x
                caps = tuple(left)
            groups = [rng.shuffled(g) for g in groups]
        zones: list[list[T]] = []
        taken = [0] * len(groups)
        for zone, group in enumerate(self.zone_group):
            start = taken[group]
            zones.append(groups[group][start:start + self.sizes[zone]])
            taken[group] = start + self.sizes[zone]
        return zones


def sample_seed(seed: int) -> Rng:
    """The stream a `sample(view, seed)` draws from."""
    if type(seed) is not int:
        raise ValueError(f"a sample's seed is a whole number, not {seed!r}")
    return Rng(seed, "sample")


def require(condition: bool, message: str) -> None:
    """A view that does not hold together is refused with the reason."""
    if not condition:
        raise Inconsistent(message)


def card_reader(cards: Iterable[T], game: str) -> Callable[[Any], T]:
    """A function that turns a view's card text into the game's card (interned), or
    refuses the view: a sample is only as sound as the cards it is given."""
    by_text = {str(c): c for c in cards}

    def read(text: Any) -> T:
        card = by_text.get(text) if isinstance(text, str) else None
        if card is None:
            raise Inconsistent(f"{text!r} is not a card of {game}")
        return card

    return read


def checked_view(view: Any, seats: Callable[[dict], int]) -> tuple[dict, int]:
    """`view` and its seat, or `Inconsistent`: sampling needs a seat's own view."""
    require(isinstance(view, dict), "sample() takes a seat's view (a dict)")
    seat = view.get("seat")
    require(type(seat) is int and 0 <= seat < seats(view),
            f"sample() needs a seat's view: 'seat' is {seat!r}")
    return view, seat
