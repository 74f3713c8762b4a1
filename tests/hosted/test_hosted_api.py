"""Hosted bots through the API (docs/api.md "Bots"): registration with code, its checks and its
probe decision, new versions, the code's download, the sandbox's absence."""

from __future__ import annotations

import base64
import io
import zipfile

from core import hosted_code, sandbox

GAME = "double-carre"
GOOD = b"""
from sdk import Bot

class MyBot(Bot):
    def act(self, view, legal_actions):
        return legal_actions[0]
"""


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def zipped(files: dict[str, bytes], symlink: str | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (0o120777) << 16
            archive.writestr(info, "/etc/passwd")
    return out.getvalue()


def hosted(api, token, code: bytes, name: str = "mine", entrypoint: str = "mybot:MyBot"):
    return api.post("/bots", {"name": name, "game": GAME, "kind": "hosted", "entrypoint": entrypoint,
                              "code": b64(code)}, token=token)


def error_code(response) -> str:
    return response.json()["error"]["code"]


def test_any_account_registers_a_hosted_bot_that_answers_its_probe_and_is_online(api):
    token = api.account("author")
    made = api.ok(hosted(api, token, GOOD), 201)
    assert made["kind"] == "hosted" and made["status"] == "online" and made["reachable"] is True
    shown = api.ok(api.get(f"/bots/{made['id']}", token=token), 200)
    assert shown["status"] == "online" and shown["probe_error"] is None
    code = api.get(f"/bots/{made['id']}/versions/1/code", token=token)
    assert code.status_code == 200 and code.headers["Content-Type"] == "application/zip"
    assert zipfile.ZipFile(io.BytesIO(code.content)).read("mybot.py") == GOOD


def test_code_that_fails_its_probe_is_rejected_and_only_its_owner_sees_why(api):
    token, other = api.account("author"), api.account("other")
    broken = b"from sdk import Bot\nimport not_a_module_anywhere\n"
    made = api.ok(hosted(api, token, broken), 201)
    assert made["status"] == "rejected" and made["reachable"] is False
    mine = api.ok(api.get(f"/bots/{made['id']}", token=token), 200)
    assert "ModuleNotFoundError" in mine["probe_error"] and "not_a_module_anywhere" in mine["probe_error"]
    assert "not_a_module_anywhere" not in mine["status_reason"]
    for shown in (api.ok(api.get(f"/bots/{made['id']}", token=other), 200), api.ok(api.get(f"/bots/{made['id']}"), 200)):
        assert shown["status"] == "rejected" and shown["probe_error"] is None
    illegal = b"from sdk import Bot\nclass MyBot(Bot):\n    def act(self, view, legal):\n        return {'x': 1}\n"
    assert api.ok(hosted(api, token, illegal, name="illegal"), 201)["status"] == "rejected"


def test_only_its_owner_and_the_admin_download_its_code(api):
    token, other = api.account("author"), api.account("other")
    made = api.ok(hosted(api, token, GOOD), 201)
    path = f"/bots/{made['id']}/versions/1/code"
    assert api.get(path).status_code == 401
    assert api.get(path, token=other).status_code == 403
    assert api.get(path, token=api.admin_token).status_code == 200
    assert api.get(f"/bots/{made['id']}/versions/2/code", token=token).status_code == 404
    polling = api.bot(token, "poller", game=GAME)
    assert api.get(f"/bots/{polling['id']}/versions/1/code", token=token).status_code == 404


def test_a_new_version_uploads_new_code_and_the_old_stays_as_it_was(api):
    token = api.account("author")
    made = api.ok(hosted(api, token, GOOD), 201)
    package = zipped({"pkg/__init__.py": b"", "pkg/brain.py": GOOD.replace(b"MyBot", b"Brain")})
    r = api.post(f"/bots/{made['id']}/versions", {"code": b64(package), "entrypoint": "pkg.brain:Brain"}, token=token)
    assert api.ok(r, 201)["version"] == 2
    assert api.ok(api.get(f"/bots/{made['id']}", token=token), 200)["status"] == "online"
    one = zipfile.ZipFile(io.BytesIO(api.get(f"/bots/{made['id']}/versions/1/code", token=token).content))
    two = zipfile.ZipFile(io.BytesIO(api.get(f"/bots/{made['id']}/versions/2/code", token=token).content))
    assert one.namelist() == ["mybot.py"] and sorted(two.namelist()) == ["pkg/__init__.py", "pkg/brain.py"]
    assert api.store.version_record(made["id"], 1)["entrypoint"] == "mybot:MyBot"
    r = api.post(f"/bots/{made['id']}/versions", {}, token=token)
    assert r.status_code == 422, "a hosted bot's version is its code"
    r = api.post(f"/bots/{made['id']}/versions", {"code": b64(b"\xff\xfe")}, token=token)
    assert r.status_code == 422 and error_code(r) == "bad_code"


def test_uploads_that_are_not_taken(api):
    token = api.account("author")
    big = b"#" * (hosted_code.MAX_BYTES + 1)
    cases = [
        (big, "mybot:MyBot", 413, "too_large"),
        (zipped({f"m{i}.py": b"" for i in range(101)} | {"mybot.py": GOOD}), "mybot:MyBot", 413, "too_large"),
        (zipped({"mybot.py": GOOD, "big.txt": b"0" * (hosted_code.MAX_BYTES + 1)}), "mybot:MyBot", 413, "too_large"),
        (zipped({"mybot.py": GOOD}, symlink="link.py"), "mybot:MyBot", 422, "bad_code"),
        (zipped({"mybot.py": GOOD, "../evil.py": b""}), "mybot:MyBot", 422, "bad_code"),
        (zipped({"mybot.py": GOOD, "/abs.py": b""}), "mybot:MyBot", 422, "bad_code"),
        (zipped({"other.py": GOOD}), "mybot:MyBot", 422, "bad_code"),
        (b"PK\x03\x04 not a zip", "mybot:MyBot", 422, "bad_code"),
        (b"\xff\xfe\x00", "mybot:MyBot", 422, "bad_code"),
        (GOOD, "pkg.mod:MyBot", 422, "bad_code"),
        (GOOD, "mybot", 422, "bad_code"),
    ]
    for code, entrypoint, status, expected in cases:
        r = hosted(api, token, code, entrypoint=entrypoint)
        assert (r.status_code, error_code(r)) == (status, expected), (entrypoint, r.text[:200])
    r = api.post("/bots", {"name": "x", "game": GAME, "kind": "hosted", "entrypoint": "mybot:MyBot",
                           "code": "not base64!"}, token=token)
    assert (r.status_code, error_code(r)) == (422, "bad_code")
    r = api.post("/bots", {"name": "x", "game": GAME, "kind": "hosted", "entrypoint": "mybot:MyBot"}, token=token)
    assert r.status_code == 422
    r = api.post("/bots", {"name": "x", "game": GAME, "kind": "polling", "code": b64(GOOD)}, token=token)
    assert r.status_code == 422


def test_without_a_sandbox_hosted_bots_are_refused_and_the_health_check_says_so(app, redis_client, monkeypatch):
    """Through `app.test_client()`: the sandbox this process sees is the one taken away."""
    client = app.test_client()
    assert client.get("/api/v1/health").get_json()["hosted_bots"] == {"available": True, "reason": None}
    monkeypatch.setattr(sandbox, "BWRAP", "no-such-bwrap")
    sandbox.unavailable.cache_clear()
    try:
        token = client.post("/api/v1/accounts", json={"name": "author"}).get_json()["token"]
        r = client.post("/api/v1/bots", json={"name": "mine", "game": GAME, "kind": "hosted",
                                              "entrypoint": "mybot:MyBot", "code": b64(GOOD)},
                        headers={"Authorization": f"Bearer {token}"})
        assert (r.status_code, r.get_json()["error"]["code"]) == (503, "sandbox_unavailable")
        assert "bwrap" in r.get_json()["error"]["message"]
        health = client.get("/api/v1/health").get_json()
        assert health["hosted_bots"]["available"] is False and "bwrap" in health["hosted_bots"]["reason"]
    finally:
        monkeypatch.undo()
        sandbox.unavailable.cache_clear()
