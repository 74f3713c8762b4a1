"""Migrations run behind a schema version, when asked (`cardarena migrate`), never at every start."""

from __future__ import annotations

from cardarena.cli import main
from core.store import schema
from server import create_app
from tests.live import ADMIN_TOKEN


def make_app(redis_url):
    return create_app({"REDIS_URL": redis_url, "ADMIN_TOKEN": ADMIN_TOKEN, "RATELIMIT_ENABLED": False})


def test_an_empty_database_starts_at_the_current_version(redis_client, redis_url):
    redis_client.delete(schema.SCHEMA_KEY)
    make_app(redis_url)
    assert schema.schema_version(redis_client) == schema.SCHEMA_VERSION and schema.behind(redis_client) == 0


def test_an_old_database_is_migrated_by_the_command_only_and_once(api, redis_client, redis_url, capsys):
    token = api.account("alice")
    bots = [api.bot(token, f"b{i}")["id"] for i in range(2)]
    mids = [api.store.create_match("duck-soup", bots, i, {})["id"] for i in range(3)]
    # as a database written before the per-bot index and the lists by game existed
    redis_client.delete(f"bot:{bots[0]}:matches", f"bot:{bots[1]}:matches", "matches:bot_index", "lists:indexed",
                        *redis_client.keys("matches:game:*"), schema.SCHEMA_KEY)
    make_app(redis_url)  # starting the API migrates nothing
    assert schema.behind(redis_client) == schema.SCHEMA_VERSION
    assert api.ok(api.get(f"/bots/{bots[0]}/matches"), 200)["matches"] == []

    assert main(["migrate", "--redis-url", redis_url]) == 0
    assert "version 1" in capsys.readouterr().out
    assert schema.behind(redis_client) == 0
    assert [m["id"] for m in api.ok(api.get(f"/bots/{bots[0]}/matches"), 200)["matches"]] == mids[::-1]
    assert [m["id"] for m in api.ok(api.get("/matches", params={"game": "duck-soup"}), 200)["matches"]] == mids[::-1]
    assert main(["migrate", "--redis-url", redis_url]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_the_migration_archives_the_finished_matches_redis_still_holds(api, redis_client, redis_url, capsys):
    from tests.server.driving import make_bots, played

    bots = make_bots(api.store)
    done = played(api.store, bots, seed=3)  # ended as before the archive: whole in Redis
    waiting = api.store.create_match("duck-soup", bots, 4, {})["id"]
    exported = api.ok(api.get(f"/matches/{done}/export"), 200)
    redis_client.set(schema.SCHEMA_KEY, 1)
    assert main(["migrate", "--redis-url", redis_url]) == 0
    assert "version 2: move the finished matches to the archive: 1 finished" in capsys.readouterr().out
    assert redis_client.hexists(f"match:{done}", "archived") and not redis_client.exists(f"match:{done}:log")
    assert not redis_client.hexists(f"match:{waiting}", "archived")
    assert api.ok(api.get(f"/matches/{done}/export"), 200) == exported
