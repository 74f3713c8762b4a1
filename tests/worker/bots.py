"""In-process test bots for the match runner, registered as "tests.worker.bots:Name".

Each misbehaves in one way the referee must judge (docs/api.md §3). A fresh
instance plays each seat of each match, as the in-process driver makes one.
"""

from __future__ import annotations

import threading
import time

from sdk import Bot

ENTRY = "tests.worker.bots:"

#: (match_id, result) of every `match_over` a `First` bot was told, in order
MATCH_OVERS: list[tuple[str, dict]] = []
_lock = threading.Lock()


class First(Bot):
    """Plays the first legal action: what the referee plays for a faulty seat."""

    def act(self, view, legal_actions):
        return legal_actions[0]

    def on_match_over(self, match_id, result):
        with _lock:
            MATCH_OVERS.append((match_id, result))


class Last(Bot):
    """Plays the last legal action (never what the referee's default would be)."""

    def act(self, view, legal_actions):
        return legal_actions[-1]


class Raises(Bot):
    def act(self, view, legal_actions):
        raise RuntimeError("boom in act")


class Illegal(Bot):
    def act(self, view, legal_actions):
        return {"nope": 1}


class Sleeper(Bot):
    """Sleeps past any test deadline on its first decision, then plays the last legal action."""

    SLEEP_S = 0.6

    def __init__(self) -> None:
        self.slept = False

    def act(self, view, legal_actions):
        if not self.slept:
            self.slept = True
            time.sleep(self.SLEEP_S)
        return legal_actions[-1]


class Hangs(Bot):
    """Spins without ever sleeping: only the watchdog's signal gets it out.

    Bounded (10 s) so a broken watchdog fails the test instead of hanging the suite.
    """

    def act(self, view, legal_actions):
        end = time.monotonic() + 10.0
        while time.monotonic() < end:
            pass
        return legal_actions[0]


class Mutates(Bot):
    """Hands back the first listed action after writing a note into it (the dict it was given)."""

    def act(self, view, legal_actions):
        action = legal_actions[0]
        action["note"] = "mine"
        return action


def nested(depth: int) -> list:
    """A list nested `depth` deep, built without recursion."""
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


class Nested(Bot):
    """Answers 50,000 levels of nesting: RecursionError in any recursive walk of it."""

    def act(self, view, legal_actions):
        return {"action": nested(50_000)}


class Poisoned:
    """A value that raises whatever is done with it: compare, hash, print."""

    def __eq__(self, other):
        raise RuntimeError("poisoned __eq__")

    def __hash__(self):
        raise RuntimeError("poisoned __hash__")

    def __repr__(self):
        raise RuntimeError("poisoned __repr__")

    __str__ = __repr__


class Poison(Bot):
    def act(self, view, legal_actions):
        return Poisoned()
