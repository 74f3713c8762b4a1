"""`POST /accounts`: a name in, an id and a token out (the token shown once)."""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint

from server.api.common import Name, errors
from server.auth import store

blp = Blueprint("accounts", __name__, description="Accounts own bots, matches and tournaments")


class AccountRequestSchema(ma.Schema):
    name = Name(required=True)


class AccountSchema(ma.Schema):
    id = ma.fields.String(required=True)
    name = ma.fields.String(required=True)
    token = ma.fields.String(required=True, metadata={"description": "shown once; send as 'Authorization: Bearer <token>'"})


@blp.post("/accounts")
@blp.arguments(AccountRequestSchema)
@blp.response(201, AccountSchema)
@errors(blp, 422, 429)
def create_account(body):
    """Create an account (rate-limited per address, and over every address together)."""
    account, token = store().create_account(body["name"])
    return {**account, "token": token}
