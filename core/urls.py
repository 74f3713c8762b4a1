"""Webhook URLs: their shape, and whether they reach only the public internet.

A URL is accepted only if the referee can certainly call it: http or https,
a host that is an IP address or a DNS name whose IDNA form has labels of
1–63 characters and at most 253 in all, a port from 1 to 65535, no
credentials, no spaces or control characters. `POST /bots` refuses anything
else with 422; the worker checks again before calling (a URL stored before
these rules is a `refused_url` fault, never a crash).

With `CARDARENA_PUBLIC_URLS_ONLY=1` a webhook must not point into the
referee's own network (SSRF): every address the host resolves to must be
public. The API checks at registration; the worker checks the very addresses
it connects to, so a DNS answer that changes in between gains nothing. An IPv6
address that stands for an IPv4 one (NAT64, 6to4, IPv4-mapped and the like) is
judged as the IPv4 address it reaches.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL = 2000


@dataclass(frozen=True)
class Target:
    """Where a webhook URL points: what a connection needs."""

    scheme: str
    host: str          # IDNA-encoded (ASCII), or the IP address without brackets
    port: int
    path: str          # path and query, at least "/"
    is_ip: bool

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


class BadUrl(ValueError):
    """Why a URL cannot be called."""


def parse_target(url: str) -> Target:
    """The `Target` of an http(s) URL; `BadUrl` saying what is wrong otherwise."""
    if not isinstance(url, str) or not url:
        raise BadUrl("a webhook URL must be a non-empty string")
    if len(url) > MAX_URL:
        raise BadUrl(f"a webhook URL has at most {MAX_URL} characters")
    if any(not c.isprintable() or c.isspace() for c in url):
        raise BadUrl("a webhook URL must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise BadUrl(f"not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise BadUrl("a webhook URL must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise BadUrl("a webhook URL must not carry credentials (user:password@)")
    if not parts.hostname:
        raise BadUrl("a webhook URL must name a host")
    if port is not None and not 1 <= port <= 65535:
        raise BadUrl("a webhook URL's port must be from 1 to 65535")
    host, is_ip = _host(parts.hostname)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    if not path.isascii():
        path = _quote(path)
    return Target(parts.scheme, host, port or (443 if parts.scheme == "https" else 80), path, is_ip)


def _host(hostname: str) -> tuple[str, bool]:
    """The host as the socket layer takes it, and whether it is an IP address."""
    try:
        return str(ipaddress.ip_address(hostname.split("%")[0])), True
    except ValueError:
        pass
    try:
        ascii_host = hostname.encode("idna").decode("ascii")
    except UnicodeError:
        raise BadUrl(f"the host {hostname[:80]!r} is not a valid domain name "
                     "(its labels have 1 to 63 characters)") from None
    labels = ascii_host.rstrip(".").split(".")
    if len(ascii_host) > 253 or any(not 1 <= len(label) <= 63 for label in labels):
        raise BadUrl("a host name has labels of 1 to 63 characters and at most 253 in all")
    if any(not all(c.isalnum() or c in "-_" for c in label) for label in labels):
        raise BadUrl(f"the host {hostname[:80]!r} is not a valid domain name")
    return ascii_host.lower(), False


def _quote(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/?&=%:@!$'()*+,;~-._")


def url_shape_problem(url: str) -> str | None:
    """Why `url` is not a webhook URL the referee can call, or None."""
    try:
        parse_target(url)
    except BadUrl as exc:
        return str(exc)
    return None


#: IPv6 forms that carry an IPv4 address in their last 32 bits: NAT64's well-known prefix,
#: IPv4-translated (SIIT, ::ffff:0:a.b.c.d) and the deprecated IPv4-compatible (::a.b.c.d)
NAT64 = ipaddress.ip_network("64:ff9b::/96")
IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
#: IPv6 ranges never public, whatever Python's table says: NAT64 for local use (RFC 8215), whose
#: IPv4 may sit anywhere, and site-local (deprecated, still routed inside some networks)
NEVER_PUBLIC = (ipaddress.ip_network("64:ff9b:1::/48"), ipaddress.ip_network("fec0::/10"))


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (IPv4-mapped, 6to4, NAT64, IPv4-translated,
    IPv4-compatible), or None: a connection to it reaches that IPv4. (Teredo's 2001::/32 is
    not public in Python's table, so never reached.)"""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in NAT64 or ip in IPV4_TRANSLATED or (ip in IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_problem(address: str) -> str | None:
    """Why `address` (an IP) is not a public one, or None. An IPv6 address standing for an
    IPv4 one is judged as that IPv4 address."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if ip.version == 6:
        if any(ip in network for network in NEVER_PUBLIC):
            return f"{ip} is not a public address"
        inner = embedded_ipv4(ip)
        if inner is not None:
            return f"{ip} (standing for {inner}) is not a public address" if address_problem(str(inner)) else None
    if not ip.is_global or ip.is_multicast:
        return f"{ip} is not a public address"
    return None


def public_url_problem(url: str) -> str | None:
    """Why `url` does not resolve to public addresses only, or None."""
    try:
        target = parse_target(url)
    except BadUrl as exc:
        return str(exc)
    try:
        infos = socket.getaddrinfo(target.host, target.port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        return f"cannot resolve {target.host!r}: {exc}"
    for info in infos:
        problem = address_problem(str(info[4][0]))
        if problem:
            return f"{target.host!r} resolves to {problem.replace(' is ', ', which is ', 1)}"
    return None
