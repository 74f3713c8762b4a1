"""Polling bots: `GET /bots/me/turns` (long-poll) and `POST /matches/{id}/turns/{turn}`.

The worker drives every match; for a polling seat it publishes the decision
in the store and its run ends (core/store/waits.py). These two views are
the bot's side of that exchange: fetch what is pending, answer it. An answer
is judged against the decision the bot was sent (core/answers.py), then
settled: appended with the store's atomic check, so it races the deadline's
timeout safely (one of them wins), and the match's next run enqueued.

Limits: this traffic is outside the per-minute budget (server/app.py), so a
fast tournament never rate-limits a bot into forfeits; a request that brings
or settles a decision sets `g.turn_traffic_useful` and is never counted, the
rest (empty quick polls, refused answers) are, against `TURN_WASTE_LIMIT`
(server/turn_waste.py). Waits are capped: `LONG_POLLS_PER_BOT` per bot and
`LONG_POLLS_PER_ACCOUNT` per account, across processes (core/store/quotas.py),
`LONG_POLL_SLOTS` per process (under a threaded server, below its threads); beyond any of them the
poll is refused at once (429 `too_many_polls`, 429 `too_many_waiting`, 503
`busy`; `Retry-After: 1`) rather than queued behind the others. Under gevent
(`cardarena serve`) a waiting poll holds no thread, so `LONG_POLL_SLOTS` is
6,000 a process; its admission passes the waiting endpoints' gate
(server/gate.py), left as it starts waiting and queued for again to finish.
An empty poll of 5 s or more
ends at random within its last fifth (`spread`).

Only polling bots poll: a request with a webhook (or in-process) bot's secret
is 409 `wrong_kind` — the referee calls that bot, it would wait for turns
that never come (`sdk.connect` given the secret of the bot `serve` hosts).
"""

from __future__ import annotations

import json
import random
import re

import marshmallow as ma
from flask import Response, current_app, g, jsonify
from flask_smorest import Blueprint
from marshmallow import validate

from core import play_on
from core.answers import answered
from core.store.bots import SEEN_EVERY_MS, Credential, NotCredited
from core.store.decisions import polls_key as bot_polls_key
from core.store.keys import now_ms
from core.store.quotas import polls_key
from core.store.waits import waiting_key, waiting_record
from sdk.debug import debug_text
from sdk.faults import fault, fault_kind
from server import gate
from server.api.common import arguments, documented, errors
from server.api.json_text import reprs_as_json
from server.auth import credited_bot, not_credited, store
from server.errors import fail

blp = Blueprint("turns", __name__, description="Polling bots fetch and answer their turns")

#: the longest long-poll (docs/api.md Limits)
MAX_WAIT_S = 30
#: the public fault's detail when a polling bot reports it failed: no text of a bot reaches a public
#: record, so what it said goes to its owner's debug output
REPORTED_FAILURE = "the bot said it failed (what it said is in its owner's debug output)"
#: the longest `error` a polling bot may report
MAX_ERROR = 1000


class ClockSchema(ma.Schema):
    move_ms = ma.fields.Integer(required=True, metadata={"description": "the time of every decision"})
    bank_ms = ma.fields.Integer(required=True, metadata={
        "description": "the bank left before this decision: what it may take beyond move_ms"})


class DecisionSchema(ma.Schema):
    type = ma.fields.String(required=True)
    protocol = ma.fields.Integer(required=True)
    match_id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    turn = ma.fields.Integer(required=True)
    seat = ma.fields.Integer(required=True)
    view = ma.fields.Dict(required=True)
    legal_actions = ma.fields.List(ma.fields.Dict(), required=True)
    deadline_ms = ma.fields.Integer(required=True, metadata={
        "description": "this answer's whole time: move_ms plus what is left in the bank"})
    clock = ma.fields.Nested(ClockSchema, metadata={"description": "absent in a match from before the bank"})
    last_latency_ms = ma.fields.Integer(allow_none=True, metadata={
        "description": "what the referee charged this seat for its previous decision (null at its first)"})


class TurnsSchema(ma.Schema):
    turns = ma.fields.List(ma.fields.Nested(DecisionSchema), required=True)


#: the most decisions a poll may say it holds (a bot plays at most 64 matches at once)
MAX_HELD = 64
HELD_ITEM = re.compile(r"[A-Za-z0-9_-]{1,64}:[0-9]{1,9}")


def held_decisions(text: str) -> set[tuple[str, int]]:
    """`MATCH_ID:TURN,…` as a set of (match id, turn); a ValidationError if malformed."""
    items = [item for item in text.split(",") if item] if text else []
    if len(items) > MAX_HELD:
        raise ma.ValidationError(f"at most {MAX_HELD} decisions")
    bad = next((item for item in items if not HELD_ITEM.fullmatch(item)), None)
    if bad is not None:
        raise ma.ValidationError(f"{bad[:80]!r} is not MATCH_ID:TURN")
    return {(m, int(t)) for m, _, t in (item.rpartition(":") for item in items)}


class WaitSchema(ma.Schema):
    wait = ma.fields.Float(load_default=0, validate=validate.Range(min=0, max=MAX_WAIT_S),
                           metadata={"description": "seconds to wait for a turn (≤ 30)"})
    held = ma.fields.String(load_default="", validate=[validate.Length(max=MAX_HELD * 80), held_decisions],
                            metadata={"description": "MATCH_ID:TURN,…: decisions the bot holds already (it is "
                                                     "thinking): they are left out, and a long-poll waits for "
                                                     "another"})


class AnswerSchema(ma.Schema):
    action = ma.fields.Dict(metadata={"description": "one of the decision's legal_actions"})
    error = ma.fields.String(validate=validate.Length(min=1, max=MAX_ERROR), metadata={
        "description": "instead of an action: the bot failed (its exception), a bot_error fault at once; the "
                       "text goes to the seat's debug output, its owner's only, never to the public log"})
    debug = ma.fields.Raw(metadata={
        "description": "the bot's debug text for this turn (≤ 1,000 characters kept, the rest cut; not a "
                       "string: ignored), shown to the bot's owner only"})

    @ma.validates_schema
    def one_of_them(self, data: dict, **kwargs) -> None:
        if ("action" in data) == ("error" in data):
            raise ma.ValidationError("send either an action or an error")


class AcceptedSchema(ma.Schema):
    match_id = ma.fields.String(required=True)
    turn = ma.fields.Integer(required=True)
    action = ma.fields.Dict(required=True)


#: the schemas the two views load with, built once (webargs would build a schema given as a class per request)
WAIT = WaitSchema()
ANSWER = AnswerSchema()
ACCEPTED = AcceptedSchema()


@blp.get("/bots/me/turns")
@documented(blp.arguments(WAIT, location="query"), blp.response(200, TurnsSchema), errors(blp, 401, 409, 429, 503))
def my_turns():
    """The calling bot's pending decisions, waiting up to `wait` seconds for one
    (429 when the bot or its account already holds its share of waiting polls, 503 when the server does;
    409 `wrong_kind` for a bot that is not a polling bot)."""
    query = arguments(blp, WAIT, "query")
    credential = polling_credential()
    try:
        return turns_response(poll(credential, query["wait"], held_decisions(query["held"])))
    except NotCredited:
        not_credited()


def poll(credential: Credential, wait: float, held: set[tuple[str, int]]) -> list[bytes]:
    """`my_turns`' work: the decisions it answers, each as its JSON text (as stored)."""
    s, bot = store(), credential.bot
    if wait <= 0:
        pending = s.pending_texts(credential, skip=held)
        g.turn_traffic_useful = bool(pending)
        return pending
    began = now_ms()
    per_bot = int(current_app.config["LONG_POLLS_PER_BOT"])
    per_account = int(current_app.config["LONG_POLLS_PER_ACCOUNT"])
    caps = [(bot_polls_key(bot["id"]), per_bot), (polls_key(str(bot.get("owner") or "admin")), per_account)]
    with s.listen_decisions(bot["id"]) as woken:  # heard from before the read: nothing published is missed
        # what is pending and, only if nothing is, the poll's places (one round trip, with the
        # credential's check): a bot holds at most `LONG_POLLS_PER_BOT` waiting polls, one account's
        # bots together at most `LONG_POLLS_PER_ACCOUNT`, so one tenant cannot fill the waiting
        # every tenant shares
        pending, places, full = s.pending_or_poll_places(credential, held, caps, wait)
        if pending:
            g.turn_traffic_useful = True
            return pending
        if full == caps[0][0]:
            fail(429, "too_many_polls", f"a bot may wait in at most {per_bot} long-polls at once",
                 {"Retry-After": "1"})
        if full is not None:
            fail(429, "too_many_waiting", f"an account's bots may wait in at most {per_account} long-polls "
                 "at once, together: poll with fewer bots at a time, or answer what they hold first",
                 {"Retry-After": "1"})
        try:
            slots = current_app.extensions["cardarena.poll_slots"]
            if not slots.acquire(blocking=False):
                fail(503, "busy", "the server holds as many waiting long-polls as it can; retry in a moment",
                     {"Retry-After": "1"})
            try:
                gate.leave()  # the work is done: waiting crowds out nobody (server/gate.py)
                # the read that ends it with a decision gives the places back and notes the bot seen
                turns = s.wait_texts(bot["id"], spread(wait), held, woken, places, began)
                noted = places.token is None
            finally:
                gate.back()  # and what follows the wait queues again, in the account's lane
                slots.release()
        finally:
            s.give_places(places)  # the wait is over, whatever ended it (nothing if given back)
    if not noted and now_ms() - began >= SEEN_EVERY_MS:  # a poll that just ended keeps it online
        s.bot_seen(bot["id"])  # (core/liveness.py); one that began less than that ago was noted as it began
    g.turn_traffic_useful = bool(turns) or wait >= 1.0  # a real wait is no spin, a 10 ms one is
    return turns


def turns_response(texts: list[bytes]) -> Response:
    """`{"turns": [decision, …]}` from the decisions' JSON texts as the worker stored them (`pending_value`)
    (core/store/decisions.py `record_parts`): the fields of `DecisionSchema`, written once by the
    worker, never decoded and encoded again here."""
    return current_app.response_class(b'{"turns":[' + b",".join(texts) + b"]}\n", mimetype="application/json")


def spread(wait: float) -> float:
    """How long an empty long-poll of `wait` s waits: a wait of 5 s or more ends at random within
    its last fifth (at most 5 s early), so polls sent together — a crowd's, a reconnecting
    fleet's — do not all come back, and poll again, in the same instant."""
    return wait - random.uniform(0.0, min(wait / 5, 5.0)) if wait >= 5 else wait


def polling_credential() -> Credential:
    """The calling bot's credential (`credited_bot`), if it is a polling bot; 409 `wrong_kind` otherwise."""
    credential = credited_bot()
    only_polling(credential.bot)
    return credential


def only_polling(bot: dict) -> dict:
    """`bot`, if it is a polling bot; 409 `wrong_kind` otherwise."""
    if bot.get("kind") != "polling":
        fail(409, "wrong_kind", f"bot {bot['id']} is a {bot.get('kind')} bot: the referee calls it "
             f"({'at its url' if bot.get('kind') == 'webhook' else 'in the workers'}), it never polls for "
             "turns. Host it with serve(), or register a polling bot for connect()")
    return bot


@blp.post("/matches/<string:match_id>/turns/<int:turn>")
@documented(blp.arguments(ANSWER), blp.response(200, AcceptedSchema), errors(blp, 401, 403, 404, 409, 422))
def answer_turn(match_id: str, turn: int):
    """Answer a pending decision, once: 403 not this bot's seat, 409 not pending, 422 illegal.

    The referee judges it at once (sdk/referee.py, as everywhere): a listed
    action is played; an illegal one is a fault recorded now, with the
    engine's reason, the referee playing the first legal action — and the
    answer is 422 with that reason; `{"error": text}` is a `bot_error` fault
    now, its text kept with the seat's debug output (its owner's only). Each is charged the time from the decision's publication to now.
    """
    body = arguments(blp, ANSWER)
    s, credential = store(), polling_credential()
    # a decision pending for this bot proves its seat (only a seat's own decisions are published to it),
    # read with the credential's check and the match's waiting record (to settle with); the match is
    # read only to say why there is none
    record = waiting = None
    if len(match_id) <= 64:  # else no such match
        try:
            pending, raw = s.answer_reads(credential, match_id, turn, waiting_key(match_id))
        except NotCredited:
            not_credited()
        waiting = waiting_record(raw)
        record = pending_record(s, credential.bot["id"], match_id, turn, waiting) if pending else None
    if record is None:
        not_pending(s, credential.bot["id"], match_id, turn)
    g.turn_traffic_useful = True  # an answer to a pending decision, whatever its judgement
    if "error" in body:  # its words are its owner's only, kept with its debug output, as a webhook's body is
        debug = debug_text("\n".join(t for t in (body.get("debug"), f"the bot failed: {body['error']}") if t))
        entry = settle_answer(s, record, match_id, failure=fault("bot_error", REPORTED_FAILURE), debug=debug,
                              waiting=waiting)
    else:
        entry = settle_answer(s, record, match_id, action=body["action"], debug=debug_text(body.get("debug")),
                              waiting=waiting)
    return jsonify(ACCEPTED.dump({"match_id": match_id, "turn": turn, "action": entry["action"]}))


def pending_record(s, bot_id: str, match_id: str, turn: int, waiting: dict | None) -> dict | None:
    """The record of the bot's pending decision of that turn (`{"decision", "sent_at",
    "deadline_at", …}`), None past its deadline: the match's waiting record when it is that
    turn's, asked of this polling bot — `await_answer` wrote it with the same decision and times
    as the bot's own record, so the answer decodes one of the two — else the bot's record, read."""
    if waiting and waiting.get("turn") == turn and waiting.get("bot") == bot_id and waiting.get("kind") == "polling" \
            and {"decision", "sent_at", "deadline_at"} <= waiting.keys():
        return waiting if waiting["deadline_at"] > now_ms() else None
    return s.pending_record(bot_id, match_id, turn)


def not_pending(s, bot_id: str, match_id: str, turn: int) -> None:
    """Why no decision of that turn is pending for the bot (raises): 404 no such match, 403 not
    one of its seats or another seat's turn, 409 not pending (answered, past its deadline)."""
    match = s.get_matches([match_id], fields=("seats",))[0] if len(match_id) <= 64 else None  # its seats only
    if match is None:
        fail(404, "not_found", f"there is no match {match_id!r}")
    if bot_id not in match["seats"]:
        fail(403, "forbidden", f"bot {bot_id} does not play in match {match_id}")
    others = [b for b in set(match["seats"]) if b != bot_id]
    if any(s.find_decision(other, match_id, turn) for other in others):
        fail(403, "not_your_turn", f"turn {turn} of match {match_id} is another seat's")
    fail(409, "not_pending", f"turn {turn} of match {match_id} is not pending for this bot")


def settle_answer(s, record: dict, match_id: str, *, action=None, failure: str | None = None,
                  debug: str | None = None, for_you: str = "", waiting: dict | None = None) -> dict:
    """A pending decision's answer judged (core/answers.py) and settled, once; the entry. The
    one path of every answer the API takes — a polling bot's here, a person's click at the
    page's table (server/web/people.py): 409 `not_pending` when the deadline (or an admin) got
    there first, or it came too late; 422 `illegal_action` for an action not listed (recorded
    as a fault, the referee playing its own choice). Each is charged the time from the
    decision's publication to now. `waiting`: the match's waiting record (core/store/waits.py
    `waiting_record`) if read already, read again otherwise."""
    turn = record["turn"] if "turn" in record else record["decision"]["turn"]
    ms = max(0, now_ms() - int(record["sent_at"])) if "sent_at" in record else None
    entry = answered(s, record["decision"], ms, action=action, failure=failure)
    same_turn = waiting if waiting and waiting.get("turn") == turn else None
    if not play_on.settle(s, match_id, entry, record=same_turn, debug=debug):
        fail(409, "not_pending", f"turn {turn} of match {match_id} has already been played")
    kind = fault_kind(entry["fault"]) if "fault" in entry else None
    played = f"played {json.dumps(entry['action'], ensure_ascii=False)}{for_you}"
    if kind == "timeout":  # past the deadline by the time it was judged: the referee's timeout
        fail(409, "not_pending", f"turn {turn} of match {match_id}: {entry['fault']}; the referee {played}")
    if kind == "illegal":
        fail(422, "illegal_action", f"{reprs_as_json(entry['fault'])} (recorded as a fault; the referee {played})")
    return entry
