"""The referee: a Flask REST API over the Redis store.

    from server import create_app
    app = create_app({"REDIS_URL": "redis://127.0.0.1:6379/0"})

The platform core it shares with the workers is `core` (the store, the conclusion of a match…).
"""

from __future__ import annotations


def create_app(config: dict | None = None):
    """Build the Flask app from `config` (see `server.app` for the keys)."""
    from server.app import build_app

    return build_app(config)


__all__ = ["create_app"]
