"""`Client`: the REST API as Python calls — accounts, bots, matches, tournaments, rankings.

    client = Client("http://127.0.0.1:5000")           # as CARDARENA_TOKEN's account, when set
    client.create_account("alice")                     # the client keeps the token
    bot = client.register_bot("lowest", GAME, kind="polling")    # GAME: a name from client.games()
    t = client.create_tournament(GAME, [bot, "b_rival"], deals=4)
    client.wait_tournament(t.id)                       # a progress bar, then the standings

Methods read like the API (docs/api.md §4) and return small dataclasses holding
the fields clients rely on, plus `raw`: the whole answer, for the rest.
Wherever a bot is expected, a `BotInfo` or its id will do. Every failure —
a 4xx/5xx answer, no server, a timeout — is one exception type,
`CardarenaError`, carrying the status, the API's error code and its message.
"""

from __future__ import annotations

import base64
import logging
import os
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

import requests

#: (connect, read) seconds for every request but the long-poll
log = logging.getLogger("sdk.client")

TIMEOUT = (5.0, 30.0)
FINISHED = ("finished", "aborted")
#: the statuses a comparison ends in
COMPARISON_OVER = ("H0", "H1", "inconclusive", "aborted")


#: what a wait asks again (`Client.wait_match` and the like): no answer at all (None), too many
#: requests, a proxy's or a restarting server's answer
TRANSIENT = (None, 429, 502, 503, 504)


class CardarenaError(Exception):
    """What went wrong talking to the platform.

    `status` is the HTTP status (None when no answer came: `code` is then
    ``"unreachable"`` or ``"timeout"``), `code` the API's error code
    (``"not_found"``, ``"illegal_action"``…), `message` its explanation;
    `retry_after` the seconds a 429 asks to wait.
    """

    def __init__(self, status: int | None, code: str, message: str,
                 retry_after: float | None = None) -> None:
        super().__init__(f"{status or 'no answer'} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after

    @classmethod
    def from_response(cls, response: requests.Response) -> CardarenaError:
        code, message = "http_error", response.reason or f"HTTP {response.status_code}"
        try:
            error = response.json()["error"]
            code, message = str(error["code"]), str(error["message"])
        except (ValueError, KeyError, TypeError):
            text = response.text.strip()
            if text:
                message = text[:300]
        return cls(response.status_code, code, message, retry_after(response))


def retry_after(response: requests.Response) -> float | None:
    """The seconds a `Retry-After` header asks for (number form), or None."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def api_base(server: str) -> str:
    """`http://host:port/api/v1` for a server given with or without the prefix."""
    server = server.rstrip("/")
    return server if server.endswith("/api/v1") else server + "/api/v1"


# -- the answers ------------------------------------------------------------

@dataclass(frozen=True)
class Rating:
    """A rating (openskill): skill estimate `mu`, its uncertainty `sigma`, and `ordinal` = μ − 3σ,
    the cautious figure the ladder sorts by."""

    mu: float
    sigma: float
    ordinal: float

    @classmethod
    def of(cls, raw: dict | None) -> Rating | None:
        """The rating `raw` holds, or None for none (a version not rated yet)."""
        return cls.parse(raw) if raw else None

    @classmethod
    def parse(cls, raw: dict) -> Rating:
        return cls(raw["mu"], raw["sigma"], raw["ordinal"])


@dataclass(frozen=True)
class Account:
    """`create_account`'s answer: the account's `id`, `name` and `token` (shown once)."""

    id: str
    name: str
    token: str
    raw: dict = field(repr=False, compare=False)


@dataclass(frozen=True)
class Version:
    """One version of a bot, rated on its own (`BotInfo.versions`, newest first)."""

    version: int
    created: str | None = None
    rating: Rating | None = None

    @classmethod
    def of(cls, raw: dict) -> Version:
        return cls(version=raw["version"], created=raw.get("created"), rating=Rating.of(raw.get("rating")))


@dataclass(frozen=True)
class BotInfo:
    """A bot; `secret` is set only in `register_bot`'s answer (shown once)."""

    id: str
    name: str
    game: str
    kind: str
    secret: str | None = field(default=None, repr=False)
    url: str | None = None
    retired: bool = False
    rating: Rating | None = None
    matches: int = 0
    wins: int = 0
    faults: int = 0
    #: "online", "rejected" (its server refused the referee's signature: check the secret) or
    #: "offline"; `status_reason` says why it is not online; `last_seen` ISO 8601 UTC or None
    status: str = "offline"
    status_reason: str | None = None
    last_seen: str | None = None
    #: paused (forfeited 5 ladder matches in a row): paired by nobody until `Client.resume_bot`
    paused: bool = False
    owner: str | None = None
    #: the most matches the platform puts it in at once
    max_concurrent: int | None = None
    #: who may enter it in a challenge, tournament or comparison: "everyone", or "owner" (its
    #: account and the admin; others get 403 not_accepting)
    accepts: str = "everyone"
    #: on its game's ladder: the platform's matchmaker pairs it, rated, while it is online
    ladder: bool = True
    #: `register_bot`'s answer for a webhook bot: whether it answered a ping
    reachable: bool | None = None
    #: `register_bot`'s answer: what may keep it out of play (also logged as warnings)
    warnings: tuple[str, ...] = ()
    #: its latest version (`Client.new_version`); `rating` is that version's
    version: int = 1
    #: every version with its own rating, newest first (`Client.bot` fills it; lists leave it empty)
    versions: tuple[Version, ...] = ()
    #: a hosted bot whose code did not answer its probe decision: why (its traceback), shown to
    #: its owner only (`Client.bot`, `Client.submit`)
    probe_error: str | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, raw: dict) -> BotInfo:
        return cls(id=raw["id"], name=raw["name"], game=raw["game"], kind=raw["kind"],
                   secret=raw.get("secret"), url=raw.get("url"), retired=bool(raw.get("retired")),
                   rating=Rating.of(raw.get("rating")), matches=raw.get("matches", 0),
                   wins=raw.get("wins", 0), faults=raw.get("faults", 0),
                   status=raw.get("status", "offline"), status_reason=raw.get("status_reason"),
                   last_seen=raw.get("last_seen"), warnings=tuple(raw.get("warnings") or ()),
                   paused=bool(raw.get("paused")), owner=raw.get("owner"), reachable=raw.get("reachable"),
                   max_concurrent=raw.get("max_concurrent"), accepts=raw.get("accepts") or "everyone",
                   ladder=raw.get("ladder") is not False, version=raw.get("version") or 1,
                   versions=tuple(Version.of(v) for v in raw.get("versions") or ()),
                   probe_error=raw.get("probe_error"), raw=raw)


@dataclass(frozen=True)
class Ping:
    """`Client.ping`'s answer: whether the bot answered now, and its status after it."""

    reachable: bool
    status: str
    status_reason: str | None = None
    #: a webhook's answer's HTTP status (None: no answer, or not a webhook bot)
    http_status: int | None = None
    latency_ms: int | None = None
    #: what went wrong (None when it answered 200)
    error: str | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, raw: dict) -> Ping:
        return cls(reachable=bool(raw["reachable"]), status=raw["status"], status_reason=raw.get("status_reason"),
                   http_status=raw.get("http_status"), latency_ms=raw.get("latency_ms"), error=raw.get("error"),
                   raw=raw)

    def __str__(self) -> str:
        if self.reachable:
            return f"{self.status}" + (f" (answered in {self.latency_ms} ms)" if self.latency_ms is not None else "")
        return f"{self.status}: {self.error or self.status_reason}"


@dataclass(frozen=True)
class GameInfo:
    """A game the platform plays (`Client.games`): its `name` (also `.id`), seats and options."""

    name: str
    min_seats: int
    max_seats: int
    options: dict
    raw: dict = field(repr=False, compare=False)
    #: the standard clock and a ladder table's seats: {"seats", "move_timeout_ms", "time_bank_ms",
    #: "max_faults"} — the clock a match entering another account's bot is played on
    ladder: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The game's name: what every call naming a game takes."""
        return self.name

    @classmethod
    def of(cls, raw: dict) -> GameInfo:
        return cls(raw["name"], raw["min_seats"], raw["max_seats"], raw.get("options", {}), raw,
                   ladder=raw.get("ladder") or {})


@dataclass(frozen=True)
class Match:
    """A match; `result` and `log` are None until it is public (docs/api.md §4)."""

    id: str
    status: str
    game: str | None = None
    seats: list[str] = field(default_factory=list)  # bot ids in seat order
    result: dict | None = None
    log: list[dict] | None = None
    rated: bool | None = None
    #: "ladder" (the matchmaker's), "tournament", "comparison" or "challenge"
    kind: str | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def over(self) -> bool:
        return self.status in FINISHED

    @classmethod
    def of(cls, raw: dict) -> Match:
        seats = [s["bot"] if isinstance(s, dict) else s for s in raw.get("seats") or []]
        return cls(id=raw["id"], status=raw["status"], game=raw.get("game"), seats=seats,
                   result=raw.get("result"), log=raw.get("log"), rated=raw.get("rated"),
                   kind=raw.get("kind"), raw=raw)


@dataclass(frozen=True)
class Comparison:
    """A comparison (docs/api.md §5): `status` queued, running, H0, H1, inconclusive or aborted."""

    id: str
    status: str
    deals: int = 0
    llr: float = 0.0
    bounds: tuple[float, float] = (0.0, 0.0)
    mean: float | None = None
    ci95: tuple[float, float] | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def over(self) -> bool:
        return self.status in COMPARISON_OVER

    @property
    def verdict(self) -> str:
        """One line: what the test decided, after how many deals, with the mean's interval."""
        c = self.raw
        cand, base = (c.get(f"{who}_name") or _with_version(c, who, str(c.get(who))) for who in ("candidate", "baseline"))
        # H0 is "the mean is at most delta0", which is not "no better": it is "not better by delta1 or more"
        by = "" if c.get("delta1") is None else f" by ≥ δ = {c['delta1']:g}"
        what = {"H1": f"{cand} is better than {base}", "H0": f"{cand} is not better than {base}{by}",
                "inconclusive": "no decision within max_deals", "aborted": "aborted"}.get(self.status, self.status)
        interval = "" if self.ci95 is None else f", 95% [{self.ci95[0]:+.3f}, {self.ci95[1]:+.3f}]"
        mean = "" if self.mean is None else f"; mean {self.mean:+.3f}{interval}"
        return (f"{self.status}: {what} after {self.deals} deals (llr {self.llr:.2f}, bounds "
                f"{self.bounds[0]:.2f} and {self.bounds[1]:.2f}{mean})")

    def show(self, bar) -> None:
        """Update a progress bar (`sdk.textout.progress`) to where the llr stands between its
        bounds: `compare` here and `cardarena compare` at home show the same line."""
        lower, upper = self.bounds
        share = 0.0 if upper == lower else (min(max(self.llr, lower), upper) - lower) / (upper - lower)
        bar.update(completed=round(100 * share), total=100,
                   description=f"comparison {self.id}: {self.deals} deals, llr {self.llr:+.2f} ({self.status})")

    @classmethod
    def of(cls, raw: dict) -> Comparison:
        ci = raw.get("ci95")
        bounds = raw.get("bounds") or (0.0, 0.0)
        return cls(id=raw["id"], status=raw["status"], deals=raw.get("deals", 0), llr=raw.get("llr", 0.0),
                   bounds=(bounds[0], bounds[1]), mean=raw.get("mean"), ci95=None if ci is None else (ci[0], ci[1]),
                   raw=raw)


@dataclass(frozen=True)
class Standing:
    """A tournament's row for one bot (`id`; `.bot` is the same): what the platform saw it do,
    faults and forfeits included (a forfeiting bot is not a weak one). `name` is filled by
    `Client.wait_tournament`."""

    rank: int
    id: str
    points: float
    matches: int
    wins: int | None = None
    draws: int | None = None
    faults: int | None = None
    forfeits: int | None = None
    name: str | None = None

    @property
    def bot(self) -> str:
        """The bot's id (the API's field name; `.id` is the same)."""
        return self.id

    @classmethod
    def of(cls, raw: dict) -> Standing:
        return cls(raw["rank"], raw["bot"], raw["points"], raw["matches"], raw.get("wins"),
                   raw.get("draws"), raw.get("faults"), raw.get("forfeits"), raw.get("name"))


@dataclass(frozen=True)
class Tournament:
    """A tournament: `status` queued, running, finished, aborting (its abort ending its matches) or aborted; `done` of `total` matches played."""

    id: str
    status: str
    game: str | None = None
    done: int = 0
    total: int = 0
    standings: list[Standing] = field(default_factory=list)
    #: `create_tournament`'s answer: entrants that may forfeit (not online: offline, or rejected), each
    #: `{"bot", "name", "status", "message"}`
    warnings: list[dict] = field(default_factory=list)
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def over(self) -> bool:
        return self.status in FINISHED

    @classmethod
    def of(cls, raw: dict) -> Tournament:
        progress = raw.get("progress") or {}
        standings = [Standing.of(s) for s in raw.get("standings") or []]
        return cls(id=raw["id"], status=raw["status"], game=raw.get("game"),
                   done=progress.get("done", 0), total=progress.get("total", 0),
                   standings=standings, warnings=list(raw.get("warnings") or []), raw=raw)


@dataclass(frozen=True)
class Ranking:
    """A row of a game's ladder (`Client.rankings`): the bot's `id` (`.bot` is the same), its place
    and rating, and its rated record."""

    rank: int
    id: str
    rating: Rating
    matches: int
    wins: int
    name: str | None = None
    #: the bot's latest version, whose rating this is
    version: int = 1
    #: ladder matches that version finished
    ladder_matches: int = 0
    #: σ above 25/3 × 0.5: too few matches yet to trust its place
    provisional: bool = False
    #: paused (ladder matches forfeited in a row): it keeps its place, paired by nobody until resumed
    paused: bool = False
    #: unrated matches (challenges, accounts' tournaments, comparisons) and those it won
    other_matches: int = 0
    other_wins: int = 0
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def bot(self) -> str:
        """The bot's id (the API's field name; `.id` is the same)."""
        return self.id

    @classmethod
    def of(cls, raw: dict) -> Ranking:
        return cls(raw["rank"], raw["bot"], Rating.parse(raw["rating"]), raw["matches"], raw["wins"], raw.get("name"),
                   raw.get("version") or 1, raw.get("ladder_matches") or 0, bool(raw.get("provisional")),
                   bool(raw.get("paused")), raw.get("other_matches") or 0, raw.get("other_wins") or 0, raw)


@dataclass(frozen=True)
class DebugNote:
    """What a seat's bot wrote while answering the decision of log entry `turn` (`Client.debug`)."""

    turn: int
    seat: int
    text: str


def bot_id(bot: BotInfo | str) -> str:
    return bot.id if isinstance(bot, BotInfo) else bot


# -- the client -------------------------------------------------------------

#: the environment variable a `Client` given no token reads (docs/api.md §5)
TOKEN_ENV = "CARDARENA_TOKEN"


class Client:
    """The referee API at `server` (``http://host:port``), as `token` (an account or the admin).

    Without `token`, the client uses `CARDARENA_TOKEN` when it is set: an
    account's token is shown once, so a bot author keeps it in the environment
    and every later script is the same account again.
    """

    def __init__(self, server: str, token: str | None = None, timeout: float | tuple = TIMEOUT) -> None:
        self.server = server.rstrip("/")
        self.base = api_base(server)
        self.token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers["User-Agent"] = "cardarena-sdk/1"

    def __repr__(self) -> str:
        return f"Client({self.server!r})"

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def request(self, method: str, path: str, json: Any = None, params: dict | None = None,
                token: str | None = None, timeout: float | tuple | None = None) -> dict:
        """One API call: the answer's JSON, or `CardarenaError`."""
        headers = {}
        token = token or self.token
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            response = self.session.request(method, self.base + path, json=json, params=params,
                                            headers=headers, timeout=timeout or self.timeout)
        except requests.Timeout as exc:
            raise CardarenaError(None, "timeout", f"{method} {path}: no answer in time ({exc})") from None
        except requests.RequestException as exc:
            raise CardarenaError(None, "unreachable", f"{method} {path}: {exc}") from None
        if response.status_code >= 400:
            raise CardarenaError.from_response(response)
        if not response.content:
            return {}
        try:
            return response.json()
        except ValueError:
            raise CardarenaError(response.status_code, "bad_response",
                                 f"{method} {path}: the answer is not JSON") from None

    # accounts and bots
    def create_account(self, name: str, invite: str | None = None) -> Account:
        """A new account; its token is shown once — the client keeps it if it had none. On a
        platform whose sign-up is by invite only, `invite` is the code its admin gave you."""
        raw = self.request("POST", "/accounts", {"name": name} if invite is None else {"name": name, "invite": invite})
        if not self.token:
            self.token = raw["token"]
        return Account(raw["id"], raw["name"], raw["token"], raw)

    def register_bot(self, name: str, game: str, kind: str = "webhook", url: str | None = None,
                     entrypoint: str | None = None, max_concurrent: int | None = None,
                     accepts: str | None = None, ladder: bool | None = None, code: bytes | None = None) -> BotInfo:
        """Register a bot: `kind` "hosted" (`code`, the bytes of a .py file or a zip, and its
        `entrypoint`; `submit` packs them for you), "webhook" (with `url`), "polling", or
        "python" (admin, `entrypoint`).

        `accepts` "owner" keeps other accounts from entering it in their matches (default
        "everyone": they may, on the standard clock only). `ladder` (default True) puts it on its
        game's ladder: while it is online the platform pairs it in rated matches against bots of
        similar strength, and that is how it is ranked; False keeps it off.

        The answer's `secret` is shown once: `serve` and `connect` need it. What may keep the
        bot out of play (a webhook that did not answer its ping, and why) is in `warnings`, and
        logged as warnings (`sdk.client`: on stderr unless logging is set up otherwise).
        """
        body: dict[str, Any] = {"name": name, "game": game, "kind": kind}
        if url is not None:
            body["url"] = url
        if entrypoint is not None:
            body["entrypoint"] = entrypoint
        if code is not None:
            body["code"] = base64.b64encode(code).decode("ascii")
        if max_concurrent is not None:
            body["max_concurrent"] = max_concurrent
        if accepts is not None:
            body["accepts"] = accepts
        if ladder is not None:
            body["ladder"] = ladder
        bot = BotInfo.of(self.request("POST", "/bots", body))
        for warning in bot.warnings:  # said where the author looks, as create_tournament's
            log.warning("%s (%s): %s", bot.name, bot.id, warning)
        return bot

    def bots(self, game: str | None = None, retired: bool = False) -> list[BotInfo]:
        """The bots (of `game`, if given) in registration order: the active ones, those
        that can be entered in a match; `retired=True` lists the retired ones too."""
        params = {"game": game} if game else {}
        found = (BotInfo.of(b) for b in self._every("/bots", "bots", params))
        return [b for b in found if retired or not b.retired]

    def bot(self, id: BotInfo | str) -> BotInfo:
        return BotInfo.of(self.request("GET", f"/bots/{_seg(bot_id(id))}"))

    def retire_bot(self, id: BotInfo | str) -> BotInfo:
        """Retire a bot you own; its past matches stay."""
        return BotInfo.of(self.request("DELETE", f"/bots/{_seg(bot_id(id))}"))

    def update_bot(self, id: BotInfo | str, max_concurrent: int | None = None, url: str | None = None,
                   accepts: str | None = None, ladder: bool | None = None) -> BotInfo:
        """Change a bot you own: the most matches it plays at once, a webhook bot's URL, who
        it `accepts` matches from ("everyone" or "owner"), or whether it is on the `ladder`."""
        body = _fields(max_concurrent=max_concurrent, url=url, accepts=accepts, ladder=ladder)
        return BotInfo.of(self.request("PATCH", f"/bots/{_seg(bot_id(id))}", body))

    def new_version(self, id: BotInfo | str, url: str | None = None, entrypoint: str | None = None,
                    code: bytes | None = None) -> int:
        """Start the next version of a bot you own (a webhook bot at a new `url`, a hosted bot with
        new `code`, if given); its number. It is rated on its own; `compare(bot, bot)` then asks
        whether it beats the one before."""
        body = _fields(url=url, entrypoint=entrypoint,
                       code=None if code is None else base64.b64encode(code).decode("ascii"))
        return int(self.request("POST", f"/bots/{_seg(bot_id(id))}/versions", body)["version"])

    def submit(self, path: str, game: str, name: str | None = None) -> BotInfo:
        """Upload the bot at `path` (`mybot.py`, a package folder, either with `:Class`) as a
        hosted bot of `game`, named `name` (default: its class's): the platform runs it in its
        sandbox, asks it a probe decision and puts it on the ladder. A bot of yours of that name
        gets the code as its new version. The answer's `status` says whether the probe passed
        ("online"; else "rejected", and `probe_error` says why)."""
        from sdk.packing import package

        code, entrypoint = package(path)
        name = name or entrypoint.rpartition(":")[2]
        try:
            return self.bot(self.register_bot(name, game, kind="hosted", entrypoint=entrypoint, code=code))
        except CardarenaError as exc:
            if exc.code != "name_taken":
                raise
            folded = name.casefold()
            mine = [b for b in self.bots(game) if b.kind == "hosted" and b.name.casefold() == folded]
            if not mine:
                raise
            self.new_version(mine[0], entrypoint=entrypoint, code=code)
            return self.bot(mine[0])

    def ping(self, id: BotInfo | str) -> Ping:
        """Ping a bot you own now: a webhook bot is sent the signed ping (its `status` follows
        from the answer: a bot served after it was registered is `online` from here); a polling
        bot is judged by its polls."""
        return Ping.of(self.request("POST", f"/bots/{_seg(bot_id(id))}/ping"))

    def resume_bot(self, id: BotInfo | str) -> BotInfo:
        """Let a bot you own that is `paused` (5 rated forfeits in a row) play rated matches again."""
        return BotInfo.of(self.request("POST", f"/bots/{_seg(bot_id(id))}/resume"))

    def games(self) -> list[GameInfo]:
        return [GameInfo.of(g) for g in self.request("GET", "/games")["games"]]

    # matches
    def challenge(self, game: str, bots: list[BotInfo | str], seed: int | None = None,
                  options: dict | None = None, move_timeout_ms: int | None = None,
                  max_faults: int | None = None, time_bank_ms: int | None = None) -> Match:
        """One match, seat i = bots[i] (`POST /matches`): a challenge is never rated, whatever its seed
        (without one the server draws it); only the ladder and the admin's tournaments are."""
        body = _fields(game=game, bots=[bot_id(b) for b in bots], seed=seed, options=options,
                       move_timeout_ms=move_timeout_ms, time_bank_ms=time_bank_ms, max_faults=max_faults)
        return Match.of(self.request("POST", "/matches", body))

    def match(self, id: Match | str) -> Match:
        return Match.of(self.request("GET", f"/matches/{_seg(_id(id))}"))

    def matches(self, bot: BotInfo | str | None = None, game: str | None = None, limit: int = 100) -> list[Match]:
        """The newest matches (`GET /matches`), at most `limit`: those `bot` plays in, of `game`, or all.
        Their `result` is set once public; `log` is not listed (`match(id)` has it)."""
        params = _fields(bot=None if bot is None else bot_id(bot), game=game)
        return [Match.of(m) for m in self._every("/matches", "matches", params, limit=limit)]

    def debug(self, match: Match | str) -> list[DebugNote]:
        """What your bots wrote in a match (`Bot.debug`, a polling bot's reported error), by turn:
        the seats of your own bots only (the admin: every seat), while it plays and after
        (`GET /matches/{id}/debug`)."""
        raw = self.request("GET", f"/matches/{_seg(_id(match))}/debug")
        return [DebugNote(n["turn"], n["seat"], n["text"]) for n in raw["debug"]]

    def wait_match(self, id: Match | str, timeout: float | None = None, poll: float = 0.5) -> Match:
        """The match once finished or aborted (`CardarenaError` "timeout" after `timeout` s)."""
        return self._wait(lambda: self.match(id), timeout, poll)

    # tournaments
    def create_tournament(self, game: str, bots: list[BotInfo | str], deals: int = 1,
                          seats: int | None = None, duplicate: bool = True, seed: int | None = None,
                          options: dict | None = None, move_timeout_ms: int | None = None,
                          max_faults: int | None = None, time_bank_ms: int | None = None,
                          candidate: BotInfo | str | None = None) -> Tournament:
        """A round-robin: every table of `seats` entrants plays `deals` deals (each rotated if `duplicate`);
        with `candidate`, a gauntlet: the candidate at every table, the others in turn at its other seats."""
        body = _fields(game=game, bots=[bot_id(b) for b in bots], deals=deals,
                       format="round-robin" if candidate is None else "gauntlet",
                       candidate=None if candidate is None else bot_id(candidate),
                       seats=seats, duplicate=duplicate, seed=seed, options=options,
                       move_timeout_ms=move_timeout_ms, time_bank_ms=time_bank_ms, max_faults=max_faults)
        tournament = Tournament.of(self.request("POST", "/tournaments", body))
        for warning in tournament.warnings:  # said where the author looks: a bot that will forfeit
            log.warning("%s (%s) %s", warning.get("name"), warning.get("bot"), warning.get("message"))
        return tournament

    def tournament(self, id: Tournament | str) -> Tournament:
        return Tournament.of(self.request("GET", f"/tournaments/{_seg(_id(id))}"))

    def tournament_matches(self, id: Tournament | str) -> list[Match]:
        return [Match.of(m) for m in self._every(f"/tournaments/{_seg(_id(id))}/matches", "matches")]

    def _every(self, path: str, key: str, params: dict | None = None, limit: int | None = None) -> list[dict]:
        """Every item of a list the API serves a page at a time (following `next_cursor`), or the
        first `limit`."""
        items: list[dict] = []
        query = {**(params or {}), "limit": 100 if limit is None else max(1, min(limit, 100))}
        while limit is None or len(items) < limit:
            page = self.request("GET", path, params=query)
            items += page[key]
            if not page.get("next_cursor"):
                break
            query["cursor"] = page["next_cursor"]
        return items if limit is None else items[:limit]

    def wait_tournament(self, id: Tournament | str, progress: bool = True,
                        timeout: float | None = None, poll: float = 0.5) -> Tournament:
        """The tournament once over, polling it; `progress` shows a progress bar, then the standings
        (with rich if it is installed, else as plain text: `sdk.textout`)."""
        if not progress:
            return self._named(self._wait(lambda: self.tournament(id), timeout, poll))
        from sdk import textout

        with textout.progress(f"tournament {_id(id)}", None, file=sys.stdout, transient=False) as bar:

            def step() -> Tournament:
                t = self.tournament(id)
                bar.update(completed=t.done, total=t.total or None, description=f"tournament {t.id} ({t.status})")
                return t

            done = self._named(self._wait(step, timeout, poll))
        self._print_standings(done)
        return done

    def compare(self, candidate: BotInfo | str, baseline: BotInfo | str, game: str | None = None,
                opponents: list[BotInfo | str] | None = None, seats: int | None = None,
                delta0: float | None = None, delta1: float | None = None, alpha: float | None = None,
                beta: float | None = None, max_deals: int | None = None, seed: int | None = None,
                options: dict | None = None, move_timeout_ms: int | None = None, progress: bool = True,
                timeout: float | None = None, poll: float = 1.0, candidate_version: int | None = None,
                baseline_version: int | None = None) -> Comparison:
        """Is `candidate` better than `baseline`? Plays deals until the sequential test decides
        (docs/api.md §5): head to head, or in a field of `opponents`; `progress` shows a bar of the
        log-likelihood ratio between its bounds, then the one-line verdict. The game is the
        candidate's when not given. The same bot twice compares its latest version with the one
        before (or the `candidate_version` and `baseline_version` given)."""
        if game is None:
            game = candidate.game if isinstance(candidate, BotInfo) else self.bot(candidate).game
        body = _fields(game=game, candidate=bot_id(candidate), baseline=bot_id(baseline),
                       opponents=None if opponents is None else [bot_id(b) for b in opponents], seats=seats,
                       delta0=delta0, delta1=delta1, alpha=alpha, beta=beta, max_deals=max_deals, seed=seed,
                       options=options, move_timeout_ms=move_timeout_ms, candidate_version=candidate_version,
                       baseline_version=baseline_version)
        cid = self.request("POST", "/comparisons", body)["id"]
        if not progress:
            return self._wait(lambda: self.comparison(cid), timeout, poll)
        from sdk import textout

        with textout.progress(f"comparison {cid}", 100, file=sys.stdout, transient=False) as bar:

            def step() -> Comparison:
                c = self.comparison(cid)
                c.show(bar)
                return c

            done = self._wait(step, timeout, poll)
        print(self._named_comparison(done, candidate, baseline).verdict, flush=True)
        return done

    def _named_comparison(self, c: Comparison, *bots: BotInfo | str) -> Comparison:
        """`c` whose verdict names its bots (a BotInfo's name, else the API's; an id if neither),
        with their versions when they are not both a first one."""
        raw = dict(c.raw)
        for who, bot in zip(("candidate", "baseline"), bots, strict=True):
            name = bot.name if isinstance(bot, BotInfo) else None
            if name is None:
                try:
                    name = self.bot(bot_id(bot)).name
                except CardarenaError:
                    name = None
            raw[f"{who}_name"] = _with_version(raw, who, f"{name} ({bot_id(bot)})" if name else bot_id(bot))
        return replace(c, raw=raw)

    def comparison(self, id: Comparison | str) -> Comparison:
        return Comparison.of(self.request("GET", f"/comparisons/{_id(id)}"))

    def _named(self, t: Tournament) -> Tournament:
        """`t` with each standing's bot name (a retired bot keeps its name; one unknown stays None)."""
        rows = []
        for s in t.standings:
            try:
                rows.append(replace(s, name=s.name or self.bot(s.bot).name))
            except CardarenaError:
                rows.append(s)
        return replace(t, standings=rows)

    def _print_standings(self, t: Tournament) -> None:
        """The final standings as a table: names, points, and the faults and forfeits behind them."""
        from sdk import textout

        def num(n: int | None) -> str:
            return "" if n is None else str(n)

        rows = [(str(s.rank), f"{s.name} ({s.bot})" if s.name else s.bot, f"{s.points:g}", str(s.matches),
                 num(s.wins), num(s.faults), num(s.forfeits)) for s in t.standings]
        textout.print_table(f"tournament {t.id}: {t.status}",
                            ("rank", "bot", "points", "matches", "wins", "faults", "forfeits"), rows)

    def rankings(self, game: str) -> list[Ranking]:
        """The game's ladder, best first (`GET /games/{game}/rankings`)."""
        return [Ranking.of(r) for r in self.request("GET", f"/games/{_seg(game)}/rankings")["rankings"]]

    def _wait(self, fetch, timeout: float | None, poll: float):
        """`fetch()` again every `poll` s until what it reads is over. A wait outlives the network
        and the server's restarts: no answer, a 429 (after its `Retry-After`) or a 502/503/504 is
        asked again, until `timeout` has passed (then that error is raised)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                thing = fetch()
            except CardarenaError as exc:
                if exc.status not in TRANSIENT or (deadline is not None and time.monotonic() > deadline):
                    raise
                time.sleep(exc.retry_after or poll)
                continue
            if thing.over:
                return thing
            if deadline is not None and time.monotonic() > deadline:
                raise CardarenaError(None, "timeout", f"{thing.id} is still {thing.status} after {timeout}s")
            time.sleep(poll)


def _with_version(comparison: dict, who: str, label: str) -> str:
    """`label` of the comparison's candidate or baseline, with its version unless both are a first one."""
    versions = [comparison.get(f"{w}_version") for w in ("candidate", "baseline")]
    version = comparison.get(f"{who}_version")
    return f"{label} v{version}" if version and any(v not in (None, 1) for v in versions) else label


def _id(thing: Any) -> str:
    return thing if isinstance(thing, str) else thing.id


def _seg(text: str) -> str:
    """`text` as one path segment (an id cannot escape its place in the URL)."""
    return quote(str(text), safe="")


def _fields(**fields: Any) -> dict:
    """The request body without the fields left at None (the API's defaults apply)."""
    return {k: v for k, v in fields.items() if v is not None}
