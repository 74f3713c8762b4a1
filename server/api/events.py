"""Live event streams (server-sent events): a match's steps, a tournament's progress.

    GET /matches/{id}/events       event "step" per log entry, then "over"
    GET /tournaments/{id}/events   "progress" (status, progress, standings), "match"
                                   (one of its matches started or ended), then "over"

A match stream sends, for each entry appended to the log, the spectator's
view after it, the entry as the public log shows it (no action before the
match is public: some are secret) and the card table (server/match_table.py);
its `id:` is the entry's turn, so a browser reconnecting with `Last-Event-ID`
resumes after it (`?after=<turn>` does the same for a first connection).
A finished tournament match whose tournament still runs sends no steps, only
`over` (no peeking across duplicates).

Streams never hold the server for ever. Under gevent (`cardarena serve`) an
open stream holds no thread and no Redis connection: it waits on the process'
pub/sub listener of its kind of channel (core/store/wakeups.py); it reads and renders inside the
waiting endpoints' gate (server/gate.py), and a step is rendered once per
process for every spectator (`_step_event`). At most `EVENT_STREAMS` streams
are open at once per process (1,000 under gevent, 16 under a threaded server;
beyond, 503 at once, with Retry-After) and at most `EVENT_STREAMS_PER_CLIENT`
(16) from one address over every API process, counted in the store
(core/store/quotas.py; beyond, 429 `too_many_waiting`: one client cannot hold
them all); each ends after
`EVENT_STREAM_SECONDS` with a `retry:` hint (the browser reconnects and
resumes), and a stream waits on Redis pub/sub (core/store/events.py) —
never a busy loop — looking again on its own every `EVENT_HEARTBEAT_SECONDS`
and sending a comment then, which is also how a client that went away is
noticed and its place given back.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator

import marshmallow as ma
import redis
from flask import Response, current_app, request, stream_with_context
from flask_smorest import Blueprint
from marshmallow import validate

from core.store.events import TOURNAMENT, match_channel, tournament_channel
from core.store.quotas import streams_key
from core.store.wakeups import RECHECK_S, UNSURE_S, draining, wakeups
from server import gate
from server.api.common import SeatSchema, errors, seats_of
from server.api.matches import is_hidden, is_public, public_entry
from server.api.table_schema import TableSchema
from server.api.tournaments import ProgressSchema, StandingSchema, tournament_record
from server.auth import store
from server.errors import fail
from server.match_table import table_of

blp = Blueprint("events", __name__, description="Live event streams (text/event-stream)")

#: config key -> default, each also set by env CARDARENA_<KEY>. EVENT_STREAMS: under a threaded
#: server it must stay well below its threads; under gevent (`cardarena serve`, the one way the
#: API runs) server/app.py makes it 1,000 (server/serve.py `capacity`)
LIMITS = {"EVENT_STREAMS": 16, "EVENT_STREAMS_PER_CLIENT": 16, "EVENT_STREAM_SECONDS": 60.0,
          "EVENT_HEARTBEAT_SECONDS": 5.0}
#: what a browser waits before reconnecting (ms), sent as `retry:`
RETRY_MS = 1000
#: a tournament's changes within this many seconds go out as one event
COALESCE_S = 0.25
#: match events at most per tournament update (the page's list shows the rest on reload)
MAX_MATCH_EVENTS = 200
OVER = ("finished", "aborted")


def limit(key: str) -> float:
    if key in current_app.config:
        return current_app.config[key]
    raw = os.environ.get("CARDARENA_" + key, "")
    try:
        return float(raw) if raw.strip() else LIMITS[key]
    except ValueError:  # a mistyped setting must not break every stream
        return LIMITS[key]


class Slots:
    """The streams this server process has open: `take` refuses beyond its limit (the threads
    the server can spare for streams)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open = 0

    def take(self, most: int) -> bool:
        with self.lock:
            if self.open >= most:
                return False
            self.open += 1
            return True

    def give(self) -> None:
        with self.lock:
            self.open -= 1


class Slot:
    """One open stream's places (this process's, and its address's in the store), given back
    once however the response ends."""

    def __init__(self, slots: Slots, s, key: str, token: str) -> None:
        self.slots, self.store, self.key, self.token, self.held = slots, s, key, token, True

    def release(self) -> None:
        if self.held:
            self.held = False
            self.slots.give()
            self.store.give_place(self.key, self.token)


def _slot() -> Slot:
    """Places for one more stream: 503 when this process has none left, 429 `too_many_waiting`
    when the client's address holds its share already, over every API process (core/store/quotas.py)."""
    slots = current_app.extensions.setdefault("cardarena.streams", Slots())
    if not slots.take(int(limit("EVENT_STREAMS"))):
        fail(503, "too_many_streams", "every event stream of this server is taken: try again shortly",
             {"Retry-After": "5"})
    s, key, per_client = store(), streams_key(request.remote_addr or "?"), int(limit("EVENT_STREAMS_PER_CLIENT"))
    try:
        token = s.take_place(key, float(limit("EVENT_STREAM_SECONDS")), per_client)
    except BaseException:
        slots.give()
        raise
    if token is None:
        slots.give()
        fail(429, "too_many_waiting", f"at most {per_client} event streams are open at once from one address: "
             "close one first", {"Retry-After": "5"})
    return Slot(slots, s, key, token)


def sse(event: str | None, data: object = None, ident: int | None = None) -> str:
    """One server-sent event (data as one line of JSON)."""
    out = ""
    if ident is not None:
        out += f"id: {ident}\n"
    if event:
        out += f"event: {event}\n"
    return out + "data: " + json.dumps(data, separators=(",", ":")) + "\n\n"


def _stream(body: Iterator[str], slot: Slot) -> Response:
    response = Response(stream_with_context(body), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # a proxy in front must not hold the events back
    response.call_on_close(slot.release)
    return response


class Waiter:
    """Waits for what is published on a channel, on the process' one listener of its kind
    (core/store/wakeups.py): no Redis connection of its own, and no thread under gevent."""

    def __init__(self, channel: str) -> None:
        self.sub = wakeups(store().r).listen(channel)
        self.listener = self.sub.listener  # its kind's (core/store/wakeups.py)
        self.quiet = False

    def wait(self, timeout: float) -> list[str]:
        """The messages published within `timeout` s ([] if none): the first wakes it, then
        whatever else is already there. It also returns early, with [], when the listener asks
        everyone to look again (it has just subscribed), and within `UNSURE_S` while it is not
        subscribed: the caller then reads the state again, as after a heartbeat. `quiet` says
        whether nothing at all happened: the listener subscribed throughout and silent, so
        the state has not changed and need not be read again."""
        ready = self.listener.ready()
        messages = self.sub.wait(timeout if ready else min(timeout, UNSURE_S))
        self.quiet = messages is None and ready and self.listener.ready()
        return messages or []

    def close(self) -> None:
        self.sub.close()


class StreamQuery(ma.Schema):
    after = ma.fields.Integer(strict=False, validate=validate.Range(min=-1, max=10**9),
                              metadata={"description": "the turn of the last entry the client holds: "
                                        "steps after it are sent (-1 or none: from the first). "
                                        "A Last-Event-ID header wins"})


class PublicEntrySchema(ma.Schema):
    turn = ma.fields.Integer(required=True)
    seat = ma.fields.Integer(required=True)
    action = ma.fields.Dict(metadata={"description": "once the match is public"})
    fault = ma.fields.String(metadata={"description": "its kind only, until the match is public"})


class MatchStepEventSchema(ma.Schema):
    turn = ma.fields.Integer(required=True, metadata={"description": "the entry's turn (the event id)"})
    step = ma.fields.Integer(required=True, metadata={"description": "turn + 1: the state after that many actions"})
    entry = ma.fields.Nested(PublicEntrySchema, required=True)
    to_act = ma.fields.Integer(allow_none=True, required=True)
    view = ma.fields.Dict(required=True, metadata={"description": "the spectator's view after the entry"})
    table = ma.fields.Nested(TableSchema, required=True)


class MatchOverEventSchema(ma.Schema):
    status = ma.fields.String(required=True)
    turns = ma.fields.Integer(required=True)
    public = ma.fields.Boolean(required=True)
    result = ma.fields.Dict(allow_none=True, required=True, metadata={"description": "once public"})
    reason = ma.fields.String(allow_none=True, required=True)


class TournamentProgressEventSchema(ma.Schema):
    id = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    progress = ma.fields.Nested(ProgressSchema, required=True)
    standings = ma.fields.List(ma.fields.Nested(StandingSchema), required=True)


class TournamentMatchEventSchema(ma.Schema):
    id = ma.fields.String(required=True)
    status = ma.fields.String(required=True)
    seats = ma.fields.List(ma.fields.Nested(SeatSchema), required=True)


#: the events' data, as OpenAPI components (server/app.py registers them)
SCHEMAS = {"MatchStepEvent": MatchStepEventSchema, "MatchOverEvent": MatchOverEventSchema,
           "TournamentProgressEvent": TournamentProgressEventSchema,
           "TournamentMatchEvent": TournamentMatchEventSchema}


def _stream_doc(events: dict[str, str]) -> dict:
    """An event stream's OpenAPI: a text/event-stream answer, its events' data schemas named
    in `x-events`, and the Last-Event-ID header."""
    return {"responses": {"200": {
        "description": "text/event-stream; each event's data is one line of JSON: "
                       + ", ".join(f"`{name}` ({schema})" for name, schema in events.items()),
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
        "x-events": {name: {"$ref": f"#/components/schemas/{schema}"} for name, schema in events.items()}}},
        "parameters": [{"in": "header", "name": "Last-Event-ID", "required": False,
                        "schema": {"type": "string", "maxLength": 20},
                        "description": "the last event id received (a reconnecting browser sends it)"}]}


def _last_event_id(default: int) -> int:
    raw = request.headers.get("Last-Event-ID")
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        fail(422, "invalid", f"Last-Event-ID must be a turn (a whole number), not {raw[:20]!r}")
    if not -1 <= value <= 10**9:
        fail(422, "invalid", "Last-Event-ID must be a turn from -1 on")
    return value


@blp.get("/matches/<string:match_id>/events")
@blp.arguments(StreamQuery, location="query")
@blp.doc(**_stream_doc({"step": "MatchStepEvent", "over": "MatchOverEvent"}))
@errors(blp, 404, 422, 429, 503)
def match_events(query, match_id: str):
    """A match live, as server-sent events

    Event `step` for each log entry (its `id` is the entry's turn): the spectator's view
    after it, the entry as the public log shows it (no action before the match is public)
    and the game's card table; then `over`, and the stream ends. Reconnecting with
    `Last-Event-ID` (or `?after=<turn>`) resumes after that turn. A stream also ends after
    a while with a `retry:` hint; at most a few are open at once (503 beyond)."""
    match = store().get_match(match_id)
    if match is None:
        fail(404, "not_found", f"there is no match {match_id!r}")
    after = _last_event_id(query.get("after", -1))
    slot = _slot()
    return _stream(_match_body(match, after), slot)


#: rendered `step` events, per process: every spectator of a match is sent the same text, so
#: 100 streams woken by one step render it once. (match id, created, turn, public) -> its text
_rendered: dict[tuple, str] = {}
RENDERED_KEEP = 4096


def _step_event(s, match: dict, entry: dict, public: bool, replayed: list) -> str:
    """The `step` event of `entry`, rendered once per process. `replayed` is this stream's
    [state, turns applied] (rebuilt from the log when it is not where `entry` needs it)."""
    key = (match["id"], match.get("created"), entry["turn"], public)
    text = _rendered.get(key)
    if text is not None:
        return text
    state, applied = replayed
    if state is None or applied != entry["turn"]:
        state = s.replay(match["id"], upto=entry["turn"])
    state.apply(entry["action"])
    replayed[:] = [state, entry["turn"] + 1]
    shown = public_entry(entry, public)
    view = state.view(None)
    text = sse("step", {"turn": entry["turn"], "step": entry["turn"] + 1, "entry": shown, "to_act": state.to_act,
                        "view": view, "table": table_of(match["game"], len(match["seats"]), view, shown)},
               entry["turn"])
    if len(_rendered) >= RENDERED_KEEP:
        _rendered.clear()  # cheap and rare: the next steps are rendered again
    _rendered[key] = text
    return text


def _match_body(match: dict, after: int) -> Iterator[str]:
    s = store()
    mid = match["id"]
    waiter = None
    end = time.monotonic() + float(limit("EVENT_STREAM_SECONDS"))
    try:
        waiter = Waiter(match_channel(mid))
        yield f"retry: {RETRY_MS}\n\n"
        cursor, replayed, read_at = after + 1, [None, 0], 0.0
        while True:
            out: list[str] = []
            if waiter.quiet and time.monotonic() - read_at < RECHECK_S:  # nothing published: a heartbeat only
                over = False
            else:
                read_at = time.monotonic()
                with gate.working():  # read and render inside the gate; wait and write outside it
                    match = s.get_match(mid)
                    if match is None:  # deleted under the stream (a database emptied): nothing more to say
                        return
                    public = is_public(match)
                    over = match["status"] in OVER
                    if not over or public:
                        for entry in s.log_since(mid, cursor):
                            out.append(_step_event(s, match, entry, public, replayed))
                            cursor += 1
                    if over:
                        out.append(sse("over", {"status": match["status"], "turns": s.log_length(mid), "public": public,
                                                "result": match.get("result") if public else None,
                                                "reason": match.get("reason")}))
            yield from out
            if over or draining():  # over, or the server stops: the client reconnects to another
                return
            left = end - time.monotonic()
            if left <= 0:
                return
            if not waiter.wait(min(left, float(limit("EVENT_HEARTBEAT_SECONDS")))):
                yield ": still here\n\n"
    except redis.RedisError as exc:  # Redis went away mid-stream: end it; the client comes back later
        current_app.logger.warning("event stream of match %s ended: %s", mid, exc)
    finally:
        if waiter is not None:
            waiter.close()


@blp.get("/tournaments/<string:tid>/events")
@blp.doc(**_stream_doc({"progress": "TournamentProgressEvent", "match": "TournamentMatchEvent",
                         "over": "TournamentProgressEvent"}))
@errors(blp, 404, 422, 429, 503)
def tournament_events(tid: str):
    """A tournament live, as server-sent events

    Event `progress` (status, progress and standings as `GET /tournaments/{id}` shows them)
    at once and whenever they change, event `match` when one of its matches starts or ends,
    then `over` with the final progress, and the stream ends. It also ends after a while
    with a `retry:` hint (a reconnecting client gets the current progress first)."""
    tournament = store().get_tournament(tid)
    if tournament is None:
        fail(404, "not_found", f"there is no tournament {tid!r}")
    _last_event_id(-1)  # validated like a match stream's; the progress is sent whole anyway
    slot = _slot()
    return _stream(_tournament_body(tid), slot)


def _tournament_body(tid: str) -> Iterator[str]:
    s = store()
    waiter = None
    end = time.monotonic() + float(limit("EVENT_STREAM_SECONDS"))
    try:
        waiter = Waiter(tournament_channel(tid))
        yield f"retry: {RETRY_MS}\n\n"
        sent, read_at = None, 0.0
        changed: list[str] = []
        while True:
            out: list[str] = []
            over = False
            if not (waiter.quiet and time.monotonic() - read_at < RECHECK_S):  # else nothing was published
                read_at = time.monotonic()
                with gate.working():  # read and render inside the gate; wait and write outside it
                    tournament = s.get_tournament(tid)
                    if tournament is None:  # deleted under the stream
                        return
                    record = tournament_record(tournament)
                    progress = {k: record[k] for k in ("id", "status", "progress", "standings")}
                    over = record["status"] in OVER
                    if over:
                        out.append(sse("over", progress, record["progress"]["done"]))
                    elif progress != sent:
                        out.append(sse("progress", progress, record["progress"]["done"]))
                        sent = progress
                    for mid in dict.fromkeys(changed[:MAX_MATCH_EVENTS]) if not over else ():
                        match = s.get_match(mid)
                        if match is not None and match.get("tournament") == tid:
                            out.append(sse("match", {"id": mid, "status": match["status"],
                                                     "seats": seats_of(match, is_hidden(match))}))
            yield from out
            if over or draining():  # over, or the server stops: the client reconnects to another
                return
            left = end - time.monotonic()
            if left <= 0:
                return
            messages = waiter.wait(min(left, float(limit("EVENT_HEARTBEAT_SECONDS"))))
            if not messages:
                yield ": still here\n\n"
                changed = []
                continue
            messages += waiter.wait(COALESCE_S)
            waiter.quiet = False  # there was news: read
            changed = [m for m in messages if m != TOURNAMENT]
    except redis.RedisError as exc:  # Redis went away mid-stream: end it; the client comes back later
        current_app.logger.warning("event stream of tournament %s ended: %s", tid, exc)
    finally:
        if waiter is not None:
            waiter.close()
