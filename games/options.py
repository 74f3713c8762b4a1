"""Declaring a game's options and checking what a caller passes.

A game lists its options as `Option`s at the top of its module. Checking is
strict about JSON types (``true`` is not ``1``; ``2.0`` is not ``2``) because
options travel as JSON and are stored with the match: what is accepted is
exactly what will be replayed. Every message names the option and says what
would have been accepted, so a person can fix the request.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from games.errors import InvalidOptions

Check = Callable[[str, Any], Any]


@dataclass(frozen=True)
class Option:
    """One option: its name, its default (as JSON) and how a value is checked.

    `check(name, value)` returns the value to use or raises `InvalidOptions`.
    A default of ``"auto"`` means the game picks a value from the seat count.
    """

    name: str
    default: Any
    check: Check
    help: str = ""


def is_int(value: Any) -> bool:
    return type(value) is int


def boolean() -> Check:
    def check(name: str, value: Any) -> bool:
        if type(value) is not bool:
            raise InvalidOptions(f"option {name!r} must be true or false, not {value!r}")
        return value

    return check


def integer(low: int, high: int | None = None) -> Check:
    def check(name: str, value: Any) -> int:
        if not is_int(value):
            raise InvalidOptions(f"option {name!r} must be a whole number, not {value!r}")
        if value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise InvalidOptions(f"option {name!r} must be {bounds}, not {value}")
        return value

    return check


def one_of(*choices: Any) -> Check:
    def check(name: str, value: Any) -> Any:
        for choice in choices:
            if type(choice) is type(value) and choice == value:
                return value
        listed = ", ".join(repr(c) for c in choices)
        raise InvalidOptions(f"option {name!r} must be one of {listed}, not {value!r}")

    return check


def either(*checks: Check) -> Check:
    """Accept a value that any of `checks` accepts (the first message explains)."""

    def check(name: str, value: Any) -> Any:
        first: InvalidOptions | None = None
        for c in checks:
            try:
                return c(name, value)
            except InvalidOptions as exc:
                first = first or exc
        assert first is not None
        raise first

    return check


def card_list() -> Check:
    """A JSON list of strings; the game checks it is its deck (see `check_deck`)."""

    def check(name: str, value: Any) -> Any:
        if value is None:
            return None
        if type(value) is not list or not all(isinstance(c, str) for c in value):
            raise InvalidOptions(f"option {name!r} must be a list of card names, top first")
        return list(value)

    return check


def check_deck(name: str, given: Sequence[str], expected: Iterable[str]) -> list[str]:
    """Check that `given` is a permutation of `expected` (a multiset of cards).

    Returns `given` as a list. The message says exactly what is wrong: the
    length, a card that is not in this game, one too many, one missing.
    """
    want = Counter(expected)
    got = Counter(given)
    total = sum(want.values())
    problems = []
    if len(given) != total:
        problems.append(f"it must hold {total} cards, not {len(given)}")
    unknown = sorted(c for c in got if c not in want)
    if unknown:
        problems.append("not cards of this game: " + ", ".join(map(repr, unknown[:5])))
    extra = sorted(c for c in got if c in want and got[c] > want[c])
    if extra:
        problems.append("too many of: " + ", ".join(map(repr, extra[:5])))
    missing = sorted(c for c in want if got[c] < want[c])
    if missing:
        problems.append("missing: " + ", ".join(map(repr, missing[:5])))
    if problems:
        raise InvalidOptions(f"option {name!r} is not a full deck: " + "; ".join(problems))
    return list(given)


def validate(declared: Sequence[Option], given: Any) -> dict[str, Any]:
    """Fill in defaults and check every given option; unknown names are refused."""
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise InvalidOptions(f"options must be an object of name: value, not {given!r}")
    by_name = {opt.name: opt for opt in declared}
    unknown = sorted(set(given) - set(by_name))
    if unknown:
        known = ", ".join(sorted(by_name)) or "none"
        raise InvalidOptions(f"unknown option {unknown[0]!r}; this game's options are: {known}")
    out: dict[str, Any] = {}
    for opt in declared:
        if opt.name in given:
            value = given[opt.name]
            if value is None and opt.default is None:
                out[opt.name] = None
            else:
                out[opt.name] = opt.check(opt.name, value)
        elif isinstance(opt.default, (list, dict)):
            # a copy: a default list (DOUBLE's rounds) must not be shared by every match
            out[opt.name] = copy.deepcopy(opt.default)
        else:
            out[opt.name] = opt.default
    return out
