"""Webhook bots: the referee POSTs each decision to the bot's URL.

Everything a remote bot can do wrong is bounded by `core.calls.call_async`:

* time — one deadline for the whole answer (`move_timeout_ms`), whatever the
  bot trickles, however slowly: no decision holds a worker past it;
* size — an answer over 64 KB is refused (on its declared length, unread, or
  cut while reading), so a 10 MB body costs 64 KB of memory;
* where — the URL is checked again before each call (a stored URL the
  referee cannot call is a `refused_url` fault), redirects are not followed,
  and with `CARDARENA_PUBLIC_URLS_ONLY=1` an address inside the referee's
  network is refused after name resolution;
* what — the answer must be a JSON object holding `action`, parsed with the
  same depth and number limits as the API's input (`core.jsonsafe`), so
  no nesting or giant number can raise inside the worker.

Each failure is a fault of its kind (sdk/referee.py). A non-2xx answer is
`http_error: HTTP <status>`: the body of a bot's error page never reaches the
public log. Every call carries `X-Cardarena-Signature: sha256=<HMAC of the
body>` keyed with the bot's secret (docs/api.md §3).
"""

from __future__ import annotations

import logging
import os
import time

from core import eventloop
from core.calls import WAIT_SLACK_S, CallError, post_signed, post_signed_async
from core.jsonsafe import JSONTooComplex, safe_loads
from sdk.debug import debug_text
from sdk.faults import decision_timeout, fault
from sdk.protocol import SIGNATURE_HEADER
from worker.drivers.base import Driver, Reply

log = logging.getLogger(__name__)

#: the largest answer read from a bot
MAX_ANSWER = 64 * 1024
#: how long a `match_over` notice may take (best effort: no fault either way)
MATCH_OVER_S = 2.0

__all__ = ["MAX_ANSWER", "SIGNATURE_HEADER", "WebhookDriver"]


class WebhookDriver(Driver):
    """One webhook bot as one version is reached. `ask_async` is the call itself (the
    dispatcher awaits it on its loop, noting the bot's liveness afterwards, off the loop);
    `ask` runs it on the process's loop (core/eventloop.py) and notes liveness at once."""

    def __init__(self, bot: dict, secret: str, context=None, store=None) -> None:
        self.bot_id = bot.get("id")
        self.url = bot.get("url") or ""
        self.secret = secret
        self.public_only = os.environ.get("CARDARENA_PUBLIC_URLS_ONLY") == "1"
        self.store = store  # where the bot's liveness is noted (core/liveness.py), if anywhere
        self.party = bot.get("owner")  # its account: shares the name resolvers (core/calls.py)
        #: what the last call showed of the bot's liveness (`note`'s argument)
        self.outcome: str | None = None

    def post(self, message: dict, seconds: float) -> tuple[int, bytes]:
        """POST `message` signed; (status, body) or a `CallError` saying what went wrong."""
        return post_signed(self.url, self.secret, message, seconds, MAX_ANSWER, public_only=self.public_only,
                           party=self.party)

    async def post_async(self, message: dict | bytes, seconds: float) -> tuple[int, bytes]:
        """`post`, awaited on the running loop; `message` may be its JSON already."""
        return await post_signed_async(self.url, self.secret, message, seconds, MAX_ANSWER,
                                       public_only=self.public_only, party=self.party)

    def ask(self, decision: dict) -> Reply:
        reply = eventloop.run(self.ask_async(decision), decision["deadline_ms"] / 1000 + WAIT_SLACK_S)
        self.note(self.outcome)
        return reply

    async def ask_async(self, decision: dict, body: bytes | None = None) -> Reply:
        """The bot's reply to `decision` (sent as `body`, its JSON, if given), its clock started
        now; `outcome` says what it showed of its liveness. `NotMade` (the platform could not
        call) is raised: no reply at all."""
        seconds = decision["deadline_ms"] / 1000
        began = time.monotonic()
        try:
            status, body = await self.post_async(decision if body is None else body, seconds)
        except CallError as exc:
            self.outcome = exc.kind
            if exc.kind == "timeout":
                return Reply(fault=decision_timeout(decision))
            return Reply(fault=fault(exc.kind, str(exc)))
        self.outcome = None if 200 <= status < 300 else f"http_error: HTTP {status}"
        if time.monotonic() - began > seconds:
            return Reply(fault=decision_timeout(decision, round((time.monotonic() - began) * 1000)))
        if 300 <= status < 400:
            return Reply(fault=fault("http_error", f"HTTP {status} (redirects are not followed)"))
        if not 200 <= status < 300:
            return Reply(fault=fault("http_error", f"HTTP {status}"))
        return read_answer(body)

    def note(self, failure: str | None) -> None:
        """Note what a call showed of the bot's liveness (`failure`: the CallError's kind, a
        non-2xx answer's "http_error: HTTP <status>", or None): a 2xx answer of any content
        is seen; no connection, a refused URL or an error status (401/403: the signature
        refused, core/liveness.py) failed; a timeout says neither. Best effort."""
        alive = shows_alive(failure)
        if self.store is None or self.bot_id is None or alive is None:
            return
        try:
            if alive:
                self.store.bot_seen(self.bot_id)
            else:
                self.store.bot_failed(self.bot_id, failure)
        except Exception:  # noqa: BLE001 - liveness is a hint: it never costs a decision
            log.warning("could not note bot %s's liveness", self.bot_id, exc_info=True)

    def match_over(self, match_id: str, result: dict, you: dict | None = None) -> None:
        try:
            self.post({"type": "match_over", "match_id": match_id, "result": result}, MATCH_OVER_S)
        except Exception:
            pass


def shows_alive(failure: str | None) -> bool | None:
    """What a call's outcome (`WebhookDriver.note`'s `failure`) shows of the bot: alive (a 2xx
    answer of any content), not (no connection, a refused URL, an error status), or neither (a
    timeout: None)."""
    if failure == "timeout":
        return None
    return failure in (None, "too_large", "bad_answer")


def read_answer(body: bytes) -> Reply:
    """The action in a bot's answer `{"action": …[, "debug": …]}` (and its debug text), or the
    `bad_answer` fault saying why not."""
    try:
        answer = safe_loads(body)
    except JSONTooComplex as exc:
        return Reply(fault=fault("bad_answer", str(exc)))
    except ValueError:  # not UTF-8, not JSON; its text is not repeated (it could be anyone's page)
        return Reply(fault=fault("bad_answer", f"the answer is not JSON ({len(body)} bytes)"))
    if not isinstance(answer, dict) or "action" not in answer:
        shape = type(answer).__name__ if not isinstance(answer, dict) else "an object without 'action'"
        return Reply(fault=fault("bad_answer", f'expected {{"action": ...}}, got {shape}'))
    return Reply(action=answer["action"], debug=debug_text(answer.get("debug")))
