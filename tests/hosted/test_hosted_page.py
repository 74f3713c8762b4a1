"""The bot page's upload form: a hosted bot's owner, signed in, uploads its next version (a file,
with the session's CSRF token) and the page shows the probe's outcome; nobody else sees the form."""

from __future__ import annotations

import base64
import re

import requests

GAME = "double-carre"
GOOD = b"from sdk import Bot\n\nclass MyBot(Bot):\n    def act(self, view, legal_actions):\n        return legal_actions[0]\n"


def signed_in(api, token: str) -> requests.Session:
    session = requests.Session()
    assert session.post(f"{api.live.url}/sessions", json={"token": token}, timeout=10).status_code == 201
    return session


def csrf_on(page: str) -> str:
    return re.search(r'<meta name="csrf-token" content="([^"]+)">', page)[1]


def test_the_owner_uploads_a_version_on_the_bot_page_and_sees_its_probe(api):
    token, other = api.account("author"), api.account("other")
    bot = api.ok(api.post("/bots", {"name": "paged", "game": GAME, "kind": "hosted", "entrypoint": "mybot:MyBot",
                                    "code": base64.b64encode(GOOD).decode()}, token=token), 201)
    page_url = f"{api.live.url}/bots/{bot['id']}"
    owner = signed_in(api, token)
    page = owner.get(page_url, timeout=10).text
    assert 'id="upload"' in page
    broken = GOOD.replace(b"return legal_actions[0]", b"raise RuntimeError('page oops')")
    sent = owner.post(f"{page_url}/code", data={"csrf": csrf_on(page), "entrypoint": "mybot:MyBot"},
                      files={"code": ("mybot.py", broken)}, timeout=30, allow_redirects=False)
    assert sent.status_code == 303
    after = owner.get(sent.headers["Location"] if sent.headers["Location"].startswith("http")
                      else f"{api.live.url}{sent.headers['Location']}", timeout=10).text
    assert 'id="upload-saved"' in after and "version 2: rejected" in after
    assert "page oops" in re.search(r'<pre id="probe-error">(.*?)</pre>', after, re.S)[1]

    stranger = signed_in(api, other)
    seen = stranger.get(page_url, timeout=10).text
    assert 'id="upload"' not in seen and "page oops" not in seen
    refused = stranger.post(f"{page_url}/code", data={"csrf": csrf_on(seen)}, files={"code": ("mybot.py", GOOD)},
                            timeout=30, allow_redirects=False)
    assert refused.status_code == 403
    forged = owner.post(f"{page_url}/code", data={"csrf": "wrong"}, files={"code": ("mybot.py", GOOD)},
                        timeout=30, allow_redirects=False)
    assert forged.status_code == 403
    assert api.ok(api.get(f"/bots/{bot['id']}"), 200)["version"] == 2
