"""A match's end: the one path every ending takes, and everything that follows it.

    end_match(store, match_id, status, result, reason=..., records=...)

Whoever ends a match goes through `end_match`: its runner (finished, or
aborted after repeated platform errors), the admin (`POST /matches/{id}/abort`),
a tournament's abort (its job), a comparison's decision (what it still had in play). It
ends the match once, in one transaction (`Store.conclude_match`: the status
and result, the bots' records, the ratings queue, the tournament's tallies —
a twin's only with its whole deal), then `match_concluded` does what follows:
the ratings and the ladder's pairing, the comparison's deal and decision, the
tournament's end (its standings saved then; in play they are computed from its
tallies when read), the match's waiting record (its pending call and deadline
are cancelled), its bots' slots and the matches waiting for them, the next
twin, and once its deal is over the archive (`archive_when_settled`).

Kill -9 safe: the transaction marks the match active (`jobs:active`) and only
the last step of `match_concluded` clears it (leaving it due to be archived, in one step), so a process that dies between
the two leaves the rest to the pool's recovery sweep, which runs
`match_concluded` again. That is safe because it only ever recomputes things
or queues runs (a run of a match under way, leased or over does nothing twice:
it reads the log): the runner, a retried job or the sweep may repeat it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from core.comparisons import comparison_match_concluded, in_play
from core.ratings import update_ratings
from core.store import Store
from core.store.comparisons import OVER as COMPARISON_OVER
from core.store.matches import ARCHIVE_BATCH, PlayedAhead
from core.store.runs import read_end
from sdk.standings import standings_from_tallies

log = logging.getLogger("cardarena.worker")

OVER = ("finished", "aborted")


def end_match(store: Store, match_id: str, status: str, result: dict | None = None, *,
              reason: str | None = None, records: Sequence[dict] = (),
              announce: Callable[[bool], None] | None = None, match: dict | None = None,
              chain: list[str] | None = None, ahead: Sequence[PlayedAhead] = ()) -> bool:
    """End a match and do everything that follows; True only for the call that ended it.

    `announce` runs once, for the call that ended it, between the transaction and
    the follow-ups (the runner's `match_over` notices), told whether `ahead` ended too.
    Repeating a call changes nothing stored but repeats the follow-ups, which are
    idempotent. `match` is the match's record if the caller holds it (its runner): what
    the follow-ups read of it never changes but its status, so the call that ended it
    reads it no more. `chain`: the caller runs the deal's next rotation itself
    (`match_concluded`). `ahead`: matches the caller (its runner, holding `match`) played
    whole in memory — the deal's next rotations, then whole deals of its batch: they end in
    the same transaction if they are all still to be played (`Store.conclude_rotations`), and
    the follow-ups of them all are done once, with the last one's.
    """
    ended, landed = store.conclude_rotations(match_id, status, result, reason=reason, records=records,
                                             twins=None if match is None else match.get("twins") or [],
                                             ahead=ahead)
    if ended and announce is not None:
        announce(landed)
    if ended and landed:  # what follows them all, once: a deal of bots that hold no slot
        match_concluded(store, {**ahead[-1].match, "status": "finished"}, chain,
                        together=[match_id, *(a.match_id for a in ahead[:-1])])
        return True
    if ended and match is not None:
        match = {**match, "status": status}
    else:
        match = store.get_match(match_id)
    if match is not None and match["status"] in OVER:
        match_concluded(store, match, chain)
    return ended


def twin_statuses(store: Store, match: dict) -> dict[str, str | None]:
    """The status of each rotation of the match's deal (itself alone when it has no twins), in
    playing order, in one read (None for a missing one)."""
    group = list(match.get("twins") or [match["id"]])
    return {mid: None if twin is None else twin["status"]
            for mid, twin in zip(group, store.get_matches(group, ("status",)), strict=True)}


def due_twin(store: Store, match: dict, statuses: dict[str, str | None] | None = None) -> str | None:
    """Of the match's twins (the rotations of its deal, in playing order), the one to play now:
    the first not over (None when all are, or the match has no twins). `statuses`: the
    twins' as `twin_statuses` read them, else read now."""
    if not match.get("twins"):
        return None
    for mid, status in (statuses or twin_statuses(store, match)).items():
        if status is not None and status not in OVER:
            return mid
    return None


def match_concluded(store: Store, match: dict, chain: list[str] | None = None,
                    together: Sequence[str] = ()) -> None:
    """After a match's end: the ratings and its ladder pairing, its comparison, its tournament's
    end, its waiting record, slots and next twin, the archive once its deal is over; last, it is
    no longer active. Repeatable. (A tournament's standings in play are computed from its
    tallies when read, which the conclusion's transaction counted.)

    With `chain` (a match's runner: worker/jobs.py `run_match`), the deal's next rotation is
    not queued but counted active and appended to it: the caller's job runs it next, sparing
    a job's bookkeeping; should that process die first, the recovery sweep queues it.

    `together`: the matches that ended in the same transaction before it (`end_match`'s
    `ahead`: in-process bots, which hold no slot and wait on no turn; its deal's earlier
    rotations, and whole deals), no longer active with it and archived with its deal."""
    if match.get("rated") and match["status"] == "finished":  # rated before its tournament may end
        update_ratings(store, match["game"])
    if match.get("pairing"):  # a ladder deal whose last twin ended leaves play (counted once)
        store.settle_pairing(match["game"], match["pairing"])
    if match.get("comparison"):  # its deal's statistic, the test's decision, the next deal
        comparison_match_concluded(store, match)
        stop_if_decided(store, match["comparison"])
    # its waiting record, its deal's statuses, its tournament's end; and its slots given back,
    # the matches waiting for its bots woken
    read = read_end(store, match, release=True)
    tid = match.get("tournament")
    if tid:
        finish_tournament_if_complete(store, tid, read.tournament_due)
    if read.waiting is not None:  # a turn of it pending: its call and deadline go
        store.forget_wait(match["id"])
    woken = read.woken
    statuses = read.twins
    following = due_twin(store, match, statuses)  # the next rotation of this deal
    chained = []
    if following is not None and chain is not None and following not in woken:
        chained = [following]  # active from the step that ends this one's being so
    elif following is not None and following not in woken:
        store.enqueue("match", [following])
    # their first runs; repeated by a retry, a run finds the match locked or where the first left it
    store.enqueue_woken(woken)
    archive_when_settled(store, match, statuses, chained, together)  # last: the match is no longer active
    if chain is not None:
        chain.extend(chained)


def archive_when_settled(store: Store, match: dict, statuses: dict[str, str | None] | None = None,
                         chained: Sequence[str] = (), together: Sequence[str] = ()) -> None:
    """Once nothing can change what the match shows, it is due to be archived (Redis then
    keeps its summary: core/store/matches.py `archive_later`): a lone match at once, a twin
    with its deal's last rotation (until then the last one's end reads the others' records).
    The match is counted no longer active in the same step. The matches due are archived a
    batch at a time: here, by the end that makes a batch due, and by the recovery sweep,
    which archives whatever is due. Its readers answer the same from the archive; that a
    tournament's or a comparison's match stays private until that is over is decided from
    their status, not from here. `statuses`: its deal's, as `twin_statuses` read them, else
    read now. `chained`: the rotation its caller runs next (`match_concluded`), counted active in
    the same step. `together`: matches that ended with it (`match_concluded`), no longer active
    with it, and due to be archived with it (its deal's rotations, or whole deals)."""
    statuses = statuses or twin_statuses(store, match)
    if any(status not in OVER for status in statuses.values()):
        for mid in together:
            store.job_done("match", mid)
        store.job_done("match", match["id"], keep=chained)
        return
    for following in chained:  # none once the deal is over; made active all the same
        store.keep_active(following)
    if store.archive_later(list(dict.fromkeys([*together, *statuses])), done=[*together, match["id"]]) >= ARCHIVE_BATCH:
        archive_due(store, ARCHIVE_BATCH)


def archive_due(store: Store, limit: int, skip: int = 0) -> tuple[int, int]:
    """Archive up to `limit` of the matches due after the first `skip` (`Store.archive_due`):
    (how many are no longer due, how many of them still are). An archive that cannot be
    written now (a full or read-only volume) is logged: the matches stay whole in Redis, due,
    and the next call tries again."""
    try:
        return store.archive_due(limit, skip)
    except OSError as exc:
        log.error("matches could not be archived (%s): they stay in Redis, tried again", exc)
        return 0, 0


def stop_if_decided(store: Store, cid: str) -> None:
    """A decided comparison's matches still in play end aborted (they count for nobody)."""
    c = store.get_comparison(cid)
    if c is None or c["status"] not in COMPARISON_OVER:
        return
    for mid in in_play(store, c):
        end_match(store, mid, "aborted", reason=f"its comparison was decided: {c['status']}")


def stop_tournament(store: Store, tid: str, match_reason: str) -> None:
    """End an "aborting" tournament (its job's work: worker/jobs.py): each of its matches not
    over yet ends aborted (`match_reason`), then the tournament is "aborted"; the finished ones
    keep their results, and the standings count only them. Repeatable: a job killed half-way
    is run again by the recovery sweep and ends the rest."""
    ids = store.tournament_matches(tid)
    for mid, match in zip(ids, store.get_matches(ids, ("status",)), strict=True):  # the archived: in Redis' summary
        if match is not None and match["status"] not in OVER:
            end_match(store, mid, "aborted", reason=match_reason)
    save_standings(store, tid)
    store.set_tournament(tid, status="aborted")


def save_standings(store: Store, tid: str) -> None:
    """The standings as its tallies make them, saved as the tournament ends (until then they are
    computed when read: core/store/tournaments.py `standings`)."""
    store.save_standings(tid, standings_from_tallies(store.tournament_tallies(tid)))


def finish_tournament_if_complete(store: Store, tid: str, due: bool | None = None) -> bool:
    """Once every match of the tournament is over: its standings saved, then "finished" (one
    read at each of its matches' ends until then; `due`: that read made already)."""
    if not (store.tournament_due_to_finish(tid) if due is None else due):
        return False
    save_standings(store, tid)
    store.set_tournament(tid, status="finished")
    log.info("tournament %s finished", tid)
    return True
