"""Webhook bots: the referee POSTs each decision to the bot's URL.

Everything a remote bot can do wrong is bounded here:

* time — the connect and read timeouts come from the match's
  `move_timeout_ms`, and the whole exchange (body included) must fit in it;
* size — the answer is read in chunks and refused past 64 KB, so a 10 MB
  body costs 64 KB of memory;
* where — redirects are not followed, and with `CARDARENA_PUBLIC_URLS_ONLY=1`
  the URL is resolved again before every call and refused if it reaches a
  private address;
* what — the answer must be a JSON object holding `action` (the runner then
  checks it is legal).

Every call carries `X-Cardarena-Signature: sha256=<HMAC of the body>` keyed
with the bot's secret (api.md §3). One `requests.Session` per process keeps
connections alive across the decisions of a match.
"""

from __future__ import annotations

import json
import os
import time

import requests

from sdk.protocol import SIGNATURE_HEADER, sign  # the protocol's one definition of the signature
from server.urls import public_url_problem
from worker.drivers.base import Driver, Reply, short

#: the largest answer read from a bot
MAX_ANSWER = 64 * 1024

_session: requests.Session | None = None
_session_pid: int | None = None


def session() -> requests.Session:
    """This process's pooled session (a forked child gets its own)."""
    global _session, _session_pid
    if _session is None or _session_pid != os.getpid():
        _session = requests.Session()
        adapter = requests.adapters.HTTPAdapter(pool_connections=32, pool_maxsize=32, max_retries=0)
        _session.mount("http://", adapter)
        _session.mount("https://", adapter)
        _session.headers["User-Agent"] = "cardarena-referee/1"
        _session.trust_env = False  # no proxy from the environment between referee and bot
        _session_pid = os.getpid()
    return _session


class WebhookDriver(Driver):
    def __init__(self, bot: dict, secret: str, context=None) -> None:
        self.url = bot["url"]
        self.secret = secret
        self.public_only = os.environ.get("CARDARENA_PUBLIC_URLS_ONLY") == "1"

    def post(self, message: dict, seconds: float) -> tuple[int, bytes]:
        """POST `message` signed; (status, body) or an exception saying what went wrong."""
        if self.public_only:
            problem = public_url_problem(self.url)
            if problem:
                raise PermissionError(problem)
        body = json.dumps(message, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(body, self.secret)}
        began = time.monotonic()
        with session().post(self.url, data=body, headers=headers, timeout=(seconds, seconds),
                            allow_redirects=False, stream=True) as response:
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > MAX_ANSWER:
                raise OverflowError(f"answer of {int(declared)} bytes, over the {MAX_ANSWER // 1024} KB limit")
            chunks, size = [], 0
            for chunk in response.iter_content(16 * 1024):
                size += len(chunk)
                if size > MAX_ANSWER:
                    raise OverflowError(f"answer over the {MAX_ANSWER // 1024} KB limit")
                if time.monotonic() - began > seconds:
                    raise TimeoutError()
                chunks.append(chunk)
            return response.status_code, b"".join(chunks)

    def ask(self, decision: dict) -> Reply:
        seconds = decision["deadline_ms"] / 1000
        began = time.monotonic()
        try:
            status, body = self.post(decision, seconds)
        except (requests.Timeout, TimeoutError):
            return Reply(fault=f"timeout: no answer within {decision['deadline_ms']} ms")
        except requests.ConnectionError as exc:
            return Reply(fault=short(f"unreachable: {_reason(exc)}"))
        except OverflowError as exc:
            return Reply(fault=f"too large: {exc}")
        except PermissionError as exc:
            return Reply(fault=short(f"refused URL: {exc}"))
        except requests.RequestException as exc:
            return Reply(fault=short(f"error: {type(exc).__name__}: {_reason(exc)}"))
        if time.monotonic() - began > seconds:
            return Reply(fault=f"timeout: answered after the {decision['deadline_ms']} ms deadline")
        if 300 <= status < 400:
            return Reply(fault=f"HTTP {status}: redirects are not followed")
        if status != 200:
            return Reply(fault=short(f"HTTP {status}: {body[:100].decode('utf-8', 'replace')}"))
        try:
            answer = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return Reply(fault=short(f"garbage: the answer is not JSON: {body[:60]!r}"))
        if not isinstance(answer, dict) or "action" not in answer:
            return Reply(fault=short(f"garbage: expected {{\"action\": ...}}, got {json.dumps(answer)[:80]}"))
        return Reply(action=answer["action"])

    def match_over(self, match_id: str, result: dict) -> None:
        try:
            self.post({"type": "match_over", "match_id": match_id, "result": result}, 2.0)
        except Exception:
            pass


def _reason(exc: Exception) -> str:
    """The innermost cause of a requests error, without its object addresses."""
    while exc.__context__ is not None and exc.args and not isinstance(exc.args[0], str):
        exc = exc.__context__
    text = str(exc)
    return text.split("object at 0x")[0] if "object at 0x" in text else text
