"""A duplicate deal's rotations archived together (`Store.archive_matches`), on real Redis:
each whole in its file, Redis keeping its summary and no lease; a rotation another process is
archiving is left to it, the others archived, and the caller told (`ArchiveBusy`)."""

from __future__ import annotations

import pytest

from core.store import Store, secret_key
from core.store.jobs import lease_key
from core.store.matches import ARCHIVED, ArchiveBusy, log_key
from tests.server.driving import GAME, make_bots, played


@pytest.fixture()
def store(redis_client):
    return Store(redis_client, secret_key(redis_client))


@pytest.fixture()
def deal(store):
    """Two finished matches of the same two bots, their seats swapped."""
    bots = make_bots(store, 2)
    return [played(store, bots, seed=3), played(store, bots[::-1], seed=3)]


def test_a_deal_is_archived_in_one_call(store, deal):
    logs = {mid: store.match_log(mid) for mid in deal}
    sizes = store.archive_matches(deal)
    assert set(sizes) == set(deal) and all(sizes.values())
    for mid in deal:
        assert store.archive.has(mid)
        assert store.r.hget(f"match:{mid}", ARCHIVED) and not store.r.exists(log_key(mid))
        assert not store.r.exists(lease_key("archive", mid))  # given back by the archiving transaction
        assert store.match_log(mid) == logs[mid]  # read from the archive now
        assert store.get_match(mid)["status"] == "finished"
    assert store.archive_matches(deal) == dict.fromkeys(deal)  # once


def test_a_rotation_another_process_archives_is_left_to_it(store, deal):
    first, second = deal
    token = store.take_lease("archive", second, 60_000)  # another process is at it
    with pytest.raises(ArchiveBusy, match=second):
        store.archive_matches(deal)
    assert store.archive.has(first) and store.r.hget(f"match:{first}", ARCHIVED)
    assert not store.r.hget(f"match:{second}", ARCHIVED) and store.r.exists(log_key(second))
    assert store.r.get(lease_key("archive", second)).decode() == token  # its holder's still
    store.release_lease("archive", second, token)
    again = store.archive_matches(deal)  # the holder died without archiving it: the sweep's call
    assert again[first] is None and again[second] and store.r.hget(f"match:{second}", ARCHIVED)


def test_a_match_not_over_is_not_archived_and_its_lease_is_given_back(store):
    bots = make_bots(store, 2)
    mid = store.create_match(GAME, bots, 5, {})["id"]
    assert store.archive_matches([mid]) == {mid: None}
    assert not store.archive.has(mid) and not store.r.exists(lease_key("archive", mid))
