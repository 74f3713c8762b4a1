"""A twin's result is counted only with its whole deal (core/store/matches.py conclude_match)."""

from __future__ import annotations

import pytest

from tests.server.test_api_store import store, two_bots  # noqa: F401 - the fixture

__all__ = ["store"]


def _records(a: dict, b: dict, winner: dict) -> list[dict]:
    return [{"bot": bot["id"], "won": bot is winner, "faults": 0} for bot in (a, b)]


def _twins(store, a: dict, b: dict) -> list[str]:
    ids = ["m_twin_1", "m_twin_2"]
    for mid, seats in zip(ids, ([a["id"], b["id"]], [b["id"], a["id"]]), strict=True):
        store.create_match("toy-high", seats, 5, {}, match_id=mid, twins=ids)
    return ids


def test_a_twin_counts_nothing_until_the_last_rotation_of_its_deal_ends(store):  # noqa: F811
    _, a, b = two_bots(store)
    first, second = _twins(store, a, b)
    assert store.conclude_match(first, "finished", {"ranks": [1, 2]}, records=_records(a, b, a))
    assert [store.get_bot(x["id"])["matches"] for x in (a, b)] == [0, 0]  # nothing shows yet
    assert store.conclude_match(second, "finished", {"ranks": [1, 2]}, records=_records(a, b, b))
    assert [(store.get_bot(x["id"])["matches"], store.get_bot(x["id"])["wins"]) for x in (a, b)] == [(2, 1), (2, 1)]
    assert not store.conclude_match(second, "finished", {"ranks": [1, 2]}, records=_records(a, b, b))
    assert [store.get_bot(x["id"])["matches"] for x in (a, b)] == [2, 2]  # once only


def test_a_deal_whose_last_twin_is_aborted_counts_the_finished_one(store):  # noqa: F811
    _, a, b = two_bots(store)
    first, second = _twins(store, a, b)
    store.conclude_match(first, "finished", {"ranks": [1, 2]}, records=_records(a, b, a))
    assert store.conclude_match(second, "aborted", None, reason="stopped")
    assert [(store.get_bot(x["id"])["matches"], store.get_bot(x["id"])["wins"]) for x in (a, b)] == [(1, 1), (1, 0)]


@pytest.mark.parametrize(("forfeits", "streak"), [((True, False), 0), ((False, True), 1), ((True, True), 4)])
def test_a_ladder_deal_moves_a_forfeit_streak_rotation_by_rotation_in_playing_order(store, forfeits, streak):  # noqa: F811
    """Counted as its last rotation ends, each rotation of a ladder deal still moves its bots'
    forfeit streaks in the order played: played out, back to 0; forfeited, one more."""
    _, a, b = two_bots(store)
    store.r.hset(f"bot:{a['id']}", "forfeit_streak", 2)
    ids = ["m_twin_1", "m_twin_2"]
    for mid, seats in zip(ids, ([a["id"], b["id"]], [b["id"], a["id"]]), strict=True):
        store.create_match("toy-high", seats, 5, {}, match_id=mid, twins=ids, kind="ladder")
    for mid, forfeit in zip(ids, forfeits, strict=True):
        records = [{**r, "forfeit": r["bot"] == a["id"] and forfeit} for r in _records(a, b, b)]
        assert store.conclude_match(mid, "finished", {"ranks": [2, 1]}, records=records)
    assert int(store.r.hget(f"bot:{a['id']}", "forfeit_streak")) == streak
