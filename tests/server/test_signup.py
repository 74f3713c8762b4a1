"""Who may create an account: limits per network with no lock-out of newcomers, and
invite-only sign-up (server/signup.py, core/store/invites.py).

The API's own behaviour, so Flask's test client on the session's real Redis: it lets a
request come from any address (`REMOTE_ADDR`), IPv6 ones included.
"""

from __future__ import annotations

import secrets
import threading

import pytest

from server import create_app
from server.signup import network_of
from tests.live import ADMIN_TOKEN

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def limited_app(redis_url: str, **config):
    """An app with rate limits on, counting under a key prefix of its own."""
    return create_app({"REDIS_URL": redis_url, "ADMIN_TOKEN": ADMIN_TOKEN, "RATELIMIT_ENABLED": True,
                       "RATELIMIT_KEY_PREFIX": "signup-" + secrets.token_hex(4), **config})


def sign_up(client, address: str, name: str = "newcomer", **body):
    return client.post("/api/v1/accounts", json={"name": name, **body}, environ_base={"REMOTE_ADDR": address})


def test_an_address_counts_in_its_ipv4_24_or_its_ipv6_64():
    assert network_of("203.0.113.7") == network_of("203.0.113.250") == "net:203.0.113.0/24"
    assert network_of("203.0.114.7") != network_of("203.0.113.7")
    assert network_of("2001:db8:0:1::1") == network_of("2001:db8:0:1:ffff:ffff:ffff:ffff") == "net:2001:db8:0:1::/64"
    assert network_of("2001:db8:0:2::1") != network_of("2001:db8:0:1::1")
    assert network_of("::ffff:203.0.113.9") == network_of("203.0.113.7")  # IPv4-mapped: its IPv4
    assert network_of("not an address") == "net:not an address"


@pytest.mark.parametrize(("same", "neighbour"), [
    (["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.200"], "203.0.114.1"),
    (["2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1::3", "2001:db8:0:1:ffff::9"], "2001:db8:0:2::1"),
])
def test_new_accounts_are_limited_per_network_not_per_address(redis_url, same, neighbour):
    """The issue: a limit per exact address, which any holder of a /24 or a /64 walks around."""
    client = limited_app(redis_url, ACCOUNTS_RATE_LIMIT="3 per hour").test_client()
    assert [sign_up(client, address).status_code for address in same[:3]] == [201] * 3
    refused = sign_up(client, same[3])  # another address of the same network
    assert refused.status_code == 429 and refused.headers.get("Retry-After")
    assert "this network" in refused.get_json()["error"]["message"]
    assert sign_up(client, neighbour).status_code == 201  # the next network has its own count


def test_many_networks_at_their_limit_never_lock_a_newcomer_out(redis_url):
    """The issue: ten addresses used up a cap over every address together (300 an hour), and every
    newcomer then got `429 retry in 3589 s`. Here eleven networks each make all the accounts their
    limit allows (330), and a person from a twelfth still gets one."""
    client = limited_app(redis_url).test_client()
    for network in range(11):
        made = [sign_up(client, f"198.51.{network}.{i % 250 + 1}").status_code for i in range(31)]
        assert made == [201] * 30 + [429], network
    assert sign_up(client, "192.0.2.10").status_code == 201


# -- invite only -----------------------------------------------------------------------------------


def test_invite_only_sign_up_takes_an_invite_the_admin_made_once(redis_url):
    client = create_app({"REDIS_URL": redis_url, "ADMIN_TOKEN": ADMIN_TOKEN, "RATELIMIT_ENABLED": False,
                         "SIGNUP": "invite"}).test_client()
    refused = sign_up(client, "203.0.113.1")
    assert refused.status_code == 403 and refused.get_json()["error"]["code"] == "invite_required"
    page = client.get("/signin").get_data(as_text=True)
    assert 'id="account-invite"' in page and '"invite": "cai_…"' in page  # the form and the curl line ask for it
    bogus = sign_up(client, "203.0.113.1", invite="cai_" + secrets.token_urlsafe(32))
    assert bogus.status_code == 403 and bogus.get_json()["error"]["code"] == "invite_invalid"

    made = client.post("/api/v1/invites", json={"note": "for ann", "days": 2}, headers=ADMIN)
    assert made.status_code == 201
    invite = made.get_json()
    assert invite["code"].startswith("cai_") and invite["note"] == "for ann"
    listed = client.get("/api/v1/invites", headers=ADMIN).get_json()["invites"]
    assert [i["id"] for i in listed] == [invite["id"]] and "code" not in listed[0]

    account = sign_up(client, "203.0.113.1", name="ann", invite=invite["code"])
    assert account.status_code == 201 and account.get_json()["token"].startswith("cat_")
    again = sign_up(client, "203.0.113.2", name="ann's friend", invite=invite["code"])
    assert again.status_code == 403 and again.get_json()["error"]["code"] == "invite_invalid"
    assert client.get("/api/v1/invites", headers=ADMIN).get_json()["invites"] == []


def test_only_the_admin_makes_sees_or_revokes_invites_and_a_revoked_one_admits_nobody(redis_url):
    app = create_app({"REDIS_URL": redis_url, "ADMIN_TOKEN": ADMIN_TOKEN, "RATELIMIT_ENABLED": False,
                      "SIGNUP": "invite"})
    client = app.test_client()
    _, token = app.extensions["cardarena.store"].create_account("someone")
    someone = {"Authorization": f"Bearer {token}"}
    assert client.post("/api/v1/invites", json={}).status_code == 401
    assert client.post("/api/v1/invites", json={}, headers=someone).status_code == 403
    assert client.get("/api/v1/invites", headers=someone).status_code == 403
    invite = client.post("/api/v1/invites", json={}, headers=ADMIN).get_json()
    assert client.delete(f"/api/v1/invites/{invite['id']}", headers=someone).status_code == 403
    assert client.delete(f"/api/v1/invites/{invite['id']}", headers=ADMIN).status_code == 204
    assert client.delete(f"/api/v1/invites/{invite['id']}", headers=ADMIN).status_code == 404
    late = sign_up(client, "203.0.113.1", invite=invite["code"])
    assert late.status_code == 403 and late.get_json()["error"]["code"] == "invite_invalid"
    assert client.post("/api/v1/invites", json={"days": 0}, headers=ADMIN).status_code == 422


def test_two_sign_ups_racing_on_one_invite_make_one_account(redis_url):
    from core.store.accounts import InviteInvalid

    store = create_app({"REDIS_URL": redis_url, "SIGNUP": "invite"}).extensions["cardarena.store"]
    _, code = store.create_invite()
    start, results = threading.Barrier(8), []

    def race(i: int) -> None:
        start.wait()
        try:
            results.append(store.create_account(f"racer{i}", invite=code)[0]["invite"])
        except InviteInvalid:
            results.append(None)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(results) == 8 and sum(r is not None for r in results) == 1


def test_open_sign_up_needs_no_invite_and_the_mode_comes_from_the_environment(redis_url, monkeypatch):
    client = create_app({"REDIS_URL": redis_url, "RATELIMIT_ENABLED": False}).test_client()
    assert sign_up(client, "203.0.113.1").status_code == 201
    assert "account-invite" not in client.get("/signin").get_data(as_text=True)
    monkeypatch.setenv("CARDARENA_SIGNUP", "invite")
    closed = create_app({"REDIS_URL": redis_url, "RATELIMIT_ENABLED": False}).test_client()
    assert sign_up(closed, "203.0.113.1").status_code == 403
    monkeypatch.setenv("CARDARENA_SIGNUP", "invitation")
    with pytest.raises(ValueError, match="CARDARENA_SIGNUP"):
        create_app({"REDIS_URL": redis_url})


def test_behind_a_proxy_the_networks_are_the_callers_not_the_proxys(redis_url, monkeypatch):
    """Behind a TLS proxy every request comes from the proxy's address: counted as such, ten
    newcomers from ten networks would share one network's limit. `CARDARENA_PROXIES=1` takes the
    caller from the proxy's X-Forwarded-For; without it the header is the client's word, ignored."""
    def from_behind(client, caller: str):
        return client.post("/api/v1/accounts", json={"name": "newcomer"}, headers={"X-Forwarded-For": caller},
                           environ_base={"REMOTE_ADDR": "10.0.0.2"})

    trusting = limited_app(redis_url, ACCOUNTS_RATE_LIMIT="2 per hour", PROXIES=1).test_client()
    assert [from_behind(trusting, f"198.51.{n}.7").status_code for n in range(5)] == [201] * 5
    assert [from_behind(trusting, "203.0.113.9").status_code for _ in range(3)] == [201, 201, 429]
    direct = limited_app(redis_url, ACCOUNTS_RATE_LIMIT="2 per hour").test_client()
    assert [from_behind(direct, f"198.51.{n}.7").status_code for n in range(3)] == [201, 201, 429]
    monkeypatch.setenv("CARDARENA_PROXIES", "many")
    with pytest.raises(ValueError, match="CARDARENA_PROXIES"):
        create_app({"REDIS_URL": redis_url})
