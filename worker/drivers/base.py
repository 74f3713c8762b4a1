"""What every seat driver offers the match runner."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Reply:
    """A bot's answer to one decision.

    `action` is what the bot answered, unchecked; `fault` says why there is
    no usable answer (the referee then plays the first legal action); `debug`, what
    the bot wrote about it (kept apart from the public log).
    """

    action: Any = None
    fault: str | None = None
    #: the bot's debug text for this turn, made safe (`sdk.debug.debug_text`): its owner's only
    debug: str | None = None
    #: the time to charge when the driver measures it itself (a hosted bot's CPU ms); else the
    #: wall time the runner saw
    ms: int | None = None


class Driver:
    #: whether the bot lives outside this process: its view must be in the
    #: log (flushed) before it is asked, since someone else now sees the state
    remote = True

    def ask(self, decision: dict) -> Reply:
        raise NotImplementedError

    def match_over(self, match_id: str, result: dict, you: dict | None = None) -> None:
        """Tell the bot the match is over (best effort: a failure here is no fault); `you`: what
        the match meant for this seat's bot (`{"seat", "forfeited", "paused"}`), which a remote
        bot's host logs (sdk/protocol.py)."""

    def close(self) -> None:
        """Free what the driver holds (connections) at the end of the match."""



class Remote(Driver):
    """A seat whose bot lives on its author's machine (webhook or polling): never asked in
    the worker. The runner publishes its decision (`Store.await_answer`) and ends its run."""

    def __init__(self, store, bot: dict) -> None:
        self.store = store
        self.bot = bot

    def ask(self, decision: dict) -> Reply:
        raise RuntimeError("a remote seat is asked through Store.await_answer, never in the worker")

    def match_over(self, match_id: str, result: dict, you: dict | None = None) -> None:
        if self.bot.get("kind") == "webhook":  # sent by a dispatcher: no worker waits on it either
            message = {"type": "match_over", "match_id": match_id, "result": result}
            if you is not None:
                message["you"] = you
            self.store.push_notice(self.bot["id"], message, self.bot.get("version"))
