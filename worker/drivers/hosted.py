"""Hosted bots: code their author uploaded, asked in its sandbox (core/sandbox.py).

One sandboxed process per (match, seat), started at the seat's first decision
in this worker process and kept for the match — between the runs of a match
too (a remote seat's turn ends a run, `close` then parks the process here),
until its `match_over`, or `IDLE_S` without a decision, or more than `KEPT`
parked (the least recently used first). A match's run on another worker
process (or a forking worker's new horse) starts a new process for the seat:
the bot begins again from that decision (its `on_match_start` is called with
that decision's view, which holds the public history), as a webhook bot
restarted mid-match would; that is no death.

Time is CPU time: a decision is charged the CPU its process used for it
(`Reply.ms`), judged against the deadline as every bot's time is; past
`WALL_FACTOR` times the deadline in wall time (a bot sleeping), or past the
deadline in CPU without an answer, the process is killed: a `timeout`, and a
new process answers the next decision. An answer over 64 KB is `too_large`,
likewise. A process that ends by itself (a crash, `exit`, the memory limit)
is a death: the bot is restarted once per match; after its second death every
decision of the seat is a `bot_error` fault costing no time, so it forfeits at
the match's `max_faults`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from core import hosted_code
from core.jsonsafe import JSONTooComplex, safe_loads
from core.sandbox import MAX_LINE, Sandbox, SandboxError
from sdk.debug import MAX_DEBUG, debug_text
from sdk.faults import clean, fault
from worker.drivers.base import Driver, Reply

log = logging.getLogger(__name__)

#: a decision's wall-time ceiling, in deadlines: CPU time is charged, sleeping is not free
WALL_FACTOR = 3
#: deaths of a seat's process in one match the seat survives
DEATHS_SURVIVED = 1
#: processes parked between a match's runs, per worker process, and how long one waits unused
KEPT = 64
IDLE_S = 60.0
#: the fault of a decision the bot's code raised in: what it raised is its own text, kept in the
#: turn's debug notes (its owner's only), never in the public log
RAISED = "its code raised an exception (its owner sees it in the turn's debug notes)"
#: how long a `match_over` may take (best effort)
MATCH_OVER_S = 1.0


@dataclass
class Seat:
    """One seat's process in one match, and what its match has cost it."""

    code: str
    entrypoint: str
    box: Sandbox | None = None
    deaths: int = 0
    used: float = field(default_factory=time.monotonic)


#: (match id, seat) -> its process, parked between runs (see above)
_parked: OrderedDict[tuple[str, int], Seat] = OrderedDict()
_lock = threading.Lock()
_reaper: threading.Thread | None = None


class HostedDriver(Driver):
    remote = False

    def __init__(self, bot: dict, match_id: str, seat: int) -> None:
        self.key = (match_id, seat)
        code, entrypoint = bot.get("code"), bot.get("entrypoint")
        if not code or not entrypoint:
            raise ValueError("a hosted bot without code")
        with _lock:
            parked = _parked.pop(self.key, None)
        if parked is not None and (parked.code, parked.entrypoint) != (code, entrypoint):
            _kill(parked)
            parked = None
        self.seat = parked or Seat(code, entrypoint)
        self.over = False

    def ask(self, decision: dict) -> Reply:
        seat = self.seat
        seat.used = time.monotonic()
        if seat.deaths > DEATHS_SURVIVED:
            return Reply(fault=fault("bot_error", "its process died twice in this match"), ms=0)
        box = seat.box
        if box is None or not box.alive:
            started = self._start()
            if isinstance(started, Reply):
                return started
            box = started
        deadline = decision["deadline_ms"]
        line, spent, problem = box.exchange(decision, deadline, WALL_FACTOR * deadline / 1000)
        if problem == "died":
            seat.deaths += 1
            seat.box = None
            return Reply(fault=fault("bot_error", "its process ended"), ms=spent)
        if problem == "timeout":
            seat.box = None
            return Reply(fault=fault("timeout", f"no answer within {deadline} ms of CPU time "
                                                f"({WALL_FACTOR * deadline} ms of wall time)"), ms=spent)
        if problem == "too_large" or line is None:  # no line without a problem (`exchange`)
            seat.box = None
            return Reply(fault=fault("too_large", f"an answer over {MAX_LINE // 1024} KB"), ms=spent)
        return read_line(line, spent)

    def _start(self) -> Sandbox | Reply:
        """Start the seat's process: its sandbox, or the fault of a start that failed (a death:
        code that no longer loads, or a sandbox that cannot start)."""
        seat = self.seat
        try:
            box = Sandbox(hosted_code.runnable_dir(seat.code), seat.entrypoint)
            box.start()
        except (SandboxError, OSError) as exc:
            seat.deaths += 1
            last = str(exc).strip().splitlines()[-1:] or ["?"]
            log.warning("the sandbox of %s did not start: %s", self.key, exc)
            return Reply(fault=fault("bot_error", f"it did not start: {clean(last[0])}"), ms=0)
        seat.box = box
        return box

    def match_over(self, match_id: str, result: dict, you: dict | None = None) -> None:
        self.over = True
        box = self.seat.box
        if box is not None and box.alive:
            box.exchange({"type": "match_over", "match_id": match_id, "result": result}, 1000, MATCH_OVER_S)

    def close(self) -> None:
        if self.over or self.seat.box is None or not self.seat.box.alive:
            _kill(self.seat)
            return
        self.seat.used = time.monotonic()
        with _lock:
            _parked[self.key] = self.seat
            _parked.move_to_end(self.key)
            extra = [_parked.popitem(last=False)[1] for _ in range(max(0, len(_parked) - KEPT))]
        for seat in extra:
            _kill(seat)
        _start_reaper()


def read_line(line: bytes, spent: int) -> Reply:
    """The reply a process's answer line holds: `{"action"[, "debug"]}` or `{"error"}`."""
    try:
        answer = safe_loads(line)
    except (JSONTooComplex, ValueError) as exc:
        return Reply(fault=fault("bad_answer", f"the answer is not JSON: {exc}"), ms=spent)
    if isinstance(answer, dict) and "error" in answer:  # its own words go to its owner only
        error = str(answer["error"])
        return Reply(fault=fault("bot_error", RAISED), debug=debug_text(error[-MAX_DEBUG:]), ms=spent)
    if not isinstance(answer, dict) or "action" not in answer:
        return Reply(fault=fault("bad_answer", 'expected {"action": ...}'), ms=spent)
    return Reply(action=answer["action"], debug=debug_text(answer.get("debug")), ms=spent)


def _kill(seat: Seat) -> None:
    if seat.box is not None:
        seat.box.kill()
        seat.box = None


def reap(now: float | None = None) -> int:
    """Kill the parked processes unused for `IDLE_S`; how many."""
    now = time.monotonic() if now is None else now
    with _lock:
        idle = [k for k, s in _parked.items() if now - s.used > IDLE_S]
        seats = [_parked.pop(k) for k in idle]
    for seat in seats:
        _kill(seat)
    return len(seats)


def stop_all() -> None:
    """Kill every parked process (a worker process ending, a test's end)."""
    with _lock:
        seats = list(_parked.values())
        _parked.clear()
    for seat in seats:
        _kill(seat)


def parked() -> list[tuple[str, int]]:
    """The (match, seat) pairs whose process is parked here."""
    with _lock:
        return list(_parked)


def _start_reaper() -> None:
    global _reaper
    with _lock:
        if _reaper is not None and _reaper.is_alive():
            return
        _reaper = threading.Thread(target=_reap_forever, name="hosted-reaper", daemon=True)
        _reaper.start()


def _reap_forever() -> None:
    while True:
        time.sleep(IDLE_S / 4)
        try:
            reap()
        except Exception:  # noqa: BLE001 - the reaper must outlive one bad kill
            log.exception("reaping hosted bots' processes")
