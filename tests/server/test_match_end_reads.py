"""What a match's end reads for its follow-ups (core/store/runs.py `read_end`), on real Redis:
the same answers as the separate reads it replaces, in one round trip."""

from __future__ import annotations

import pytest

from core.store import Store, secret_key
from core.store.jobs import lease_key
from core.store.runs import read_end
from tests.server.driving import GAME, make_bots, played, running_tournament


@pytest.fixture()
def store(redis_client):
    return Store(redis_client, secret_key(redis_client))


def test_a_lone_match_of_a_tournament(store):
    bots = make_bots(store, 2)
    tid = running_tournament(store, bots, total=2)
    first = played(store, bots, seed=3, tournament=tid)
    read = read_end(store, store.get_match(first))
    assert read.waiting is None and read.twins == {first: "finished"}
    assert read.tournament_due is False is store.tournament_due_to_finish(tid)  # one match of two
    second = played(store, bots[::-1], seed=4, tournament=tid)
    assert read_end(store, store.get_match(second)).tournament_due is True is store.tournament_due_to_finish(tid)
    store.set_tournament(tid, status="finished")
    assert read_end(store, store.get_match(second)).tournament_due is False  # finished already


def test_a_twin_reads_its_deals_statuses_in_playing_order(store):
    bots = make_bots(store, 2)
    ids = ["m_end_reads_b", "m_end_reads_a"]
    for mid, seats in zip(ids, (bots, bots[::-1]), strict=True):
        store.create_match(GAME, seats, 5, {}, match_id=mid, twins=ids)
    store.set_match_status(ids[0], "finished")
    read = read_end(store, store.get_match(ids[0]))
    assert list(read.twins.items()) == [(ids[0], "finished"), (ids[1], "queued")]
    assert read.tournament_due is False and read.waiting is None


def test_with_release_its_slots_are_given_back_in_the_same_round_trip(store):
    """`read_end(..., release=True)`: the match's slots go back, and the match waiting for the
    freed bot is woken, as `release_slots` alone does."""
    bots = make_bots(store, 2)
    capped = [dict(store.bot_record(b), kind="polling", max_concurrent=1) for b in bots]
    first = store.create_match(GAME, bots, 3, {})
    second = store.create_match(GAME, bots, 4, {})
    assert store.take_slots_and_start(first["id"], capped)[0] is None
    store.r.set(lease_key("match", first["id"]), "its runner")  # it plays: its slots are taken
    assert store.take_slots_and_start(second["id"], capped)[0] is not None  # waits for a slot
    store.set_match_status(first["id"], "finished")
    store.r.delete(lease_key("match", first["id"]))
    read = read_end(store, store.get_match(first["id"]), release=True)
    assert read.woken == [second["id"]] and read.twins == {first["id"]: "finished"}
    assert store.take_slots_and_start(second["id"], capped)[0] is None  # the slot is free
    assert read_end(store, store.get_match(first["id"])).woken == []  # without: nothing released
