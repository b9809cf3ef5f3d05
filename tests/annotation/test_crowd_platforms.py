"""Crowd platforms as a registry (annotation/services/crowd/platforms/).

Every Topic.Crowd value has a platform, and a new platform is one module plus its registration:
the fake platform below is registered from this test alone and goes through the normal services
(budget, publish on commit, claim, provisional submit, reconcile, verification) with no other
module edited.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.db import transaction

from annotation.models import Assignment, Hit, HitItem, Judgment, Label, Topic
from annotation.services.crowd import platforms
from annotation.services.crowd.assignments import assignment_claim, assignment_claim_for_hit
from annotation.services.crowd.crowds import (
    CrowdUnavailable,
    crowd_cost_per_assignment,
    crowd_reconcile_all,
)
from annotation.services.crowd.hits import topic_committed_cost
from annotation.services.crowd.platforms import CrowdPlatform, platform_get, platforms_all
from annotation.services.crowd.provisional import (
    PENDING,
    UNVERIFIED,
    VERIFIED,
    Confirmation,
    assignment_provisional_settle,
    assignment_provisional_submit,
    topic_verification_counts,
)
from annotation.services.crowd.workers import worker_for_external_id
from annotation.services.sampling.draws import samples_launch
from tests.factories import make_pair_world

pytestmark = pytest.mark.django_db

FAKE = "fakecrowd"
NEVER_CONFIRMED = "The fake crowd never confirmed this assignment."


class FakePlatform(CrowdPlatform):
    """A crowd that charges a cent per assignment, publishes after commit and confirms what it was told to."""

    key = FAKE
    provisional = True

    def __init__(self) -> None:
        self.published: list[int] = []
        self.real: set[str] = set()  # assignment ids the platform knows
        self.forged: set[str] = set()  # assignment ids it says belong to someone else

    def cost_per_assignment(self, *, reward: Decimal, assignments: int) -> Decimal:
        return reward + Decimal("0.01")

    def hit_publish_on_commit(self, *, hit: Hit) -> None:
        transaction.on_commit(lambda: self._publish(hit.pk))

    def _publish(self, hit_pk: int) -> None:
        Hit.objects.filter(pk=hit_pk, external_id__isnull=True).update(external_id=f"FAKE-{hit_pk}")
        self.published.append(hit_pk)

    def assignment_verify(self, *, assignment: Assignment, now: datetime | None = None) -> str:
        external_id = assignment.external_id or ""
        if external_id in self.real:
            confirmation = Confirmation(confirmed=True)
        elif external_id in self.forged:
            confirmation = Confirmation(confirmed=False, reason="another worker holds it")
        else:
            confirmation = Confirmation(confirmed=None, reason="not known yet")
        return assignment_provisional_settle(
            assignment=assignment, confirmation=confirmation, give_up_after=assignment.claimed_at + timedelta(hours=1),
            platform_name="the fake crowd", unverified_message=NEVER_CONFIRMED, now=now,
        )

    def reconcile(self) -> dict[str, int]:
        from annotation.services.crowd.crowds import crowd_assignments_verify

        return crowd_assignments_verify(crowd=self.key)

    def unpublished_count(self, *, topic: Topic) -> int:
        return Hit.objects.filter(topic=topic, status=Hit.Status.OPEN, external_id__isnull=True).count()


@pytest.fixture
def fake(monkeypatch) -> FakePlatform:
    platform = FakePlatform()
    monkeypatch.setitem(platforms._REGISTRY, FAKE, platform)
    return platform


def test_every_crowd_choice_has_a_registered_platform():
    for value in Topic.Crowd.values:
        assert platform_get(value).key == value
    assert {platform.key for platform in platforms_all()} == set(Topic.Crowd.values)


def test_an_unknown_crowd_is_refused_by_the_registry():
    with pytest.raises(CrowdUnavailable, match="unknown crowd"):
        platform_get("carrier-pigeon")


def test_only_mturk_holds_submissions_until_confirmed():
    assert platform_get(Topic.Crowd.MTURK).provisional
    assert not platform_get(Topic.Crowd.LOCAL).provisional


def test_reconcile_runs_every_registered_platform(fake, monkeypatch):
    ran = []
    monkeypatch.setattr(fake, "reconcile", lambda: ran.append(FAKE) or "done")
    monkeypatch.setattr("annotation.services.crowd.mturk_reconcile.mturk_reconcile_all", lambda: "mturk done")
    summaries = crowd_reconcile_all()
    assert ran == [FAKE]
    assert summaries == {Topic.Crowd.LOCAL: None, Topic.Crowd.MTURK: "mturk done", FAKE: "done"}


def test_a_new_platform_publishes_and_verifies_through_the_normal_services(fake, django_capture_on_commit_callbacks):
    world = make_pair_world(n=300, seed=4, crowd=FAKE, reward_per_hit=Decimal("0.10"))
    # Budget and cost: the platform's price per assignment.
    assert crowd_cost_per_assignment(world.topic) == Decimal("0.11")
    with django_capture_on_commit_callbacks(execute=True):
        launch = samples_launch(topic=world.topic, per_region=3, seed=1)
    assert launch.hits
    assert topic_committed_cost(topic=world.topic) == Decimal("0.11") * 3 * len(launch.hits)
    # Published once the launch committed, with the platform's own HIT ids.
    assert fake.published == [hit.pk for hit in launch.hits]
    assert fake.unpublished_count(topic=world.topic) == 0
    hit = Hit.objects.select_related("topic").get(pk=launch.hits[0].pk)
    assert hit.external_id == f"FAKE-{hit.pk}"
    # Its HITs are not handed out on the built-in annotator pages.
    assert assignment_claim(worker=worker_for_external_id(platform=FAKE, external_id="W0"), topic=world.topic) is None

    documents = list(HitItem.objects.filter(hit=hit).values_list("document_id", flat=True))
    answers = dict.fromkeys(documents, True)
    for n in range(3):
        worker = worker_for_external_id(platform=FAKE, external_id=f"W{n}")
        assignment_claim_for_hit(worker=worker, hit=hit, external_assignment_id=f"A{n}")
        submission = assignment_provisional_submit(
            hit=hit, platform=FAKE, external_assignment_id=f"A{n}", external_worker_id=f"W{n}", answers=answers,
            window=timedelta(hours=1), unverified_message=NEVER_CONFIRMED,
        )
        assert not submission.counted
    assert Judgment.objects.count() == 0  # provisional: nothing counts yet
    assert topic_verification_counts(topic=world.topic) == {PENDING: 3, UNVERIFIED: 0}

    fake.real |= {"A0", "A1"}
    fake.forged.add("A2")
    assert crowd_reconcile_all()[FAKE] == {VERIFIED: 2, UNVERIFIED: 1}
    assert Judgment.objects.filter(assignment__hit=hit).count() == 2 * len(documents)
    assert {label.votes_total for label in Label.objects.filter(topic=world.topic, document_id__in=documents)} == {2}
    forged = Assignment.objects.get(external_id="A2")
    assert forged.status == Assignment.Status.EXPIRED and NEVER_CONFIRMED in forged.feedback
    assert topic_verification_counts(topic=world.topic) == {PENDING: 0, UNVERIFIED: 1}
    # The same worker id on another platform is another worker.
    assert worker_for_external_id(platform=Topic.Crowd.MTURK, external_id="W0") != worker_for_external_id(
        platform=FAKE, external_id="W0")


def test_an_unknown_submission_waits_then_is_given_up(fake):
    world = make_pair_world(n=300, seed=5, crowd=FAKE)
    launch = samples_launch(topic=world.topic, per_region=2, seed=1)
    hit = Hit.objects.select_related("topic").get(pk=launch.hits[0].pk)
    answers = dict.fromkeys(HitItem.objects.filter(hit=hit).values_list("document_id", flat=True), False)
    worker = worker_for_external_id(platform=FAKE, external_id="W9")
    assignment = assignment_claim_for_hit(worker=worker, hit=hit, external_assignment_id="A9")
    assignment_provisional_submit(hit=hit, platform=FAKE, external_assignment_id="A9", external_worker_id="W9",
                                  answers=answers, window=timedelta(hours=1), unverified_message=NEVER_CONFIRMED)
    assignment.refresh_from_db()
    assert fake.assignment_verify(assignment=assignment) == PENDING
    later = assignment.claimed_at + timedelta(hours=2)
    assert fake.assignment_verify(assignment=assignment, now=later) == UNVERIFIED
    assert Judgment.objects.count() == 0
