"""What several blueprints share: field limits, names, the rating shape, the queue, games."""

from __future__ import annotations

import functools

import marshmallow as ma
from flask import current_app, g, request
from marshmallow import validate
from webargs.multidictproxy import MultiDictProxy

import games
from core.store.bots import accepts_of, guest_share
from core.store.probation import PROBATION, is_paused
from core.store.versions import match_versions
from sdk.clock import DEFAULT_TIME, TimeRules
from server.errors import fail

NAME = validate.Length(min=1, max=64)  # names of things the server defines (games, options)
ID = validate.Length(min=1, max=64)
SEED = validate.Range(min=-(2**63), max=2**63 - 1)
#: the time rules' ranges (sdk/clock.py `TimeRules`, as `cardarena play`'s)
MOVE_TIMEOUT = validate.Range(*TimeRules.RANGES["move_timeout_ms"])
MAX_FAULTS = validate.Range(*TimeRules.RANGES["max_faults"])
TIME_BANK = validate.Range(*TimeRules.RANGES["time_bank_ms"])



class Name(ma.fields.String):
    """A name people give (a bot, an account): trimmed, then 1–64 printable characters.

    Printable (`str.isprintable`) excludes control characters, line and
    paragraph separators, format characters and lone surrogates — the last
    one made every page showing the name answer 500 (it cannot be encoded).
    """

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("metadata", {}).setdefault(
            "description", "1–64 printable characters (trimmed; no control characters)")
        super().__init__(**kwargs)

    def _deserialize(self, value, attr, data, **kwargs) -> str:
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        if not 1 <= len(text) <= 64:
            raise ma.ValidationError("a name has 1 to 64 characters (spaces around it do not count)")
        if not text.isprintable():
            raise ma.ValidationError("a name has printable characters only: no control characters, "
                                     "no line breaks, no lone surrogates")
        return text


class PageQuerySchema(ma.Schema):
    """`?limit=` (at most 100) and `?cursor=` (a previous page's `next_cursor`)."""

    limit = ma.fields.Integer(load_default=100, validate=validate.Range(min=1, max=100))
    cursor = ma.fields.String(validate=validate.Regexp(r"^[0-9]{1,18}$", error="not a cursor of this list"),
                              metadata={"description": "the previous page's next_cursor"})


def cursor_of(query: dict) -> int | None:
    """The position a page starts after (None: from the start)."""
    return int(query["cursor"]) if query.get("cursor") else None


def next_cursor_field():
    return ma.fields.String(allow_none=True, required=True,
                            metadata={"description": "pass as ?cursor= for the next page; null on the last"})


class RatingSchema(ma.Schema):
    mu = ma.fields.Float(required=True)
    sigma = ma.fields.Float(required=True)
    ordinal = ma.fields.Float(required=True, metadata={"description": "mu - 3 sigma: the ladder's order"})


HIDDEN_SEAT = "null while the match is rated and its deal is not over: nobody learns who sits at a rated table before then"


class SeatSchema(ma.Schema):
    seat = ma.fields.Integer(required=True)
    bot = ma.fields.String(required=True, allow_none=True, metadata={"description": HIDDEN_SEAT})
    version = ma.fields.Integer(required=True, allow_none=True, metadata={
        "description": f"the version of the bot that plays it; {HIDDEN_SEAT}"})


def seats_of(match: dict, hidden: bool = False) -> list[dict]:
    """A match's seats as the API shows them: seat, bot, the bot's version — seat numbers only
    while they are `hidden` (server/api/matches.py `seats_hidden`)."""
    if hidden:
        return [{"seat": i, "bot": None, "version": None} for i in range(len(match["seats"]))]
    return [{"seat": i, "bot": b, "version": v}
            for i, (b, v) in enumerate(zip(match["seats"], match_versions(match), strict=True))]


def game_or_422(name: str):
    try:
        return games.get(name)
    except games.UnknownGame:
        fail(422, "unknown_game", f"unknown game {name!r}; the games are: {', '.join(games.names())}")


def enqueue(kind: str, ident: str) -> None:
    """Queue the worker job running match or tournament `ident` on the app's queue
    (the server never imports the worker)."""
    current_app.extensions["cardarena.store"].enqueue(kind, [ident])


def check_entrants(store, game: str, bot_ids: list[str], rated: bool = False) -> None:
    """Each bot exists, is not retired, plays `game` and, for a rated match, is not paused
    (422 naming the first that fails)."""
    for bot_id in bot_ids:
        bot = store.get_bot(bot_id)
        if bot is None:
            fail(422, "unknown_bot", f"there is no bot {bot_id!r}")
        if bot["retired"]:
            fail(422, "retired_bot", f"bot {bot_id!r} is retired")
        if bot["game"] != game:
            fail(422, "wrong_game", f"bot {bot_id!r} plays {bot['game']}, not {game}")
        if rated and is_paused(bot):
            fail(422, "paused_bot", f"bot {bot_id!r} is paused from rated play: it forfeited {PROBATION} "
                 f"rated matches in a row (its owner resumes it: POST /bots/{bot_id}/resume); "
                 "unrated matches, with a seed, are open to it")


def check_consent(store, account: dict | None, bot_ids: list[str], body: dict) -> None:
    """Entering another account's bot takes its consent and the standard clock (docs/api.md §6).

    Without this a challenger could enter anyone's bot on a 100 ms clock it cannot meet and
    collect its forfeits. A bot that `accepts` only its `"owner"` is entered by its account
    alone (403 `not_accepting`); a match, tournament or comparison seating another account's
    bot is played on the standard clock (`sdk/clock.py` `DEFAULT_TIME`, `GET /games`'
    `ladder`), any other `move_timeout_ms` / `time_bank_ms` / `max_faults` is 422
    `clock_not_allowed`. The admin (`account` None) is exempt. Call after `check_entrants`.
    """
    if account is None:
        return
    bots = store.bot_records(list(dict.fromkeys(bot_ids)))
    others = [b for b in bots.values() if b.get("owner") != account["id"]]
    for bot in others:
        if accepts_of(bot) == "owner":
            fail(403, "not_accepting", f"bot {bot['id']!r} accepts matches from its owner only")
    if not others:
        return
    for bot in others:
        if guest_share(bot) == 0:
            fail(409, "no_room_for_guests", f"bot {bot['id']!r} keeps its one slot for the ladder: other "
                 "accounts may enter it once its owner gives it more (max_concurrent) or takes it off the ladder")
    if "options" in body:
        check_standard_options(others[0]["game"], others[0]["id"], body.get("options") or {})
    for field in TimeRules.RANGES:
        standard = getattr(DEFAULT_TIME, field)
        if body.get(field, standard) != standard:
            fail(422, "clock_not_allowed",
                 f"bot {others[0]['id']!r} is another account's: a match entering it is played on the "
                 f"standard clock ({field} {standard}, as GET /games lists under `ladder`), not "
                 f"{field} {body[field]}")


#: options a match seating another account's bot may have besides the standard ones: they only
#: shorten it (duck-soup's `deal_only`: one deal)
SHORTER = {"deal_only": True}


def check_standard_options(game: str, bot_id: str, options: dict) -> None:
    """A match seating another account's bot (`bot_id`) is played on the game's standard options:
    each option left out, given its default (`GET /games`) or one that only shortens it (`SHORTER`),
    else 422 `options_not_allowed`. Without this a challenger could hold anyone's bot for hours in
    a match of 1,000 deals."""
    defaults = games.get(game).describe()["options"]
    changed = sorted(k for k, v in options.items()
                     if (k not in defaults or defaults[k] != v) and SHORTER.get(k, object()) != v)
    if changed:
        fail(422, "options_not_allowed",
             f"bot {bot_id!r} is another account's: a match entering it is played on the game's standard "
             f"options (as GET /games lists them), not with {', '.join(changed)} changed")


#: the unfinished challenges and /play matches one account may have with one other account's bot
GUEST_MATCHES = 2


def claim_guest_places(store, account: dict | None, bot_ids: list[str]) -> str:
    """The id of a challenge or /play match about to be created, with a place taken for it with
    each other account's bot among `bot_ids`: at most `GUEST_MATCHES` unfinished ones per (account,
    bot), else 429 `too_many_with_bot`. The admin (`account` None) is exempt."""
    from core.store.keys import new_id

    match_id = new_id("m")
    if account is None:
        return match_id
    bots = store.bot_records(list(dict.fromkeys(bot_ids)))
    others = [b for b, bot in bots.items() if bot.get("owner") != account["id"]]
    full = store.claim_guest_places(account["id"], others, match_id, GUEST_MATCHES)
    if full is not None:
        fail(429, "too_many_with_bot", f"you have {GUEST_MATCHES} unfinished matches with bot {full!r} "
             "already (another account's): start another once one is over", {"Retry-After": "30"})
    return match_id


def errors(blp, *codes: int):
    """Document the error statuses a view may answer (all in the error format)
    and, for views answering 401, that they take a bearer credential."""
    import http

    def decorate(view):
        for code in codes:
            view = blp.alt_response(code, response=http.HTTPStatus(code).name)(view)
        if 401 in codes:  # it takes a credential: say which scheme in the document
            view = blp.doc(security=[{"bearer": []}])(view)
        return view

    return decorate


@functools.cache
def _single_valued(schema: ma.Schema) -> bool:
    """Whether each field of the query schema `schema` takes one value (none that webargs reads as
    a list from a repeated parameter)."""
    return not MultiDictProxy({}, schema).multiple_keys


def documented(*decorators):
    """A view described as flask-smorest's `decorators` (`blp.arguments`, `blp.response`, `errors`)
    describe it — the OpenAPI document reads only what they leave on the function (`_apidoc`) and
    its docstring — without their wrappers around it at each request: the view parses its
    arguments itself (`arguments`, the same parser and errors) and answers JSON. For the turn
    traffic, where the five to seven wrappers' work (dump through the response schema, the
    arguments' glue) is repeated on every decision; apply it under `blp.route`."""

    def apply(view):
        described = view
        for decorator in reversed(decorators):
            described = decorator(described)
        view._apidoc = described._apidoc
        return view

    return apply


def arguments(blp, schema, location: str = "json"):
    """The request's arguments at `location` loaded with `schema` (an instance), as `blp.arguments`
    would pass them to the view: the same parser, so the same 422 (and 400 for a body that is not
    JSON). A query of fields that each take one value is loaded straight from the query string
    (webargs' view of it is rebuilt from the schema at each request), unknown ones left out as
    webargs does; a JSON body the app has parsed already (`g.checked_json`, server/app.py) is not
    parsed again; their errors go to the same parser."""
    parser = blp.ARGUMENTS_PARSER
    if location == "query" and _single_valued(schema):
        data, unknown = request.args, {"unknown": ma.EXCLUDE}
    elif location == "json" and "checked_json" in g:
        data, unknown = g.checked_json, {}  # the schema's own, as webargs leaves it for a body
    else:
        return parser.parse(schema, location=location)
    try:
        return schema.load(data, **unknown)
    except ma.ValidationError as error:
        error.messages = {location: error.messages}  # as webargs namespaces them
        parser.handle_error(error, request, schema, error_status_code=None, error_headers=None)
