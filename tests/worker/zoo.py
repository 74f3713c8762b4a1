"""A zoo of misbehaving webhook bots, one path each, on one loopback WSGI server.

    /hang      answers after 1.5 s (past any deadline the tests set)
    /500       HTTP 500
    /garbage   200 with a body that is not JSON
    /illegal   200 {"action": {"nope": true}}
    /huge      200 with a 10 MB body, streamed
    /redirect  302 to /ok (which would answer well: it must never be called)
    /ok        a correct answer (the first legal action); counts its calls

A bot whose URL is a port nobody listens on completes the zoo ("refused").
"""

from __future__ import annotations

import json
import time

PATHS = ("hang", "500", "garbage", "illegal", "huge", "redirect")


class Zoo:
    def __init__(self) -> None:
        self.calls: dict[str, int] = {}  # every call, per path
        self.decisions: dict[str, int] = {}  # the decisions among them ("type": "turn")

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "/").strip("/")
        self.calls[path] = self.calls.get(path, 0) + 1
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        if b'"type":"turn"' in body:
            self.decisions[path] = self.decisions.get(path, 0) + 1
        if path == "hang":
            time.sleep(1.5)
            return self._json(start_response, {"action": {"nope": True}})
        if path == "500":
            start_response("500 Internal Server Error", [("Content-Type", "text/plain")])
            return [b"boom"]
        if path == "garbage":
            start_response("200 OK", [("Content-Type", "application/json")])
            return [b"<html>certainly not json"]
        if path == "illegal":
            return self._json(start_response, {"action": {"nope": True}})
        if path == "huge":
            start_response("200 OK", [("Content-Type", "application/json")])
            return (b"x" * 65536 for _ in range(160))  # 10 MB, never all read
        if path == "redirect":
            start_response("302 Found", [("Location", "/ok"), ("Content-Length", "0")])
            return [b""]
        if path == "ok":
            message = json.loads(body or b"{}")
            if message.get("type") == "turn":
                return self._json(start_response, {"action": message["legal_actions"][0]})
            start_response("200 OK", [("Content-Length", "0")])
            return [b""]
        start_response("404 Not Found", [("Content-Length", "0")])
        return [b""]

    @staticmethod
    def _json(start_response, payload):
        data = json.dumps(payload).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
        return [data]
