"""A platform's state on a Redis of its own, for the tests of `cardarena demo`: the demo must
leave it as it was, whether it runs on its own Redis (the default, whatever `REDIS_URL` says)
or on this one (`--redis-url`).

The state is what a running platform keeps in Redis, built through the store with no worker
of its own running: a queued tournament, a match its (dead) worker dropped — exactly what a
wrong sweep would re-enqueue — its bots and its ladder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis

from core.redis_server import EmbeddedRedis
from core.store import Store, secret_key
from core.store.jobs import QUEUE


@contextmanager
def platform_state(game: str) -> Iterator[tuple[redis.Redis, Store, Callable[[], dict]]]:
    """`(client, store, snapshot())` of a platform playing `game`; `client.url` is its Redis."""
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        store = Store(client, secret_key(client))
        bots = [store.create_bot("a_platform", name, game, "python",
                                 entrypoint="example_bots.random:RandomBot")[0]["id"]
                for name in ("heuristic", "random")]
        for i, bot in enumerate(bots):
            store.save_rating(game, bot, 30.0 - i, 5.0)
        t = store.create_tournament(game, bots, seats=2, deals=1, duplicate=True, seed=1, options={})
        store.enqueue("tournament", [t["id"]])
        dropped = store.create_match(game, bots, 2, {})
        store.enqueue("match", [dropped["id"]])
        client.lrem(f"rq:queue:{QUEUE}", 0, f"match-{dropped['id']}")  # its worker died with it

        def snapshot() -> dict:
            return {
                "queue": client.lrange(f"rq:queue:{QUEUE}", 0, -1),
                "active": sorted(store.active_jobs()),
                "tournament": store.get_tournament(t["id"])["status"],
                "dropped": store.get_match(dropped["id"])["status"],
                "bots": [store.get_bot(b) for b in bots],
                "ladder": [(r["bot"], r["rating"]) for r in store.rankings(game)],
            }

        client.url = server.url
        try:
            yield client, store, snapshot
        finally:
            client.close()
