"""Whether a bot is alive: the signed ping, a bot's status, and why (docs/api.md §6 "Liveness").

A bot's `status` must tell its author the truth, because a tournament
entered with `[b for b in client.bots(g) if b.status == "online"]` silently
leaves out any bot shown otherwise. The store keeps what was last learnt
(core/store/bots.py): `last_seen` (its last good answer: a webhook's 200 to
a ping or a decision, a polling bot's request), `last_failed` and
`last_failure` (its last failed call, and what failed: the platform's words,
never the bot's). Each timestamp is noted when the call's outcome is learnt,
in the one form every timestamp has in the store, the API and the pages
(ISO 8601 UTC to the millisecond, `core.store.keys.iso_ms`). From them:

* a **webhook** bot is `online` when its last call, within `ONLINE_S`,
  succeeded; `rejected` when its last call was answered 401 or 403 (its
  server refused the referee's signature: the secret it was given is not
  the bot's); `offline` otherwise. The platform's heartbeat
  (worker/heartbeat.py) pings it when it has not been called for
  `worker.heartbeat.EVERY_S`, so a bot that is up stays `online`, and one
  registered before it was served comes online by itself;
* a **polling** bot is `online` while a long-poll of it is open or ended
  within `POLL_ONLINE_S` (the API notes it seen when a poll starts and when
  it ends: server/api/turns.py), `offline` otherwise;
* an in-process (`python`) bot runs inside the workers: always `online`;
* a **hosted** bot is `online` when its latest code answered its probe
  decision (`core/sandbox.py` `probe`, at registration and at each new
  version), `rejected` otherwise (why: its traceback, shown to its owner
  only, never in `status_reason`);
* a retired bot is `offline`: it plays no new match.

`status_reason` says why a bot is not online, in words its author can act on.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from core import eventloop
from core.calls import WAIT_SLACK_S, CallError, post_signed_async
from core.store.keys import epoch_ms_of, now_ms

#: a webhook bot whose last good answer is this recent (seconds), with no failure since, is online
ONLINE_S = 90
#: a polling bot seen (a long-poll started or ended) this recently (seconds) is online; the
#: longest long-poll is 30 s, and its answer may take a moment to come back
POLL_ONLINE_S = 30 + 5
#: a ping's whole answer, connection included (seconds)
PING_S = 2.0
#: what is read of a ping's answer (nothing is kept)
PING_BYTES = 4096
PING = {"type": "ping", "protocol": 1}
#: the HTTP statuses of a server refusing the referee's signature
REFUSED = (401, 403)
STATUSES = ("online", "rejected", "offline")
REJECTED_REASON = ("the signature was refused — check the secret: the bot's server must be given "
                   "the secret POST /bots returned for this bot")

PROBE_REJECTED_REASON = ("its code did not answer its probe decision with a legal action: its owner sees "
                         "why in GET /bots/{id} (probe_error); upload a new version")


@dataclass(frozen=True)
class Pinged:
    """What one ping found: `POST /bots/{id}/ping`'s answer but `status`."""

    reachable: bool
    http_status: int | None = None
    latency_ms: int | None = None
    #: what went wrong, for the bot's owner (None when it answered 200)
    error: str | None = None

    @property
    def failure(self) -> str | None:
        """What failed in the platform's words only, fit for a public record (None if nothing)."""
        if self.reachable:
            return None
        if self.http_status is not None:
            return f"http_error: HTTP {self.http_status}"
        return (self.error or "unreachable").split(":", 1)[0]


async def ping_async(url: str, secret: str, public_only: bool = False, party: str | None = None) -> Pinged:
    """Ping a webhook bot now (signed), on the running loop; what came back within `PING_S`.
    `party`: the bot's account (it shares the name resolvers fairly, core/calls.py)."""
    began = time.monotonic()
    try:
        status, _ = await post_signed_async(url, secret, PING, PING_S, PING_BYTES, public_only=public_only,
                                            party=party)
    except CallError as exc:
        return Pinged(False, None, None, f"{exc.kind}: {exc}")
    latency = int((time.monotonic() - began) * 1000)
    if status == 200:
        return Pinged(True, 200, latency)
    error = f"http_error: HTTP {status}"
    if status in REFUSED:
        error += f" — {REJECTED_REASON}"
    return Pinged(False, status, latency, error)


def ping(url: str, secret: str, public_only: bool = False, party: str | None = None) -> Pinged:
    """`ping_async`, run on the process's loop (core/eventloop.py) and waited for."""
    return ping_all([("", url, secret, party)], public_only)[""]


def ping_all(targets: list[tuple], public_only: bool = False) -> dict[str, Pinged]:
    """Ping `(bot_id, url, secret[, account])` each, all at once on the process's loop (a ping
    waiting holds no thread): `{bot_id: Pinged}`."""
    if not targets:
        return {}

    async def each() -> list[Pinged]:
        return await asyncio.gather(*(ping_async(t[1], t[2], public_only, t[3] if len(t) > 3 else None)
                                      for t in targets))

    try:
        found = eventloop.run(each(), PING_S + WAIT_SLACK_S)
    except TimeoutError:  # the loop itself did not finish them: no answer either way
        found = [Pinged(False, None, None, "timeout: no complete answer before the deadline")] * len(targets)
    return {t[0]: pinged for t, pinged in zip(targets, found, strict=True)}


def note(store, bot_id: str, pinged: Pinged) -> None:
    """Keep what a ping found in the bot's record (seen, or failed and how)."""
    if pinged.reachable:
        store.bot_seen(bot_id)
    else:
        store.bot_failed(bot_id, pinged.failure)


def ping_and_note(store, bots: list[dict], public_only: bool = False) -> dict[str, Pinged]:
    """Ping the webhook bots among `bots` (records) at once and note each in the store:
    `{bot_id: Pinged}` for each webhook bot."""
    targets = [(b["id"], b.get("url") or "", store.bot_secret(b["id"]), b.get("owner"))
               for b in bots if b["kind"] == "webhook"]
    found = ping_all(targets, public_only)
    for bot_id, pinged in found.items():
        note(store, bot_id, pinged)
    return found


def registration_warnings(bot: dict, pinged: Pinged | None) -> list[str]:
    """What `POST /bots` warns its author of: a webhook that did not answer its ping, and why."""
    if pinged is None or pinged.reachable:
        return []
    if pinged.http_status in REFUSED:
        return [f"the webhook at {bot.get('url')} answered the ping HTTP {pinged.http_status}: "
                f"{REJECTED_REASON}"]
    return [f"the webhook at {bot.get('url')} did not answer its ping ({pinged.error}): the bot is "
            f"{judge(bot, now_ms())[0]} and enters nothing that filters on status until it answers one. "
            "Serve it; the platform pings it again within 30 s, or ping it now: "
            f"POST /bots/{bot['id']}/ping (Client.ping)"]


def warnings(store, bots: list[dict], public_only: bool = False) -> list[dict]:
    """What may make `bots` forfeit a tournament about to start: webhook bots are pinged
    now; the others are judged from when they were last seen. One
    `{"bot", "name", "status", "message"}` per bot that is not online."""
    found = ping_and_note(store, bots, public_only)
    out = []
    now = now_ms()
    for bot in store.get_bots([b["id"] for b in bots]):  # read again: the pings were noted
        state, reason = judge(bot, now)
        if state == "online":
            continue
        if bot["id"] in found:
            message = f"did not answer a ping ({found[bot['id']].error}): its matches will be faults"
        else:
            message = f"{reason}: it forfeits its matches unless it connects"
        out.append({"bot": bot["id"], "name": bot["name"], "status": state, "message": message})
    return out


def judge(bot: dict, now: int) -> tuple[str, str | None]:
    """`(status, status_reason)` at `now` (epoch ms) from the bot's record: `online` (no reason),
    `rejected` or `offline`, and why. Whatever landed last decides — a registration's ping, a
    heartbeat's, an answered decision, in any order; of a success and a failure noted in the same
    millisecond, the one noted last (`last_noted`). A timestamp not in the stored form counts as
    absent."""
    if bot.get("retired"):
        return "offline", "retired: it plays no new match"
    kind = bot.get("kind")
    if kind == "python":
        return "online", None
    if kind == "hosted":
        if bot.get("probe_failure"):
            return "rejected", PROBE_REJECTED_REASON
        return "online", None
    seen, failed = epoch_ms_of(bot.get("last_seen")), epoch_ms_of(bot.get("last_failed"))
    if kind == "polling":
        if seen is not None and now - seen <= POLL_ONLINE_S * 1000:
            return "online", None
        if seen is None:
            return "offline", "has never polled for its turns"
        return "offline", f"has not polled for its turns since {bot['last_seen']}"
    if failed is not None and (seen is None or failed > seen
                               or (failed == seen and bot.get("last_noted") == "failed")):
        failure = bot.get("last_failure") or "unreachable"
        if any(failure == f"http_error: HTTP {code}" for code in REFUSED):
            return "rejected", f"answered {failure.split(': ', 1)[1]}: {REJECTED_REASON}"
        return "offline", f"its last call failed ({failure}) at {bot['last_failed']}"
    if seen is None:
        return "offline", "has never answered a call or a ping"
    if now - seen <= ONLINE_S * 1000:
        return "online", None
    return "offline", f"has not answered since {bot['last_seen']}"


def status(bot: dict, now: int) -> str:
    """`online`, `rejected` or `offline` at `now` (epoch ms), from the bot's record."""
    return judge(bot, now)[0]
