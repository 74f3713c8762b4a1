"""What every seat driver offers the match runner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Reply:
    """A bot's answer to one decision.

    `action` is what the bot answered, unchecked; `fault` says why there is
    no usable answer (the runner then plays the first legal action); with
    `appended` the answer already went into the log through the API (a
    polling bot), so the runner only reads it back.
    """

    action: Any = None
    fault: str | None = None
    appended: bool = False


class Driver:
    #: whether the bot lives outside this process: its view must be in the
    #: log (flushed) before it is asked, since someone else now sees the state
    remote = True

    def ask(self, decision: dict) -> Reply:
        raise NotImplementedError

    def match_over(self, match_id: str, result: dict) -> None:
        """Tell the bot the match is over (best effort: a failure here is no fault)."""

    def close(self) -> None:
        """Free what the driver holds (connections) at the end of the match."""

