"""Pages survive whatever is stored, and carry the headers that keep a browser safe.

A bot named `"evil\\ud800"` (a lone surrogate, accepted before names were
checked) made `/`, its page, its matches and its opponents' pages answer 500
once it had played a rated match — even after it was retired. Names are
refused at registration now (tests/server/test_api_hostile.py); these tests
store such a name directly, as an old database holds it.
"""

from __future__ import annotations

import pytest

from tests.web.helpers import finished_match, make_bot

EVIL = "evil\ud800"


@pytest.fixture()
def evil_match(store):
    """A finished rated match between a bot with a lone surrogate in its name and a plain one."""
    evil, plain = make_bot(store, EVIL, "duck-soup"), make_bot(store, "plain", "duck-soup")
    mid = finished_match(store, "duck-soup", [evil, plain], seed=5)
    for bot in (evil, plain):
        store.save_rating("duck-soup", bot, 26.0, 5.0, match_id=mid)
    return evil, plain, mid


def test_a_stored_name_with_a_lone_surrogate_breaks_no_page(client, store, evil_match):
    evil, plain, mid = evil_match
    for retired in (False, True):
        if retired:
            store.retire_bot(evil)
        for path in ("/", f"/bots/{evil}", f"/bots/{plain}", f"/matches/{mid}", f"/matches/{mid}?step=3",
                     "/matches", f"/matches?bot={evil}"):
            response = client.get(path)
            assert response.status_code == 200, (path, retired, response.status_code)
            assert "evil?" in response.get_data(as_text=True) or path == "/" and retired, path
        for path in (f"/api/v1/bots/{evil}", f"/api/v1/bots/{plain}/matches", f"/api/v1/matches/{mid}",
                     "/api/v1/games/duck-soup/rankings", "/api/v1/bots", "/api/v1/matches",
                     f"/api/v1/matches/{mid}/steps/3", f"/api/v1/matches/{mid}/export"):
            assert client.get(path).status_code == 200, path


def test_pages_carry_a_csp_and_refuse_framing_and_sniffing(client, store, evil_match):
    evil, _, mid = evil_match
    for path in ("/", f"/bots/{evil}", f"/matches/{mid}", "/bots/b_nosuchbot", "/docs"):
        headers = client.get(path).headers
        policy = headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy, path
        assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0], path
        assert headers["X-Frame-Options"] == "DENY" and headers["X-Content-Type-Options"] == "nosniff", path
    api = client.get("/api/v1/games")
    assert api.headers["X-Content-Type-Options"] == "nosniff"
    assert "Content-Security-Policy" not in api.headers  # JSON is not a page


def test_retry_after_only_comes_with_429_and_503(client):
    """Flask-Limiter wrote `Retry-After` on every response it counted, a 200 included."""
    from server import create_app

    app = create_app({"REDIS_URL": client.application.config["REDIS_URL"], "RATELIMIT_ENABLED": True,
                      "TOKEN_RATE_LIMIT": "3 per minute", "RATELIMIT_KEY_PREFIX": "retry-after-test"})
    limited = app.test_client()
    answers = [limited.get("/api/v1/games") for _ in range(4)]
    assert [r.status_code for r in answers] == [200, 200, 200, 429]
    assert all("Retry-After" not in r.headers for r in answers[:3])
    assert "X-RateLimit-Limit" in answers[0].headers  # the limit itself is still told
    assert int(answers[3].headers["Retry-After"]) > 0


@pytest.mark.slow
def test_no_page_breaks_its_own_content_security_policy_in_a_browser(live_server, store, evil_match, page):
    """Every page's own scripts and styles pass its CSP (Chromium reports each violation)."""
    evil, plain, mid = evil_match
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    for path in ("/", f"/bots/{evil}", "/matches", "/tournaments", "/no/such/page", f"/matches/{mid}"):
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
    page.keyboard.press("ArrowRight")  # the replay viewer's script runs and fetches a step
    page.wait_for_selector('#board .board[data-step="1"]')
    page.goto(live_server.url + "/docs")
    page.wait_for_selector(".swagger-ui .info", timeout=20_000)  # Swagger UI booted: its inline script ran
    assert violations == []
