"""The bot protocol, from the bot's side: check a message, sign it, answer it.

Both ways of reaching a bot — the referee POSTing to `sdk.serve`, or the bot
polling with `sdk.connect` — carry the same decision JSON (docs/api.md §3). This
module holds what they share, so the two hosts judge messages identically:

* `sign` / `signature_ok`: the `X-Cardarena-Signature` HMAC;
* `check_message`: the shape of a decision or a `match_over` (a `ProtocolError`
  saying what is wrong, never a `KeyError` deep inside a bot);
* `BotHooks`: calls the bot's hooks in order — `on_match_start` before the
  first decision of a match (seat) it has not seen, `decide` for each decision,
  `on_match_over` at the end — on one instance per match when given a bot
  class, and is safe to share between threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from sdk.bot import Bot
from sdk.debug import collecting, with_debug
from sdk.instances import BotSource, is_shared, new_bot, source_game, source_name
from sdk.referee import PROTOCOL, listed_action

SIGNATURE_HEADER = "X-Cardarena-Signature"

log = logging.getLogger("sdk")


class ProtocolError(ValueError):
    """A message that is not a decision or a `match_over` of this protocol."""


class BotFailed(RuntimeError):
    """The bot's own code raised (or answered something that is not JSON)."""


def sign(body: bytes, secret: str) -> str:
    """The `X-Cardarena-Signature` value for `body`: ``sha256=<hex HMAC>``.

    The key is the secret's UTF-8 bytes and the message the exact body, so a
    bot checks the bytes it received, before any JSON parsing.
    """
    import hashlib  # webhook bots alone sign: a hosted bot's start does not load OpenSSL
    import hmac

    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return "sha256=" + digest


def signature_ok(body: bytes, header: str | None, secret: str) -> bool:
    """Whether `header` is the referee's signature of `body` (constant time)."""
    if not header:
        return False
    import hmac

    return hmac.compare_digest(sign(body, secret).encode("ascii"),
                               header.strip().encode("utf-8", "surrogateescape"))


def _need(message: dict, key: str, kind: type, what: str) -> Any:
    value = message.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ProtocolError(f"{key!r} must be {what}, got {value!r:.80}")
    return value


def check_message(message: Any) -> dict:
    """`message` itself if it is a well-formed decision, `match_over` or `ping`, else `ProtocolError`."""
    if not isinstance(message, dict):
        raise ProtocolError(f"a message is a JSON object, not {type(message).__name__}")
    kind = message.get("type")
    if kind == "turn":
        protocol = message.get("protocol")
        if protocol != PROTOCOL or isinstance(protocol, bool):
            raise ProtocolError(f"this SDK speaks protocol {PROTOCOL}, not {protocol!r:.20}")
        _need(message, "match_id", str, "a string")
        _need(message, "game", str, "a string")
        _need(message, "turn", int, "an integer")
        _need(message, "seat", int, "an integer")
        _need(message, "view", dict, "an object")
        _need(message, "deadline_ms", int, "an integer")
        legal = _need(message, "legal_actions", list, "a list")
        if not legal or not all(isinstance(a, dict) for a in legal):
            raise ProtocolError("'legal_actions' must be a non-empty list of objects")
        return message
    if kind == "match_over":
        _need(message, "match_id", str, "a string")
        _need(message, "result", dict, "an object")
        return message
    if kind == "ping":  # the platform asks whether the bot is alive: any 200 answers it
        return message
    raise ProtocolError(f"'type' must be 'turn', 'match_over' or 'ping', got {kind!r:.40}")


def describe(action: Any) -> str:
    """A short form of an action for one log line."""
    text = repr(action)
    return text if len(text) <= 80 else text[:77] + "..."


def said_of_you(match_id: str, you: object) -> None:
    """Log what a match meant for the bot: a forfeit (a warning), a pause (an error), from a
    `match_over`'s `you` (`{"seat", "forfeited", "paused"}`)."""
    if not isinstance(you, dict):
        return
    if you.get("forfeited"):
        log.warning("%s: forfeited (seat %s): the bot reached the match's fault limit and the referee "
                    "played its remaining turns; each fault is on the match page", match_id, you.get("seat"))
    if you.get("paused"):
        log.error("%s: the bot is paused: it forfeited ladder matches in a row, so the ladder pairs it with "
                  "nobody and it enters no rated match until you resume it: Client.resume_bot(bot) "
                  "(POST /api/v1/bots/{id}/resume)", match_id)


class WrongGame(BotFailed):
    """The bot made for a match plays another game than the decision's."""


class BotHooks:
    """Hands messages to a bot, calling its hooks in the order they promise.

    Given a `Bot` instance, that one instance answers every match (today's
    behaviour). Given a bot class or zero-argument factory (`sdk.instances`),
    each (match, seat) gets its own instance, made just before its
    `on_match_start` and dropped at `match_over` — so per-match state in
    `self` is safe while the bot plays many matches at once. A factory that
    raises is a `BotFailed` of that decision only: the match's next decision
    tries again, the other matches never notice.

    Remembers the (match, seat) pairs it has seen — a bounded number, the
    least recently asked forgotten first (with their instances) — so
    `on_match_start` runs once per match even when the referee sends the same
    decision twice (a retry, a poll repeated).
    """

    #: the (match, seat) pairs remembered: with a shared instance, only their keys; with a class,
    #: one instance each (more than this many matches in play at once would be a bot of its own)
    REMEMBER = 10_000
    REMEMBER_INSTANCES = 1_000

    def __init__(self, bot: BotSource, remember: int | None = None) -> None:
        self.shared = is_shared(bot)  # (a source that is neither raises here)
        self.bot: Bot | None = bot if isinstance(bot, Bot) else None
        self.factory: Callable[[], Bot] | None = None if isinstance(bot, Bot) else bot
        self.name = source_name(bot)
        self.game = source_game(bot)
        self.remember = remember or (self.REMEMBER if self.shared else self.REMEMBER_INSTANCES)
        self._seen: OrderedDict[tuple[str, int], Bot | None] = OrderedDict()
        self._lock = threading.Lock()

    def wrong_game(self, decision: dict, game: str | None = None) -> str | None:
        """Why this bot should not play `decision`'s game, or None."""
        game = game if game is not None else self.game
        if game is not None and decision["game"] != game:
            return f"{self.name} plays {game}, not {decision['game']}"
        return None

    def _bot_for(self, match_id: str, seat: int) -> tuple[Bot, bool]:
        """The bot answering this seat of this match, and whether this is its first decision
        (a new instance is made then, when given a class; outside the lock: it may be slow)."""
        key = (match_id, seat)
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return self._answering(self._seen[key]), False
        made = None if self.factory is None else new_bot(self.factory)
        with self._lock:
            if key in self._seen:  # the same decision twice at once: the first one made it
                self._seen.move_to_end(key)
                return self._answering(self._seen[key]), False
            self._seen[key] = made
            while len(self._seen) > self.remember:
                (old, _), dropped = self._seen.popitem(last=False)
                if dropped is not None:
                    log.warning("%s: forgot the bot of match %s (over %d at once)", self.name, old,
                                self.remember)
        return self._answering(made), True

    def _answering(self, made: Bot | None) -> Bot:
        """The instance made for a seat, or else the shared one."""
        bot = made or self.bot
        assert bot is not None  # a class's seats each have theirs; an instance is shared
        return bot

    def instance(self, match_id: str, seat: int) -> Bot | None:
        """The bot answering this seat of this match (the shared one when given an instance;
        None if a class's instance for it was never made or already dropped): what a host reads
        after `decide` when it needs the bot that answered."""
        if self.shared:
            return self.bot
        with self._lock:
            return self._seen.get((match_id, seat))

    def _forget(self, match_id: str) -> list[Bot]:
        """Forget the match's seats; the bots that played them (the shared one once)."""
        with self._lock:
            keys = [k for k in self._seen if k[0] == match_id]
            bots = [self._seen.pop(key) for key in keys]
        if self.bot is not None:  # shared
            return [self.bot]
        return [b for b in bots if b is not None]

    def answer(self, decision: dict) -> dict:
        """The answer to send for a checked decision: `{"action"}`, and `"debug"` when the bot
        wrote some (`Bot.debug`); `BotFailed` if its code raised."""
        with collecting() as notes:
            action = self.decide(decision)
        return with_debug({"action": action}, notes.text)

    def decide(self, decision: dict) -> dict:
        """The bot's action for a checked decision; `BotFailed` if its code raised (making
        the bot included), `WrongGame` if the bot made plays another game."""
        match_id, seat, turn = decision["match_id"], decision["seat"], decision["turn"]
        started = time.monotonic()
        try:
            bot, first = self._bot_for(match_id, seat)
            if first and not self.shared:
                wrong = self.wrong_game(decision, bot.game)
                if wrong:
                    self._forget(match_id)
                    raise WrongGame(wrong)
            if first:
                bot.on_match_start(match_id, seat, decision["view"])
            action = bot.decide(decision)
        except WrongGame:
            raise
        except Exception as exc:
            log.exception("%s turn %s seat %s: the bot raised", match_id, turn, seat)
            raise BotFailed(f"{type(exc).__name__}: {exc}") from exc
        elapsed_ms = (time.monotonic() - started) * 1000
        if listed_action(decision["legal_actions"], action) is None:  # the referee's own rule
            log.warning("%s turn %s: %s is not one of legal_actions", match_id, turn, describe(action))
        late = f"  LATE (deadline {decision['deadline_ms']} ms)" if elapsed_ms > decision["deadline_ms"] else ""
        log.info("%s turn %d seat %d: %d legal -> %s in %.0f ms%s", match_id, turn, seat,
                 len(decision["legal_actions"]), describe(action), elapsed_ms, late)
        return action

    def seats(self, match_id: str) -> list[int]:
        """The seats of `match_id` this bot was asked to play (while it is remembered)."""
        with self._lock:
            return sorted(seat for (match, seat) in self._seen if match == match_id)

    def match_over(self, message: dict) -> None:
        """Call `on_match_over` of the bot(s) that played the match, then drop them; `BotFailed`
        if one raised. With a class, a match none of its instances played calls nothing. What the
        match meant for this bot (`you`: a forfeit, a pause) is logged where its author looks."""
        match_id = message["match_id"]
        bots = self._forget(match_id)
        ranks = message["result"].get("ranks")
        log.info("%s over: ranks %s", match_id, ranks)
        said_of_you(match_id, message.get("you"))
        failed = None
        for bot in bots:
            try:
                bot.on_match_over(match_id, message["result"])
            except Exception as exc:
                log.exception("%s: on_match_over raised", match_id)
                failed = failed or BotFailed(f"{type(exc).__name__}: {exc}")
        if failed is not None:
            raise failed
