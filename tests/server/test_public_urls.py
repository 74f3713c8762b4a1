"""`CARDARENA_PUBLIC_URLS_ONLY=1`: an IPv6 address that stands for an IPv4 one is judged as
that IPv4 (core/urls.py), at registration here and at each call (tests/worker/test_webhook_driver.py)."""

from __future__ import annotations

import pytest

from core.urls import address_problem
from server import create_app

#: the issue's forms, each reaching a loopback, link-local (cloud metadata) or private IPv4
HIDDEN_PRIVATE = ["64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "::127.0.0.1", "::ffff:0:7f00:1",
                  "fec0::1", "::ffff:127.0.0.1", "::ffff:0:a00:1", "2002:c0a8:101::1", "64:ff9b:1::a00:1"]


@pytest.mark.parametrize("address", HIDDEN_PRIVATE)
def test_an_ipv6_form_of_a_private_ipv4_is_not_public(address):
    assert address_problem(address) is not None


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "::ffff:8.8.8.8", "2001:4860:4860::8888",
                                     "8.8.8.8"])
def test_an_ipv6_form_of_a_public_ipv4_is_public_as_that_ipv4_is(address):
    assert address_problem(address) is None


@pytest.mark.parametrize("address", HIDDEN_PRIVATE)
def test_registration_refuses_a_webhook_at_an_ipv6_form_of_a_private_ipv4(redis_url, address):
    """The issue: `[64:ff9b::7f00:1]`, `[2002:7f00:1::1]`, `[::127.0.0.1]`… were accepted."""
    app = create_app({"REDIS_URL": redis_url, "PUBLIC_URLS_ONLY": True, "RATELIMIT_ENABLED": False})
    client = app.test_client()
    _, token = app.extensions["cardarena.store"].create_account("hooks")
    refused = client.post("/api/v1/bots", headers={"Authorization": f"Bearer {token}"},
                          json={"name": "hook", "game": "duck-soup", "kind": "webhook", "url": f"http://[{address}]:8000/"})
    assert refused.status_code == 422 and refused.get_json()["error"]["code"] == "invalid_url", refused.get_json()
    assert "not a public address" in refused.get_json()["error"]["message"]
