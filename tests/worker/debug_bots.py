"""Bots that write debug text naming how they are reached and the turn (tests/worker/test_debug_output.py).

In-process, `InProcess` is registered as "tests.worker.debug_bots:InProcess".
"""

from __future__ import annotations

from sdk import Bot


class Noter(Bot):
    """Notes "<how> turn <k>" for each decision and plays the first legal action."""

    how = "remote"

    def __init__(self, how: str | None = None) -> None:
        self.how = how or self.how

    def decide(self, decision):
        self.debug(f"{self.how} turn {decision['turn']}")
        return decision["legal_actions"][0]


class InProcess(Noter):
    how = "in-process"
