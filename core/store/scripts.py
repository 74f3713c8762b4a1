"""A Lua script the store runs by its SHA: `Store.script(source)`.

redis-py's own `Script` does the same through three layers per call
(`Script.__call__`, which imports and type-checks its client each time,
`evalsha` and its deprecated-arguments wrapper), and nearly every step of a
remote decision is one script. This one sends `EVALSHA` straight, and loads the source again only
when Redis says it lost it (`NOSCRIPT`: a restart, `SCRIPT FLUSH`). No keys
of its own.

Nor through redis-py's `execute_command`: per command it takes a connection
out of the pool and back (with two system calls checking it for unread
data), wraps the exchange in its retry machinery and records metrics
nobody reads — several times the CPU of the exchange itself, and a remote
decision is six to eight scripts across the processes. A store's scripts share `Connections`: a few connections of the
client's own kind (same address, timeouts, protocol) held outside the pool,
each used by one caller at a time and dropped at the first error — an
exchange cut off mid-way leaves nothing to read on a connection used again.
A connection error falls back to `execute_command` (its retries); so does a
call when all of them are in use: a burst waits in the pool's bounds. A client of one connection (a worker's runs:
worker/process.py `runs_client`) is used as it is, under its lock.
"""

from __future__ import annotations

import hashlib
import os

from redis.exceptions import ConnectionError, NoScriptError, ResponseError, TimeoutError

#: connections a store's scripts hold outside the client's pool (beyond them: the pool)
HELD_CONNECTIONS = 8


class Connections:
    """Connections like `client`'s, held for its store's scripts (see above): `exchange` sends
    one command and reads its reply."""

    __slots__ = ("client", "free", "made", "pid")

    def __init__(self, client) -> None:
        self.client, self.free, self.made, self.pid = client, [], 0, os.getpid()

    def exchange(self, *command):
        """`command`'s reply (an error reply raised, its connection kept: it was read whole)."""
        client = self.client
        if client.connection is not None:  # a client of one connection: that one, under its lock
            with client.single_connection_lock:
                return self._on(client.connection, command, keep=None)
        if self.pid != os.getpid():  # a forked child never shares its parent's sockets
            self.free, self.made, self.pid = [], 0, os.getpid()
        try:
            conn = self.free.pop()
        except IndexError:
            if self.made >= HELD_CONNECTIONS:
                return client.execute_command(*command)
            pool = client.connection_pool
            conn = pool.connection_class(**pool.connection_kwargs)
            self.made += 1
        return self._on(conn, command, keep=self.free)

    def _on(self, conn, command, keep):
        try:
            conn.send_command(*command)
            reply = conn.read_response()
        except ResponseError:
            if keep is not None:
                keep.append(conn)
            raise
        except (ConnectionError, TimeoutError, OSError):  # Redis restarted, a stale socket: redis-py's retries
            conn.disconnect()
            if keep is not None:
                self.made -= 1
            return self.client.execute_command(*command)
        except BaseException:  # cut off mid-way (a timeout of the caller's): never used again
            conn.disconnect()
            if keep is not None:
                self.made -= 1
            raise
        if keep is not None:
            keep.append(conn)
        return reply


class LuaScript:
    """`source` run on `client` by its SHA: `script(keys, args)` is its reply."""

    __slots__ = ("client", "source", "sha", "connections")

    def __init__(self, client, source: str, connections: Connections | None = None) -> None:
        self.client, self.source = client, source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        self.connections = connections or Connections(client)

    def __call__(self, keys=(), args=()):
        try:
            return self.connections.exchange("EVALSHA", self.sha, len(keys), *keys, *args)
        except NoScriptError:
            self.client.script_load(self.source)
            return self.connections.exchange("EVALSHA", self.sha, len(keys), *keys, *args)

    def after(self, command: tuple, keys=(), args=()):
        """`command`, then the script, sent together on the client's one connection
        (`single_connection_client`): one round trip where Redis runs the script right after the
        command, even one that blocks (`BLMOVE`). The script's reply; `command`'s error, or the
        script's, is raised (NOSCRIPT: its source is loaded and it runs again alone)."""
        client = self.client
        conn = client.connection
        with client.single_connection_lock:
            try:
                conn.send_packed_command(conn.pack_commands([command,
                                                             ("EVALSHA", self.sha, len(keys), *keys, *args)]))
                replies = []
                for name in (command[0], "EVALSHA"):
                    try:
                        replies.append(client.parse_response(conn, name))
                    except ResponseError as exc:  # the other reply is read all the same
                        replies.append(exc)
            except BaseException:  # the connection is out of step: a fresh one next time
                conn.disconnect()
                raise
        done, got = replies
        if isinstance(done, Exception):
            raise done
        if isinstance(got, NoScriptError):
            return self(keys, args)
        if isinstance(got, Exception):
            raise got
        return got

    def __repr__(self) -> str:
        return f"LuaScript({self.sha[:12]})"
