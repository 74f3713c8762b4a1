"""Consent and the standard clock: no account enters another's bot on a clock it chose,
nor a bot that accepts only its owner (docs/api.md §6, "Consent")."""

from __future__ import annotations

import pytest

SHORT = {"move_timeout_ms": 100, "time_bank_ms": 0, "max_faults": 1}
STANDARD = {"move_timeout_ms": 2000, "time_bank_ms": 10000, "max_faults": 3}


def code(response) -> str:
    return response.json()["error"]["code"]


@pytest.fixture()
def rivals(api):
    """An attacker's token and bot, and a victim's bot (both toy-high, polling)."""
    attacker = api.account("attacker")
    victim = api.account("victim")
    return attacker, api.bot(attacker, "mine", game="toy-high"), api.bot(victim, "theirs", game="toy-high"), victim


def entries(mine: str, theirs: str) -> dict[str, dict]:
    """The three ways to enter bots: a challenge, a tournament, a comparison."""
    return {"/matches": {"game": "toy-high", "bots": [mine, theirs]},
            "/tournaments": {"game": "toy-high", "bots": [mine, theirs]},
            "/comparisons": {"game": "toy-high", "candidate": mine, "baseline": theirs}}


def test_games_list_each_games_standard_clock_and_ladder_seats(api):
    listed = {g["name"]: g["ladder"] for g in api.ok(api.get("/games"), 200)["games"]}
    for name, ladder in listed.items():
        assert {k: ladder[k] for k in STANDARD} == STANDARD, name
    assert listed["double"]["seats"] == 4 and listed["soupe-gertrude"]["seats"] == 4
    assert listed["duck-soup"]["seats"] == 2 and listed["toy-high"]["seats"] == 2


def test_another_accounts_bot_is_entered_only_on_the_standard_clock(api, rivals):
    attacker, mine, theirs, _ = rivals
    for path, body in entries(mine["id"], theirs["id"]).items():
        for field, value in SHORT.items():
            r = api.post(path, {**body, field: value}, token=attacker)
            assert r.status_code == 422 and code(r) == "clock_not_allowed", (path, field, r.text)
            assert theirs["id"] in r.json()["error"]["message"]
        r = api.post(path, {**body, **SHORT}, token=attacker)
        assert r.status_code == 422 and code(r) == "clock_not_allowed", path
        assert api.post(path, {**body, **STANDARD}, token=attacker).status_code == 202, path
        assert api.post(path, body, token=attacker).status_code == 202, path  # omitted: the standard


def test_an_accounts_own_bots_and_the_admin_choose_any_clock(api, rivals):
    attacker, mine, theirs, _ = rivals
    own = api.bot(attacker, "mine-too", game="toy-high")
    for path, body in entries(mine["id"], own["id"]).items():
        assert api.post(path, {**body, **SHORT}, token=attacker).status_code == 202, path
    for path, body in entries(mine["id"], theirs["id"]).items():
        assert api.post(path, {**body, **SHORT}, token=api.admin_token).status_code == 202, path


def test_a_bot_accepting_only_its_owner_is_refused_to_others(api, rivals):
    attacker, mine, theirs, victim = rivals
    assert api.ok(api.get(f"/bots/{theirs['id']}"), 200)["accepts"] == "everyone"
    patched = api.ok(api.request("PATCH", f"/bots/{theirs['id']}", json={"accepts": "owner"}, token=victim), 200)
    assert patched["accepts"] == "owner" and api.ok(api.get(f"/bots/{theirs['id']}"), 200)["accepts"] == "owner"
    for path, body in entries(mine["id"], theirs["id"]).items():
        r = api.post(path, body, token=attacker)
        assert r.status_code == 403 and code(r) == "not_accepting", (path, r.text)
        assert api.post(path, body, token=api.admin_token).status_code == 202, path
    own = api.bot(victim, "own", game="toy-high")
    for path, body in entries(own["id"], theirs["id"]).items():
        assert api.post(path, {**body, **SHORT}, token=victim).status_code == 202, path


def test_accepts_is_set_at_registration_and_only_to_its_two_values(api):
    token = api.account()
    bot = api.bot(token, "shy", game="toy-high", accepts="owner")
    assert bot["accepts"] == "owner"
    r = api.post("/bots", {"name": "odd", "game": "toy-high", "kind": "polling", "accepts": "friends"}, token=token)
    assert r.status_code == 422
    r = api.request("PATCH", f"/bots/{bot['id']}", json={"accepts": "nobody"}, token=token)
    assert r.status_code == 422
    intruder = api.account("intruder")
    assert api.request("PATCH", f"/bots/{bot['id']}", json={"accepts": "everyone"}, token=intruder).status_code == 403
