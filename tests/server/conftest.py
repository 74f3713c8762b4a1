"""Server tests play the toy game (tests/server/toygame.py) besides the real ones."""

from __future__ import annotations

import pytest

from tests.server import toygame


@pytest.fixture(autouse=True, scope="session")
def _toy_game_registered():
    toygame.register()


@pytest.fixture()
def owner(api):
    """An account token and two polling toy-high bots of that account."""
    token = api.account("owner")
    a = api.bot(token, "a", game="toy-high")
    b = api.bot(token, "b", game="toy-high")
    return token, a, b
