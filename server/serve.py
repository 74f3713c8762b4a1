"""`cardarena serve`: the referee API under gevent's WSGI server, where waiting costs no thread.

Why gevent: a long-poll (`GET /bots/me/turns?wait=30`) or an event stream
spends nearly all its life waiting. Under a threaded server (waitress, 64
threads) each holds a thread, so 64 waiting requests fill the server and a
bystander's `GET /games` queues behind them. Under gevent
each request is a greenlet — a few kilobytes — and waiting is a switch back
to the event loop; Flask, the views, RQ and redis-py stay as they are,
because `gevent.monkey.patch_all()` makes their sockets, locks, sleeps and
threads cooperative. The waits themselves hold no Redis connection either:
every long-poll and stream of the process waits on one shared pub/sub
listener (core/store/wakeups.py). An asyncio server in front of the waiting
endpoints would have meant a second copy of their logic outside Flask.

Patching must come first, before anything imports `socket` or `threading`,
so `cardarena serve` replaces itself (`os.execv`, same pid: a process
manager's SIGTERM still reaches it) with `python -m server.serve`, which
patches and only then imports the app. It is the one way the API runs: the
Dockerfile's command and docker-compose.yml's API service are `cardarena serve`.

Capacity per process: `--connections` (default 12,000, at most the file
limit less 1,000) open connections at once; of them at most half wait in
long-polls and a twelfth in event streams (`capacity`), so at least 5/12 are
always left to everything else (beyond either cap, 503 at once with
`Retry-After`). The per-tenant caps (64 long-polls per account, 16 streams
per address, counted in Redis) come before these. An idle kept-alive
connection is closed after 60 s without a byte.

SIGTERM stops it as Ctrl-C does: the server stops accepting, closes the
kept-alive connections waiting for their next request at once, gives the
requests in progress `STOP_GRACE_S` to end, and the shared embedded Redis
(when `REDIS_URL` is unset) is released — stopped if no other command still
uses it.
"""

from __future__ import annotations

import argparse
import os
import sys

HELP = "run the referee API (REST, OpenAPI at /api/v1/openapi.json, docs at /docs)"

#: open connections at once, by default (bounded by the process' file limit)
CONNECTIONS = 12_000
#: a kept-alive connection silent this long is closed
IDLE_TIMEOUT_S = 60.0
#: how long a stop waits for requests in progress before ending them
STOP_GRACE_S = 3.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=5000, help="port (default 5000; 0: a free one, named "
                                                                 "in the line it prints once serving)")
    parser.add_argument("--connections", type=int, default=CONNECTIONS,
                        help=f"open connections at once (default {CONNECTIONS:,}, at most the file limit "
                             "less 1,000); half may wait in long-polls, a twelfth in event streams")


def capacity(connections: int) -> dict[str, int]:
    """The per-process waiting caps for `connections` open connections: half may wait in
    long-polls, a twelfth in event streams, the rest is always left to other requests.
    `CARDARENA_EVENT_STREAMS`, when set, still names the streams' cap (server/api/events.py)."""
    caps = {"LONG_POLL_SLOTS": max(1, connections // 2), "EVENT_STREAMS": max(1, connections // 12)}
    if os.environ.get("CARDARENA_EVENT_STREAMS", "").strip():
        del caps["EVENT_STREAMS"]
    return caps


def connection_limit(wanted: int) -> int:
    """`wanted`, within the file limit (raised to its hard ceiling first) less 1,000 for Redis
    connections and files."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - 1000))


def run(args: argparse.Namespace) -> int:
    """Become `python -m server.serve` (same pid), which patches before importing anything."""
    sys.stdout.flush()
    sys.stderr.flush()
    argv = [sys.executable, "-m", "server.serve", "--host", args.host, "--port", str(args.port),
            "--connections", str(args.connections)]
    os.execv(sys.executable, argv)
    return 1  # not reached


def wsgi_server(app, host: str, port: int, connections: int):
    """The gevent WSGI server `cardarena serve` runs `app` on, not started: at most
    `connections` requests at once, no Nagle, an idle connection closed after
    `IDLE_TIMEOUT_S`. Call it in a process gevent has patched (bench/api.py serves its
    baseline app on it too, so the two cannot differ in their server's settings)."""
    import socket

    from gevent.pool import Pool
    from gevent.pywsgi import WSGIHandler, WSGIServer

    between_requests: set = set()  # the sockets of connections waiting for their next request

    class Handler(WSGIHandler):
        def handle(self):
            self.socket.settimeout(IDLE_TIMEOUT_S)  # per read or write: waiting in the app is neither
            # no Nagle: an answer's last small write must not wait for the client's delayed ACK
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return super().handle()

        def read_requestline(self):
            between_requests.add(self.socket)
            try:
                return super().read_requestline()
            finally:
                between_requests.discard(self.socket)

    class Server(WSGIServer):
        def stop(self, timeout=None):
            """Close the connections between requests at once (a client opens a new one
            elsewhere), stop accepting, give the requests in progress `timeout` to end."""
            for sock in list(between_requests):
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # its handler reads the end and returns
                except OSError:
                    pass
            super().stop(timeout)

    return Server((host, port), app, spawn=Pool(connections), handler_class=Handler, log=None, backlog=2048)


def serve(args: argparse.Namespace) -> int:
    """The server itself, in a process gevent has patched (`main`)."""
    import gevent
    from gevent.event import Event

    from core.redis_server import shared_redis
    from core.signals import SIGNALS, die_with_parent, shielded, stop_on_signals
    from core.store.wakeups import drain
    from server import create_app

    if os.environ.get("CARDARENA_PARENT_PID"):
        die_with_parent()  # started by the demo: it dies with it

    connections = connection_limit(args.connections)
    with stop_on_signals(), shared_redis() as redis_url:
        app = create_app({"REDIS_URL": redis_url, **capacity(connections)})
        server = wsgi_server(app, args.host, args.port, connections)
        stop = Event()
        with shielded():
            server.start()
            # while it serves, Ctrl-C or SIGTERM is gevent's to deliver: it sets `stop`
            watchers = [gevent.signal_handler(sig, stop.set) for sig in SIGNALS]
        # the port it is bound to: with --port 0, one the system picked
        print(f"cardarena API on http://{args.host}:{server.server_port}/api/v1  (docs: /docs; Redis {redis_url}; "
              f"gevent, {connections:,} connections)", flush=True)
        try:
            stop.wait()
        finally:
            with shielded():
                drain()  # waiting requests end now, answered, before the stop's grace runs out
                server.stop(timeout=STOP_GRACE_S)
                for watcher in watchers:
                    watcher.cancel()
        print("stopped the API", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardarena serve", description=HELP)
    add_arguments(parser)
    try:
        return serve(parser.parse_args(argv))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    from gevent import monkey

    monkey.patch_all()
    sys.exit(main())
