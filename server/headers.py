"""Response headers every page and answer carries, and the ones only some may.

* HTML pages get a Content-Security-Policy that their own files pass (the
  web pages load one script and one stylesheet from /web/static and run no
  inline code; the Swagger UI page at /docs has one inline script, allowed
  by its hash), `X-Frame-Options: DENY` and `frame-ancestors 'none'` (no
  clickjacking), and a referrer policy.
* Every response gets `X-Content-Type-Options: nosniff`: a bot's name or a
  JSON answer is never sniffed into something a browser runs.
* `Retry-After` only on 429 and 503, where it means something: Flask-Limiter
  writes it on every response it counts, which would tell well-behaved clients
  to wait on a 200 — and replace a view's own short delay (a refused
  long-poll: 1 s) with its whole window.

`install(app)` must run before the limiter is set up: Flask runs
after-request hooks in reverse order, so these run after the limiter's.
"""

from __future__ import annotations

import base64
import hashlib
import re

from flask import Flask, Response, g, request

#: the web pages: their own script and stylesheet, images inline (SVG charts), nothing framed
PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
               "frame-ancestors 'none'")
#: Swagger UI: its inline boot script by hash; it styles its widgets inline
DOCS_POLICY = ("default-src 'self'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
               "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
               "frame-ancestors 'none'")
RETRY_STATUSES = (429, 503)
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S)


def install(app: Flask) -> None:
    @app.after_request
    def security_headers(response: Response) -> Response:
        headers = response.headers
        headers["X-Content-Type-Options"] = "nosniff"
        if response.status_code not in RETRY_STATUSES:
            headers.pop("Retry-After", None)
        elif g.get("retry_after"):  # a view's own delay, which the limiter's hook overwrote
            headers["Retry-After"] = g.retry_after
        if response.mimetype == "text/html":
            headers["X-Frame-Options"] = "DENY"
            headers["Referrer-Policy"] = "same-origin"
            headers["Content-Security-Policy"] = _policy(response, docs_path)
        return response

    docs_path = "/" + app.config.get("OPENAPI_SWAGGER_UI_PATH", "docs").strip("/")


def _policy(response: Response, docs_path: str) -> str:
    """The pages' policy; for the Swagger UI page (our template, no user input) its inline script's hash."""
    if request.path != docs_path or response.direct_passthrough or response.is_streamed:
        return PAGE_POLICY
    inline = _INLINE_SCRIPT.findall(response.get_data())
    if not inline:
        return PAGE_POLICY
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s).digest()).decode()}'" for s in inline)
    return DOCS_POLICY.format(hashes=hashes)
