"""Whether a bot is alive: the signed ping, and a bot's status from when it was last seen.

A bot is *seen* when it answers anything: a webhook bot any HTTP answer to a
decision or a ping, a polling bot a long-poll or a POSTed answer. A webhook
bot that could not be reached (no connection, no answer in time, a refused
URL) *failed*. The store keeps both times in the bot's record
(`last_seen`, `last_failed`, epoch ms: core/store/bots.py); from them:

* `online` — seen within `ONLINE_S`, and no failure since;
* `offline` — a failure since it was last seen, or seen before but not
  within `ONLINE_S` (a polling bot long-polls at least every 30 s);
* `unknown` — never seen nor tried.

In-process bots run inside the workers: always `online`. A retired bot is
`offline`: it plays no new match.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from core.calls import CallError, post_signed
from core.store.keys import now_ms

#: a bot seen this recently (seconds) is online
ONLINE_S = 120
#: a ping's whole answer, connection included (seconds)
PING_S = 2.0
#: what is read of a ping's answer (nothing is kept)
PING_BYTES = 4096
#: pings made at once (creating a tournament pings all its webhook bots)
PINGERS = 16
PING = {"type": "ping", "protocol": 1}


def ping(url: str, secret: str, public_only: bool = False) -> str | None:
    """Ping a webhook bot: None if it answered 200, else what went wrong (for its owner only:
    nothing from the bot's server is kept)."""
    try:
        status, _ = post_signed(url, secret, PING, PING_S, PING_BYTES, public_only=public_only)
    except CallError as exc:
        return f"{exc.kind}: {exc}"
    return None if status == 200 else f"http_error: HTTP {status}"


def ping_all(targets: list[tuple[str, str, str]], public_only: bool = False) -> dict[str, str | None]:
    """Ping `(bot_id, url, secret)` each, at once: `{bot_id: None or what went wrong}`."""
    if not targets:
        return {}
    with ThreadPoolExecutor(max_workers=min(PINGERS, len(targets)), thread_name_prefix="ping") as pool:
        problems = pool.map(lambda t: ping(t[1], t[2], public_only), targets)
        return {bot_id: problem for (bot_id, _, _), problem in zip(targets, problems, strict=True)}


def ping_and_note(store, bots: list[dict], public_only: bool = False) -> dict[str, str | None]:
    """Ping the webhook bots among `bots` (records) at once and note each in the store (seen
    or failed): `{bot_id: None, or what went wrong}` for each webhook bot."""
    targets = [(b["id"], b.get("url") or "", store.bot_secret(b["id"])) for b in bots if b["kind"] == "webhook"]
    problems = ping_all(targets, public_only)
    for bot_id, problem in problems.items():
        if problem is None:
            store.bot_seen(bot_id)
        else:
            store.bot_failed(bot_id)
    return problems


def warnings(store, bots: list[dict], public_only: bool = False) -> list[dict]:
    """What may make `bots` forfeit a tournament about to start: webhook bots are pinged
    now; the others are judged from when they were last seen. One
    `{"bot", "name", "status", "message"}` per bot that is not online."""
    problems = ping_and_note(store, bots, public_only)
    out = []
    now = now_ms()
    for bot in store.get_bots([b["id"] for b in bots]):  # read again: the pings were noted
        state = status(bot, now)
        if state == "online":
            continue
        if bot["id"] in problems:
            message = f"did not answer a ping ({problems[bot['id']]}): its matches will be faults"
        elif bot.get("last_seen") is None:
            message = "has never polled for its turns: it forfeits its matches unless it connects"
        else:
            message = (f"has not polled for its turns since {iso(bot['last_seen'])}: it forfeits its "
                       "matches unless it connects")
        out.append({"bot": bot["id"], "name": bot["name"], "status": state, "message": message})
    return out


def status(bot: dict, now: int) -> str:
    """`online`, `offline` or `unknown` at `now` (epoch ms), from the bot's record (`kind`,
    `last_seen`, `last_failed`)."""
    if bot.get("retired"):
        return "offline"  # it plays no new match
    if bot.get("kind") == "python":
        return "online"
    seen, failed = bot.get("last_seen"), bot.get("last_failed")
    if failed is not None and (seen is None or failed > seen):
        return "offline"
    if seen is None:
        return "unknown"
    return "online" if now - seen <= ONLINE_S * 1000 else "offline"


def iso(epoch_ms: int | None) -> str | None:
    """An epoch in ms as ISO 8601 UTC (None stays None)."""
    if epoch_ms is None:
        return None
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
