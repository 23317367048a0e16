"""Checks of turnout's own, loaded by schemathesis (SCHEMATHESIS_HOOKS) in tests/it/openapi.rs.

- ``valid_requests_are_refused_only_for_the_last_message_rule``: a request the schema allows may
  still get a 400 for the one rule JSON Schema cannot say (the *last* message is the user's and
  not blank); any other 400 to a schema-valid body is a bug in the document or the parser.
- ``DecidesAtLeastOnce``: both POSTs answered 200 at least once, so the run reached the engine
  rather than only its refusals. It also writes what each operation answered to
  ``$TURNOUT_FUZZ_SUMMARY`` (JSON) for the test to print and check.
"""

import json
import os

import schemathesis

DECIDING = ("/v1/route", "/v1/try")
# The checks of Request::check that no JSON Schema keyword can express.
LAST_MESSAGE_RULE = {
    ("messages", "the last message must have role 'user'"),
    ("messages", "the user's message is empty"),
}


def _is_positive(case):
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive


@schemathesis.check
def valid_requests_are_refused_only_for_the_last_message_rule(ctx, response, case):
    if case.path not in DECIDING or response.status_code != 400 or not _is_positive(case):
        return None
    try:
        error = response.json()["error"]
        field = (error.get("field") or "").removeprefix("request.")
        said = (field, error.get("message"))
    except Exception as e:  # a 400 without the error body is its own failure
        raise AssertionError(f"a 400 without an error body: {e}")
    if said not in LAST_MESSAGE_RULE:
        raise AssertionError(f"a request the schema allows was refused: {str(said)[:300]}")
    return None


@schemathesis.check
class DecidesAtLeastOnce:
    """Fail if POST /v1/route or POST /v1/try never answered 200."""

    def __init__(self):
        self.statuses = {}

    def after_response(self, ctx, response, case):
        label = f"{case.method.upper()} {case.path}"
        seen = self.statuses.setdefault(label, {})
        code = str(response.status_code)
        seen[code] = seen.get(code, 0) + 1

    def after_run(self, ctx):
        path = os.environ.get("TURNOUT_FUZZ_SUMMARY")
        if path:
            with open(path, "w") as f:
                json.dump(self.statuses, f, indent=1, sort_keys=True)
        never = [
            f"POST {p}" for p in DECIDING if "200" not in self.statuses.get(f"POST {p}", {})
        ]
        if never:
            raise AssertionError("never answered 200: " + ", ".join(never))
