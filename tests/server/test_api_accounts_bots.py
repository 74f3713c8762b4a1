"""Accounts, bots, games and rankings over real HTTP, and the error format."""

from __future__ import annotations

import pytest

from tests.live import ApiClient, reset_db, served_api


def error_code(response) -> str:
    body = response.json()
    assert set(body) == {"error"} and isinstance(body["error"]["message"], str)
    return body["error"]["code"]


def test_create_account_returns_token_once(api):
    r = api.post("/accounts", {"name": "alice"})
    assert r.status_code == 201
    body = r.json()
    assert set(body) == {"id", "name", "token"} and body["name"] == "alice"
    assert len(body["token"]) >= 32
    assert api.store.account_for_token(body["token"])["id"] == body["id"]


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "x" * 65}, {"name": 5}, {"name": "a", "x": 1}])
def test_bad_account_request_is_422_in_the_error_format(api, body):
    r = api.post("/accounts", body)
    assert r.status_code == 422 and error_code(r) == "invalid"


def test_malformed_json_is_400_and_oversized_body_413(api):
    r = api.post("/accounts", data="{nope", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and error_code(r) == "bad_request"
    r = api.post("/accounts", data='{"name": "' + "x" * 70000 + '"}',
                 headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and error_code(r) == "too_large"


def test_unknown_path_404_and_wrong_method_405(api):
    r = api.get("/nothing-here")
    assert r.status_code == 404 and error_code(r) == "not_found"
    r = api.request("PUT", "/games")
    assert r.status_code == 405 and error_code(r) == "method_not_allowed"


def test_games_lists_seats_and_option_defaults(api):
    body = api.ok(api.get("/games"), 200)
    toy = next(g for g in body["games"] if g["name"] == "toy-high")
    assert toy == {"name": "toy-high", "title": "Toy high card", "min_seats": 2, "max_seats": 3,
                   "options": {"rounds": 2, "deck": None}, "rules_url": "/games/toy-high/rules",
                   "ladder": {"seats": 2, "move_timeout_ms": 2000, "time_bank_ms": 10000, "max_faults": 3}}


def test_polling_and_webhook_bots_register_with_a_secret(api):
    token = api.account()
    bot = api.bot(token, "poller", game="toy-high")
    assert {"id", "name", "game", "kind", "secret"} <= set(bot) and bot["kind"] == "polling"
    hook = api.bot(token, "hook", game="toy-high", kind="webhook", url="http://127.0.0.1:9/hook")
    assert hook["url"] == "http://127.0.0.1:9/hook"
    assert api.store.bot_for_secret(bot["secret"])["id"] == bot["id"]
    shown = api.ok(api.get(f"/bots/{bot['id']}"), 200)
    assert "secret" not in shown
    assert shown["rating"] == {"mu": 25.0, "sigma": 25.0 / 3, "ordinal": pytest.approx(0.0)}
    assert (shown["matches"], shown["wins"], shown["faults"]) == (0, 0, 0)


@pytest.mark.parametrize("fields, code", [
    ({"game": "no-such-game"}, "unknown_game"),
    ({"kind": "webhook"}, "invalid"),
    ({"kind": "webhook", "url": "ftp://example.com/x"}, "invalid_url"),
    ({"kind": "polling", "url": "http://example.com/"}, "invalid"),
    ({"kind": "telepathy"}, "invalid"),
    ({"name": ""}, "invalid"),
])
def test_bad_bot_registration_is_422(api, fields, code):
    token = api.account()
    body = {"name": "b", "game": "toy-high", "kind": "polling", **fields}
    r = api.post("/bots", body, token=token)
    assert r.status_code == 422 and error_code(r) == code


def test_bot_registration_needs_a_valid_token(api):
    body = {"name": "b", "game": "toy-high", "kind": "polling"}
    r = api.post("/bots", body)
    assert r.status_code == 401 and error_code(r) == "unauthorized"
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert api.post("/bots", body, token="cat_wrong").status_code == 401


def test_python_bots_need_the_admin_token(api):
    token = api.account()
    body = {"name": "rnd", "game": "toy-high", "kind": "python", "entrypoint": "example_bots.random:RandomBot"}
    r = api.post("/bots", body, token=token)
    assert r.status_code == 403 and error_code(r) == "forbidden"
    bot = api.ok(api.post("/bots", body, token=api.admin_token), 201)
    assert bot["entrypoint"] == "example_bots.random:RandomBot" and bot["owner"] == "admin"
    for entrypoint in ["no_such_module:Bot", "example_bots.random:Nope", "json:JSONDecoder", "nocolon"]:
        r = api.post("/bots", {**body, "entrypoint": entrypoint}, token=api.admin_token)
        assert r.status_code == 422, entrypoint


def test_list_and_filter_bots(api):
    token = api.account()
    a = api.bot(token, "a", game="toy-high")
    games = api.ok(api.get("/games"), 200)["games"]
    other = next(g["name"] for g in games if g["name"] != "toy-high")
    b = api.bot(token, "b", game=other)
    assert [x["id"] for x in api.ok(api.get("/bots"), 200)["bots"]] == [a["id"], b["id"]]
    assert [x["id"] for x in api.ok(api.get("/bots", params={"game": "toy-high"}), 200)["bots"]] == [a["id"]]
    assert all("secret" not in x for x in api.ok(api.get("/bots"), 200)["bots"])
    assert api.get("/bots/b_nothere").status_code == 404


def test_retire_bot_owner_or_admin_only(api):
    token = api.account("owner")
    intruder = api.account("intruder")
    a = api.bot(token, "a", game="toy-high")
    b = api.bot(token, "b", game="toy-high")
    assert api.delete(f"/bots/{a['id']}").status_code == 401
    r = api.delete(f"/bots/{a['id']}", token=intruder)
    assert r.status_code == 403 and error_code(r) == "forbidden"
    assert api.store.get_bot(a["id"])["retired"] is False
    assert api.ok(api.delete(f"/bots/{a['id']}", token=token), 200)["retired"] is True
    assert api.ok(api.delete(f"/bots/{b['id']}", token=api.admin_token), 200)["retired"] is True
    assert api.delete("/bots/b_nothere", token=token).status_code == 404
    # a retired bot's secret no longer authenticates it
    assert api.get("/bots/me/turns", token=a["secret"]).status_code == 401


def test_rankings_list_rated_bots_best_first(api):
    token = api.account()
    a = api.bot(token, "a", game="toy-high")
    b = api.bot(token, "b", game="toy-high")
    api.store.save_rating("toy-high", a["id"], 20.0, 2.0)
    api.store.save_rating("toy-high", b["id"], 30.0, 2.0)
    mid = api.store.create_match("toy-high", [b["id"], a["id"]], 1, {}, rated=True)["id"]
    assert api.store.conclude_match(mid, "finished", {"scores": [1, 0]}, records=[
        {"bot": b["id"], "won": True, "faults": 0}, {"bot": a["id"], "won": False, "faults": 0}])
    body = api.ok(api.get("/games/toy-high/rankings"), 200)
    assert body["game"] == "toy-high"
    first, second = body["rankings"]
    assert (first["rank"], first["bot"], first["matches"], first["wins"]) == (1, b["id"], 1, 1)
    assert first["rating"] == {"mu": 30.0, "sigma": 2.0, "ordinal": 24.0}
    assert (second["rank"], second["bot"]) == (2, a["id"])
    r = api.get("/games/no-such-game/rankings")
    assert r.status_code == 404 and error_code(r) == "not_found"


def test_private_webhook_urls_refused_when_public_only(redis_url):
    from server import create_app

    reset_db(redis_url)
    client = create_app({"REDIS_URL": redis_url, "PUBLIC_URLS_ONLY": True, "RATELIMIT_ENABLED": False}).test_client()
    token = client.post("/api/v1/accounts", json={"name": "alice"}).get_json()["token"]
    for url in ["http://127.0.0.1:8000/", "http://localhost/", "http://10.1.2.3/", "http://[::1]/",
                "http://169.254.169.254/latest"]:
        r = client.post("/api/v1/bots", json={"name": "h", "game": "toy-high", "kind": "webhook", "url": url},
                        headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 422 and r.get_json()["error"]["code"] == "invalid_url", url


def test_rate_limits_answer_429_with_retry_after(redis_url):
    reset_db(redis_url)
    settings = {"CARDARENA_ACCOUNTS_RATE_LIMIT": "2 per minute", "CARDARENA_TOKEN_RATE_LIMIT": "5 per minute"}
    try:
        with served_api(redis_url, settings, name="limits") as server:
            api = ApiClient(server)
            token = api.account("one")
            api.account("two")
            r = api.post("/accounts", {"name": "three"})
            assert r.status_code == 429 and error_code(r) == "rate_limited"
            assert 0 < int(r.headers["Retry-After"]) <= 60
            statuses = [api.get("/bots", token=token).status_code for _ in range(6)]
            assert statuses[-1] == 429 and statuses.count(200) <= 5
            # another credential has its own budget
            other = api.store.create_account("x")[1]
            assert api.get("/bots", token=other).status_code == 200
    finally:
        reset_db(redis_url)
