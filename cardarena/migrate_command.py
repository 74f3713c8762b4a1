"""`cardarena migrate`: bring the data in Redis up to this version's schema (core/store/schema.py).

Run it once after upgrading, with the API and the workers stopped or running
(each step is repeatable); they never migrate on their own.
"""

from __future__ import annotations

import argparse
import os

HELP = "bring the data in Redis up to this version's schema (run once after upgrading)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redis-url", default=None,
                        help="the Redis to migrate (default: REDIS_URL, else the embedded one)")


def run(args: argparse.Namespace) -> int:
    import redis

    from core.store import Store, secret_key
    from core.store.schema import migrate

    url = args.redis_url or os.environ.get("REDIS_URL")
    if url is None:
        from core.redis_server import shared_url

        url = shared_url()
    client = redis.Redis.from_url(url)
    try:
        version = migrate(Store(client, secret_key(client)))
    finally:
        client.close()
    print(f"{url.split('@')[-1]}: data at schema version {version}")
    return 0
