"""The engine interface every game implements (docs/api.md §1).

A `Game` is the game's facts as data (name, seat range, options) and makes
`State`s; a `State` holds what is true and offers a handful of verbs. The
generic duties live here once so no game can get them wrong:

* `apply()` accepts an action only if it equals a listed legal action with
  exactly the same JSON types (lists compared in any order) and then hands the
  game the *listed* action, so what gets stored is always canonical;
* an illegal action raises `IllegalAction` before anything changes;
* `is_over` is simply "nobody is to act";
* `view(seat)` refuses a seat that is not in the match (`ValueError`), and
  `result()` is refused until the match is over (`ValueError`).

A game subclass keeps `self._to_act` current and writes `_legal_actions()`,
`_apply(action)`, `_view(seat)` and `_result()`, building every view in one
place so hidden information is audited in one function per game.

What the platform and bots rely on beyond the verbs is declared, not implied:
every view's `pending` names one of the game's `Decision`s (None once over),
and `result()` holds the keys of `RESULT` plus the game's own `result_keys`.
tests/games/test_conformance.py holds every registered game to both.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
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


#: The `State` verbs every game shares; a game implements the underscored ones instead.
_SHARED_VERBS = ("to_act", "is_over", "legal_actions", "apply", "view", "result")


def _same(listed: JSON, given: JSON) -> bool:
    """`given` equals `listed` with the same JSON types, in the same order.

    The quick test `apply()` runs before building canonical forms: an action
    sent back exactly as listed (the usual case, even after a JSON round trip)
    is found by a scan of the few legal actions. Anything else — lists in
    another order, `true` for `1` — takes the canonical path, which decides.
    """
    if isinstance(given, str):
        return isinstance(listed, str) and listed == given
    t = type(given)
    if t is dict:
        return (type(listed) is dict and len(listed) == len(given)
                and all(k in listed and _same(listed[k], v) for k, v in given.items()))
    if t is list:
        return (type(listed) is list and len(listed) == len(given)
                and all(map(_same, listed, given)))
    return type(listed) is t and listed == given


class State:
    """One match in progress. See docs/api.md §1 for the contract.

    The verbs callers use (`to_act`, `is_over`, `legal_actions`, `apply`,
    `view`, `result`) are written here once, with the checks every game
    needs; a game keeps `self._to_act` current and writes `_legal_actions`,
    `_apply`, `_view` and `_result`. A subclass that redefines one of the
    shared verbs is refused when it is defined, so no game can skip a check.
    """

    game: Game
    seats: int
    seed: int
    options: dict[str, JSON]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        redefined = [verb for verb in _SHARED_VERBS if verb in cls.__dict__]
        if redefined:
            raise TypeError(
                f"{cls.__name__} redefines {', '.join(redefined)}: a game keeps self._to_act "
                "and writes _legal_actions, _apply, _view and _result (games.base.State)")

    def __init__(self, game: Game, seats: int, seed: int, options: dict[str, JSON]) -> None:
        self.game = game
        self.seats = seats
        self.seed = seed
        self.options = options
        #: the seat whose decision is pending, None once over: kept by the game
        self._to_act: int | None = None
        self._legal: list[dict] | None = None
        self._legal_index: dict[tuple, dict] | None = None

    # -- what a game implements -------------------------------------------
    def _legal_actions(self) -> list[dict]:
        raise NotImplementedError

    def _apply(self, action: dict) -> None:
        """Carry out a listed legal action for `to_act`."""
        raise NotImplementedError

    def _view(self, seat: int | None) -> dict:
        """What `seat` may know (None: the spectator); the seat is already checked."""
        raise NotImplementedError

    def _result(self) -> dict:
        """The outcome; only asked once the match is over."""
        raise NotImplementedError

    def _explain_illegal(self, action: JSON) -> str | None:
        """Optionally, a rule-specific reason (built from `to_act`'s view only)."""
        return None

    # -- the shared verbs --------------------------------------------------
    @property
    def to_act(self) -> int | None:
        """The seat whose decision is pending; None once the match is over."""
        return self._to_act

    @property
    def is_over(self) -> bool:
        return self._to_act is None

    def legal_actions(self) -> list[dict]:
        """The actions `to_act` may take now; empty once over. Do not mutate them."""
        legal = self._legal
        if legal is None:
            legal = self._legal = [] if self._to_act is None else self._legal_actions()
        return legal[:]

    def view(self, seat: int | None) -> dict:
        """JSON-safe: exactly what `seat` may know; `None` is the spectator.

        One seat check for every game: anything but None or a seat index of
        this match is a `ValueError` (never another seat's hand by a negative index).
        """
        if seat is not None and (type(seat) is not int or not 0 <= seat < self.seats):
            raise ValueError(f"no seat {seat!r} in a game of {self.seats}")
        return self._view(seat)

    def result(self) -> dict:
        """The outcome, once the match is over; a `ValueError` before (its decks, its
        hands, a pile's order are secrets while the match runs)."""
        if self._to_act is not None:
            raise ValueError("the match is not over: there is no result yet")
        return self._result()

    def apply(self, action: JSON) -> None:
        """Act for `to_act`; an illegal action raises and changes nothing."""
        if self._to_act is None:
            raise IllegalAction("the match is over: there is no decision pending")
        legal = self._legal
        if legal is not None:  # a listed action handed back as it is: no need to compare
            for listed in legal:
                if listed is action:
                    self._legal = self._legal_index = None
                    self._apply(listed)
                    return
        else:
            legal = self._legal = self._legal_actions()
        if type(action) is dict:  # the usual case: sent exactly as listed
            try:
                for listed in legal:
                    if listed == action and _same(listed, action):
                        self._legal = self._legal_index = None
                        self._apply(listed)
                        return
            except Exception:  # a hostile value's __eq__: the canonical path judges it
                pass
        if self._legal_index is None:
            self._legal_index = {canonical(a): a for a in legal}
        try:
            key = canonical(action)
        except (IllegalAction, TypeError):
            key = None
        found = self._legal_index.get(key) if key is not None else None
        if found is None:
            raise IllegalAction(self._illegal_message(action))
        self._legal = self._legal_index = None
        self._apply(found)

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
            f"{shown} is not a legal action for seat {self._to_act} now "
            f"({len(self._legal or [])} legal actions, e.g. {sample!r})"
        )


#: What every game's `result()` holds, key -> meaning: the ladders, the
#: tournaments and the replays read these and nothing else. A game declares its
#: other keys in `Game.result_keys`.
RESULT: Mapping[str, str] = {
    "scores": "one number per seat: the match points",
    "ranks": "one rank per seat, 1 the best; tied seats share a rank and the next is skipped (1, 1, 3)",
    "decks": "every deck dealt, top first, as `options['deck']` would replay it",
}


@dataclass(frozen=True)
class Decision:
    """One kind of decision: a value the view's `pending` takes when a seat is asked.

    Bots dispatch on `pending`, and the rules page shows one real example of
    each kind (docs/gen_rules.py looks for it in seeded matches of the demo's
    table, under `options` when only a variant asks it).
    """

    kind: str
    meaning: str
    #: the options under which it comes up, when the default rules never ask it
    options: Mapping[str, JSON] = field(default_factory=dict)
    #: the decision in plain words for a person at the table (/play): no JSON
    words: str = ""


@dataclass(frozen=True)
class Demo:
    """How `cardarena demo` shows a game: the table size and the deals per table."""

    seats: int
    deals: int


#: The example bot every game lists (it plays any game).
RANDOM_BOT = "example_bots.random:RandomBot"
#: The search bot for every game that can `sample()`.
PIMC_BOT = "example_bots.pimc:PIMC"


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
    #: the rules page's file name (docs and `GET /games` link to it), e.g. "duck-soup.md"
    rules: str = ""
    #: `card_face(text)`: how a string of a view or action is drawn as a card on a
    #: page (a dict the templates read), or None when it is not one of this game's cards
    card_face: Callable[[str], dict | None] | None = None
    #: `table(view, last, seat_views)`: the card table a page draws at one step, as the
    #: generic layout of games/table.py (None: `games.table.default_table`)
    table: Callable[..., dict] | None = None
    #: `caution(view, action)`: why a legal action would cost the seat dearly, in words, judged
    #: from that seat's own view only (a page marks it before a person picks it); None when it
    #: would not (no `caution`: no action is marked)
    caution: Callable[[dict, dict], str | None] | None = None
    #: the demo's table for this game (None: the demo leaves it out)
    demo: Demo | None = None
    #: its example bots, kind -> "module:Class" ("random", "heuristic", "pimc"): strings,
    #: so the engines never import the bots
    bots: Mapping[str, str] = field(default_factory=dict)
    #: `sampler(game, view, options)`: what a seat's view says about the hidden
    #: cards, prepared once, with a `sample(seed) -> State` (see `Game.sample`)
    sampler: Callable[[Game, dict, dict | None], Any] | None = None
    #: every kind of decision its views' `pending` may name, in the rules page's order
    decisions: Sequence[Decision] = ()
    #: what `result()` holds besides `RESULT`'s keys: key -> meaning
    result_keys: Mapping[str, str] = field(default_factory=dict)
    #: how many seats a ladder table has (None: `min_seats`): the game's usual table,
    #: where a two-seat deal would not be the game its players know
    ladder_seats: int | None = None
    defaults: dict[str, JSON] = field(init=False)
    _sample_cache: tuple | None = field(default=None, init=False, repr=False, compare=False)

    SEED_LIMIT: ClassVar[int] = 2**63

    def __post_init__(self) -> None:
        self.defaults = {opt.name: opt.default for opt in self.options}
        if self.ladder_seats is None:
            self.ladder_seats = self.min_seats
        if not self.min_seats <= self.ladder_seats <= self.max_seats:
            raise ValueError(f"{self.name}: ladder_seats {self.ladder_seats} is not a seat count of the game")

    @property
    def ladder_table(self) -> int:
        """How many seats a ladder table has (`ladder_seats`, which `min_seats` stands in for)."""
        return self.min_seats if self.ladder_seats is None else self.ladder_seats

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

    def sample(self, view: dict, seed: int, options: dict | None = None) -> State:
        """A full state drawn among those consistent with everything `view["seat"]` knows.

        docs/api.md §5: ``sample(view, seed).view(view["seat"]) == view``, the same
        legal actions, it plays on to the end, the same seed gives the same
        state, and where the rules reveal nothing beyond card counting every
        consistent placement of the unseen cards is equally likely. What lies
        beyond the view (deals still to come) is drawn from `seed`. `options`
        may give the match's options a view does not show (duck-soup's
        ``deal_only``, DOUBLE's ``rounds``); without them the defaults are
        assumed. A view that no state agrees with is a `ValueError`.

        Search draws many samples from one view: what the view says is worked
        out once and kept for the view object last given, so do not change a
        view between calls.
        """
        if self.sampler is None:
            raise NotImplementedError(f"{self.name} has no sampler")
        cached = self._sample_cache
        if cached is not None and cached[0] is view and cached[1] == options:
            prepared = cached[2]
        else:
            prepared = self.sampler(self, view, options)
            self._sample_cache = (view, copy.deepcopy(options), prepared)
        return prepared.sample(seed)

    def describe(self) -> dict:
        """The game as `GET /games` lists it."""
        return {
            "name": self.name,
            "title": self.title,
            "min_seats": self.min_seats,
            "max_seats": self.max_seats,
            "options": copy.deepcopy(self.defaults),  # callers may edit their copy
        }
