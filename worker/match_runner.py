"""Refereeing one match: the loop at the heart of the worker.

    MatchRunner(store, match_id).run()

The match is an event log. The runner rebuilds the state by replaying the
log — so a runner started after a crash simply continues — then, turn by
turn, judges each seat's decision and appends it with the store's atomic
check (turn k lands only on a log of exactly k entries).

Nobody waits on a bot (architecture idea 6). An in-process bot is asked
here, under the watchdog. A remote bot's decision (webhook or polling) is
published as the run ends (`Store.end_run_asking`, core/store/waits.py), and
the run's job ends, giving the match's lock back: whoever settles that turn —
the API for a polling bot's answer, a dispatcher's caller for a webhook's, a
dispatcher's clock at the deadline (worker/dispatch.py) — appends its entry
and enqueues the match's next run, an RQ job that rebuilds from the log and
goes on. So a worker process is held only while it computes, and the
matches in play are bounded by the bots' `max_concurrent`, not by the
processes.

The referee is `sdk.referee.MatchReferee`, the one local play uses: it says
what to ask (the decision, with the seat's `clock`: `move_timeout_ms` plus
what is left of its `time_bank_ms`), judges the answer, charges the time it
took (each asked seat's entry records its `ms`, so the log is the truth for
time too) and counts faults. The fault policy (docs/api.md §3, §5): a timeout, an
error, garbage or an illegal answer is a *fault*, logged as
`"<kind>: <detail>"`; the referee plays the first legal action instead. Whatever a bot or its driver
does — an exception of any type included — is a fault of that seat, never a
crash of the match: only a platform error (Redis, an engine bug) fails the
job, and only three failed runs in a row abort the match. A seat with `max_faults` faults has forfeited: the
referee plays for it to the end (entries marked ``"fault": "forfeited"``,
which are not counted as faults), and its rank goes last.

In-process bots' actions are buffered and written in batches (every 256, or
0.2 s after the last write, so a slow match still shows live): nobody outside
this process has seen them, so losing them in a crash loses nothing (the
next runner asks again). The buffer is flushed before any remote bot is
asked, since that bot's view shows the state those actions made. For the
same reason a tournament's match of in-process bots, played fast, ends with
matches its job would run next, played ahead in memory (`play_ahead`): its
deal's next rotations and whole deals of its batch, all written as they end
with it, in one transaction.

A run that ends asking a remote bot leaves its referee to the worker
process (`REFEREES_KEPT` matches, the least recently run dropped): the log
only grows, so that referee is the state of the log's first `turn` entries
for good, and the match's next run in this process records only the entries
past it — after checking that the log's entry `turn - 1` is the one it
recorded last (else, or with no referee kept, it replays the whole log).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass

import redis

from core.conclusion import end_match, match_concluded
from core.play_on import decision_for, new_referee
from core.store.bots import guest_share
from core.store.matches import PlayedAhead
from core.store.probation import is_paused
from core.store.runs import read_run, start_run, takes_no_slot
from core.store.slots import SLOTTED
from sdk.clock import elapsed_ms
from sdk.faults import clean, fault
from sdk.referee import MatchReferee
from sdk.standings import seat_records
from sdk.watchdog import Watchdog, watchdog
from worker.drivers import Driver, Remote, Reply, driver_for
from worker.locks import TTL_MS, Held

log = logging.getLogger("cardarena.worker")

#: a match whose job has started this many times without ending is aborted (docs/api.md §3)
MAX_ATTEMPTS = 3
#: in-process actions are written when this many are buffered, or this long after the
#: last write: batched for speed, yet a match slow enough to watch shows its moves live
FLUSH_EVERY = 256
FLUSH_AFTER_S = 0.2
#: errors of the platform itself: they fail the job (retried, then aborted), never a seat
PLATFORM_ERRORS = (redis.exceptions.RedisError,)
#: matches whose referee a worker process keeps between runs (see above)
REFEREES_KEPT = 256
#: a deal's next rotations are played ahead in memory (`MatchRunner.play_ahead`) for at most this
#: long, and only after a rotation played in less: a slower deal's moves are shown live
PLAY_AHEAD_S = FLUSH_AFTER_S


@dataclass
class Kept:
    """A referee a worker process keeps between runs of its match (see above)."""

    rules: tuple  # the match's, as `rebuild` reads them: a referee of other rules is not reused
    #: its record: a continuation reads only its status again, with its seats' bots (`start_run`)
    match: dict
    last: dict  # the last entry it recorded: the log's entry `ref.turn - 1`, or it is not reused
    ref: MatchReferee
    seat_bots: list  # the seats' bots its last run used: a continuation's slots (`start_run`)


#: match id -> its kept referee, least recently kept first
_kept: OrderedDict[str, Kept] = OrderedDict()


class Asked(Exception):
    """A remote bot is asked for `turn`: this run ends publishing `ask` (decision, bot; None if a
    run before it published it: `ask_remote`), the settled turn starts the next."""

    def __init__(self, turn: int, ask: tuple[dict, dict] | None) -> None:
        super().__init__(turn)
        self.turn, self.ask = turn, ask


class Stopped(Exception):
    """The match ended under the runner (an admin aborted it)."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


@dataclass
class Context:
    """What the drivers of one match share."""

    watchdog: Watchdog
    match_id: str = ""


class MatchRunner:
    #: the last entry its referee recorded (played or read from the log); None before the first
    last_entry: dict | None

    def __init__(self, store, match_id: str, wait_s: float = 0.0, match: dict | None = None,
                 chain: list[str] | None = None, batch: list[str] | None = None) -> None:
        self.store = store
        self.match_id = match_id
        #: how long to wait for the match's lock if another runner holds it: a continuation waits
        #: for the run that asked, which lets go of it right after publishing its decision
        self.wait_s = wait_s
        #: the match's record as its job read it before the lock (`get_match`), if it did: all of
        #: it but its status stays true, and the run reads its status again once the lock is held
        self.known = match
        #: where its end puts the deal's next rotation for this job to run next (core/conclusion.py)
        self.chain = chain
        #: the matches its job runs after it (a batch's), of which `play_ahead` takes whole deals
        #: off the front (`taken`), put back if they did not end with it
        self.batch = batch
        self.taken: list[str] = []
        #: played ahead in memory, to end with the match before it (`play_ahead`)
        self.ahead = False
        #: the times its job has started it without ending (`MAX_ATTEMPTS`)
        self.attempts = 1

    # -- the job -----------------------------------------------------------
    def run(self) -> str:
        """Drive the match until it ends or a remote bot is asked, its lock held; the status the
        run ends in: "finished"/"aborted", "waiting" (for a remote answer, or a bot's free slot),
        "busy" (another runner has it) or "missing"."""
        with Held(self.store.lock("match", self.match_id, TTL_MS), self.wait_s) as held:
            if not held.taken:
                return "busy"
            return self.run_held(held)

    def run_held(self, held: Held) -> str:
        kept = _kept.get(self.match_id)
        self.start = None  # what the run read as it started (`read_run`)
        match = kept.match if kept is not None else self.known or self.store.get_match(self.match_id)
        # a continuation, or a first run of bots this process knows take no slots (in-process
        # bots): its reads, slots and start in one step
        if match is not None and (kept is not None or (match["status"] not in ("finished", "aborted")
                                                       and takes_no_slot(match["seats"]))):
            since, seat_bots = (kept.ref.turn - 1, kept.seat_bots) if kept is not None else (0, [])
            self.start = start_run(self.store, self.match_id, match, since, seat_bots)
            match = self.start.match if self.start is not None else None
            if match is not None and match["status"] in ("finished", "aborted"):  # its whole record
                match = self.store.get_match(self.match_id)
        if match is None:
            return "missing"
        if match["status"] in ("finished", "aborted"):
            match_concluded(self.store, match)  # what follows its end, again (repeatable)
            return match["status"]
        if self.start is None:  # read once the lock is held: nobody else moves the match now
            self.start = read_run(self.store, self.match_id, match["seats"], 0, match)
            if self.start is None:
                return "missing"
            match = self.start.match
            if match["status"] in ("finished", "aborted"):  # ended under us: what follows, again
                match_concluded(self.store, self.store.get_match(self.match_id))
                return match["status"]
        tournament = self.start.tournament  # its status and owner, read with the rest
        if match.get("tournament") and tournament is None:
            tournament = self.store.tournament_run_fields(match["tournament"])
        if tournament is not None and tournament["status"] in ("aborting", "aborted"):
            # a match of a tournament stopping starts no run: it ends here
            end_match(self.store, self.match_id, "aborted", reason=tournament["reason"] or "its tournament was stopped")
            return "aborted"
        # each seat's bot as the version the match pinned is reached (core/store/versions.py)
        self.seat_bots = guest_seats(self.store, match, self.store.pinned_bots(match, self.start.bots),
                                     tournament)
        # a slot of each remote bot, or none: a bot at its max_concurrent makes the match wait
        # in its queue (core/store/slots.py) and the job end — no worker waits for a slot
        if self.start.started is not None:  # taken, and started, with its reads (`start_run`)
            (full, attempts), _ = self.start.started
        else:
            full, attempts = self.store.take_slots_and_start(
                self.match_id, [b for b in self.seat_bots if b is not None], match)
        if full is not None:
            log.info("match %s waits: bot %s is in its %s matches at once", self.match_id, full["id"],
                     full.get("max_concurrent"))
            # the wake-up that may have brought it here goes on to a match that can use a free slot
            self.store.enqueue_woken(self.store.pass_wake(self.match_id, [b for b in self.seat_bots if b], full))
            self.store.job_done("match", self.match_id)
            return "waiting"
        self.attempts = attempts
        if attempts > MAX_ATTEMPTS:
            self.abort(match, f"its job failed {MAX_ATTEMPTS} times")
            return "aborted"
        try:
            return self.referee(match, held, Context(watchdog(), self.match_id))
        except Asked as asked:  # a clean end of this run (its count of attempts is 0 again)
            self.keep()
            # the decision published; the lock is given back as the run ends, and the settled
            # turn's continuation (a job of its own) takes it
            self.store.end_run_asking(self.match_id, asked.turn, asked.ask)
            return "waiting"
        except Stopped as stop:  # an admin aborted it under us: its follow-ups are done, or the sweep's
            match_concluded(self.store, self.store.get_match(self.match_id))
            return stop.status

    def referee(self, match: dict, held: Held, context: Context) -> str:
        self.match = match
        self.began = time.monotonic()
        self.rebuild()
        drivers = self.drivers(match, context)
        try:
            while True:
                while not self.ref.is_over:
                    if held.lost.is_set():
                        return "busy"
                    self.step(drivers)
                if self.flush():  # the log holds the whole match: it is over
                    return self.conclude(match, drivers)
        finally:
            close(drivers, self.match_id)

    def step(self, drivers: list[Driver]) -> None:
        """Play one turn: ask an in-process seat (or play for a forfeited one), judge, record;
        or publish a remote seat's decision and end the run (`Asked`)."""
        ref = self.ref
        seat = ref.to_act
        assert seat is not None  # the match is on
        forfeited = ref.forfeited()
        remote = drivers[seat].remote and not forfeited
        if forfeited:
            entry = ref.forfeit_entry()
        elif remote:
            if self.buffer and not self.flush():
                return  # another runner had written this stretch: go on from its log
            driver = drivers[seat]
            assert isinstance(driver, Remote)  # a remote seat's driver (`driver_for`)
            raise Asked(ref.turn, self.ask_remote(driver))
        else:
            decision = self.decision()
            began = time.monotonic()
            reply = ask(drivers[seat], decision)
            entry = ref.answered(reply.action, elapsed_ms(began) if reply.ms is None else reply.ms, reply.fault)
            if reply.debug:  # the owner's only: kept beside the log once its entry lands
                self.notes.append((entry["turn"], seat, reply.debug))
        self.buffer.append(entry)
        ref.record(entry)
        self.last_entry = entry
        if self.ahead:  # its entries land with its end, or not at all (`play_ahead`)
            return
        if len(self.buffer) >= FLUSH_EVERY or time.monotonic() - self.flushed > FLUSH_AFTER_S:
            self.flush()

    def decision(self) -> dict:
        return decision_for(self.ref, self.match, self.match_id)

    def ask_remote(self, driver: Remote) -> tuple[dict, dict] | None:
        """The remote seat's decision to publish as the run ends (`Store.end_run_asking`): (the
        decision, its bot); None if a run before this one published it (it died after asking):
        that answer, or the deadline, settles the turn."""
        turn = self.ref.turn
        pending = self.waiting_read.pop() if self.waiting_read else self.store.waiting_on(self.match_id)
        if pending is not None and pending["turn"] == turn:
            if not self.store.has_deadline(self.match_id, turn):  # claimed by a clock that died
                self.store.judge_later(self.match_id, turn, pending["deadline_at"])
            return None
        return self.decision(), driver.bot

    def drivers(self, match: dict, context: Context) -> list[Driver]:
        out = []
        for seat, (bot_id, bot) in enumerate(zip(match["seats"], self.seat_bots, strict=True)):
            bot = bot or {"id": bot_id, "kind": "missing"}
            try:
                out.append(driver_for(self.store, bot, context, seat))
            except PLATFORM_ERRORS:
                raise
            except Exception as exc:  # a record the driver cannot use: every decision a fault
                out.append(_Broken(f"cannot drive bot {bot_id}: {clean(exc)}"))
        return out

    # -- writing -------------------------------------------------------------
    def flush(self) -> bool:
        """Write the buffered entries: True if they landed, False if the log had moved
        on (another runner wrote that stretch), in which case the state is rebuilt from it."""
        if not self.buffer:
            return True
        if self.store.append_entries(self.match_id, self.buffer):
            if self.notes:
                self.store.note_debug(self.match_id, self.notes)
                self.notes.clear()
            self.buffer.clear()
            self.flushed = time.monotonic()
            return True
        self.check_stopped()
        self.rebuild()
        return False

    def catch_up(self, entries: list[dict] | None = None) -> int:
        """Apply the entries the log holds past what we played (an answer the API appended), or
        those given (read already); how many."""
        if entries is None:
            entries = self.store.log_since(self.match_id, self.ref.turn)
        for entry in entries:
            self.ref.record(entry)
        if entries:
            self.last_entry = entries[-1]
        return len(entries)

    def check_stopped(self) -> None:
        """`Stopped` if the match is over in the store: the log refuses appends then."""
        status = self.store.match_status(self.match_id)
        if status in ("finished", "aborted"):
            raise Stopped(status)

    def rebuild(self) -> None:
        """State, faults and turn from the log alone; nothing buffered."""
        match = self.match
        self.rules = (match["game"], len(match["seats"]), match["seed"], repr(match["options"]),
                      match["max_faults"], match["move_timeout_ms"], match.get("time_bank_ms") or 0,
                      repr(match.get("seat_clocks")))
        self.buffer: list[dict] = []
        self.notes: list[tuple[int, int, str]] = []  # the buffered turns' debug text (core/store/debug.py)
        self.flushed = time.monotonic()
        # what the run read as it started serves its first rebuild only: a later one reads again
        start, self.start = self.start, None
        self.waiting_read = [start.waiting] if start is not None else []  # `ask_remote`'s, once
        kept = _kept.pop(self.match_id, None)
        if kept is not None and kept.rules == self.rules and kept.ref.turn > 0:
            # this process's referee of the log's first turns
            since = kept.ref.turn - 1
            entries = start.log if start is not None and start.since == since else \
                self.store.log_since(self.match_id, since)
            if entries and entries[0] == kept.last:
                self.ref, self.last_entry = kept.ref, kept.last
                for entry in entries[1:]:
                    self.ref.record(entry)
                    self.last_entry = entry
                return
        self.ref = new_referee(match)
        self.last_entry = None
        if start is not None and start.since == 0:
            self.catch_up(start.log)
        else:
            self.catch_up()

    def keep(self) -> None:
        """Leave the referee to this process's next run of the match: it asked a remote bot, every
        entry it recorded is in the log (`rebuild`)."""
        if self.ref.turn == 0 or self.buffer or self.last_entry is None:
            return
        _kept[self.match_id] = Kept(self.rules, self.match, self.last_entry, self.ref, self.seat_bots)
        _kept.move_to_end(self.match_id)
        while len(_kept) > REFEREES_KEPT:
            _kept.popitem(last=False)

    # -- the end -------------------------------------------------------------
    def conclude(self, match: dict, drivers: list[Driver]) -> str:
        result, records = self.ending(match)
        ranks = result["ranks"]
        shown = notice_result(match, result)
        ahead = self.play_ahead(match)

        def announce(landed: bool) -> None:
            if landed:
                self.taken = []  # ended here: its job runs them no more
            log.info("match %s finished: ranks %s", self.match_id, ranks)
            yours = seat_notices(self.store, match["seats"], result) if any(d.remote for d in drivers) else {}
            tell(self.match_id, drivers, shown, yours)
            for played, played_drivers in ahead if landed else ():
                log.info("match %s finished: ranks %s", played.match_id, played.result["ranks"])
                tell(played.match_id, played_drivers, notice_result(played.match, played.result), {})

        # another runner may have ended it: then only what follows is done (again)
        try:
            end_match(self.store, self.match_id, "finished", result, records=records, announce=announce,
                      match=match, chain=self.chain, ahead=[played for played, _ in ahead])
        finally:
            for _, played_drivers in ahead:
                close(played_drivers, self.match_id)
            if self.taken and self.batch is not None:  # not ended with it: run by its job after all
                self.batch[:0] = self.taken
        return "finished"

    def ending(self, match: dict) -> tuple[dict, list[dict]]:
        """The over match's result and its seats' records."""
        result = self.ref.outcome()
        records = seat_records(result, match["seats"])
        for seat, record in enumerate(records):
            record["faults_by_kind"] = self.ref.tally.faults_by_kind(seat)
        return result, records

    # -- matches played ahead ------------------------------------------------
    def play_ahead(self, match: dict) -> list[tuple[PlayedAhead, list[Driver]]]:
        """Matches played whole in memory to end with this one in one step (`end_match`'s
        `ahead`): the deal's next rotations, which this job runs next anyway (`chain`), then
        whole deals of its batch that it would run after (`batch`, taken off it). Only when every
        seat is an in-process bot (no slot, no remote turn, no sandbox), this match was
        played in less than `PLAY_AHEAD_S` and on its first attempt (a match that failed is
        played on its own, so that a match that kills its process fails alone). They are played
        while that long has not passed since they began: a rotation not over by then is left
        to be played as a match of its own, its moves shown live. Nothing of them is written
        until their end lands, so a process that dies first loses nothing anyone saw: this
        match's run is retried and plays them again."""
        if (self.chain is None or self.attempts > 1 or not of_tournament(match, match.get("tournament"))
                or not in_process(self.seat_bots) or time.monotonic() - self.began >= PLAY_AHEAD_S):
            return []
        began = time.monotonic()
        played: list[tuple[PlayedAhead, list[Driver]]] = []
        try:
            self.play_ahead_into(played, match, began)
        except BaseException:  # a platform error: the job fails, and its retry plays them again
            for _, drivers in played:
                close(drivers, self.match_id)
            raise
        return played

    def play_ahead_into(self, played: list[tuple[PlayedAhead, list[Driver]]], match: dict, began: float) -> None:
        """`play_ahead`'s matches, appended to `played` as they are played."""
        twins = match.get("twins") or []
        later = twins[twins.index(self.match_id) + 1:] if self.match_id in twins else []
        by_bot = {bot["id"]: bot for bot in self.seat_bots if bot is not None}
        for twin in self.store.get_matches(later) if later else ():
            if twin is None or twin["status"] != "queued":
                return
            one = MatchRunner(self.store, twin["id"]).played_ahead(twin, [by_bot.get(b) for b in twin["seats"]], began)
            if one is None:
                return
            played.append(one)
        taken = 0
        for deal, seat_bots in self.batch_deals(match):
            whole = []
            for twin, bots in zip(deal, seat_bots, strict=True):
                one = MatchRunner(self.store, twin["id"]).played_ahead(twin, bots, began)
                if one is None:
                    break
                whole.append(one)
            if len(whole) < len(deal):  # a deal ends whole or is left to its own run
                for _, drivers in whole:
                    close(drivers, self.match_id)
                break
            played += whole
            taken += 1
        if taken and self.batch is not None:
            self.taken = self.batch[:taken]
            del self.batch[:taken]

    def batch_deals(self, match: dict) -> list[tuple[list[dict], list[list[dict | None]]]]:
        """The deals of the batch's next matches (`batch`) this run may play ahead, in order, up
        to the first it may not: each one's rotations, none played yet, and their seats' bots
        (in-process, the versions the match pinned), read in a few round trips."""
        if not self.batch:
            return []
        firsts = self.store.get_matches(list(self.batch))
        wanted = [t for first in firsts if first is not None for t in first.get("twins") or () if t != first["id"]]
        others = dict(zip(wanted, self.store.get_matches(wanted), strict=True)) if wanted else {}
        deals = []
        for first in firsts:
            if first is None or first["status"] != "queued" or not of_tournament(first, match["tournament"]):
                break
            twins = first.get("twins") or [first["id"]]
            found = [first if t == first["id"] else others.get(t) for t in twins]
            deal = [m for m in found if m is not None and m["status"] == "queued"]
            if twins[0] != first["id"] or len(deal) < len(twins):
                break
            deals.append(deal)
        bots = self.store.bot_records(sorted({b for deal in deals for m in deal for b in m["seats"]}))
        out = []
        for deal in deals:
            seat_bots = [self.store.pinned_bots(m, bots) for m in deal]
            if not all(in_process(s) for s in seat_bots):
                break
            out.append((deal, seat_bots))
        return out

    def played_ahead(self, match: dict, seat_bots: list[dict | None],
                     began: float) -> tuple[PlayedAhead, list[Driver]] | None:
        """This rotation played whole in memory (`play_ahead`), with its drivers (the caller
        closes them); None if it was not over `PLAY_AHEAD_S` after `began`."""
        self.match, self.seat_bots, self.ahead = match, seat_bots, True
        self.ref = new_referee(match)
        self.buffer, self.notes, self.last_entry = [], [], None
        drivers = self.drivers(match, Context(watchdog(), self.match_id))
        try:
            while not self.ref.is_over:
                if time.monotonic() - began >= PLAY_AHEAD_S:
                    close(drivers, self.match_id)
                    return None
                self.step(drivers)
        except BaseException:
            close(drivers, self.match_id)
            raise
        result, records = self.ending(match)
        return PlayedAhead(match, self.buffer, result, records, self.notes), drivers

    def abort(self, match: dict, reason: str) -> None:
        if end_match(self.store, self.match_id, "aborted", reason=reason, match=match):
            log.warning("match %s aborted: %s", self.match_id, reason)


def of_tournament(match: dict, tid: str | None) -> bool:
    """The match is one of tournament `tid`'s (not a ladder's or a comparison's): what a run may
    play ahead (`MatchRunner.play_ahead`)."""
    return bool(tid) and match.get("tournament") == tid and not match.get("comparison") \
        and match.get("kind") != "ladder"


def in_process(seat_bots: list[dict | None]) -> bool:
    """Every seat's bot is an in-process bot (its kind "python")."""
    return all(bot is not None and bot.get("kind") == "python" for bot in seat_bots)


def tell(match_id: str, drivers: list[Driver], shown: dict, yours: dict[int, dict]) -> None:
    """Each seat's `match_over` (a webhook's is sent by a dispatcher): best effort, the match is
    over whatever the bot does."""
    for seat, driver in enumerate(drivers):
        try:
            driver.match_over(match_id, shown, yours.get(seat))
        except PLATFORM_ERRORS:
            raise
        except Exception:
            log.warning("match_over of match %s failed", match_id, exc_info=True)


def close(drivers: list[Driver], match_id: str) -> None:
    for driver in drivers:
        try:
            driver.close()
        except Exception:
            log.exception("closing a driver of match %s", match_id)


def guest_seats(store, match: dict, seat_bots: list[dict | None], tournament: dict | None = None) -> list[dict | None]:
    """`seat_bots` with each bot of another account than the one that started the match (a guest
    match's: core/store/guests.py `started_by`) marked with its `guest_share` of slots (at least
    one, so no match waits for ever), which its slot step enforces (core/store/slots.py).
    `tournament`: its tournament's `RUN_FIELDS` (core/store/tournaments.py), if read already."""
    if match.get("kind") == "ladder":
        starter = None
    elif tournament is not None and not match.get("owner"):
        starter = tournament["owner"]
    else:
        starter = store.started_by(match)
    if starter in (None, "admin"):
        return seat_bots
    guests = {b["id"] for b in seat_bots if b is not None and b.get("kind") in SLOTTED and b.get("owner") != starter}
    if not guests:
        return seat_bots
    records = store.bot_records(sorted(guests))  # `ladder` too, which the seats' records lack
    return [b if b is None or b["id"] not in guests
            else {**b, "guest_share": max(1, guest_share({**records.get(b["id"], {}), **b}))} for b in seat_bots]


def seat_notices(store, seats: list[str], result: dict) -> dict[int, dict]:
    """What the match meant for each seat's bot, told to it alone with its `match_over` (its
    host logs it: sdk/protocol.py): `{"seat", "forfeited", "paused"}` — whether that seat
    forfeited, and whether its bot is paused now that the match is counted (core/store/bots.py
    PROBATION). Its own seat's facts only: nothing of the others'."""
    forfeits = set(result.get("forfeits") or [])
    bots = store.bot_records(sorted(set(seats)))
    return {seat: {"seat": seat, "forfeited": seat in forfeits, "paused": is_paused(bots.get(bot) or {})}
            for seat, bot in enumerate(seats)}


def notice_result(match: dict, result: dict) -> dict:
    """What a bot's `match_over` carries: the whole result for a lone match, only `scores` and
    `ranks` for a match of a tournament, a comparison or a duplicate deal (`twins`).

    The whole result holds the deal (`decks`, every hand): a bot told it before the deal's
    other rotations are played would play them knowing every card (docs/api.md §6)."""
    if match.get("tournament") or match.get("comparison") or match.get("twins"):
        return {"scores": result["scores"], "ranks": result["ranks"]}
    return result


class _Broken(Driver):
    """A seat whose bot cannot be reached at all (deleted, unknown kind): every turn a fault."""

    remote = False

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def ask(self, decision: dict) -> Reply:
        return Reply(fault=fault("bot_error", self.reason))


def ask(driver: Driver, decision: dict) -> Reply:
    """The driver's reply, or the fault of whatever it raised (a platform error goes on up)."""
    try:
        reply = driver.ask(decision)
    except PLATFORM_ERRORS:
        raise
    except RecursionError:
        return Reply(fault=fault("bad_answer", "the answer is nested too deeply"))
    except Exception as exc:
        log.warning("the driver of seat %s raised", decision.get("seat"), exc_info=True)
        return Reply(fault=fault("bot_error", f"{type(exc).__name__}: {clean(exc)}"))
    if not isinstance(reply, Reply):
        return Reply(fault=fault("bot_error", "the driver gave no reply"))
    return reply
