"""Property-based run of the API against its own schema (schemathesis): no input may cause a 5xx.

Every operation of docs/openapi.yaml is called with generated path ids, query strings, headers and
bodies (valid and invalid), as an analyst (who may call every endpoint) on a small world whose
objects have low ids, so generated ids often hit real objects. Bounded: MAX_EXAMPLES per operation.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
import yaml
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, settings

from api.services import api_token_create
from tests.factories import make_pair_world, user_with_role

MAX_EXAMPLES = 12
RAW = yaml.safe_load((Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml").read_text(encoding="utf-8"))
schema = schemathesis.openapi.from_dict(RAW)
schema.app = get_wsgi_application()

pytestmark = pytest.mark.slow


@pytest.fixture
def token(db) -> str:
    make_pair_world(n=150, prevalence=0.3)
    return api_token_create(user=user_with_role("fuzz", "analyst"), name="fuzz").plaintext


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_no_input_causes_a_server_error(case, token):
    response = case.call(headers={"Authorization": f"Bearer {token}"})
    assert response.status_code < 500, (case.method, case.formatted_path, case.query, case.body,
                                        response.text[:500])
