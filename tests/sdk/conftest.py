"""SDK tests: decisions made by the real engines, signed as the referee signs them."""

from __future__ import annotations

import json

import pytest
import requests

import games
from sdk import Bot, sign

SECRET = "s3cret-of-the-test-bot"


def real_decision(game: str = "double-carre", seed: int = 1, match_id: str = "m_test", turn: int = 0,
                  deadline_ms: int = 2000) -> dict:
    """The first decision of a real match, as the worker sends it."""
    g = games.get(game)
    state = g.new(seats=g.min_seats, seed=seed, options={})
    seat = state.to_act
    return {"type": "turn", "protocol": 1, "match_id": match_id, "game": game, "turn": turn,
            "seat": seat, "view": state.view(seat), "legal_actions": state.legal_actions(),
            "deadline_ms": deadline_ms}


def post_signed(url: str, message, secret: str = SECRET, body: bytes | None = None,
                headers: dict | None = None) -> requests.Response:
    """POST `message` (or raw `body`) signed with `secret`, as the referee does."""
    if body is None:
        body = json.dumps(message).encode()
    head = {"Content-Type": "application/json", "X-Cardarena-Signature": sign(body, secret)}
    head.update(headers or {})
    return requests.post(url, data=body, headers=head, timeout=30)


class Recorder(Bot):
    """Plays the last legal action and records every hook call, in order."""

    game = None

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def on_match_start(self, match_id, seat, view):
        self.calls.append(("start", match_id, seat))

    def act(self, view, legal_actions):
        self.calls.append(("act", view.get("seat"), len(legal_actions)))
        return legal_actions[-1]

    def on_match_over(self, match_id, result):
        self.calls.append(("over", match_id, result))


@pytest.fixture()
def recorder():
    return Recorder()
