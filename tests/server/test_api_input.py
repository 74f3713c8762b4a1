"""Hostile input is refused before any work (issue 13): JSON that is too deep or holds a
giant number, names that are not printable, webhook URLs the referee cannot call.

Every request goes over real HTTP to the live API; every refusal is a 4xx in
the error format, and nothing is logged as a server error.
"""

from __future__ import annotations

import threading

import pytest

#: ~20,000 levels of nesting (RecursionError in json.loads) and a 5,000-digit integer
#: (ValueError: Python refuses to convert it): both were 500s with a traceback
DEEP = b'{"name": ' + b"[" * 20_000 + b"]" * 20_000 + b"}"
BIG_NUMBER = b'{"name": "x", "game": "toy-high", "seed": ' + b"9" * 5000 + b"}"
BODIES = {"deep": DEEP, "big-number": BIG_NUMBER}
POSTS = ["/accounts", "/bots", "/matches", "/tournaments", "/matches/m_some/turns/0"]


def error_code(response) -> str:
    return response.json()["error"]["code"]


@pytest.fixture()
def server_errors(live_server):
    """The errors the served API logs while the test runs (a traceback would be one)."""
    offset = live_server.log_size()
    return lambda: [line for line in live_server.log_since(offset).splitlines()
                    if "ERROR" in line or "Traceback" in line]


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
@pytest.mark.parametrize("who", ["nobody", "account", "bot", "made-up"])
def test_deep_or_giant_number_json_is_400_on_every_endpoint_before_any_work(api, server_errors, body, who):
    token = None
    if who == "account":
        token = api.account("sender")
    elif who == "bot":
        token = api.bot(api.account("owner"), "sender", game="toy-high")["secret"]
    elif who == "made-up":
        token = "cat_made-up-token"
    for path in POSTS:
        r = api.post(path, data=body, token=token, headers={"Content-Type": "application/json"})
        assert r.status_code == 400, (path, r.status_code, r.text[:200])
        assert error_code(r) == "invalid_json", path
    assert server_errors() == []
    assert api.store.r.zcard("matches") == 0 and api.store.r.zcard("tournaments") == 0


@pytest.mark.parametrize("text", ["NaN", "Infinity", "1e999"])
def test_numbers_json_does_not_have_are_refused(api, text):
    token = api.account("sender")
    r = api.post("/matches", data=f'{{"game": "toy-high", "bots": [], "options": {{"x": {text}}}}}',
                 token=token, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and error_code(r) == "invalid_json"


# -- names -----------------------------------------------------------------------------------

BAD_NAMES = {
    "lone-surrogate": "evil\ud800",   # made /, its page and its opponents' pages 500
    "control": "bell\x07",
    "tab": "a\tb",
    "newline": "two\nlines",
    "line-separator": "a\u2028b",
    "zero-width": "zero\u200bwidth",
    "blank": "   ",
    "empty": "",
    "too-long": "x" * 65,
}


@pytest.mark.parametrize("name", BAD_NAMES.values(), ids=BAD_NAMES.keys())
def test_a_name_that_is_not_1_to_64_printable_characters_is_422(api, name):
    r = api.post("/accounts", {"name": name})
    assert r.status_code == 422 and error_code(r) == "invalid", r.text
    token = api.account("owner")
    r = api.post("/bots", {"name": name, "game": "toy-high", "kind": "polling"}, token=token)
    assert r.status_code == 422 and error_code(r) == "invalid", r.text
    assert api.ok(api.get("/bots"), 200)["bots"] == []


def test_names_are_trimmed_and_may_be_any_printable_unicode(api):
    token = api.account("  Zoë 🂡  ")
    bot = api.bot(token, "  Ünïcode ♠ 牌  ", game="toy-high")
    assert bot["name"] == "Ünïcode ♠ 牌"
    assert api.ok(api.post("/accounts", {"name": "  Zoë 🂡  "}), 201)["name"] == "Zoë 🂡"
    assert api.ok(api.post("/bots", {"name": "y" * 64, "game": "toy-high", "kind": "polling"},
                           token=token), 201)["name"] == "y" * 64


def test_bot_names_are_unique_among_a_games_active_bots_case_insensitively(api):
    token = api.account("owner")
    first = api.bot(token, "Alpha", game="toy-high")
    for clash in ("alpha", "ALPHA", " Alpha ", "ＡＬＰＨＡ"):  # fullwidth letters are the same name
        r = api.post("/bots", {"name": clash, "game": "toy-high", "kind": "polling"}, token=token)
        assert r.status_code == 409 and error_code(r) == "name_taken", clash
        assert first["id"] in r.json()["error"]["message"]
    api.bot(token, "alpha", game="double")  # another game: another namespace
    api.ok(api.delete(f"/bots/{first['id']}", token=token), 200)
    again = api.bot(token, "ALPHA", game="toy-high")  # a retired bot's name is free again
    assert again["name"] == "ALPHA"


def test_two_registrations_racing_for_one_name_one_wins(api):
    token = api.account("owner")
    statuses: list[int] = []
    start = threading.Barrier(8)

    def register() -> None:
        start.wait()
        statuses.append(api.post("/bots", {"name": "Racer", "game": "toy-high", "kind": "polling"},
                                 token=token).status_code)

    threads = [threading.Thread(target=register) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(statuses) == [201] + [409] * 7
    assert [b["name"] for b in api.ok(api.get("/bots"), 200)["bots"]] == ["Racer"]


def test_names_stored_before_the_rule_still_hold_their_name(api):
    """A database from before unique names: its active bots keep theirs (indexed on first use)."""
    token = api.account("owner")
    account = api.store.account_for_token(token)
    old = api.bot(token, "Veteran", game="toy-high")
    api.store.r.delete("bots:names:toy-high", "bots:names:toy-high:indexed")  # as an old database
    r = api.post("/bots", {"name": "veteran", "game": "toy-high", "kind": "polling"}, token=token)
    assert r.status_code == 409 and old["id"] in r.json()["error"]["message"]
    assert account is not None


# -- webhook URLs ----------------------------------------------------------------------------

BAD_URLS = {
    "label-over-63": f"http://{'a' * 64}.example/",   # urllib3's LocationParseError in the worker
    "empty-label": "http://a..b/",
    "host-over-253": "http://" + "a." * 127 + "com/",
    "port-0": "http://example.com:0/",
    "port-too-big": "http://example.com:99999/",
    "credentials": "http://user:pass@example.com/",
    "scheme": "ftp://example.com/",
    "space": "http://exa mple.com/",
    "no-host": "http:///path",
    "control": "http://example.com/\x00",
}


@pytest.mark.parametrize("url", BAD_URLS.values(), ids=BAD_URLS.keys())
def test_a_webhook_url_the_referee_cannot_call_is_refused_at_registration(api, url):
    token = api.account("owner")
    r = api.post("/bots", {"name": "hook", "game": "toy-high", "kind": "webhook", "url": url}, token=token)
    assert r.status_code == 422 and error_code(r) == "invalid_url", (url, r.text)


def test_an_international_domain_name_is_a_valid_webhook_url(api):
    token = api.account("owner")
    bot = api.bot(token, "idn", game="toy-high", kind="webhook", url="https://bücher.example:8443/hook?x=1")
    assert bot["url"] == "https://bücher.example:8443/hook?x=1"
