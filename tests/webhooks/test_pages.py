"""The manager's webhook pages: roles, registration (secret shown once), delete, the log, replay (POST + CSRF)."""
from __future__ import annotations

import pytest
from django.template import engines
from django.test import Client

from tests.factories import HOSTILE, HOSTILE_TEXT, PASSWORD, TopicFactory, user_with_role
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services.deliveries import webhook_deliveries_create, webhook_delivery_send
from webhooks.services.endpoints import webhook_endpoint_create

pytestmark = pytest.mark.django_db
Status = WebhookDelivery.Status

PAGES = ["/webhooks/", "/webhooks/deliveries/"]


@pytest.fixture
def users():
    return {role: user_with_role(f"u-{role}", role) for role in ("manager", "analyst", "annotator")} | {
        "norole": user_with_role("u-none")}


def _client(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


@pytest.fixture
def delivered(receiver):
    endpoint = webhook_endpoint_create(url=receiver.url(), events=[WebhookEvent.IMPORT_FINISHED])
    [delivery] = webhook_deliveries_create(event=WebhookEvent.IMPORT_FINISHED, topic_id=None,
                                           data={"corpus_name": HOSTILE})
    receiver.script = [500]
    webhook_delivery_send(delivery_id=delivery.pk)
    # What a receiver answers and what a topic is called reach the pages: both carry markup.
    WebhookDelivery.objects.filter(pk=delivery.pk).update(last_error="HTTP 500: " + HOSTILE)
    webhook_endpoint_create(url=receiver.url("/t"), events=[WebhookEvent.REPORT_UPDATED],
                            topic=TopicFactory.create(name="topic " + HOSTILE))
    return endpoint, WebhookDelivery.objects.get(pk=delivery.pk)


@pytest.mark.parametrize("path", PAGES)
def test_anonymous_visitors_are_sent_to_sign_in(client, path):
    response = client.get(path)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("role", ["annotator", "norole"])
@pytest.mark.parametrize("path", PAGES)
def test_users_without_the_manager_permission_are_refused(users, role, path):
    assert _client(users[role]).get(path).status_code == 403


@pytest.mark.parametrize("role", ["annotator", "norole"])
def test_refused_users_cannot_register_delete_or_replay(users, role, delivered, receiver):
    endpoint, delivery = delivered
    client = _client(users[role])
    assert client.post("/webhooks/", {"url": receiver.url(), "events": ["import.finished"]}).status_code == 403
    assert client.post(f"/webhooks/deliveries/{delivery.pk}/replay/").status_code == 403
    assert client.post(f"/webhooks/endpoints/{endpoint.pk}/delete/").status_code == 403
    assert WebhookEndpoint.objects.count() == 2 and WebhookDelivery.objects.count() == 1


@pytest.mark.parametrize("role", ["manager", "analyst"])
@pytest.mark.parametrize("path", PAGES)
def test_the_reports_permission_opens_the_pages(users, role, path, delivered):
    response = _client(users[role]).get(path)
    assert response.status_code == 200
    html = response.content.decode()
    assert HOSTILE_TEXT not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_registration_shows_the_secret_once(users, receiver):
    client = _client(users["manager"])
    response = client.post("/webhooks/", {"url": receiver.url(), "events": ["report.updated", "sample.completed"],
                                          "topic": ""})
    assert response.status_code == 201
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.events == ["report.updated", "sample.completed"] and endpoint.topic is None
    assert endpoint.created_by == users["manager"] and endpoint.secret in response.content.decode()
    assert "no-store" in response["Cache-Control"] or "no-cache" in response["Cache-Control"]
    listing = client.get("/webhooks/").content.decode()
    assert receiver.url() in listing and endpoint.secret not in listing


def test_a_refused_url_is_an_error_above_the_form_not_a_500(users, settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]
    response = _client(users["manager"]).post("/webhooks/", {"url": "http://127.0.0.1:8000/x",
                                                             "events": ["report.updated"]})
    assert response.status_code == 200
    assert "WEBHOOK_ALLOWED_HOSTS" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_a_registration_without_events_is_refused_by_the_form(users, receiver):
    response = _client(users["manager"]).post("/webhooks/", {"url": receiver.url()})
    assert response.status_code == 200 and not WebhookEndpoint.objects.exists()


def test_delete_needs_a_post_and_removes_the_endpoint_and_its_log(users, delivered):
    endpoint, _ = delivered
    client = _client(users["manager"])
    assert client.get(f"/webhooks/endpoints/{endpoint.pk}/delete/").status_code == 405
    response = client.post(f"/webhooks/endpoints/{endpoint.pk}/delete/")
    assert response.status_code == 302
    assert not WebhookEndpoint.objects.filter(pk=endpoint.pk).exists() and not WebhookDelivery.objects.exists()


def test_the_log_lists_deliveries_with_status_and_error(users, delivered):
    endpoint, delivery = delivered
    html = _client(users["manager"]).get(f"/webhooks/deliveries/?endpoint={endpoint.pk}").content.decode()
    assert f'id="delivery-{delivery.pk}"' in html and "Pending" in html and "HTTP 500" in html


def test_replay_creates_a_new_delivery_of_the_same_payload(users, delivered, receiver,
                                                           django_capture_on_commit_callbacks):
    endpoint, original = delivered
    with django_capture_on_commit_callbacks(execute=True):
        response = _client(users["manager"]).post(f"/webhooks/deliveries/{original.pk}/replay/")
    assert response.status_code == 302
    replay = WebhookDelivery.objects.exclude(pk=original.pk).get()
    assert replay.replay_of_id == original.pk and replay.payload == original.payload
    assert replay.endpoint_id == endpoint.pk and replay.status == Status.SUCCEEDED
    original.refresh_from_db()
    assert original.status == Status.PENDING and original.attempts == 1  # the original is left as it was
    first, second = receiver.requests
    assert first.body == second.body
    assert first.headers["X-Recall-Delivery"] == str(original.pk) != second.headers["X-Recall-Delivery"]
    assert _client(users["manager"]).get(f"/webhooks/deliveries/{original.pk}/replay/").status_code == 405


def test_replay_without_the_csrf_token_is_refused(users, delivered):
    _, original = delivered
    client = Client(enforce_csrf_checks=True)
    assert client.login(username=users["manager"].username, password=PASSWORD)
    response = client.post(f"/webhooks/deliveries/{original.pk}/replay/")
    assert response.status_code == 403
    assert WebhookDelivery.objects.count() == 1


def test_the_link_include_shows_for_the_reports_permission_only(users):
    template = engines["django"].from_string('{% include "webhooks/_link.html" %}')

    def render(user) -> str:
        from django.contrib.auth.context_processors import PermWrapper

        return template.render({"perms": PermWrapper(user)})

    assert 'href="/webhooks/"' in render(users["manager"])
    assert "webhooks" not in render(users["annotator"])
