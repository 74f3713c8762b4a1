"""`GET /health`: whether the platform is up, and what of it works here.

`hosted_bots` says whether hosted bots can run (core/sandbox.py `unavailable`:
bubblewrap installed, user namespaces allowed, a sandbox started once per
process); where not, registering one answers 503 `sandbox_unavailable`.
"""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint

from core import sandbox

blp = Blueprint("health", __name__, description="Whether the platform is up")


class HostedBotsSchema(ma.Schema):
    available = ma.fields.Boolean(required=True, metadata={
        "description": "whether hosted bots run here (their sandbox starts)"})
    reason = ma.fields.String(allow_none=True, required=True, metadata={
        "description": "why not (null when they do)"})


class HealthSchema(ma.Schema):
    status = ma.fields.String(required=True, metadata={"description": '"ok": the API answers'})
    hosted_bots = ma.fields.Nested(HostedBotsSchema, required=True)


@blp.get("/health")
@blp.response(200, HealthSchema)
def health():
    """Whether the API is up and hosted bots can run here (no credentials needed)."""
    reason = sandbox.unavailable()
    return {"status": "ok", "hosted_bots": {"available": reason is None, "reason": reason}}
