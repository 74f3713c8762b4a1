"""`POST /accounts`: a name in, an id and a token out (the token shown once).

Sign-up is open, or by invite only (`CARDARENA_SIGNUP=invite`, server/signup.py): then
the request carries an invite the admin made (`POST /invites`, server/api/invites.py),
used up by the account it makes.
"""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint

from core.store.accounts import InviteInvalid
from server.api.common import Name, errors
from server.auth import store
from server.errors import fail
from server.signup import signup_mode

blp = Blueprint("accounts", __name__, description="Accounts own bots, matches and tournaments")


class AccountRequestSchema(ma.Schema):
    name = Name(required=True)
    invite = ma.fields.String(load_default=None, validate=ma.validate.Length(max=200), metadata={
        "description": "an invite's code (`cai_…`): needed when sign-up is by invite only, ignored otherwise"})


class AccountSchema(ma.Schema):
    id = ma.fields.String(required=True)
    name = ma.fields.String(required=True)
    token = ma.fields.String(required=True, metadata={"description": "shown once; send as 'Authorization: Bearer <token>'"})


@blp.post("/accounts")
@blp.arguments(AccountRequestSchema)
@blp.response(201, AccountSchema)
@errors(blp, 403, 422, 429)
def create_account(body):
    """Create an account (rate-limited per network: an IPv4 /24, an IPv6 /64). When sign-up is by
    invite only, the body's `invite` is needed (403 `invite_required`, `invite_invalid`)."""
    if signup_mode() != "invite":
        account, token = store().create_account(body["name"])
        return {**account, "token": token}
    if not body["invite"]:
        fail(403, "invite_required", "this platform makes accounts by invite only: send the code of an invite "
                                     "its admin gave you as \"invite\"")
    try:
        account, token = store().create_account(body["name"], invite=body["invite"])
    except InviteInvalid:
        fail(403, "invite_invalid", "that invite is unknown, used, revoked or expired: ask the platform's admin "
                                    "for another")
    return {**account, "token": token}
