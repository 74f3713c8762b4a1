"""The engine interface every game implements (api.md §1).

A `Game` is the game's facts as data (name, seat range, options) and makes
`State`s; a `State` holds what is true and offers a handful of verbs. The
generic duties live here once so no game can get them wrong:

* `apply()` accepts an action only if it equals a listed legal action with
  exactly the same JSON types (lists compared in any order) and then hands the
  game the *listed* action, so what gets stored is always canonical;
* an illegal action raises `IllegalAction` before anything changes;
* `is_over` is simply "nobody is to act".

A game subclass writes `_legal_actions()`, `_apply(action)`, `to_act`,
`view(seat)` and `result()`, and builds every view in one place so hidden
information is audited in one function per game.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from games import options as opts
from games.errors import IllegalAction, InvalidOptions

JSON = Any


def canonical(value: JSON) -> tuple:
    """A hashable form of a JSON value that keeps JSON types apart.

    ``True`` and ``1`` differ, ``2`` and ``2.0`` differ, and lists compare as
    multisets (an action's list of cards may come in any order).
    """
    if isinstance(value, str):
        return ("s", str(value))
    t = type(value)
    if t is bool:
        return ("b", value)
    if t is int:
        return ("i", value)
    if t is dict:
        if not all(isinstance(k, str) for k in value):
            raise IllegalAction("an action's keys must be strings")
        return ("d", tuple(sorted((k, canonical(v)) for k, v in value.items())))
    if t is list:
        return ("l", tuple(sorted(canonical(v) for v in value)))
    if t is float:
        return ("f", value)
    if value is None:
        return ("n",)
    raise IllegalAction(f"an action must be JSON, not {t.__name__}")


class State:
    """One match in progress. See api.md §1 for the contract."""

    game: Game
    seats: int
    seed: int
    options: dict[str, JSON]

    def __init__(self, game: Game, seats: int, seed: int, options: dict[str, JSON]) -> None:
        self.game = game
        self.seats = seats
        self.seed = seed
        self.options = options
        self._legal: list[dict] | None = None
        self._legal_index: dict[tuple, dict] | None = None

    # -- what a game implements -------------------------------------------
    @property
    def to_act(self) -> int | None:
        """The seat whose decision is pending; None once the match is over."""
        raise NotImplementedError

    def _legal_actions(self) -> list[dict]:
        raise NotImplementedError

    def _apply(self, action: dict) -> None:
        """Carry out a listed legal action for `to_act`."""
        raise NotImplementedError

    def view(self, seat: int | None) -> dict:
        raise NotImplementedError

    def result(self) -> dict:
        raise NotImplementedError

    def _explain_illegal(self, action: JSON) -> str | None:
        """Optionally, a rule-specific reason (built from `to_act`'s view only)."""
        return None

    # -- the generic verbs -------------------------------------------------
    @property
    def is_over(self) -> bool:
        return self.to_act is None

    def legal_actions(self) -> list[dict]:
        """The actions `to_act` may take now; empty once over. Do not mutate them."""
        if self._legal is None:
            self._legal = [] if self.to_act is None else self._legal_actions()
        return list(self._legal)

    def apply(self, action: JSON) -> None:
        """Act for `to_act`; an illegal action raises and changes nothing."""
        if self.to_act is None:
            raise IllegalAction("the match is over: there is no decision pending")
        if self._legal is not None:  # a listed action handed back as it is: no need to compare
            for listed in self._legal:
                if listed is action:
                    self._legal = None
                    self._legal_index = None
                    self._apply(listed)
                    return
        if self._legal_index is None:
            if self._legal is None:
                self._legal = self._legal_actions()
            self._legal_index = {canonical(a): a for a in self._legal}
        try:
            key = canonical(action)
        except (IllegalAction, TypeError):
            key = None
        listed = self._legal_index.get(key) if key is not None else None
        if listed is None:
            raise IllegalAction(self._illegal_message(action))
        self._legal = None
        self._legal_index = None
        self._apply(listed)

    def _illegal_message(self, action: JSON) -> str:
        reason = None
        try:
            reason = self._explain_illegal(action)
        except Exception:  # an explanation must never turn into a crash
            reason = None
        if reason:
            return reason
        shown = repr(action)
        if len(shown) > 200:
            shown = shown[:200] + "…"
        sample = self._legal[0] if self._legal else None
        return (
            f"{shown} is not a legal action for seat {self.to_act} now "
            f"({len(self._legal or [])} legal actions, e.g. {sample!r})"
        )


@dataclass
class Game:
    """A game's facts as data, and the one verb that makes states."""

    name: str
    title: str
    min_seats: int
    max_seats: int
    options: Sequence[opts.Option]
    state_class: type[State]
    description: str = ""
    defaults: dict[str, JSON] = field(init=False)

    SEED_LIMIT: ClassVar[int] = 2**63

    def __post_init__(self) -> None:
        self.defaults = {opt.name: opt.default for opt in self.options}

    def new(self, seats: int | None = None, seed: int = 0, options: dict | None = None) -> State:
        """A new match; bad seats, seed or options raise `InvalidOptions`."""
        if seats is None:
            seats = self.min_seats
        if type(seats) is not int or not self.min_seats <= seats <= self.max_seats:
            span = (
                f"{self.min_seats}" if self.min_seats == self.max_seats
                else f"{self.min_seats} to {self.max_seats}"
            )
            raise InvalidOptions(f"{self.name} is played by {span} seats, not {seats!r}")
        if type(seed) is not int or not -self.SEED_LIMIT <= seed < self.SEED_LIMIT:
            raise InvalidOptions(f"the seed must be a whole number below 2**63, not {seed!r}")
        checked = opts.validate(self.options, options)
        return self.state_class(self, seats, seed, checked)

    def describe(self) -> dict:
        """The game as `GET /games` lists it."""
        return {
            "name": self.name,
            "title": self.title,
            "min_seats": self.min_seats,
            "max_seats": self.max_seats,
            "options": copy.deepcopy(self.defaults),  # callers may edit their copy
        }
