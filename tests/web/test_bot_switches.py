"""The bot page's switches (issue 29 item 7): its owner, signed in on the page, switches the bot
on or off the ladder and chooses whom it accepts matches from, through a form with the session's
CSRF token that takes `PATCH /api/v1/bots/{id}`'s path; anyone else sees the values only."""

from __future__ import annotations

import re

import pytest

from server.auth import SESSION_COOKIE
from tests.web.helpers import SCRIPT_NAME

GAME = "duck-soup"


@pytest.fixture()
def owner(store):
    record, token = store.create_account("ann")
    return {**record, "token": token}


@pytest.fixture()
def bot(store, owner):
    record, _ = store.create_bot(owner["id"], SCRIPT_NAME, GAME, "polling")
    return record["id"]


def sign_in(client, token: str) -> None:
    assert client.post("/sessions", json={"token": token}).status_code == 201


def csrf_on(page: str) -> str:
    return re.search(r'<meta name="csrf-token" content="([^"]+)">', page)[1]


def api_bot(client, bot_id: str) -> dict:
    response = client.get(f"/api/v1/bots/{bot_id}")
    assert response.status_code == 200
    return response.get_json()


def test_the_owner_switches_the_ladder_off_and_whom_it_accepts(client, owner, bot):
    sign_in(client, owner["token"])
    page = client.get(f"/bots/{bot}").get_data(as_text=True)
    assert 'id="switches"' in page
    assert '<label for="switch-ladder">' in page and '<label for="switch-accepts">' in page
    assert SCRIPT_NAME not in page  # the bot's name (a script) is escaped, in the form's page too
    response = client.post(f"/bots/{bot}/switches", data={"csrf": csrf_on(page), "ladder": "off",
                                                          "accepts": "owner"})
    assert response.status_code == 303
    assert response.headers["Location"].startswith(f"/bots/{bot}?saved=1")
    shown = api_bot(client, bot)
    assert shown["ladder"] is False and shown["accepts"] == "owner"
    after = client.get(response.headers["Location"]).get_data(as_text=True)
    assert 'id="switches-saved"' in after and "off the ladder" in after
    assert '<option value="off" selected>' in after and '<option value="owner" selected>' in after
    response = client.post(f"/bots/{bot}/switches", data={"csrf": csrf_on(after), "ladder": "on"})
    assert response.status_code == 303
    shown = api_bot(client, bot)
    assert shown["ladder"] is True and shown["accepts"] == "owner"  # only what the form sent changes


def test_a_value_the_api_refuses_the_page_refuses(client, owner, bot):
    sign_in(client, owner["token"])
    csrf = csrf_on(client.get(f"/bots/{bot}").get_data(as_text=True))
    for form in ({"ladder": "maybe"}, {"accepts": "friends"}, {}):
        response = client.post(f"/bots/{bot}/switches", data={"csrf": csrf, **form})
        assert response.status_code == 422, form
    shown = api_bot(client, bot)
    assert shown["ladder"] is True and shown["accepts"] == "everyone"


def test_another_account_can_neither_see_the_form_nor_switch(client, store, bot):
    _, token = store.create_account("bob")
    sign_in(client, token)
    page = client.get(f"/bots/{bot}").get_data(as_text=True)
    assert 'id="switches"' not in page and 'id="ladder"' in page and 'id="accepts"' in page
    response = client.post(f"/bots/{bot}/switches", data={"csrf": csrf_on(page), "ladder": "off",
                                                          "accepts": "owner"})
    assert response.status_code in (403, 404)
    shown = api_bot(client, bot)
    assert shown["ladder"] is True and shown["accepts"] == "everyone"


def test_a_stranger_sees_the_values_only_and_cannot_post(client, bot):
    page = client.get(f"/bots/{bot}").get_data(as_text=True)
    assert 'id="switches"' not in page and "/switches" not in page
    assert 'id="ladder"' in page and 'id="accepts"' in page
    assert client.post(f"/bots/{bot}/switches", data={"ladder": "off"}).status_code == 401
    assert api_bot(client, bot)["ladder"] is True


def test_a_post_without_the_csrf_token_or_from_another_site_is_refused(client, owner, bot):
    sign_in(client, owner["token"])
    csrf = csrf_on(client.get(f"/bots/{bot}").get_data(as_text=True))
    assert client.post(f"/bots/{bot}/switches", data={"ladder": "off"}).status_code == 403
    assert client.post(f"/bots/{bot}/switches", data={"ladder": "off", "csrf": "wrong"}).status_code == 403
    foreign = client.post(f"/bots/{bot}/switches", data={"ladder": "off", "csrf": csrf},
                          headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    assert api_bot(client, bot)["ladder"] is True
    client.delete_cookie(SESSION_COOKIE)
    assert client.post(f"/bots/{bot}/switches", data={"ladder": "off", "csrf": csrf}).status_code == 401
    assert api_bot(client, bot)["ladder"] is True


def test_a_retired_bot_has_no_switch(client, store, owner, bot):
    store.retire_bot(bot)
    sign_in(client, owner["token"])
    before = api_bot(client, bot)
    page = client.get(f"/bots/{bot}").get_data(as_text=True)
    assert 'id="switches"' not in page
    response = client.post(f"/bots/{bot}/switches", data={"csrf": csrf_on(page), "ladder": "off",
                                                          "accepts": "owner"})
    assert response.status_code == 409
    assert api_bot(client, bot) == before


def test_an_unknown_bot_is_404(client, owner):
    sign_in(client, owner["token"])
    csrf = csrf_on(client.get("/").get_data(as_text=True))
    assert client.post("/bots/nobody/switches", data={"csrf": csrf, "ladder": "off"}).status_code == 404
