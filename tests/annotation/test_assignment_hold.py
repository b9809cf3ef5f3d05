"""Short holds on the built-in HIT page (issue 27): a claimed HIT is held for ASSIGNMENT_HOLD_SECONDS, renewed while
the annotator is active, up to ASSIGNMENT_TIMEOUT_SECONDS after the claim; an abandoned tab frees its place within
the hold. Before: every claim (also "submit and take the next HIT") held its place for the whole 30 minutes."""
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Hit, HitItem, Topic
from annotation.services.crowd.assignments import (
    AssignmentNotFound,
    assignment_claim,
    assignment_claim_for_hit,
    assignment_hold_renew,
    assignment_release,
    assignment_submit,
    assignments_expire,
)
from annotation.services.crowd.workers import worker_for_user
from annotation.services.sampling.draws import samples_launch
from tests.factories import make_pair_world, make_worker, user_with_role

pytestmark = pytest.mark.django_db

HOLD, TIMEOUT = 300, 1800


@pytest.fixture(autouse=True)
def _times(settings):
    settings.ASSIGNMENT_HOLD_SECONDS = HOLD
    settings.ASSIGNMENT_TIMEOUT_SECONDS = TIMEOUT


@pytest.fixture
def world():
    world = make_pair_world(n=600, prevalence=0.2, seed=9)
    samples_launch(topic=world.topic, per_region=4, seed=1)  # 12 documents → 3 HITs of 5, 5, 2 … at most 3 each
    return world


def _one_hit(world) -> Hit:
    hits = Hit.objects.filter(topic=world.topic).order_by("pk")
    hits.exclude(pk=hits[0].pk).update(status=Hit.Status.CANCELLED)
    return Hit.objects.get(pk=hits[0].pk)


def _answers(assignment):
    return dict.fromkeys(HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True), True)


def test_a_claim_is_held_for_the_hold_not_the_whole_timeout(world):
    now = timezone.now()
    a = assignment_claim(worker=make_worker(), topic=world.topic, now=now)
    assert a.deadline == now + timedelta(seconds=HOLD)


def test_an_abandoned_claim_frees_its_place_within_the_hold(world):
    hit = _one_hit(world)
    now = timezone.now()
    workers = [make_worker() for _ in range(4)]
    held = [assignment_claim(worker=w, topic=world.topic, now=now) for w in workers[:3]]
    assert all(a.hit_id == hit.pk for a in held)
    assert assignment_claim(worker=workers[3], topic=world.topic, now=now) is None  # full
    # Nobody renews: one second past the hold the sweep frees all three places (before: still held for 25 minutes).
    assert assignments_expire(now=now + timedelta(seconds=HOLD - 1)) == 0
    assert assignments_expire(now=now + timedelta(seconds=HOLD + 1)) == 3
    taken = assignment_claim(worker=workers[3], topic=world.topic, now=now + timedelta(seconds=HOLD + 1))
    assert taken is not None and taken.hit_id == hit.pk


def test_renewal_moves_the_hold_forward_and_stops_at_the_timeout(world):
    now = timezone.now()
    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic, now=now)
    at = now + timedelta(seconds=240)
    result = assignment_hold_renew(assignment_id=a.pk, worker=w, now=at)
    assert result.held and result.deadline == at + timedelta(seconds=HOLD)
    a.refresh_from_db()
    assert a.deadline == at + timedelta(seconds=HOLD)
    # An active annotator keeps the HIT until the timeout counted from the claim, never longer.
    late = now + timedelta(seconds=TIMEOUT - 60)
    result = assignment_hold_renew(assignment_id=a.pk, worker=w, now=late)
    assert result.held and result.deadline == a.claimed_at + timedelta(seconds=TIMEOUT)
    past = a.claimed_at + timedelta(seconds=TIMEOUT + 1)
    assignments_expire(now=past)
    result = assignment_hold_renew(assignment_id=a.pk, worker=w, now=past)
    assert not result.held


def test_a_renewal_never_shortens_the_deadline(world):
    now = timezone.now()
    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic, now=now)
    Assignment.objects.filter(pk=a.pk).update(deadline=now + timedelta(seconds=1000))
    result = assignment_hold_renew(assignment_id=a.pk, worker=w, now=now + timedelta(seconds=10))
    assert result.deadline == now + timedelta(seconds=1000)


def test_resuming_the_hit_in_progress_renews_its_hold(world):
    now = timezone.now()
    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic, now=now)
    back = now + timedelta(seconds=200)
    again = assignment_claim(worker=w, topic=world.topic, now=back)
    assert again.pk == a.pk and again.deadline == back + timedelta(seconds=HOLD)
    a.refresh_from_db()
    assert a.deadline == back + timedelta(seconds=HOLD)


def test_a_tab_that_slept_gets_its_place_back_while_it_is_free(world):
    _one_hit(world)
    now = timezone.now()
    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic, now=now)
    later = now + timedelta(seconds=HOLD + 30)
    assert assignments_expire(now=later) == 1
    result = assignment_hold_renew(assignment_id=a.pk, worker=w, now=later)
    assert result.held
    a.refresh_from_db()
    assert a.status == Assignment.Status.CLAIMED and a.deadline == later + timedelta(seconds=HOLD)
    assignment_submit(assignment_id=a.pk, worker=w, answers=_answers(a), now=later)  # nothing typed is lost


def test_a_place_taken_meanwhile_is_not_given_back_and_says_why(world):
    hit = _one_hit(world)
    now = timezone.now()
    sleeper = make_worker()
    a = assignment_claim(worker=sleeper, topic=world.topic, now=now)
    others = [make_worker() for _ in range(2)]
    for o in others:
        assignment_claim(worker=o, topic=world.topic, now=now + timedelta(seconds=100))
    later = now + timedelta(seconds=HOLD + 30)
    assert assignments_expire(now=later) == 1  # only the sleeper's (the others were claimed later)
    newcomer = assignment_claim(worker=make_worker(), topic=world.topic, now=later)
    assert newcomer is not None and newcomer.hit_id == hit.pk
    result = assignment_hold_renew(assignment_id=a.pk, worker=sleeper, now=later)
    assert not result.held and "Another worker has taken your place" in result.message
    assert Assignment.objects.filter(hit=hit, status="claimed").count() == 3


def test_a_returned_hit_is_never_held_again(world):
    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic)
    assignment_release(assignment_id=a.pk, worker=w)
    result = assignment_hold_renew(assignment_id=a.pk, worker=w)
    assert not result.held
    a.refresh_from_db()
    assert a.status == Assignment.Status.EXPIRED


def test_someone_elses_assignment_is_not_found(world):
    a = assignment_claim(worker=make_worker(), topic=world.topic)
    with pytest.raises(AssignmentNotFound):
        assignment_hold_renew(assignment_id=a.pk, worker=make_worker())


def test_a_platform_place_keeps_the_platform_time(world):
    Topic.objects.filter(pk=world.topic.pk).update(crowd="mturk")
    hit = Hit.objects.filter(topic=world.topic).first()
    now = timezone.now()
    w = make_worker()
    a = assignment_claim_for_hit(worker=w, hit=hit, now=now)
    assert a.deadline == now + timedelta(seconds=TIMEOUT)  # MTurk's worker: the whole timeout, no short hold
    result = assignment_hold_renew(assignment_id=a.pk, worker=w, now=now + timedelta(seconds=10))
    assert result.held and result.deadline == a.deadline


def test_the_page_renews_through_a_post_with_csrf(world):
    user = user_with_role("holder", "annotator")
    worker = worker_for_user(user=user)
    a = assignment_claim(worker=worker, topic=world.topic)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    url = reverse("annotator:hold", args=[a.pk])
    assert client.post(url).status_code == 403  # no CSRF token
    assert client.get(url).status_code == 405
    client.get(reverse("annotator:assignment", args=[a.pk]))
    token = client.cookies["csrftoken"].value
    response = client.post(url, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200
    data = response.json()
    assert data["held"] is True and data["deadline"]
    other = Client()
    other.force_login(user_with_role("nosy", "annotator"))
    assert other.post(url).status_code == 404  # not theirs
    analyst = Client()
    analyst.force_login(user_with_role("ana-hold", "analyst"))
    assert analyst.post(url).status_code == 403


def test_the_hit_page_says_the_hold_is_renewed_while_active(world):
    user = user_with_role("reader", "annotator")
    a = assignment_claim(worker=worker_for_user(user=user), topic=world.topic)
    client = Client()
    client.force_login(user)
    page = client.get(reverse("annotator:assignment", args=[a.pk])).content.decode()
    assert "Held for you while you work on it" in page
