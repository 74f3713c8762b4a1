"""`/invites`: the admin's invites, when sign-up is by invite only (server/signup.py).

    POST   /invites        {note?, days?} → 201 {id, note, created, expires, code} (the code shown once)
    GET    /invites        the open invites (never their codes)
    DELETE /invites/{id}   revoke one → 204
"""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint

from core.store.invites import DEFAULT_DAYS, MAX_DAYS
from server.api.common import errors
from server.auth import require_admin, store
from server.errors import fail

blp = Blueprint("invites", __name__, description="Invites to create an account (the admin's)")


class InviteRequestSchema(ma.Schema):
    note = ma.fields.String(load_default="", validate=ma.validate.Length(max=200),
                            metadata={"description": "whom it is for (the admin's own note)"})
    days = ma.fields.Integer(load_default=DEFAULT_DAYS, validate=ma.validate.Range(1, MAX_DAYS),
                             metadata={"description": f"how long it lasts ({DEFAULT_DAYS} by default)"})


class InviteSchema(ma.Schema):
    id = ma.fields.String(required=True)
    note = ma.fields.String(required=True)
    created = ma.fields.String(required=True)
    expires = ma.fields.String(required=True)


class NewInviteSchema(InviteSchema):
    code = ma.fields.String(required=True, metadata={
        "description": "shown once: the invited person sends it as `invite` in POST /accounts"})


class InviteListSchema(ma.Schema):
    invites = ma.fields.List(ma.fields.Nested(InviteSchema), required=True)


@blp.post("/invites")
@blp.arguments(InviteRequestSchema)
@blp.response(201, NewInviteSchema)
@errors(blp, 401, 403, 422)
def create_invite(body):
    """Make an invite (admin only): its code, shown once, lets one person create one account."""
    require_admin()
    invite, code = store().create_invite(body["note"], body["days"])
    return {**invite, "code": code}


@blp.get("/invites")
@blp.response(200, InviteListSchema)
@errors(blp, 401, 403)
def list_invites():
    """The invites not yet used, revoked or expired (admin only)."""
    require_admin()
    return {"invites": store().open_invites()}


@blp.delete("/invites/<string:invite_id>")
@blp.response(204)
@errors(blp, 401, 403, 404)
def revoke_invite(invite_id: str):
    """Revoke an invite before it is used (admin only)."""
    require_admin()
    if not store().revoke_invite(invite_id):
        fail(404, "not_found", f"there is no open invite {invite_id!r}")
