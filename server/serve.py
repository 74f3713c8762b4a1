"""`cardarena serve`: the referee API under waitress, a production WSGI server.

Long-polls (`GET /bots/me/turns?wait=30`) hold a thread each while they wait,
so the pool is sized for many polling bots rather than waitress' default 4 —
and the waits may take at most `long_poll_slots(threads)` of them: the rest
always answer everything else (a poll beyond that is refused at once, 503).

SIGTERM stops it as Ctrl-C does: waitress closes, and the shared embedded
Redis (when `REDIS_URL` is unset) is released — stopped if no other command
still uses it.
"""

from __future__ import annotations

import argparse

HELP = "run the referee API (REST, OpenAPI at /api/v1/openapi.json, docs at /docs)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=5000, help="port (default 5000)")
    parser.add_argument("--threads", type=int, default=64,
                        help="worker threads; each waiting long-poll holds one (default 64)")


#: threads always left to requests that do not wait
FREE_THREADS = 16


def long_poll_slots(threads: int) -> int:
    """How many of `threads` waiting long-polls may hold: at most 3/4, and 16 fewer than all."""
    return max(1, min(threads - FREE_THREADS, threads * 3 // 4))


def run(args: argparse.Namespace) -> int:
    from waitress.server import create_server

    from core.redis_server import shared_redis
    from core.signals import shielded, stop_on_signals
    from server import create_app

    with stop_on_signals(), shared_redis() as redis_url:
        server = create_server(create_app({"REDIS_URL": redis_url, "LONG_POLL_SLOTS": long_poll_slots(args.threads)}), host=args.host, port=args.port,
                               threads=args.threads, ident="cardarena", channel_timeout=60,
                               connection_limit=1000)
        print(f"cardarena API on http://{args.host}:{args.port}/api/v1  (docs: /docs; Redis {redis_url})",
              flush=True)
        try:
            server.run()  # until Ctrl-C or SIGTERM (a KeyboardInterrupt, which waitress takes as its stop)
        finally:
            with shielded():
                server.close()
        print("stopped the API", flush=True)
    return 0
