"""The boto3 Mechanical Turk client and the exact requests we send it.

Nothing here writes to the database. Credentials come only from the environment
(boto3 reads AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY itself; we merely check they
are there, so a missing key is a clear `MturkNotConfigured` and never a hang on the
instance-metadata endpoint). The sandbox is the default; production is used only
when settings.MTURK_ENVIRONMENT is exactly "production".

Tests inject a client (wrapped in botocore's Stubber) with `mturk_client_override`.
"""
from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

import boto3
from botocore.config import Config
from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)
from django.conf import settings
from django.urls import reverse

from annotation.models import Hit
from core.errors import ApplicationError

ENDPOINTS = {
    "sandbox": "https://mturk-requester-sandbox.us-east-1.amazonaws.com",
    "production": "https://mturk-requester.us-east-1.amazonaws.com",
}
# Where a worker's browser hands the finished assignment back (the turkSubmitTo parameter).
WORKER_SUBMIT_HOSTS = ("https://www.mturk.com", "https://workersandbox.mturk.com")
# MTurk shows the external page in an iframe on these sites (CSP frame-ancestors).
WORKER_FRAME_ANCESTORS = WORKER_SUBMIT_HOSTS
EXTERNAL_QUESTION_NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
)
PREVIEW_ASSIGNMENT_ID = "ASSIGNMENT_ID_NOT_AVAILABLE"

# System qualification types (MTurk documentation, "QualificationRequirement").
QUALIFICATION_APPROVAL_RATE = "000000000000000000L0"  # PercentAssignmentsApproved
QUALIFICATION_LOCALE = "00000000000000000071"  # Locale
QUALIFICATION_NUMBER_APPROVED = "00000000000000000040"  # NumberHITsApproved

HIT_TITLE = "Judge whether short documents match a topic ({n} documents)"
HIT_DESCRIPTION = (
    "Read each document and answer yes or no: is it about the topic described in the instructions?"
)
HIT_KEYWORDS = "relevance, judgment, classification, text, documents"

# Error codes and messages MTurk uses for throttling and transient faults; botocore
# already retries these a few times with backoff, we retry the whole call later.
TRANSIENT_ERROR_CODES = {"ServiceFault", "Throttling", "ThrottlingException", "ServiceUnavailable"}
TRANSIENT_EXCEPTIONS = (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError, BotoConnectionError)


class MturkError(ApplicationError):
    """Mechanical Turk could not do what was asked; the message says why."""


class MturkNotConfigured(MturkError):
    """Settings or credentials are missing or invalid; nothing was sent."""


class MturkUnavailable(MturkError):
    """MTurk did not answer or refused for now (network, throttling); safe to retry."""


_client_override: Any = None


@contextmanager
def mturk_client_override(client: Any) -> Iterator[Any]:
    """Make `mturk_client_get()` return `client` (tests wrap it in a Stubber)."""
    global _client_override
    previous, _client_override = _client_override, client
    try:
        yield client
    finally:
        _client_override = previous


def mturk_environment() -> str:
    environment = settings.MTURK_ENVIRONMENT
    if environment not in ENDPOINTS:
        # A typo such as "prod" must not silently mean the sandbox nor production.
        raise MturkNotConfigured(
            f"MTURK_ENVIRONMENT is {environment!r}; it must be 'sandbox' (the default) or 'production'"
        )
    return environment


def mturk_endpoint_url() -> str:
    return ENDPOINTS[mturk_environment()]


def mturk_client_get() -> Any:
    """The boto3 MTurk client for the configured environment (or the injected one)."""
    if _client_override is not None:
        return _client_override
    endpoint = mturk_endpoint_url()
    missing = [name for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if not os.environ.get(name)]
    if missing:
        raise MturkNotConfigured(f"Mechanical Turk credentials are missing: set {' and '.join(missing)}")
    return boto3.session.Session().client(
        "mturk",
        region_name=settings.MTURK_REGION,
        endpoint_url=endpoint,
        config=Config(connect_timeout=5, read_timeout=15, retries={"mode": "standard", "max_attempts": 3}),
    )


def hit_external_url(*, hit_id: int) -> str:
    """The page MTurk frames for this HIT: MTURK_EXTERNAL_BASE_URL + /mturk/hit/<id>/ (HTTPS only)."""
    base = (settings.MTURK_EXTERNAL_BASE_URL or "").rstrip("/")
    parts = urlsplit(base)
    if not base:
        raise MturkNotConfigured("MTURK_EXTERNAL_BASE_URL is not set (the public https:// address of this app)")
    if parts.scheme != "https" or not parts.netloc or parts.query or parts.fragment:
        raise MturkNotConfigured(
            f"MTURK_EXTERNAL_BASE_URL must be an https:// address without query or fragment, not {base!r}"
        )
    return base + reverse("mturk:hit", kwargs={"hit_id": hit_id})


def external_question_xml(*, url: str, frame_height: int) -> str:
    return (
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}">'
        f"<ExternalURL>{escape(url)}</ExternalURL>"
        f"<FrameHeight>{int(frame_height)}</FrameHeight>"
        "</ExternalQuestion>"
    )


def unique_request_token(*, hit: Hit) -> str:
    """Deterministic per HIT row, so a retried CreateHIT can never make a second HIT.

    The digest covers the external URL (base address + HIT id) and the row's creation
    time, so two deployments sharing an AWS account, or a database rebuilt from scratch
    that reuses HIT ids, do not collide on a token (MTurk keeps tokens for 24 hours).
    """
    digest = hashlib.sha256(f"{hit_external_url(hit_id=hit.pk)}|{hit.created_at.isoformat()}".encode()).hexdigest()
    return f"recall-hit-{hit.pk}-{digest[:32]}"[:64]


def reward_string(reward: Decimal) -> str:
    reward = Decimal(reward)
    if reward != reward.quantize(Decimal("0.01")):
        raise MturkNotConfigured(f"a Mechanical Turk reward must be whole cents, not {reward}")
    if reward < Decimal("0.01"):
        raise MturkNotConfigured(f"a Mechanical Turk reward must be at least $0.01, not ${reward}")
    return f"{reward.quantize(Decimal('0.01')):f}"


def _locale_value(code: str) -> dict[str, str]:
    # "US" or "US-NY" (ISO 3166-1 country, optional ISO 3166-2 subdivision).
    match = re.fullmatch(r"([A-Z]{2})(?:-([A-Z0-9]{1,3}))?", code.strip().upper())
    if not match:
        raise MturkNotConfigured(f"MTURK_QUALIFICATION_LOCALES: {code!r} is not a country code such as US or US-NY")
    value = {"Country": match.group(1)}
    if match.group(2):
        value["Subdivision"] = match.group(2)
    return value


def qualification_requirements() -> list[dict[str, Any]]:
    """Approval rate, locale and number of approved HITs, from settings (0 / empty = off)."""
    requirements: list[dict[str, Any]] = []
    rate = settings.MTURK_QUALIFICATION_MIN_APPROVAL_RATE
    if rate:
        requirements.append(
            {
                "QualificationTypeId": QUALIFICATION_APPROVAL_RATE,
                "Comparator": "GreaterThanOrEqualTo",
                "IntegerValues": [int(rate)],
                "ActionsGuarded": "DiscoverPreviewAndAccept",
            }
        )
    locales = settings.MTURK_QUALIFICATION_LOCALES
    if locales:
        requirements.append(
            {
                "QualificationTypeId": QUALIFICATION_LOCALE,
                "Comparator": "In",
                "LocaleValues": [_locale_value(code) for code in locales],
                "ActionsGuarded": "DiscoverPreviewAndAccept",
            }
        )
    approved = settings.MTURK_QUALIFICATION_MIN_APPROVED
    if approved:
        requirements.append(
            {
                "QualificationTypeId": QUALIFICATION_NUMBER_APPROVED,
                "Comparator": "GreaterThanOrEqualTo",
                "IntegerValues": [int(approved)],
                "ActionsGuarded": "DiscoverPreviewAndAccept",
            }
        )
    return requirements


def create_hit_request(*, hit: Hit, document_count: int) -> dict[str, Any]:
    """The keyword arguments of `client.create_hit` for this HIT."""
    token = unique_request_token(hit=hit)
    return {
        "MaxAssignments": hit.max_assignments,
        "AutoApprovalDelayInSeconds": int(settings.MTURK_AUTO_APPROVAL_DELAY_SECONDS),
        "LifetimeInSeconds": int(settings.MTURK_LIFETIME_SECONDS),
        "AssignmentDurationInSeconds": int(settings.MTURK_ASSIGNMENT_DURATION_SECONDS),
        "Reward": reward_string(hit.reward),
        "Title": HIT_TITLE.format(n=document_count),
        "Keywords": HIT_KEYWORDS,
        "Description": HIT_DESCRIPTION,
        "Question": external_question_xml(
            url=hit_external_url(hit_id=hit.pk), frame_height=settings.MTURK_FRAME_HEIGHT
        ),
        # Lets an operator find our HIT in the requester console (and us, after a lost reply).
        "RequesterAnnotation": token,
        "QualificationRequirements": qualification_requirements(),
        "UniqueRequestToken": token,
    }


def error_code(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code", ""))
    return type(exc).__name__


def turk_error_code(exc: Exception) -> str:
    """MTurk's own code (e.g. AWS.MechanicalTurk.HitAlreadyExists), carried next to the AWS one."""
    if isinstance(exc, ClientError):
        return str(exc.response.get("TurkErrorCode", ""))
    return ""


def error_message(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Message", ""))
    return str(exc)


def is_transient(exc: Exception) -> bool:
    if isinstance(exc, TRANSIENT_EXCEPTIONS):
        return True
    if isinstance(exc, ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0
        return error_code(exc) in TRANSIENT_ERROR_CODES or status >= 500 or status == 429
    return False



def send_bonus_request(*, worker_id: str, amount: Decimal, assignment_id: str, reason: str, token: str) -> dict[str, Any]:
    """The keyword arguments of `client.send_bonus` (SendBonus) for one bonus.

    MTurk pays a bonus against one of the worker's assignments (it must have been submitted); `token`
    (the WorkerBonus row's request_token, at most 64 characters) is its UniqueRequestToken, so a retried
    call within MTurk's 24 hours pays nothing more: MTurk answers it with an error that
    `bonus_token_already_used` recognises.
    """
    if not token or len(token) > 64:
        raise MturkNotConfigured(f"a UniqueRequestToken must be 1 to 64 characters, not {len(token)}")
    return {
        "WorkerId": worker_id,
        "BonusAmount": reward_string(amount),
        "AssignmentId": assignment_id,
        "Reason": reason,
        "UniqueRequestToken": token,
    }


def bonus_token_already_used(exc: Exception) -> bool:
    """MTurk refused a SendBonus because its UniqueRequestToken was already processed: the bonus was paid.

    MTurk answers a repeated token with a RequestError whose message names the token, e.g.
    'The idempotency token "…" has already been processed.'
    """
    if not isinstance(exc, ClientError):
        return False
    message = error_message(exc).lower()
    return "token" in message and any(
        words in message for words in ("already been processed", "already been used", "already exists", "already used")
    )
