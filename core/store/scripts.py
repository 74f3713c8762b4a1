"""A Lua script the store runs by its SHA: `Store.script(source)`.

redis-py's own `Script` does the same through three layers per call
(`Script.__call__`, which imports and type-checks its client each time,
`evalsha` and its deprecated-arguments wrapper): about 5% of a worker's CPU
under bench/remote.py, where nearly every step of a remote decision is one
script. This one sends `EVALSHA` straight, and loads the source again only
when Redis says it lost it (`NOSCRIPT`: a restart, `SCRIPT FLUSH`). No keys
of its own.
"""

from __future__ import annotations

import hashlib

from redis.exceptions import NoScriptError, ResponseError


class LuaScript:
    """`source` run on `client` by its SHA: `script(keys, args)` is its reply."""

    __slots__ = ("client", "source", "sha")

    def __init__(self, client, source: str) -> None:
        self.client, self.source = client, source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def __call__(self, keys=(), args=()):
        try:
            return self.client.execute_command("EVALSHA", self.sha, len(keys), *keys, *args)
        except NoScriptError:
            self.client.script_load(self.source)
            return self.client.execute_command("EVALSHA", self.sha, len(keys), *keys, *args)

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
