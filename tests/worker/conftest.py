"""The worker tests' store: the platform's own, on the session's real Redis."""

from __future__ import annotations

import itertools

import pytest

from core.store import Store, secret_key


@pytest.fixture()
def store(redis_client):
    return Store(redis_client, secret_key(redis_client))


@pytest.fixture()
def counted_ids(monkeypatch):
    """Bots, pairings and matches get ids in the order they are made (b_000000000000, …) rather
    than random ones: the matchmaker orders and breaks ties by id, so with random ids the same
    seeded ladder pairs other bots each run. A ladder test plays the same ladder every time."""
    from core.store import bots, ladder, matches

    counter = itertools.count()

    def new_id(prefix: str) -> str:
        return f"{prefix}_{next(counter):012x}"

    for module in (bots, ladder, matches):
        monkeypatch.setattr(module, "new_id", new_id)
