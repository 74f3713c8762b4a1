"""Host a bot as a webhook: the referee POSTs each decision, the bot answers.

    from sdk import serve
    serve(MyBot, port=8001, secret=SECRET)            # blocks; Ctrl-C stops it

Given the class, each match gets its own `MyBot()` (`sdk.instances`): state
kept in `self` is that match's. Given an instance, it answers every match.

`webhook_app(bot, secret)` is the plain WSGI application behind it (no
framework: it is a handful of checks), so any WSGI server or a test can run
it. `serve` runs it under waitress, a production-grade threaded server:
decisions of different matches are answered in parallel, so `act` may be
called from several threads at once.

What the app answers:

* a signed decision -> 200 ``{"action": ...}`` (and ``"debug"`` when the bot wrote some);
* a signed ``match_over`` -> 200, empty;
* no signature or a wrong one -> 401 (checked on the raw bytes, in constant time);
* a body over `max_body` bytes -> 413; not JSON, or not a decision -> 400;
* a decision for another game than the bot's `game` -> 400 ``wrong_game``;
* the bot's code raised -> 500 ``{"error": {"code": "bot_error", "message": ...}}``.

Errors use the platform's format, ``{"error": {"code", "message"}}``.
``GET /`` answers the bot's name and game, unsigned, to check it is up.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable

from sdk.instances import BotSource, source_game, source_name
from sdk.protocol import (
    SIGNATURE_HEADER,
    BotFailed,
    BotHooks,
    ProtocolError,
    WrongGame,
    check_message,
    signature_ok,
)

log = logging.getLogger("sdk.serve")

#: the largest request body accepted (decisions are a few kilobytes)
MAX_BODY = 1 << 20

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 405: "Method Not Allowed",
            413: "Payload Too Large", 500: "Internal Server Error"}

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]


def resolve_secret(secret: str | None) -> str:
    """`secret`, else `CARDARENA_BOT_SECRET`; a clear error when neither is set."""
    secret = secret if secret is not None else os.environ.get("CARDARENA_BOT_SECRET")
    if not secret:
        raise ValueError("a bot needs its secret (shown once when it was registered): "
                         "pass secret=... or set CARDARENA_BOT_SECRET")
    return secret


def webhook_app(bot: BotSource, secret: str | None = None, max_body: int = MAX_BODY) -> WSGIApp:
    """The WSGI application that answers the referee's calls for `bot` (an instance for
    every match, or a class or factory: one instance per match)."""
    secret = resolve_secret(secret)
    hooks = BotHooks(bot)
    hello = {"bot": hooks.name, "game": hooks.game, "protocol": 1}
    signature_key = "HTTP_" + SIGNATURE_HEADER.upper().replace("-", "_")

    def respond(start_response, status: int, payload: dict | None = None,
                headers: list[tuple[str, str]] | None = None) -> list[bytes]:
        body = b"" if payload is None else json.dumps(payload, separators=(",", ":")).encode()
        head = [("Content-Length", str(len(body)))] + (headers or [])
        if payload is not None:
            head.append(("Content-Type", "application/json"))
        start_response(f"{status} {_REASONS[status]}", head)
        return [body]

    def error(start_response, status: int, code: str, message: str, headers=None) -> list[bytes]:
        return respond(start_response, status, {"error": {"code": code, "message": message}}, headers)

    def app(environ: dict, start_response) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        if method in ("GET", "HEAD"):
            return respond(start_response, 200, hello)
        if method != "POST":
            return error(start_response, 405, "method_not_allowed", f"{method} is not allowed: POST decisions",
                         [("Allow", "GET, POST")])
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return error(start_response, 400, "bad_request", "Content-Length is not a number")
        if length > max_body:
            return error(start_response, 413, "too_large", f"the body is over {max_body} bytes")
        body = environ["wsgi.input"].read(length) if length > 0 else b""
        if not signature_ok(body, environ.get(signature_key), secret):
            who = environ.get("REMOTE_ADDR", "?")
            log.warning("refused an unsigned or wrongly signed request from %s", who)
            return error(start_response, 401, "bad_signature",
                         f"missing or wrong {SIGNATURE_HEADER}: only the referee may call this bot")
        try:
            message = check_message(json.loads(body))
        except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError and ProtocolError are ValueErrors
            reason = str(exc) if isinstance(exc, ProtocolError) else f"the body is not JSON: {exc}"
            return error(start_response, 400, "bad_request", reason)
        try:
            if message["type"] == "match_over":
                hooks.match_over(message)
                return respond(start_response, 200)
            if message["type"] == "ping":
                return respond(start_response, 200, hello)
            wrong = hooks.wrong_game(message)
            if wrong:
                return error(start_response, 400, "wrong_game", wrong)
            return respond(start_response, 200, hooks.answer(message))
        except WrongGame as exc:
            return error(start_response, 400, "wrong_game", str(exc))
        except BotFailed as exc:
            return error(start_response, 500, "bot_error", f"the bot raised {exc}")
        except (TypeError, ValueError) as exc:  # act() returned something json cannot encode
            log.error("the bot's answer is not JSON: %s", exc)
            return error(start_response, 500, "bot_error", f"the bot's answer is not JSON: {exc}")

    return app


class BotServer:
    """A bot served in a background thread: `.url`, `.stop()`; a context manager.

    The thread runs waitress's event loop one turn at a time so `stop()` can
    end it from outside: closing the sockets under a running ``select`` would
    kill the loop with a bad file descriptor instead.
    """

    def __init__(self, server, name: str, sockets: dict) -> None:
        self._server, self._sockets = server, sockets
        self.url = f"http://{_url_host(server.effective_host)}:{server.effective_port}/"
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"serve-{name}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        from waitress import wasyncore

        s = self._server
        try:
            while not self._stopping.is_set():
                s.asyncore.loop(timeout=s.adj.asyncore_loop_timeout, map=self._sockets,
                                use_poll=s.adj.asyncore_use_poll, count=1)
        finally:
            s.task_dispatcher.shutdown(timeout=5)
            wasyncore.close_all(self._sockets)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting calls, finish the ones in progress, free the port."""
        self._stopping.set()
        try:
            self._server.pull_trigger()  # wake the loop now rather than at its next timeout
        except OSError:
            pass
        self._thread.join(timeout)

    def __enter__(self) -> BotServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<BotServer {self.url}>"


def ensure_logging() -> None:
    """Show the SDK's one-line logs when the program has not set up logging itself."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                            datefmt="%H:%M:%S")


def serve(bot: BotSource, host: str = "127.0.0.1", port: int = 8001, secret: str | None = None, *,
          block: bool = True, threads: int = 8, max_body: int = MAX_BODY) -> BotServer | None:
    """Host `bot` as a webhook bot on http://host:port/ (register that URL).

    `bot` is a bot class (or zero-argument factory): each match gets its own
    instance; or one instance, which then answers every match at once.

    `secret` is the bot's secret from registration (or `CARDARENA_BOT_SECRET`):
    calls not signed with it are refused. Blocks until Ctrl-C; with
    ``block=False`` it runs in a background thread and returns a `BotServer`
    (``port=0`` picks a free port; read it from ``.url``).
    """
    from waitress.server import create_server

    app = webhook_app(bot, secret, max_body=max_body)
    name, game = source_name(bot), source_game(bot)
    sockets: dict = {}  # the server's socket map: its event loop is run from here (`BotServer`)
    server = create_server(app, map=sockets, host=host, port=port, threads=threads, ident="cardarena-bot",
                           max_request_body_size=max_body + 1, channel_timeout=30,
                           clear_untrusted_proxy_headers=True)
    if not block:
        handle = BotServer(server, name, sockets)
        log.info("serving %s (%s) at %s", name, game or "any game", handle.url)
        return handle
    url = f"http://{_url_host(server.effective_host)}:{server.effective_port}/"
    ensure_logging()
    log.info("serving %s (%s) at %s — Ctrl-C to stop", name, game or "any game", url)
    try:
        server.run()  # waitress returns on Ctrl-C
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        log.info("stopped serving %s", name)
    return None


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host
