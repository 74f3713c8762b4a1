"""Poll for turns: a bot behind NAT or a firewall reaches out to the referee.

    from sdk import connect
    connect(MyBot, "http://127.0.0.1:5000", secret=SECRET)   # blocks; Ctrl-C stops it

Given the class, each match gets its own `MyBot()` (`sdk.instances`): state
kept in `self` is that match's; given an instance, it answers every match.

The loop long-polls `GET /bots/me/turns?wait=S` (one poll at a time),
calls `act` for each decision (up to `concurrency` at once, in threads) and
posts the answer to `POST /matches/{id}/turns/{turn}`. While some are being
answered the poll names them (`held=`), so the server leaves them out and the
long-poll waits for a new one: a decision of another match reaches the bot as
soon as it is published, with no busy polling. A decision stays pending on the server
until answered or its deadline passes, so nothing is lost when the server is
briefly away: the loop retries with exponential backoff (connection errors,
timeouts, 5xx), and re-posts the action it already chose when the same
decision comes back — the bot is asked once per decision.

A server the loop never reached (a mistyped address, nothing listening) is
given up after `NEVER_REACHED_S` with a `CardarenaError` ("unreachable")
naming the address; once it has answered, the loop retries for as long as it
takes. A secret of a bot that is not a polling bot (a webhook bot's, which
the referee calls) is refused 409 `wrong_kind`: the loop stops with it.

A 429 or 503 with `Retry-After` is waited out, but never longer than
`MAX_RETRY_AFTER` (2 s): a per-minute limit answers "59 s", and a bot that
slept that long forfeited every decision sent meanwhile. The server does not
count a polling bot's useful turn traffic against any budget, so the loop
meets these only when the server is busy or the bot misbehaves.

The platform sends polling bots no `match_over`; the loop learns a match is
over from `GET /matches/{id}` and calls `on_match_over` with its result
(None-free: ``{}`` while a tournament keeps results private).
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Set
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import requests

from sdk.client import FINISHED, CardarenaError, api_base, retry_after
from sdk.instances import BotSource
from sdk.protocol import BotFailed, BotHooks, ProtocolError, check_message, describe
from sdk.webhook import ensure_logging, resolve_secret

log = logging.getLogger("sdk.connect")

#: the longest long-poll the API accepts
MAX_WAIT = 30.0
#: the most decisions (of different matches) answered at once
MAX_CONCURRENCY = 64
#: while every answerer is busy, the longest wait for one to finish before looking again (seconds)
BUSY_POLL_S = 0.25
#: backoff when the server is away: first delay, cap
BACKOFF_START = 0.5
BACKOFF_MAX = 30.0
#: a match is quiet once no decision of it came for this long (s); then whether it has ended is
#: asked (`GET /matches/{id}`), again at most this often: a match in play costs no such request
OVER_CHECK_EVERY = 2.0
#: the longest a `Retry-After` keeps the loop from polling: decisions have deadlines of seconds
MAX_RETRY_AFTER = 2.0
#: how long (seconds) connect() retries a server it never reached before it gives up
NEVER_REACHED_S = 30.0
#: the longest error text sent to the referee when the bot fails (the API takes up to 1,000 characters)
MAX_ERROR = 1000


@dataclass
class PollStats:
    """What a `connect` loop did."""

    polls: int = 0               # long-polls answered by the server
    answered: int = 0            # actions the server accepted
    refused: int = 0             # answers refused (409 no longer pending, 422 illegal, 403)
    bot_errors: int = 0          # decisions where the bot raised (left to the referee's deadline)
    reconnects: int = 0          # times the server was away and came back
    matches_over: list[str] = field(default_factory=list)


class _Away(Exception):
    """The server did not answer usefully: retry later."""

    def __init__(self, reason: str, delay: float | None = None) -> None:
        super().__init__(reason)
        self.delay = delay


class Poller:
    """One polling loop for one bot; `connect` builds and runs it."""

    def __init__(self, bot: BotSource, server: str, secret: str | None = None, *, wait: float = 25.0,
                 max_turns: int | None = None, until_idle: bool = False,
                 stop: threading.Event | None = None, concurrency: int = 4) -> None:
        self.hooks = BotHooks(bot)
        self.bot = bot
        self.name = self.hooks.name
        self.base = api_base(server)
        self.secret = resolve_secret(secret)
        self.wait = max(0.0, min(float(wait), MAX_WAIT))
        self.max_turns = max_turns
        self.until_idle = until_idle
        self.stop_event = stop or threading.Event()
        self.stats = PollStats()
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {self.secret}"
        self.session.headers["User-Agent"] = "cardarena-sdk/1"
        # (match, turn) -> the action chosen, so a repeated decision is not asked twice
        self._chosen: OrderedDict[tuple[str, int], dict | None] = OrderedDict()
        # matches this bot has played and not yet seen end -> when a decision of it last came, or
        # it was last checked
        self._open: dict[str, float] = {}
        self._backoff = BACKOFF_START
        self._away_since: float | None = None
        self._reached = False  # the server answered once: from then on, it is retried forever
        self._streak: int | None = None  # its ladder forfeits in a row, as last read (`_you`)
        # decisions of different matches are answered at once, up to `concurrency`
        self.concurrency = max(1, min(int(concurrency), MAX_CONCURRENCY))
        self._lock = threading.Lock()  # _chosen, _open, stats and _thinking, shared with the answerers
        self._thinking: set[tuple[str, int]] = set()
        self._answered = threading.Condition(self._lock)
        self.thread: threading.Thread | None = None
        self.error: Exception | None = None  # what ended a background loop early

    # -- the handle -----------------------------------------------------------
    def stop(self, timeout: float | None = None) -> None:
        """Ask the loop to end (within one long-poll) and wait for it."""
        self.stop_event.set()
        self.join(timeout)

    def join(self, timeout: float | None = None) -> None:
        if self.thread is not None:
            self.thread.join(timeout)

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def __enter__(self) -> Poller:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the loop -------------------------------------------------------------
    def run(self) -> PollStats:
        log.info("%s (%s) polling %s", self.name, self.hooks.game or "any game", self.base)
        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=f"answer-{self.name}")
        try:
            while not self._done():
                if not self._room():  # every answerer busy, or max_turns in hand: wait for one
                    with self._answered:
                        self._answered.wait(BUSY_POLL_S)
                    continue
                held = self._held()
                try:
                    # while the bot thinks, the decisions it holds stay pending: the long-poll
                    # names them (`held`), so it waits for another one instead of returning them
                    decisions = self._poll(held=held)
                    self._back()
                except _Away as away:
                    self._sleep(self._retry_delay(away))
                    continue
                started = 0
                for decision in decisions:
                    if self.stop_event.is_set():
                        break
                    started += self._start(pool, decision)
                self._check_over({d["match_id"] for d in decisions} | {m for m, _ in held})
                if not decisions and self.until_idle and not self._busy():
                    break
        finally:
            pool.shutdown(wait=True)
            self.session.close()
        log.info("%s stopped: %d answered, %d refused", self.name, self.stats.answered,
                 self.stats.refused)
        return self.stats

    def run_in_background(self) -> None:
        """`run`, keeping the exception that ended it in `.error` (a thread has no caller)."""
        try:
            self.run()
        except Exception as exc:
            self.error = exc
            log.error("%s stopped: %s", self.name, exc)

    def _done(self) -> bool:
        if self.stop_event.is_set():
            return True
        return self.max_turns is not None and self.stats.answered >= self.max_turns

    def _call(self, method: str, path: str, timeout: float, **kwargs) -> requests.Response:
        """One request; `_Away` for what a retry may fix, `CardarenaError` for what it will not."""
        try:
            response = self.session.request(method, self.base + path, timeout=(5.0, timeout), **kwargs)
        except requests.RequestException as exc:
            raise _Away(f"{type(exc).__name__}: {_short(exc)}") from None
        self._reached = True
        if response.status_code == 429:
            raise _Away("rate limited (429)", min(retry_after(response) or 1.0, MAX_RETRY_AFTER))
        if response.status_code >= 500:
            delay = retry_after(response)
            raise _Away(f"{response.status_code} {response.reason}",
                        None if delay is None else min(delay, MAX_RETRY_AFTER))
        if response.status_code in (401, 403) and path.startswith("/bots/me"):
            raise CardarenaError.from_response(response)  # a wrong secret: retrying will not help
        return response

    def hello(self) -> None:
        """One poll that does not wait: the platform sees the bot now (`status` online), and a
        secret it refuses raises `CardarenaError` here rather than in a background thread.
        A server that answered but is away is no error: the loop retries it; one never reached
        is retried here, up to `NEVER_REACHED_S`, then `CardarenaError`. What it brings stays
        pending for the loop's first poll."""
        while not self.stop_event.is_set():
            try:
                self._poll(wait=0)
                return
            except _Away as away:
                if self._reached:
                    log.warning("server away (%s); the loop will retry", away)
                    return
                self._sleep(self._retry_delay(away))

    def _poll(self, wait: float | None = None, held: Set[tuple[str, int]] = frozenset()) -> list[dict]:
        wait = self.wait if wait is None else wait
        params: dict = {"wait": wait}
        if held:
            params["held"] = ",".join(f"{m}:{t}" for m, t in sorted(held))
        response = self._call("GET", "/bots/me/turns", timeout=wait + 15, params=params)
        if response.status_code != 200:
            raise CardarenaError.from_response(response)
        self.stats.polls += 1
        try:
            turns = response.json()["turns"]
        except (ValueError, KeyError, TypeError):
            raise _Away("the server's answer is not a list of turns") from None
        out = []
        for item in turns if isinstance(turns, list) else []:
            try:
                message = check_message(item)
            except ProtocolError as exc:
                log.warning("skipped a malformed decision: %s", exc)
                continue
            if message["type"] == "match_over":
                self._over(message["match_id"], message["result"])
            elif message["type"] == "turn":
                out.append(message)
        return out

    def _count(self, stat: str) -> None:
        with self._lock:
            setattr(self.stats, stat, getattr(self.stats, stat) + 1)

    def _room(self) -> bool:
        """Whether one more decision could be started now."""
        with self._lock:
            if len(self._thinking) >= self.concurrency:
                return False
            return self.max_turns is None or self.stats.answered + len(self._thinking) < self.max_turns

    def _held(self) -> set[tuple[str, int]]:
        """The decisions being answered now: (match id, turn)."""
        with self._lock:
            return set(self._thinking)

    def _busy(self) -> bool:
        with self._lock:
            return bool(self._thinking)

    def _start(self, pool: ThreadPoolExecutor, decision: dict) -> int:
        """Answer `decision` in `pool` unless it is being answered or every answerer is
        busy (it stays pending: a later poll brings it back); 1 if started."""
        key = (decision["match_id"], decision["turn"])
        with self._lock:
            if key in self._thinking or len(self._thinking) >= self.concurrency:
                return 0
            if self.max_turns is not None and self.stats.answered + len(self._thinking) >= self.max_turns:
                return 0  # enough in hand to reach max_turns
            self._thinking.add(key)
        pool.submit(self._answer_one, decision, key)
        return 1

    def _answer_one(self, decision: dict, key: tuple[str, int]) -> None:
        try:
            self._handle(decision)
        except Exception as exc:  # noqa: BLE001 - an answerer must never die silently
            log.error("%s turn %s: %s", *key, exc)
        finally:
            with self._answered:
                self._thinking.discard(key)
                self._answered.notify_all()

    def _handle(self, decision: dict) -> None:
        key = (decision["match_id"], decision["turn"])
        with self._lock:
            self._open[decision["match_id"]] = time.monotonic()  # in play: not quiet
            chosen = key in self._chosen
            answer = self._chosen.get(key)
        if chosen:
            if answer is None:  # answered, or the bot failed on it and said so: answered once
                return
        else:
            _warn_if_slow(decision)
            wrong = self.hooks.wrong_game(decision)
            try:
                if wrong:
                    raise BotFailed(wrong)
                answer = self.hooks.answer(decision)
            except BotFailed as exc:  # said at once: a bot_error fault now, not a timeout later
                log.error("%s turn %s: the bot failed, reported to the referee (%s)", *key, exc)
                self._count("bot_errors")
                self._remember(key, None)
                self._answer(decision, {"error": str(exc)[:MAX_ERROR] or "the bot failed"})
                return
            self._remember(key, answer)
        self._answer(decision, answer)

    def _remember(self, key: tuple[str, int], answer: dict | None) -> None:
        with self._lock:
            self._chosen[key] = answer
            while len(self._chosen) > 10_000:
                self._chosen.popitem(last=False)

    def _answer(self, decision: dict, answer: dict) -> None:
        """POST `answer` — `{"action": …}` (with `"debug"` if any), or `{"error": text}` when the
        bot failed — once."""
        match_id, turn = decision["match_id"], decision["turn"]
        action = answer.get("action")
        try:
            body = json.dumps(answer, allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            log.error("%s turn %s: the bot's answer is not JSON: %s", match_id, turn, exc)
            self._count("bot_errors")
            self._remember((match_id, turn), None)
            body = json.dumps({"error": f"the bot's answer is not JSON: {exc}"[:MAX_ERROR]}).encode()
        deadline = time.monotonic() + decision["deadline_ms"] / 1000
        while True:
            try:
                response = self._call("POST", f"/matches/{match_id}/turns/{turn}",
                                      timeout=max(1.0, decision["deadline_ms"] / 1000 + 5),
                                      data=body, headers={"Content-Type": "application/json"})
                self._back()
                break
            except _Away as away:
                delay = self._retry_delay(away)
                if self.stop_event.is_set() or time.monotonic() + delay > deadline:
                    return  # if still pending, the next poll brings it back and we post again
                self._sleep(delay)
        if response.status_code == 200:
            self._remember((match_id, turn), None)  # answered: a poll that still lists it is older
            if "action" in answer:
                self._count("answered")
            return
        self._count("refused")
        self._remember((match_id, turn), None)  # never post it again
        error = CardarenaError.from_response(response)
        if response.status_code == 409:
            log.warning("%s turn %s: too late, %s", match_id, turn, error.message)
        else:
            log.warning("%s turn %s: %s refused: %s", match_id, turn, describe(action), error.message)

    def _check_over(self, active: set[str]) -> None:
        """Call `on_match_over` for quiet matches that have ended."""
        now = time.monotonic()
        with self._lock:
            due = [m for m, checked in self._open.items() if m not in active and now - checked >= OVER_CHECK_EVERY]
            for match_id in due:
                self._open[match_id] = now
        for match_id in due:
            try:
                response = self._call("GET", f"/matches/{match_id}", timeout=10)
                match = response.json() if response.status_code == 200 else None
            except (_Away, ValueError):
                continue
            if match is None:
                with self._lock:
                    self._open.pop(match_id, None)
            elif match.get("status") in FINISHED:
                self._over(match_id, match.get("result") or {})

    def _over(self, match_id: str, result: dict) -> None:
        with self._lock:
            self._open.pop(match_id, None)
        self.stats.matches_over.append(match_id)
        message = {"type": "match_over", "match_id": match_id, "result": result}
        you = self._you(match_id, result)
        if you is not None:
            message["you"] = you
        try:
            self.hooks.match_over(message)
        except BotFailed:
            pass  # logged by the hooks; the match is over anyway

    def _record(self) -> dict | None:
        """The bot's public record (`GET /bots/{id}`: `paused`, `forfeit_streak`), or None."""
        try:
            response = self._call("GET", f"/bots/{self.secret.partition('.')[0]}", timeout=10)
            return response.json() if response.status_code == 200 else None
        except (_Away, ValueError):
            return None

    def _you(self, match_id: str, result: dict) -> dict | None:
        """What the match meant for the bot, as the platform tells a webhook bot (`match_over`'s
        `you`): whether it forfeited — its seat in the result's `forfeits`, or one more ladder
        forfeit in its record than at the match over before (a ladder match's result stays
        private a while; the loop's first match over only reads the count) — and whether it is
        paused now. None for a match it was never asked to play."""
        seats = self.hooks.seats(match_id)
        if not seats:
            return None
        record = self._record() or {}
        streak = record.get("forfeit_streak")
        forfeited = any(seat in (result.get("forfeits") or []) for seat in seats)
        if isinstance(streak, int):
            forfeited = forfeited or (self._streak is not None and streak > self._streak)
            self._streak = streak
        return {"seat": seats[0], "forfeited": forfeited, "paused": bool(record.get("paused"))}

    # -- when the server is away ----------------------------------------------
    def _retry_delay(self, away: _Away) -> float:
        """How long to wait before trying again; `CardarenaError` for a server never reached
        for `NEVER_REACHED_S`."""
        if not self._reached and self._away_since is not None \
                and time.monotonic() - self._away_since >= NEVER_REACHED_S:
            raise CardarenaError(None, "unreachable", (
                f"never reached the server at {self.base} in {NEVER_REACHED_S:.0f} s ({away}): check its "
                "address and that it runs (connect() gives up only on a server it never reached; once "
                "connected, it retries for as long as it takes)"))
        if away.delay is not None:  # the server said how long (429 Retry-After)
            log.warning("%s: waiting %.1f s as asked", away, away.delay)
            return away.delay
        if self._away_since is None:
            self._away_since = time.monotonic()
        delay = self._backoff * (0.75 + random.random() / 4)  # jitter, still growing
        log.warning("server away (%s); retrying in %.1f s", away, delay)
        self._backoff = min(self._backoff * 2, BACKOFF_MAX)
        return delay

    def _back(self) -> None:
        if self._away_since is not None:
            log.info("server back after %.1f s", time.monotonic() - self._away_since)
            self.stats.reconnects += 1
        self._away_since = None
        self._backoff = BACKOFF_START

    def _sleep(self, seconds: float) -> None:
        self.stop_event.wait(seconds)


def _warn_if_slow(decision: dict) -> None:
    """Say on the bot's side when the referee charged its last answer more than the move time
    (the trip included: a polling bot is timed from the decision's publication to its POST)."""
    clock, charged = decision.get("clock"), decision.get("last_latency_ms")
    if not isinstance(clock, dict) or type(charged) is not int or type(clock.get("move_ms")) is not int:
        return
    if charged > clock["move_ms"]:
        log.warning("%s: your last answer was charged %d ms, %d ms over the move time; the bank "
                    "paid (%s ms left)", decision.get("match_id"), charged, charged - clock["move_ms"],
                    clock.get("bank_ms"))


def connect(bot: BotSource, server: str, secret: str | None = None, *, wait: float = 25.0,
            max_turns: int | None = None, until_idle: bool = False,
            stop: threading.Event | None = None, block: bool = True,
            concurrency: int = 4) -> PollStats | Poller:
    """Play `bot`'s turns by polling `server` (``http://host:port``) with the bot's secret.

    Blocks until Ctrl-C, `stop` is set, `max_turns` actions were accepted, or
    (`until_idle`) a long-poll of `wait` seconds brings nothing; returns the
    `PollStats`. A platform that refuses the secret, a webhook bot's secret (409
    `wrong_kind`) or a server never reached within `NEVER_REACHED_S` ends the
    program as a command does: one line logged, saying what to fix, and
    `SystemExit(1)`, no traceback. `bot` is a bot class (or zero-argument factory): each match
    gets its own instance; or one instance, which then answers every match.
    The decisions of up to `concurrency` matches are answered at once, in
    threads (a shared instance's `act` must allow that, as under `serve`);
    those of one match come one at a time. With ``block=False`` it first polls once without waiting (a
    refused secret, a webhook bot's secret (409 `wrong_kind`), or a server not reached within
    `NEVER_REACHED_S` raises `CardarenaError` here; the bot is online from then),
    then the loop runs in a background thread and the `Poller` handle is
    returned: ``.stop()``, ``.join()``, ``.stats``.
    """
    poller = Poller(bot, server, secret, wait=wait, max_turns=max_turns, until_idle=until_idle, stop=stop,
                    concurrency=concurrency)
    if not block:
        poller.hello()
        poller.thread = threading.Thread(target=poller.run_in_background, name=f"connect-{poller.name}",
                                         daemon=True)
        poller.thread.start()
        return poller
    ensure_logging()
    try:
        return poller.run()
    except KeyboardInterrupt:
        poller.stop_event.set()
        log.info("stopped (Ctrl-C): %d answered", poller.stats.answered)
        return poller.stats
    except CardarenaError as exc:  # the program's main loop ends as a command does: one line, no traceback
        log.error("%s stopped: %s", poller.name, refusal(exc))
        raise SystemExit(1) from None


def refusal(exc: CardarenaError) -> str:
    """Why the platform will not let the bot poll, in one line saying what to fix."""
    if exc.status in (401, 403):
        return (f"the platform refused its secret ({exc.status} {exc.code}: {exc.message}); give connect() "
                "the secret shown when the bot was registered")
    return f"{exc.status} {exc.code}: {exc.message}" if exc.status else exc.message


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 120 else text[:117] + "..."
