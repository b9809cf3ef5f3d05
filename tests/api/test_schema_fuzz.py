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
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from api.services import api_token_create
from tests.factories import make_pair_world, user_with_role

MAX_EXAMPLES = 12
RAW = yaml.safe_load((Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml").read_text(encoding="utf-8"))
schema = schemathesis.openapi.from_dict(RAW)
schema.app = get_wsgi_application()

pytestmark = pytest.mark.slow


@pytest.fixture
def _keep_the_test_connection():
    """As Django's test client does: the WSGI handler's request signals must not close the connection that
    holds the test's transaction (PostgreSQL would then refuse every later query)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def token(db, _keep_the_test_connection) -> str:
    world = make_pair_world(n=150, prevalence=0.3)
    from annotation.services.classifiers.router_builds import (
        router_build_start,  # and a router build, for /router-builds/
    )
    from annotation.services.topics.topic_sets import (
        topic_set_create,  # a topic set too, for /topic-sets/ and /routers/
    )

    topic_set = topic_set_create(corpus=world.topic.corpus, name="fuzz set", classes=[("Wheat", ""), ("Corn", "")])
    router_build_start(topic=topic_set, name="fuzz router", kind="keywords", rules=[{"class": 1, "terms": ["a"], "fields": ["title"]}])
    return api_token_create(user=user_with_role("fuzz", "analyst"), name="fuzz").plaintext


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_no_input_causes_a_server_error(case, token):
    response = case.call(headers={"Authorization": f"Bearer {token}"})
    assert response.status_code < 500, (case.method, case.formatted_path, case.query, case.body,
                                        response.text[:500])
