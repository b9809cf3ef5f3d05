"""api/errors.py maps an ApplicationError by its own ``http_status`` and ``code`` (core/errors.py), never by a
list of classes: the statuses the API has always given stay with the errors that carry them."""
from __future__ import annotations

import json

import pytest

from annotation.services.classifiers.retrieved_upload import RetrievedUploadTooLarge
from annotation.services.corpora.corpus_uploads import CorpusUploadTooLarge
from annotation.services.crowd.hits import BudgetExceeded
from annotation.services.sampling.draws import SamplingError
from annotation.services.topics.topic_settings import TopicStatusError
from api.errors import PROBLEM_TYPE, problem_exception_handler
from api.services import IdempotencyConflict, TokenError
from core.errors import ApplicationError
from estimation.services.certification_plans import CertificationError


def _problem(exc: Exception) -> tuple[int, dict]:
    response = problem_exception_handler(exc, {})
    assert response is not None
    assert response.content_type == "application/problem+json"
    return response.status_code, response.data


@pytest.mark.parametrize("error_class, status, code", [
    (ApplicationError, 400, "invalid-request"),
    (TokenError, 400, "invalid-request"),
    (BudgetExceeded, 409, "conflict"),
    (TopicStatusError, 409, "conflict"),
    (CertificationError, 409, "conflict"),
    (IdempotencyConflict, 409, "conflict"),
    (SamplingError, 409, "conflict"),
])
def test_each_error_keeps_its_status_and_slug(error_class, status, code):
    assert (error_class.http_status, error_class.code) == (status, code)
    got_status, body = _problem(error_class("Not now."))
    assert got_status == status
    assert body["type"] == PROBLEM_TYPE + code and body["status"] == status and body["detail"] == "Not now."


@pytest.mark.parametrize("exc", [
    CorpusUploadTooLarge("Past the limit.", extra={"max_bytes": 10}),
    RetrievedUploadTooLarge("Past the limit.", max_bytes=10),
])
def test_a_body_past_its_limit_is_413_with_the_limit(exc):
    status, body = _problem(exc)
    assert status == 413
    assert body["type"] == PROBLEM_TYPE + "too-large" and body["max_bytes"] == 10


def test_any_error_is_mapped_by_its_attributes_alone():
    class Locked(ApplicationError):
        http_status = 423
        code = "locked"

    status, body = _problem(Locked("Locked.", extra={"max_bytes": 1}))
    assert (status, body["type"], body["title"]) == (423, PROBLEM_TYPE + "locked", "Error")
    assert "max_bytes" not in body  # a size limit travels with a 413 only


def test_a_files_bad_lines_travel_with_the_problem():
    lines = [{"line": 3, "problem": "no class"}]
    status, body = _problem(ApplicationError("Bad file.", extra={"lines": lines}))
    assert status == 400 and json.loads(json.dumps(body["lines"])) == lines


def test_anything_else_is_not_a_problem():
    assert problem_exception_handler(ValueError("a bug"), {}) is None
