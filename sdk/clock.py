"""Time: each seat's clock in a match — a move time per decision and a bank for overruns.

The time rules a match is played under are `TimeRules`, defined once here
with their defaults and ranges: the API's schemas, local play, the store and
the referee all read them from here.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class TimeRules:
    """The time rules a match is played under, with their defaults and ranges — the one place
    they are written: the API's fields, `cardarena play`'s flags, the store and the referee
    read them here.

    `move_timeout_ms` for every decision, plus `time_bank_ms` for the match that pays
    for overruns; `max_faults` faults forfeit the seat.
    """

    move_timeout_ms: int = 2000
    time_bank_ms: int = 10000
    max_faults: int = 3

    #: the lowest and highest value each rule accepts; a bank is at most a minute (docs/api.md
    #: §6): ten minutes let one challenge hold a bot's slot and a platform thread that long
    RANGES: ClassVar[dict[str, tuple[int, int]]] = {
        "move_timeout_ms": (100, 10000), "time_bank_ms": (0, 60000), "max_faults": (1, 10)}

    def __post_init__(self) -> None:
        for name, (low, high) in self.RANGES.items():
            value = getattr(self, name)
            if type(value) is not int or not low <= value <= high:
                raise ValueError(f"{name} must be an integer from {low} to {high}, not {value!r}")


#: the rules a match gets when it names none
DEFAULT_TIME = TimeRules()


def elapsed_ms(since: float) -> int:
    """Whole milliseconds since `since` (a `time.monotonic()`), rounded up: late is late."""
    return max(0, math.ceil((time.monotonic() - since) * 1000))


@dataclass
class Clock:
    """One seat's time in one match: `move_ms` for every decision, and a bank.

    A decision may take up to `deadline_ms` = `move_ms` + what is left in the
    bank; what it takes beyond `move_ms` is drawn from the bank. Past the
    deadline it is a timeout, charged the whole deadline: the bank is empty.
    """

    move_ms: int
    bank_ms: int
    #: what the seat was charged for its previous decision in this match
    last_latency_ms: int | None = None

    @property
    def deadline_ms(self) -> int:
        return self.move_ms + self.bank_ms

    def charge(self, ms: int) -> None:
        """Charge a decision of `ms` (as logged, so a replay charges the same)."""
        self.bank_ms = max(0, self.bank_ms - max(0, ms - self.move_ms))
        self.last_latency_ms = ms


def seat_clocks(seats: int, move_ms: int, bank_ms: int, own: list[dict | None] | None = None) -> list[Clock]:
    """Each seat's clock at a match's start: the match's `move_ms` and `bank_ms`, except for a
    seat given a clock of its own in `own` (`{"move_timeout_ms", "time_bank_ms"}`, or None for
    the match's): a person at the table (docs/api.md §6 "People at the table") thinks on a
    longer clock than the bots beside it."""
    own = list(own or [])
    out = []
    for seat in range(seats):
        rules = own[seat] if seat < len(own) else None
        if isinstance(rules, dict):
            out.append(Clock(int(rules["move_timeout_ms"]), int(rules["time_bank_ms"])))
        else:
            out.append(Clock(move_ms, bank_ms))
    return out


def check_seat_clocks(own: object, seats: int) -> list[dict | None] | None:
    """`own` as `seat_clocks` reads it, or ValueError: None, or one entry a seat, each None or
    `{"move_timeout_ms", "time_bank_ms"}` whole numbers of at least 0 (move at least 1)."""
    if own is None:
        return None
    if not isinstance(own, list) or len(own) != seats:
        raise ValueError(f"seat_clocks must list one clock (or null) for each of the {seats} seats")
    for rules in own:
        if rules is None:
            continue
        if not isinstance(rules, dict) or set(rules) != {"move_timeout_ms", "time_bank_ms"}:
            raise ValueError("a seat's clock is {\"move_timeout_ms\", \"time_bank_ms\"}")
        move, bank = rules["move_timeout_ms"], rules["time_bank_ms"]
        if type(move) is not int or type(bank) is not int or move < 1 or bank < 0:
            raise ValueError(f"a seat's clock holds whole numbers of milliseconds, not {rules!r}")
    return own


def seat_times(log: list[dict], seats: int, move_ms: int, bank_ms: int | None,
               own: list[dict | None] | None = None) -> list[dict]:
    """Each seat's time in a match, from its log: `{"latency_ms": {"p50", "max"}, "bank_ms"}`
    (the latencies the referee charged its decisions, None before the first; the bank left,
    None for a match from before the bank). `own`: the seats' own clocks (`seat_clocks`)."""
    import statistics  # here: the referee imports this module, a hosted bot's start pays each import

    clocks = seat_clocks(seats, move_ms, bank_ms or 0, own)
    charged: list[list[int]] = [[] for _ in range(seats)]
    for entry in log:
        ms, seat = entry.get("ms"), entry.get("seat")
        if type(ms) is int and type(seat) is int and 0 <= seat < seats:
            clocks[seat].charge(ms)
            charged[seat].append(ms)
    return [{"latency_ms": {"p50": statistics.median_low(ms) if ms else None, "max": max(ms, default=None)},
             "bank_ms": None if bank_ms is None else clock.bank_ms}
            for clock, ms in zip(clocks, charged, strict=True)]
