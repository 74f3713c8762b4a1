"""Matches played ahead in memory and ended with the match their runner ran
(worker/match_runner.py `play_ahead`, core/store/matches.py `conclude_rotations`): a deal's next
rotations, then whole deals of its batch. The same logs, results and counts as match by match;
nothing of them written before their end lands; none ended twice when something else ended one
meanwhile; a match that failed is played on its own."""

from __future__ import annotations

import pytest
import redis
from rq import Queue, SimpleWorker

from core.conclusion import end_match
from core.store import Store
from core.store.jobs import QUEUE
from worker import jobs, match_runner
from worker.match_runner import MatchRunner

NOTER = "tests.worker.debug_bots:InProcess"  # plays the first legal action, notes each turn


@pytest.fixture(autouse=True)
def ahead_however_busy(monkeypatch):
    """Matches are played ahead even on a machine so busy that one takes 0.2 s."""
    monkeypatch.setattr(match_runner, "PLAY_AHEAD_S", 60.0)


@pytest.fixture()
def conclusions(store, monkeypatch) -> list[tuple[str, list[str]]]:
    """Each conclusion's match and the matches it was asked to end with it, as they come."""
    seen: list[tuple[str, list[str]]] = []
    real = Store.conclude_rotations

    def conclude(self, *args, **kwargs):  # every store's: a worker's job makes its own
        seen.append((args[0], [p.match_id for p in kwargs.get("ahead", ())]))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, "conclude_rotations", conclude)
    return seen


def tournament(store: Store, game="duck-soup", seats=2, bots=2, deals=1) -> tuple[str, list[str]]:
    """A duplicate tournament of in-process bots, expanded: (its id, its matches due)."""
    first = store.r.incrby("test:bot-names", bots) - bots
    ids = [store.create_bot("acct", f"n{first + i}", game, "python", entrypoint=NOTER)[0]["id"]
           for i in range(bots)]
    t = store.create_tournament(game, ids, seats=seats, deals=deals, duplicate=True, seed=5, options={})
    return t["id"], jobs.expand(store, t)


def run_jobs(store: Store) -> None:
    """Run what is queued as a worker does."""
    SimpleWorker([Queue(QUEUE, connection=store.r)], connection=store.r).work(burst=True)


def summary(store: Store, tid: str) -> dict:
    """What the tournament left: each match's log, result and records, the tallies and bots'
    counts, each bot named by its place among the entrants (bot ids differ between tournaments)."""
    entrants = store.get_tournament(tid)["bots"]
    names = {bot: f"entrant{n}" for n, bot in enumerate(entrants)}

    def named(value):
        text = repr(value)
        for bot, name in names.items():
            text = text.replace(bot, name)
        return text

    return {
        "matches": [named((m["status"], m["result"], m.get("records"),
                           [{k: v for k, v in e.items() if k != "ms"} for e in store.match_log(m["id"])]))
                    for m in (store.get_match(mid) for mid in store.tournament_matches(tid))],
        "tallies": {names[bot]: {k: v for k, v in stats.items() if not k.startswith("memory")}
                    for bot, stats in store.tournament_tallies(tid).items()},  # the time each took aside
        "bots": {names[b]: store.get_bot(b)["matches"] for b in entrants},
        "progress": store.tournament_progress(tid),
        "status": store.get_tournament(tid)["status"],
    }


def test_a_fast_deal_of_in_process_bots_ends_in_one_step_as_it_would_rotation_by_rotation(
        store, monkeypatch, conclusions):
    tid, (due,) = tournament(store)
    rotations = store.get_match(due)["twins"]
    assert jobs.run_one(store, due) == "finished"
    assert conclusions == [(rotations[0], rotations[1:])]  # one conclusion for the whole deal
    assert store.active_jobs() == []  # the follow-ups of both are done
    assert store.archive_due_count() == 2
    ahead = summary(store, tid)

    monkeypatch.setattr(match_runner, "PLAY_AHEAD_S", 0.0)  # rotation by rotation
    tid2, (due2,) = tournament(store)
    assert jobs.run_one(store, due2) == "finished"
    assert summary(store, tid2) == ahead
    assert ahead["progress"] == {"done": 2, "total": 2} and set(ahead["bots"].values()) == {2}
    assert ahead["status"] == "finished"

    for mid in rotations:  # each rotation a whole match of its own
        match = store.get_match(mid)
        assert match["status"] == "finished" and match["started"] and int(match["attempts"]) == 1
        assert store.replay(mid).is_over
        assert [n["turn"] for n in store.debug_notes(mid)] == list(range(len(store.match_log(mid))))


def test_a_batch_of_deals_ends_in_one_step_as_it_would_match_by_match(store, monkeypatch, conclusions):
    tid, due = tournament(store, game="soupe-gertrude", seats=4, bots=5, deals=1)  # 5 deals, 20 matches
    assert len(due) == 5
    run_jobs(store)
    everything = [t for mid in due for t in store.get_match(mid)["twins"]]
    assert conclusions == [(everything[0], everything[1:])]  # the batch's job: one conclusion
    assert store.active_jobs() == [] and store.archive_due_count() == 20
    ahead = summary(store, tid)

    monkeypatch.setattr(match_runner, "PLAY_AHEAD_S", 0.0)  # match by match
    conclusions.clear()
    tid2, _ = tournament(store, game="soupe-gertrude", seats=4, bots=5, deals=1)
    run_jobs(store)
    assert len(conclusions) == 20
    assert summary(store, tid2) == ahead
    assert ahead["progress"] == {"done": 20, "total": 20} and set(ahead["bots"].values()) == {16}
    assert ahead["status"] == "finished"


def test_a_match_ended_while_it_was_played_ahead_is_not_ended_again(store, monkeypatch, conclusions):
    tid, due = tournament(store, bots=3)  # 3 deals, 6 matches: one batch
    aborted = store.get_match(due[2])["twins"][0]
    real = MatchRunner.play_ahead

    def then_the_admin_aborts_one(runner, match):
        played = real(runner, match)
        if aborted in [p.match_id for p, _ in played]:
            end_match(store, aborted, "aborted", reason="the admin")
        return played

    monkeypatch.setattr(MatchRunner, "play_ahead", then_the_admin_aborts_one)
    run_jobs(store)
    first = conclusions.index(next(c for c in conclusions if c[0] == due[0]))
    assert aborted in conclusions[first][1]  # it was played ahead...
    assert all(aborted not in ahead for _, ahead in conclusions[first + 1:])  # ...and never again
    match = store.get_match(aborted)
    assert match["status"] == "aborted" and match["reason"] == "the admin"
    assert store.match_log(aborted) == [] and store.debug_notes(aborted) == []
    assert store.tournament_progress(tid) == {"done": 6, "total": 6}
    statuses = [store.get_match(mid)["status"] for mid in store.tournament_matches(tid)]
    assert statuses.count("aborted") == 1 and statuses.count("finished") == 5
    # each deal counted once: the aborted rotation's deal with its one finished rotation
    assert sorted(store.get_bot(b)["matches"] for b in store.get_tournament(tid)["bots"]) == [3, 3, 4]
    assert store.active_jobs() == []


def test_a_run_that_dies_before_its_end_left_nothing_of_what_it_played_ahead(store, monkeypatch):
    tid, (due,) = tournament(store, game="soupe-gertrude", seats=4, bots=4)
    rotations = store.get_match(due)["twins"]
    real = store.conclude_rotations

    def dies(*args, **kwargs):
        raise redis.exceptions.ConnectionError("the process died here")

    monkeypatch.setattr(store, "conclude_rotations", dies)
    with pytest.raises(redis.exceptions.ConnectionError):
        jobs.run_one(store, due)
    first, *later = (store.get_match(mid) for mid in rotations)
    assert first["status"] == "running" and store.replay(rotations[0]).is_over  # its log is whole
    assert all(m["status"] == "queued" for m in later)
    assert all(store.match_log(mid) == [] and store.debug_notes(mid) == [] for mid in rotations[1:])

    calls: list[list[str]] = []  # its job again: the deal ends once
    monkeypatch.setattr(store, "conclude_rotations",
                        lambda *a, **k: calls.append([p.match_id for p in k["ahead"]]) or real(*a, **k))
    assert jobs.run_one(store, due) == "finished"
    assert calls[0] == []  # a match that failed is played on its own; the next plays ahead again
    assert calls[1:] == [rotations[2:]]
    assert [store.get_match(mid)["status"] for mid in rotations] == ["finished"] * 4
    assert int(store.get_match(rotations[0])["attempts"]) == 2
    assert store.tournament_progress(tid) == {"done": 4, "total": 4}
    for bot in first["seats"]:
        assert store.get_bot(bot)["matches"] == 4


def not_over_in_time(monkeypatch, late: set[str]) -> None:
    """Playing ahead the matches `late` takes past `PLAY_AHEAD_S` (a slow bot's)."""
    real = MatchRunner.played_ahead

    def played_ahead(runner, match, seat_bots, began):
        return None if match["id"] in late else real(runner, match, seat_bots, began)

    monkeypatch.setattr(MatchRunner, "played_ahead", played_ahead)


def test_a_rotation_not_over_in_time_is_left_to_its_chain_with_the_rest_of_its_deal(
        store, monkeypatch, conclusions):
    tid, (due,) = tournament(store, game="soupe-gertrude", seats=4, bots=4)
    rotations = store.get_match(due)["twins"]
    not_over_in_time(monkeypatch, {rotations[2]})
    assert jobs.run_one(store, due) == "finished"
    # the first ends with the second; the third, a match of its own, ends with the fourth
    assert conclusions == [(rotations[0], [rotations[1]]), (rotations[2], [rotations[3]])]
    assert [store.get_match(mid)["status"] for mid in rotations] == ["finished"] * 4
    assert store.tournament_progress(tid) == {"done": 4, "total": 4}
    assert set(summary(store, tid)["bots"].values()) == {4} and store.active_jobs() == []


def test_a_deal_of_the_batch_not_over_in_time_is_left_to_its_own_run(store, monkeypatch, conclusions):
    tid, due = tournament(store, bots=3)  # 3 deals of 2 rotations: one batch
    deals = [store.get_match(mid)["twins"] for mid in due]
    not_over_in_time(monkeypatch, {deals[2][1]})  # the last deal's second rotation
    run_jobs(store)
    # the first match ends with its deal and the next whole deal; the last deal runs on its own
    assert conclusions == [(deals[0][0], [deals[0][1], *deals[1]]), (deals[2][0], []), (deals[2][1], [])]
    assert store.tournament_progress(tid) == {"done": 6, "total": 6}
    assert store.get_tournament(tid)["status"] == "finished"
    assert set(summary(store, tid)["bots"].values()) == {4} and store.active_jobs() == []
