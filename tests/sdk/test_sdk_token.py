"""Reusable credentials: `Client(url)` reads CARDARENA_TOKEN, and the accounts limit says what to do."""

from __future__ import annotations

import re

import pytest

from sdk import CardarenaError, Client
from tests.live import reset_db, served_api

GAME = "double-carre"


def test_a_client_given_no_token_is_the_account_of_CARDARENA_TOKEN(api, monkeypatch):
    token = api.account("kept")
    monkeypatch.setenv("CARDARENA_TOKEN", token)
    with Client(api.live.url) as client:
        assert client.token == token
        bot = client.register_bot("reused", GAME, kind="polling")  # an account's call: it is authenticated
        assert client.retire_bot(bot).retired is True


def test_without_CARDARENA_TOKEN_a_client_has_no_credential(api):
    with Client(api.live.url) as client:
        assert client.token is None
        with pytest.raises(CardarenaError) as refused:
            client.register_bot("anonymous", GAME, kind="polling")
        assert refused.value.status == 401


def test_an_explicit_token_wins_over_CARDARENA_TOKEN(api, monkeypatch):
    monkeypatch.setenv("CARDARENA_TOKEN", "cat_not-this-one")
    token = api.account("explicit")
    with Client(api.live.url, token=token) as client:
        assert client.token == token
        client.register_bot("mine", GAME, kind="polling")


def test_an_empty_CARDARENA_TOKEN_counts_as_none_and_create_account_keeps_the_new_token(api, monkeypatch):
    monkeypatch.setenv("CARDARENA_TOKEN", "")
    with Client(api.live.url) as client:
        assert client.token is None
        account = client.create_account("fresh")
        assert client.token == account.token


def test_the_accounts_limit_says_when_to_retry_and_that_a_token_can_be_reused(redis_url):
    reset_db(redis_url)
    try:
        with served_api(redis_url, {"CARDARENA_ACCOUNTS_RATE_LIMIT": "1 per minute"}, name="accounts") as server:
            with Client(server.url) as client:
                client.create_account("first")
                with pytest.raises(CardarenaError) as limited:
                    Client(server.url).create_account("second")
        error = limited.value
        assert error.status == 429 and error.code == "rate_limited"
        assert error.retry_after is not None and 0 < error.retry_after <= 60
        wait = re.search(r"retry in (\d+) s", error.message)
        assert wait, error.message
        assert abs(int(wait.group(1)) - error.retry_after) <= 1  # the message and Retry-After agree
        assert "CARDARENA_TOKEN" in error.message and "reuse" in error.message
    finally:
        reset_db(redis_url)


def test_create_account_takes_an_invite_when_sign_up_is_by_invite_only(redis_url):
    settings = {"CARDARENA_RATE_LIMITS": "off", "CARDARENA_SIGNUP": "invite"}
    with served_api(redis_url, settings, name="invite") as server:
        _, code = server.store.create_invite("for ann")
        with pytest.raises(CardarenaError) as refused:
            Client(server.url).create_account("ann")
        assert refused.value.status == 403 and refused.value.code == "invite_required"
        with Client(server.url) as client:
            account = client.create_account("ann", invite=code)
            assert client.token == account.token and account.name == "ann"
