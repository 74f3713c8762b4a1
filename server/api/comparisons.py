"""Comparisons: `POST /comparisons`, `GET /comparisons/{id}` (docs/api.md §5 "Comparisons").

Is the candidate better than the baseline? Deals are played — head to head in
both rotations, or against a field of opponents with the candidate and the
baseline in the same seat — until a sequential probability ratio test on the
mean of the per-deal statistic decides H1 (mean ≥ `delta1`) or H0 (mean ≤
`delta0`) at error rates `alpha` and `beta`, or `max_deals` is reached
(core/comparisons.py). Comparisons are unrated.

The candidate and the baseline may be two versions of one bot (core/store/versions.py):
naming the same bot twice compares its latest version with the one before, or the
versions `candidate_version` and `baseline_version` name. Every bot plays the version
it had when the comparison was created.
"""

from __future__ import annotations

import marshmallow as ma
from flask_smorest import Blueprint
from marshmallow import validate

from core.store.versions import version_of
from sdk.clock import DEFAULT_TIME
from sdk.comparison import figures, gauntlet_tables, sprt
from server.api.common import (
    ID,
    MAX_FAULTS,
    MOVE_TIMEOUT,
    NAME,
    TIME_BANK,
    check_consent,
    check_entrants,
    enqueue,
    errors,
    game_or_422,
)
from server.api.matches import draw_seed
from server.auth import require_account_or_admin, store
from server.errors import fail

blp = Blueprint("comparisons", __name__, description="Is the candidate better than the baseline? (SPRT)")

#: the most deals a comparison may play
MAX_DEALS = 20_000
#: opponents a substitution comparison may name
MAX_OPPONENTS = 16
#: comparisons one account may have deciding at once (the admin: no cap)
MAX_RUNNING = 3


class ComparisonRequestSchema(ma.Schema):
    game = ma.fields.String(required=True, validate=NAME)
    candidate = ma.fields.String(required=True, validate=ID)
    baseline = ma.fields.String(required=True, validate=ID)
    candidate_version = ma.fields.Integer(strict=True, validate=validate.Range(min=1), metadata={
        "description": "the candidate's version (default its latest)"})
    baseline_version = ma.fields.Integer(strict=True, validate=validate.Range(min=1), metadata={
        "description": "the baseline's version (default its latest; the candidate's version before "
                       "when the baseline is the same bot)"})
    opponents = ma.fields.List(ma.fields.String(validate=ID), validate=validate.Length(min=1, max=MAX_OPPONENTS),
                               metadata={"description": "a field: each deal at each table of opponents, played "
                                                        "once with the candidate and once with the baseline"})
    seats = ma.fields.Integer(strict=True, validate=validate.Range(min=2, max=10),
                              metadata={"description": "with opponents: the table size (default the game's)"})
    delta0 = ma.fields.Float(load_default=0.0, validate=validate.Range(min=-1, max=1))
    delta1 = ma.fields.Float(load_default=0.05, validate=validate.Range(min=-1, max=1))
    alpha = ma.fields.Float(load_default=0.05, validate=validate.Range(min=0.0001, max=0.5))
    beta = ma.fields.Float(load_default=0.05, validate=validate.Range(min=0.0001, max=0.5))
    max_deals = ma.fields.Integer(strict=True, load_default=2000, validate=validate.Range(min=1, max=MAX_DEALS))
    options = ma.fields.Dict(keys=ma.fields.String(validate=NAME), load_default=dict)
    move_timeout_ms = ma.fields.Integer(strict=True, load_default=DEFAULT_TIME.move_timeout_ms, validate=MOVE_TIMEOUT)
    time_bank_ms = ma.fields.Integer(strict=True, load_default=DEFAULT_TIME.time_bank_ms, validate=TIME_BANK)
    max_faults = ma.fields.Integer(strict=True, load_default=DEFAULT_TIME.max_faults, validate=MAX_FAULTS)
    seed = ma.fields.Integer(strict=True, validate=validate.Range(min=0, max=2**63 - 1))

    @ma.validates_schema
    def ordered_hypotheses(self, data: dict, **kwargs) -> None:
        if data["delta1"] <= data["delta0"]:
            raise ma.ValidationError("delta1 must be greater than delta0", "delta1")


class QueuedComparisonSchema(ma.Schema):
    id = ma.fields.String(required=True)
    status = ma.fields.String(required=True)


class ComparisonSchema(ma.Schema):
    id = ma.fields.String(required=True)
    game = ma.fields.String(required=True)
    candidate = ma.fields.String(required=True)
    baseline = ma.fields.String(required=True)
    candidate_version = ma.fields.Integer(metadata={"description": "the version of the candidate that plays"})
    baseline_version = ma.fields.Integer(metadata={"description": "the version of the baseline that plays"})
    opponents = ma.fields.List(ma.fields.String(), allow_none=True)
    status = ma.fields.String(required=True, metadata={
        "description": "queued, running, H0, H1, inconclusive (max_deals reached) or aborted"})
    deals = ma.fields.Integer(required=True, metadata={"description": "deals counted"})
    llr = ma.fields.Float(required=True, metadata={"description": "the log-likelihood ratio of H1 against H0"})
    bounds = ma.fields.List(ma.fields.Float(), required=True, metadata={
        "description": "[ln(β/(1−α)), ln((1−β)/α)]: H0 at or below the first, H1 at or above the second"})
    mean = ma.fields.Float(allow_none=True, metadata={"description": "the mean per-deal statistic"})
    ci95 = ma.fields.List(ma.fields.Float(), allow_none=True)
    delta0 = ma.fields.Float()
    delta1 = ma.fields.Float()
    alpha = ma.fields.Float()
    beta = ma.fields.Float()
    max_deals = ma.fields.Integer()
    history = ma.fields.List(ma.fields.List(ma.fields.Float()), metadata={
        "description": "[deals, llr] after each deal counted: the path drawn against the bounds"})
    created = ma.fields.String(allow_none=True)
    finished = ma.fields.String(allow_none=True)


@blp.post("/comparisons")
@blp.arguments(ComparisonRequestSchema)
@blp.response(202, QueuedComparisonSchema)
@errors(blp, 401, 403, 422, 429)
def create_comparison(body):
    """Compare a candidate bot with a baseline until the sequential test decides."""
    account = require_account_or_admin()
    s = store()
    if account is not None and sum(
            1 for cid in s.running_comparisons() if (s.get_comparison(cid) or {}).get("owner") == account["id"]
    ) >= MAX_RUNNING:
        fail(429, "too_many_comparisons", f"at most {MAX_RUNNING} comparisons per account decide at once",
             {"Retry-After": "60"})
    game = game_or_422(body["game"])
    cand, base, opponents = body["candidate"], body["baseline"], body.get("opponents") or []
    if {cand, base} & set(opponents) or len(set(opponents)) != len(opponents):
        fail(422, "invalid", "the opponents are other bots than the candidate and the baseline, each once")
    check_entrants(s, game.name, [cand, base, *opponents])
    check_consent(s, account, [cand, base, *opponents], body)
    versions = {**_versions(s, body), "opponent_versions": s.current_versions(opponents)}
    if opponents:
        seats = body.get("seats", game.min_seats)
        if not game.min_seats <= seats <= game.max_seats or not gauntlet_tables(opponents, seats - 1):
            fail(422, "invalid", f"{len(opponents)} opponents cannot fill tables of {seats} in {game.name}")
    else:
        seats = 2
        if not game.min_seats <= 2 <= game.max_seats:
            fail(422, "invalid", f"{game.name} is not played at 2 seats: name `opponents` to compare in a field")
    seed = body.get("seed", draw_seed())
    fields = {k: body[k] for k in ("game", "candidate", "baseline", "delta0", "delta1", "alpha", "beta",
                                   "max_deals", "options", "move_timeout_ms", "time_bank_ms", "max_faults")}
    comparison = s.create_comparison({**fields, **versions, "opponents": opponents, "seats": seats, "seed": seed},
                                     owner=account["id"] if account else None)
    enqueue("comparison", comparison["id"])
    return comparison


def _versions(s, body: dict) -> dict:
    """The versions that play: `candidate_version` and `baseline_version`, checked (422)."""
    cand, base = s.get_bot(body["candidate"]), s.get_bot(body["baseline"])
    latest_cand, latest_base = version_of(cand), version_of(base)
    cand_v = body.get("candidate_version", latest_cand)
    if cand["id"] != base["id"]:
        base_v = body.get("baseline_version", latest_base)
    else:
        if cand["kind"] == "polling":
            fail(422, "invalid", "a polling bot's versions are answered by one process: two of them cannot "
                 "play each other (register the new code as a bot of its own to compare)")
        if latest_cand == 1:
            fail(422, "invalid", f"bot {cand['id']!r} has one version: a comparison needs two bots or two "
                 "versions (POST /bots/{id}/versions)")
        if "baseline_version" not in body and cand_v == 1:
            fail(422, "invalid", "the candidate is version 1: name the baseline_version to compare it with")
        base_v = body.get("baseline_version", cand_v - 1)
        if cand_v == base_v:
            fail(422, "invalid", "the candidate and the baseline must be two bots or two versions of one")
    for who, bot, v, latest in (("candidate", cand, cand_v, latest_cand), ("baseline", base, base_v, latest_base)):
        if not 1 <= v <= latest:
            fail(422, "unknown_version", f"bot {bot['id']!r} has versions 1 to {latest}, not {v} ({who})")
    if cand["id"] == base["id"]:
        reached = [s.version_record(cand["id"], v) for v in (cand_v, base_v)]
        where = [(r.get("url"), r.get("entrypoint")) for r in reached]
        if where[0] == where[1]:
            fail(422, "invalid", f"versions {cand_v} and {base_v} of bot {cand['id']!r} are reached the same way "
                 f"({where[0][0] or where[0][1]}): the same code would play both seats. Give the new version "
                 "its own url (POST /bots/{id}/versions {\"url\": ...}) while the old one is still served")
    return {"candidate_version": cand_v, "baseline_version": base_v}


@blp.get("/comparisons/<string:cid>")
@blp.response(200, ComparisonSchema)
@errors(blp, 404)
def get_comparison(cid: str):
    """A comparison, live: deals counted, the log-likelihood ratio against its bounds, the mean."""
    c = comparison_record(cid)
    if c is None:
        fail(404, "not_found", f"there is no comparison {cid!r}")
    return c


def comparison_record(cid: str) -> dict | None:
    """What `GET /comparisons/{id}` answers (its page shows the same), or None."""
    s = store()
    c = s.get_comparison(cid)
    if c is None:
        return None
    test = sprt(c["delta0"], c["delta1"], c["alpha"], c["beta"], field=bool(c.get("opponents")))
    return {**c, **figures(test, *s.comparison_sums(cid)), "history": s.llr_history(cid)}
