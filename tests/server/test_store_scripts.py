"""The store's Lua scripts on connections of their own (core/store/scripts.py), on a real Redis."""

from __future__ import annotations

import pytest
import redis as redis_lib

from core.store.scripts import HELD_CONNECTIONS, Connections, LuaScript

COUNT = "return redis.call('INCR', KEYS[1])"
FAILS = "return redis.error_reply('refused: ' .. ARGV[1])"


def test_a_script_reuses_one_held_connection_and_keeps_it_after_an_error_reply(redis_client):
    connections = Connections(redis_client)
    count, fails = LuaScript(redis_client, COUNT, connections), LuaScript(redis_client, FAILS, connections)
    assert [count(["n"]) for _ in range(5)] == [1, 2, 3, 4, 5]
    with pytest.raises(redis_lib.exceptions.ResponseError, match="refused: no"):
        fails(args=["no"])
    assert count(["n"]) == 6  # the error reply was read whole: the same connection answers right
    assert connections.made == 1 and len(connections.free) == 1


def test_a_lost_script_is_loaded_again(redis_client):
    count = LuaScript(redis_client, COUNT)
    assert count(["n"]) == 1
    redis_client.script_flush()
    assert count(["n"]) == 2


def test_a_held_connection_killed_by_the_server_is_replaced_and_the_call_made(redis_client):
    connections = Connections(redis_client)
    count = LuaScript(redis_client, COUNT, connections)
    assert count(["n"]) == 1
    held = connections.free[0]
    redis_client.client_kill_filter(_id=held_id(redis_client, held))
    assert count(["n"]) == 2  # through redis-py's own path (its retries), once
    assert count(["n"]) == 3 and connections.made == 1


def test_beyond_the_held_connections_a_call_goes_through_the_pool(redis_client):
    connections = Connections(redis_client)
    count = LuaScript(redis_client, COUNT, connections)
    connections.made = HELD_CONNECTIONS  # all of them in use elsewhere
    assert count(["n"]) == 1 and connections.free == []


def test_a_client_of_one_connection_is_used_as_it_is(redis_url):
    single = redis_lib.Redis.from_url(redis_url, single_connection_client=True)
    try:
        connections = Connections(single)
        count = LuaScript(single, COUNT, connections)
        single.delete("one")
        assert [count(["one"]) for _ in range(3)] == [1, 2, 3]
        assert connections.made == 0  # no connection of its own: the client's
    finally:
        single.delete("one")
        single.close()


def held_id(client, conn) -> int:
    """The server's id of a connection (CLIENT LIST matched by the connection's local port)."""
    port = conn._sock.getsockname()[1]
    return next(c["id"] for c in client.client_list() if c["addr"].endswith(f":{port}"))
