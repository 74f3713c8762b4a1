"""Webhook URLs: their shape, and whether they reach only the public internet.

With `CARDARENA_PUBLIC_URLS_ONLY=1` a webhook must not point into the
referee's own network (SSRF): the host is resolved and every address it
resolves to must be public. The API checks at registration; the worker can
call `public_url_problem` again before each call, after name resolution,
since DNS may change in between.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit


def url_shape_problem(url: str) -> str | None:
    """Why `url` is not an absolute http(s) URL with a host, or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        return f"not a valid URL: {exc}"
    if parts.scheme not in ("http", "https"):
        return "a webhook URL must start with http:// or https://"
    if not parts.hostname:
        return "a webhook URL must name a host"
    if any(c.isspace() for c in url):
        return "a webhook URL must not contain spaces"
    return None


def public_url_problem(url: str) -> str | None:
    """Why `url` does not resolve to public addresses only, or None."""
    problem = url_shape_problem(url)
    if problem:
        return problem
    parts = urlsplit(url)
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80),
                                   proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        return f"cannot resolve {parts.hostname!r}: {exc}"
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if not address.is_global or address.is_multicast:
            return f"{parts.hostname!r} resolves to {address}, which is not a public address"
    return None
