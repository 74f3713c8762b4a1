"""A WSGI app on a free loopback port, served by threads of the test process.

For the tests' own bots (tests/worker: the zoo of misbehaving webhook bots and
the driver's test servers), written as plain WSGI apps that each do one wrong
thing. The standard library's server, one thread per connection: it adds no
behaviour of its own between the bot and the referee. The referee API never
runs this way: the tests run it as users do, `cardarena serve` (tests/live.py).
"""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    """One thread per connection, none of them keeping the process alive."""

    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 (the standard library's name)
        """No line per request on the test's output."""


@contextmanager
def serving(app) -> Iterator[str]:
    """`app` on a free 127.0.0.1 port; yields its base URL (no trailing slash), stops after."""
    server = make_server("127.0.0.1", 0, app, server_class=ThreadingServer, handler_class=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="test-bot-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
