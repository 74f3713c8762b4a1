"""The worker tests' store: the platform's own, on the session's real Redis."""

from __future__ import annotations

import pytest

from core.store import Store, secret_key


@pytest.fixture()
def store(redis_client):
    return Store(redis_client, secret_key(redis_client))
