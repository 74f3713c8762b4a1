"""Every error is JSON: `{"error": {"code", "message"}}` with the right 4xx.

flask-smorest turns HTTP exceptions (Flask's own 404/405/413, webargs' 422
validation errors, our `fail()`) into a payload of its own shape; `Api`
below overrides that one method so the whole API speaks one error format,
and the OpenAPI document describes that format.
"""

from __future__ import annotations

import flask_smorest
import marshmallow as ma
from flask import current_app, g, request
from flask_smorest import abort

CODES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 409: "conflict", 413: "too_large", 415: "unsupported_media_type",
    422: "invalid", 429: "rate_limited", 500: "internal", 503: "unavailable",
}


#: where errors are always JSON; anywhere else an error is the web pages' HTML page when
#: they are installed (they put their renderer under `PAGE_ERRORS` in app.extensions)
JSON_PATHS = ("/api/", "/docs")
PAGE_ERRORS = "cardarena.page_error"


class ErrorBodySchema(ma.Schema):
    code = ma.fields.String(required=True)
    message = ma.fields.String(required=True)
    details = ma.fields.Raw()


class ErrorSchema(ma.Schema):
    error = ma.fields.Nested(ErrorBodySchema, required=True)


def fail(status: int, code: str, message: str, headers: dict | None = None):
    """Stop the request with an API error (raises)."""
    kwargs = {"message": message, "code": code}
    if headers:
        kwargs["headers"] = headers
    abort(status, **kwargs)


def _flatten(messages, prefix: str = "") -> list[str]:
    """webargs' nested validation messages as "where: what" lines."""
    if isinstance(messages, dict):
        out = []
        for key, value in messages.items():
            where = f"{prefix}.{key}" if prefix else str(key)
            out.extend(_flatten(value, where))
        return out
    if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        return [f"{prefix}: {' '.join(messages)}" if prefix else " ".join(messages)]
    if isinstance(messages, list):
        return [line for m in messages for line in _flatten(m, prefix)]
    return [f"{prefix}: {messages}" if prefix else str(messages)]


class Api(flask_smorest.Api):
    """flask-smorest's Api speaking cardarena's error format."""

    ERROR_SCHEMA = ErrorSchema

    def handle_http_exception(self, error):
        page = current_app.extensions.get(PAGE_ERRORS)
        if page is not None and not request.path.startswith(JSON_PATHS):
            return page(error)  # a person's browser, not a client of the API: an HTML page
        status = error.code or 500
        data = getattr(error, "data", None) or {}
        headers = dict(data.get("headers") or {})
        code = data.get("code") or CODES.get(status, "error")
        message = data.get("message")
        body: dict = {"code": code}
        if "messages" in data or "errors" in data:
            details = data.get("errors", data.get("messages"))
            lines = _flatten(details)
            message = message or "; ".join(lines) or "invalid request"
            body["details"] = details
        if status == 429 and "Retry-After" not in headers:
            headers["Retry-After"] = _retry_after(error)
        elif "Retry-After" in headers:
            g.retry_after = headers["Retry-After"]  # ours, not the limiter's window (server/headers.py)
        if status >= 500 and status != 503:  # a 503 says why (a busy server, a service down)
            current_app.logger.exception("server error")
            message = "internal server error"
        body["message"] = message or error.description or error.name
        return {"error": body}, status, headers


def _retry_after(error) -> str:
    """A fallback Retry-After: the exceeded limit's window (Flask-Limiter
    refines it to the exact reset time when its headers are enabled)."""
    runtime_limit = getattr(error, "limit", None)
    item = getattr(runtime_limit, "limit", None)
    try:
        return str(int(item.get_expiry()))
    except (AttributeError, TypeError, ValueError):
        return "60"
