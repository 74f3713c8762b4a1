"""A deal's next rotations played ahead in memory and ended with the rotation before them
(worker/match_runner.py `play_ahead`, core/store/matches.py `conclude_rotations`): the same
logs, results and counts as rotation by rotation; nothing of them written before their end
lands; none ended twice when something else ended them meanwhile."""

from __future__ import annotations

import pytest
import redis

from core.conclusion import end_match
from core.store import Store
from worker import jobs, match_runner
from worker.match_runner import MatchRunner

NOTER = "tests.worker.debug_bots:InProcess"  # plays the first legal action, notes each turn


@pytest.fixture(autouse=True)
def ahead_however_busy(monkeypatch):
    """Rotations are played ahead even on a machine so busy that one takes 0.2 s."""
    monkeypatch.setattr(match_runner, "PLAY_AHEAD_S", 60.0)


def deal(store: Store, game="duck-soup", seats=2) -> tuple[str, list[str]]:
    """A one-deal duplicate tournament of in-process bots, expanded: (its id, the deal's rotations
    in playing order)."""
    first = store.r.incrby("test:bot-names", seats) - seats
    bots = [store.create_bot("acct", f"n{first + i}", game, "python", entrypoint=NOTER)[0]["id"]
            for i in range(seats)]
    t = store.create_tournament(game, bots, seats=seats, deals=1, duplicate=True, seed=5, options={})
    (due,) = jobs.expand(store, t)
    return t["id"], store.get_match(due)["twins"]


def run_deal(store: Store, rotations: list[str]) -> None:
    """Run the deal as its job does: the due rotation, then whatever it chains."""
    assert jobs.run_one(store, rotations[0]) == "finished"


def summary(store: Store, tid: str, rotations: list[str]) -> dict:
    """What the deal left: each rotation's log, result and records, the tallies and bots' counts,
    each bot named by its seat in the first rotation (bot ids differ between tournaments)."""
    names = {bot: f"seat{n}" for n, bot in enumerate(store.get_match(rotations[0])["seats"])}

    def named(value):
        text = repr(value)
        for bot, name in names.items():
            text = text.replace(bot, name)
        return text

    tallies = {names[bot]: {k: v for k, v in stats.items() if not k.startswith("memory")}
               for bot, stats in store.tournament_tallies(tid).items()}
    return {
        "matches": [named((m["status"], m["result"], m.get("records"),
                           [{k: v for k, v in e.items() if k != "ms"} for e in store.match_log(m["id"])]))
                    for m in (store.get_match(r) for r in rotations)],  # the time each took aside
        "tallies": tallies,
        "bots": {names[b]: store.get_bot(b)["matches"] for b in names},
        "done": store.tournament_progress(tid),
    }


def test_a_fast_deal_of_in_process_bots_ends_in_one_step_as_it_would_rotation_by_rotation(
        store, monkeypatch):
    tid, rotations = deal(store)
    ended = []
    real = store.conclude_rotations
    monkeypatch.setattr(store, "conclude_rotations",
                        lambda *a, **k: ended.append((a[0], [p.match_id for p in k["ahead"]])) or real(*a, **k))
    run_deal(store, rotations)
    assert ended == [(rotations[0], rotations[1:])]  # one conclusion for the whole deal
    assert store.active_jobs() == []  # the follow-ups of both are done
    assert store.archive_due_count() == 2
    ahead = summary(store, tid, rotations)

    monkeypatch.setattr(match_runner, "PLAY_AHEAD_S", 0.0)  # rotation by rotation
    tid2, rotations2 = deal(store)
    run_deal(store, rotations2)
    assert summary(store, tid2, rotations2) == ahead
    assert ahead["done"] == {"done": 2, "total": 2} and all(n == 2 for n in ahead["bots"].values())

    for mid in rotations:  # each rotation a whole match of its own
        match = store.get_match(mid)
        assert match["status"] == "finished" and match["started"] and int(match["attempts"]) == 1
        assert store.replay(mid).is_over
        assert [n["turn"] for n in store.debug_notes(mid)] == list(range(len(store.match_log(mid))))


def test_a_rotation_ended_while_it_was_played_ahead_is_not_ended_again(store, monkeypatch):
    tid, rotations = deal(store)
    real = MatchRunner.play_ahead

    def then_the_admin_aborts_it(runner, match):
        played = real(runner, match)
        assert [p.match_id for p, _ in played] == rotations[1:]
        end_match(store, rotations[1], "aborted", reason="the admin")
        return played

    monkeypatch.setattr(MatchRunner, "play_ahead", then_the_admin_aborts_it)
    run_deal(store, rotations)
    first, second = (store.get_match(mid) for mid in rotations)
    assert first["status"] == "finished" and second["status"] == "aborted"
    assert second["reason"] == "the admin" and store.match_log(rotations[1]) == []
    assert store.debug_notes(rotations[1]) == []
    assert store.tournament_progress(tid) == {"done": 2, "total": 2}
    for bot in first["seats"]:  # the deal counted once, with the rotation that was played
        assert store.get_bot(bot)["matches"] == 1
    assert store.active_jobs() == []


def test_a_run_that_dies_before_its_deal_ends_left_nothing_of_the_rotations_played_ahead(
        store, monkeypatch):
    tid, rotations = deal(store, game="soupe-gertrude", seats=4)
    real = store.conclude_rotations

    def dies(*args, **kwargs):
        raise redis.exceptions.ConnectionError("the process died here")

    monkeypatch.setattr(store, "conclude_rotations", dies)
    with pytest.raises(redis.exceptions.ConnectionError):
        run_deal(store, rotations)
    first, *later = (store.get_match(mid) for mid in rotations)
    assert first["status"] == "running" and store.replay(rotations[0]).is_over  # its log is whole
    assert all(m["status"] == "queued" for m in later)
    assert all(store.match_log(mid) == [] and store.debug_notes(mid) == [] for mid in rotations[1:])

    monkeypatch.setattr(store, "conclude_rotations", real)  # its job again: the deal ends once
    run_deal(store, rotations)
    assert [store.get_match(mid)["status"] for mid in rotations] == ["finished"] * 4
    assert int(store.get_match(rotations[0])["attempts"]) == 2
    assert store.tournament_progress(tid) == {"done": 4, "total": 4}
    for bot in first["seats"]:
        assert store.get_bot(bot)["matches"] == 4
