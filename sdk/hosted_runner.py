"""A hosted bot's process: the bot's class, asked over stdin and stdout, inside its sandbox.

The platform starts it (core/sandbox.py) as

    python -I -S -c "...; import sdk.hosted_runner as r; r.main(['mybot:MyBot'])"

with the bot's code importable from `/bot`. It speaks the bot protocol's JSON,
one message a line, the same `turn`, `match_over` and `ping` messages a webhook
bot is POSTed (docs/api.md §3):

* first it reports `{"ready": true}`, or `{"error": "<traceback>"}` when the
  bot's code does not import or names no `sdk.Bot` subclass, and ends;
* then, for each line it reads: a decision -> `{"action": …}` (and `"debug"`
  when the bot wrote some), or `{"error": "<the traceback of what it raised>"}`; a `match_over`
  or a `ping` -> `{"ok": true}`.

The bot is handed its messages by `sdk.protocol.BotHooks`, as `sdk.serve`
hands them: one instance per (match, seat), `on_match_start` before its first
decision. What the bot prints goes to its stderr, never into the protocol.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback

from sdk.bot import Bot
from sdk.protocol import BotFailed, BotHooks, ProtocolError, check_message

#: the most characters of a traceback reported
MAX_REPORT = 4000


def main(argv: list[str]) -> None:
    channel = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # print() and anything else written to fd 1 lands in stderr

    def say(payload: dict) -> None:
        channel.write(json.dumps(payload, separators=(",", ":")).encode() + b"\n")

    if not argv:  # the platform checking that a sandbox starts at all
        say({"ready": True})
        return
    try:
        bot_class = load(argv[0])
    except Exception:
        say({"error": report(traceback.format_exc())})
        return
    hooks = BotHooks(bot_class)
    say({"ready": True})
    for line in sys.stdin.buffer:
        say(answer(hooks, line))


def load(entrypoint: str) -> type[Bot]:
    """The class `module:Class` names, imported from the bot's code (the traceback of its import
    goes up as it is: its author reads it)."""
    module_name, _, class_name = entrypoint.rpartition(":")
    module = importlib.import_module(module_name)
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not issubclass(cls, Bot):
        raise TypeError(f"{entrypoint!r} does not name a subclass of sdk.Bot")
    return cls


def answer(hooks: BotHooks, line: bytes) -> dict:
    """What to answer one message line."""
    try:
        message = check_message(json.loads(line))
    except (ValueError, ProtocolError) as exc:
        return {"error": f"not a message of the protocol: {exc}"}
    if message["type"] == "turn":
        try:
            out = hooks.answer(message)
            json.dumps(out)
        except BotFailed as exc:  # what it raised, and where: for its owner
            cause = exc.__cause__ or exc
            return {"error": report("".join(traceback.format_exception(cause)))}
        except (TypeError, ValueError) as exc:
            return {"error": f"the action is not JSON: {exc}"}
        return out
    if message["type"] == "match_over":
        try:
            hooks.match_over(message)
        except BotFailed:
            pass
    return {"ok": True}


def report(text: str) -> str:
    """A traceback cut to `MAX_REPORT` characters, its end kept (where the error is)."""
    return text if len(text) <= MAX_REPORT else "…" + text[-MAX_REPORT + 1:]
