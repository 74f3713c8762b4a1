"""Who may create an account: the sign-up mode and the network a request comes from.

`CARDARENA_SIGNUP` (config `SIGNUP`): `open` (the default) lets anyone create an
account; `invite` only a person holding an invite the admin made (`POST /invites`,
core/store/invites.py).

New accounts are limited per network, not per address (`ACCOUNTS_RATE_LIMIT`,
server/app.py): one holder of an IPv4 /24 or an IPv6 /64 usually has every
address in it, so counting per address let one machine make accounts without end
by changing its address. There is no limit over every network together: that one
let ten networks lock every newcomer out for an hour. A platform meeting sign-ups
from many networks turns to invites.
"""

from __future__ import annotations

import ipaddress

from flask import current_app
from flask_limiter.util import get_remote_address

MODES = ("open", "invite")


def signup_mode() -> str:
    return current_app.config["SIGNUP"]


def network_of(address: str | None) -> str:
    """The network `address` counts in: its IPv4 /24, its IPv6 /64 (an IPv4-mapped IPv6
    address counts as its IPv4); anything unparsable counts as itself."""
    try:
        ip = ipaddress.ip_address((address or "").split("%")[0])
    except ValueError:
        return f"net:{address or '?'}"
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = 24 if ip.version == 4 else 64
    return f"net:{ipaddress.ip_network(f'{ip}/{prefix}', strict=False)}"


def request_network() -> str:
    """The network of this request's address (the limiter's key for new accounts)."""
    return network_of(get_remote_address())
