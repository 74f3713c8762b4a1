"""The API against its own OpenAPI document (schemathesis): no input makes a 5xx.

Every operation of the document, positive and negative cases, each with the
credential that reaches its logic: a bot's secret for the turn endpoints
(with a decision pending, so a long-poll answers at once), the admin token
for the admin's endpoints, an account token elsewhere. Bounded examples per
operation and a timeout per request keep the whole run to a few minutes.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from tests.examples import examples
from tests.live import ADMIN_TOKEN
from tests.server.driving import next_decision

#: schemathesis' checks that hold here. Not `positive_data_acceptance`: a
#: schema-valid challenge naming a game or bot that does not exist is rightly 422.
CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance,
          negative_data_rejection]

MAX_EXAMPLES = 30
#: the document's operations are fuzzed in this many tests a mode (every `PARTS`-th operation
#: each), so that no one test runs long and xdist spreads them
PARTS = 4


@pytest.fixture()
def live_schema(api):
    return schemathesis.openapi.from_url(api.live.url + "/api/v1/openapi.json")


def test_openapi_document_describes_every_endpoint(api):
    document = api.ok(api.get("/openapi.json"), 200)
    assert document["openapi"].startswith("3.")
    paths = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert paths >= {
        ("GET", "/api/v1/games"), ("GET", "/api/v1/games/{game}/rankings"), ("POST", "/api/v1/accounts"),
        ("POST", "/api/v1/bots"), ("GET", "/api/v1/bots"), ("GET", "/api/v1/bots/{bot_id}"),
        ("DELETE", "/api/v1/bots/{bot_id}"), ("GET", "/api/v1/bots/me/turns"),
        ("POST", "/api/v1/matches/{match_id}/turns/{turn}"), ("POST", "/api/v1/matches"),
        ("GET", "/api/v1/matches/{match_id}"), ("POST", "/api/v1/tournaments"),
        ("GET", "/api/v1/tournaments/{tid}"), ("GET", "/api/v1/tournaments/{tid}/matches"),
        ("GET", "/api/v1/matches"), ("GET", "/api/v1/tournaments"), ("GET", "/api/v1/matches/{match_id}/events"),
        ("GET", "/api/v1/tournaments/{tid}/events"), ("GET", "/api/v1/matches/{match_id}/export"),
        ("GET", "/api/v1/tournaments/{tid}/export"), ("POST", "/api/v1/bots/{bot_id}/versions"),
        ("POST", "/api/v1/comparisons"), ("GET", "/api/v1/comparisons/{cid}"),
    }
    schemas = document["components"]["schemas"]
    assert {"MatchStepEvent", "MatchOverEvent", "TournamentProgressEvent", "TournamentMatchEvent", "Table",
            "MatchExport"} <= set(schemas)
    stream = document["paths"]["/api/v1/matches/{match_id}/events"]["get"]["responses"]["200"]
    assert "text/event-stream" in stream["content"]
    assert stream["x-events"]["step"] == {"$ref": "#/components/schemas/MatchStepEvent"}
    docs = api.session.get(api.live.url + "/docs", timeout=10)
    assert docs.status_code == 200 and "/docs/assets/swagger-ui-bundle.js" in docs.text
    asset = api.session.get(api.live.url + "/docs/assets/swagger-ui-bundle.js", timeout=10)
    assert asset.status_code == 200 and len(asset.content) > 100_000


@pytest.mark.slow
@pytest.mark.parametrize("part", range(PARTS))
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=lambda m: m.name.lower())
def test_no_input_makes_a_server_error(live_schema, api, mode, part):
    """Positive (then negative) cases for every operation, each sent over HTTP: a `PARTS`-th of
    the document's operations a test.

    Driven with hypothesis directly (schemathesis' pytest plugin does not run
    under this pytest version); `not_a_server_error` is schemathesis' own check.
    """
    token = api.account("fuzzer")
    bots = [api.bot(token, f"f{bot}", game="toy-high") for bot in range(2)]
    match = api.match(token, "toy-high", [b["id"] for b in bots], seed=1)
    decision, bot_id = next_decision(api.store, match["id"])
    api.store.await_answer(match["id"], {**decision, "deadline_ms": 3_600_000},  # polls answer at once
                           {"id": bot_id, "kind": "polling"})
    secret = next(b["secret"] for b in bots if b["id"] == bot_id)
    seen: dict[int, int] = {}
    operations = [result.ok() for result in live_schema.get_all_operations()]
    assert len(operations) >= 20  # every operation of the document, not a sample
    for operation in operations[part::PARTS]:
        credential = secret if "/turns" in operation.path else ADMIN_TOKEN if operation.path.endswith("/abort") \
            else token
        try:
            fuzz(operation, mode, {"Authorization": f"Bearer {credential}"}, seen)()
        except Unsatisfiable:
            # nothing to get wrong in a request without parameters or body
            assert mode is GenerationMode.NEGATIVE, operation.label
    print("statuses", sorted(seen.items()))
    assert sum(seen.values()) > 20 and not any(code >= 500 for code in seen)
    if mode is GenerationMode.POSITIVE:
        assert any(200 <= code < 300 for code in seen)
    else:
        assert 422 in seen


def fuzz(operation, mode, headers: dict, seen: dict[int, int]):
    """The hypothesis test of one operation in one mode, counting the statuses in `seen`."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=examples(MAX_EXAMPLES), deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def check(case):
        # a negative case may be negative *because* it dropped the credential: keep it dropped
        dropped = mode is GenerationMode.NEGATIVE and "Authorization" not in (case.headers or {})
        response = case.call(headers={} if dropped else headers, timeout=40)
        seen[response.status_code] = seen.get(response.status_code, 0) + 1
        if response.status_code == 414:  # a request line over 8 KB: the HTTP server's refusal, before the app
            return
        case.validate_response(response, checks=CHECKS, headers={} if dropped else headers)
        if response.status_code >= 400:
            body = response.json()
            assert set(body) == {"error"} and {"code", "message"} <= set(body["error"])

    return check
