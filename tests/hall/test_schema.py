"""Schemathesis against ``/api/openapi.json``: generated requests for every operation
(bounded examples), each answered without a server error and as the description says.
The endless live stream is left out (a test of its own covers it)."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import content_type_conformance, not_a_server_error, response_schema_conformance

from tests.app.conftest import make_app, session_events
from web.app.accounts import create_token
from web.store import get_store
from tests.store.support import temporary_url


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    with temporary_url("sqlite", tmp_path_factory.mktemp("schema")) as url:
        app = make_app(url)
        token = create_token(get_store(app), "T1")
        response = app.test_client().post("/api/tables/T1/events", json=session_events(),
                                          headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200
        yield app, token
        get_store(app).close()


def operations(app) -> list:
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", app)
    return [result.ok() for result in schema.get_all_operations()]


def test_every_operation_answers_as_described(hall):
    app, token = hall
    checked, described = [], operations(app)
    for operation in described:
        if operation.path == "/api/stream":
            continue
        agent = operation.method.upper() == "POST"

        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def answers(case):
            headers = {"Authorization": f"Bearer {token}"} if agent else None
            case.call_and_validate(headers=headers, checks=[not_a_server_error, content_type_conformance,
                                                            response_schema_conformance])

        answers()
        checked.append(f"{operation.method.upper()} {operation.path}")
    assert len(checked) == len(described) - 1 >= 7, checked  # all but the stream
