"""Credentials never rest in Redis in clear: scan every key and every value."""

from __future__ import annotations

import hashlib

from tests.server.driving import publish_next


def everything_in_redis(client) -> list[bytes]:
    out: list[bytes] = []
    for key in client.scan_iter(count=1000):
        out.append(key)
        kind = client.type(key).decode()
        if kind == "string":
            out.append(client.get(key))
        elif kind == "hash":
            for field, value in client.hgetall(key).items():
                out += [field, value]
        elif kind == "list":
            out += client.lrange(key, 0, -1)
        elif kind == "set":
            out += list(client.smembers(key))
        elif kind == "zset":
            out += [m for m, _ in client.zrange(key, 0, -1, withscores=True)]
        elif kind == "stream":
            for _, fields in client.xrange(key):
                for f, v in fields.items():
                    out += [f, v]
    return out


def test_tokens_and_secrets_are_not_stored_in_clear(api, redis_url):
    import redis

    tokens = [api.account(f"user{i}") for i in range(3)]
    bots = [api.bot(tokens[0], f"b{i}", game="toy-high") for i in range(2)]
    hook = api.bot(tokens[1], "hook", game="toy-high", kind="webhook", url="http://127.0.0.1:9/")
    python = api.bot(api.admin_token, "py", game="toy-high", kind="python",
                     entrypoint="example_bots.random:RandomBot")
    # use them all, so whatever the server caches or counts is in Redis too
    mid = api.match(tokens[0], "toy-high", [bots[0]["id"], bots[1]["id"]])["id"]
    api.store.set_match_status(mid, "running")
    decision, _ = publish_next(api.store, mid)
    api.ok(api.get("/bots/me/turns", token=bots[0]["secret"]), 200)
    api.ok(api.post(f"/matches/{mid}/turns/0", {"action": decision["legal_actions"][0]},
                    token=bots[0]["secret"]), 200)
    api.ok(api.get(f"/matches/{mid}", token=api.admin_token), 200)
    secrets = tokens + [b["secret"] for b in bots + [hook, python]] + [api.admin_token]
    # the HMAC half of a bot secret is the secret part (the id before the dot is public)
    secrets += [b["secret"].split(".", 1)[1] for b in bots + [hook, python]]
    blob = b"\n".join(everything_in_redis(redis.Redis.from_url(redis_url)))
    assert len(blob) > 1000
    for secret in secrets:
        assert secret.encode() not in blob, secret[:8]
    # what is stored instead is the token's SHA-256
    assert hashlib.sha256(tokens[0].encode()).hexdigest().encode() in blob
