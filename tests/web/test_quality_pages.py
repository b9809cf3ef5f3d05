"""Gold documents and worker-quality pages (issue 12 item 7): roles, escaping, CSV upload with bad lines and
confirmation, add from a judged document, removal refused with its reason, block/unblock; one browser test.

Uses the page world of tests/web/conftest.py: a launched topic whose HITs w0, w1, w2 judged, with hostile
markup in document titles and the topic name.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Hit, HitItem, Label, Worker
from annotation.services.crowd.assignments import ClaimRefused, assignment_claim
from annotation.services.crowd.gold import GOLD_CSV_MAX_BYTES
from tests.factories import HOSTILE_TEXT

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _client(user=None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _judged(topic) -> list[Label]:
    return list(Label.objects.filter(topic=topic, majority__isnull=False, gold__isnull=True)
                .select_related("document").order_by("document_id"))


def _csv(text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile("gold.csv", text.encode(), content_type="text/csv")


def _worker(name: str) -> Worker:
    return Worker.objects.get(user__username=name)


# --------------------------------------------------------------------------- roles


@pytest.mark.django_db
def test_gold_page_is_for_analysts_only(world):
    accounts, topic = world["accounts"], world["topic"]
    url = reverse("analyst:gold", args=[topic.pk])
    assert _client(accounts["analyst"]).get(url).status_code == 200
    for role in ("manager", "annotator", "norole"):
        assert _client(accounts[role]).get(url).status_code == 403, role
    anonymous = _client().get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    doc = _judged(topic)[0].document_id
    for role in ("manager", "annotator"):
        response = _client(accounts[role]).post(reverse("analyst:gold_add", args=[topic.pk]),
                                                {"document": doc, "relevant": "yes"})
        assert response.status_code == 403
    assert not Label.objects.filter(topic=topic, gold__isnull=False).exists()


@pytest.mark.django_db
def test_worker_page_readable_by_analyst_and_manager_only_analyst_blocks(world):
    accounts, topic = world["accounts"], world["topic"]
    url = reverse("analyst:workers", args=[topic.pk])
    analyst_page = _client(accounts["analyst"]).get(url)
    manager_page = _client(accounts["manager"]).get(url)
    assert analyst_page.status_code == manager_page.status_code == 200
    for name in ("w0", "w1", "w2"):
        assert name.encode() in manager_page.content
    assert b'name="reason"' in analyst_page.content and b'name="reason"' not in manager_page.content
    assert b"still count" in manager_page.content  # what blocking does to existing judgments, in words
    assert _client(accounts["annotator"]).get(url).status_code == 403
    assert _client().get(url).status_code == 302
    target = _worker("w1")
    response = _client(accounts["manager"]).post(reverse("analyst:worker_block", args=[topic.pk]),
                                                 {"worker": target.pk, "reason": "no"})
    assert response.status_code == 403
    assert not Worker.objects.get(pk=target.pk).blocked


# --------------------------------------------------------------------------- gold page


@pytest.mark.django_db
def test_gold_from_judged_document_then_listed_and_escaped(world):
    accounts, topic = world["accounts"], world["topic"]
    client = _client(accounts["analyst"])
    page = client.get(reverse("analyst:gold", args=[topic.pk]))
    assert HOSTILE_TEXT.encode() not in page.content and b"&lt;script&gt;" in page.content
    label = _judged(topic)[0]
    response = client.post(reverse("analyst:gold_add", args=[topic.pk]),
                           {"document": label.document_id, "relevant": "no", "page": "1"})
    assert response.status_code == 302 and response["Location"].endswith("?page=1")
    label.refresh_from_db()
    assert label.gold is False
    page = client.get(response["Location"])
    assert f'id="gold-{label.document_id}"'.encode() in page.content
    assert f'id="judged-{label.document_id}"'.encode() not in page.content  # no longer offered
    assert b"now gold" in page.content and HOSTILE_TEXT.encode() not in page.content


@pytest.mark.django_db
def test_csv_with_bad_lines_adds_nothing_until_confirmed(world):
    accounts, topic = world["accounts"], world["topic"]
    client = _client(accounts["analyst"])
    ids = world["ids"]
    text = f"id,relevant\nd1,yes\nd2,perhaps\n{HOSTILE_TEXT},no\nd4,no\n"
    page = client.post(reverse("analyst:gold_upload", args=[topic.pk]), {"file": _csv(text)})
    assert page.status_code == 200
    assert not Label.objects.filter(topic=topic, gold__isnull=False).exists()
    body = page.content.decode()
    assert "Nothing was added" in body and "Line 3:" in body and "Line 4:" in body
    assert HOSTILE_TEXT not in body and "&lt;script&gt;" in body
    token = re.search(r'name="token" value="([^"]+)"', body)
    assert token is not None
    tampered = client.post(reverse("analyst:gold_upload_confirm", args=[topic.pk]), {"token": token.group(1) + "x"})
    assert tampered.status_code == 400 and b"could not be read" in tampered.content
    assert not Label.objects.filter(topic=topic, gold__isnull=False).exists()
    done = client.post(reverse("analyst:gold_upload_confirm", args=[topic.pk]), {"token": token.group(1)})
    assert done.status_code == 302
    assert dict(Label.objects.filter(topic=topic, gold__isnull=False).values_list("document_id", "gold")) == {
        ids[1]: True, ids[4]: False}


@pytest.mark.django_db
def test_clean_csv_is_added_at_once_and_oversized_refused(world):
    accounts, topic = world["accounts"], world["topic"]
    client = _client(accounts["analyst"])
    response = client.post(reverse("analyst:gold_upload", args=[topic.pk]), {"file": _csv("ID,Relevant\nd5,true\n")})
    assert response.status_code == 302
    assert Label.objects.get(topic=topic, document_id=world["ids"][5]).gold is True
    big = "id,relevant\n" + "d6,yes\n" * (GOLD_CSV_MAX_BYTES // 7 + 1)
    refused = client.post(reverse("analyst:gold_upload", args=[topic.pk]), {"file": _csv(big)})
    assert refused.status_code == 400 and b"the limit is" in refused.content
    assert not Label.objects.filter(topic=topic, document_id=world["ids"][6], gold__isnull=False).exists()


@pytest.mark.django_db
def test_remove_refused_with_the_reason_then_allowed(world):
    accounts, topic = world["accounts"], world["topic"]
    client = _client(accounts["analyst"])
    gold_url = reverse("analyst:gold", args=[topic.pk])
    free = next(d for d in world["ids"] if not Label.objects.filter(topic=topic, document_id=d).exists())
    client.post(reverse("analyst:gold_upload", args=[topic.pk]),
                {"file": _csv(f"id,relevant\n{topic.corpus.documents.get(pk=free).external_id},yes\n")})
    hit = Hit.objects.create(topic=topic, reward=topic.reward_per_hit)
    item = HitItem.objects.create(hit=hit, topic=topic, document_id=free, position=0, is_gold=True)
    page = client.get(gold_url)
    assert b"Kept: 1 HIT carries it as the gold check" in page.content
    refused = client.post(reverse("analyst:gold_remove", args=[topic.pk]), {"document": free},
                          HTTP_REFERER="http://testserver" + gold_url)
    assert refused.status_code == 302
    assert b"stays gold" in client.get(gold_url).content
    assert Label.objects.get(topic=topic, document_id=free).gold is True
    item.delete()
    hit.delete()
    assert client.post(reverse("analyst:gold_remove", args=[topic.pk]), {"document": free}).status_code == 302
    assert not Label.objects.filter(topic=topic, document_id=free).exists()


# --------------------------------------------------------------------------- worker page


@pytest.mark.django_db
def test_block_and_unblock_change_what_the_worker_may_claim(world):
    accounts, topic = world["accounts"], world["topic"]
    client = _client(accounts["analyst"])
    target = _worker("w2")
    empty = client.post(reverse("analyst:worker_block", args=[topic.pk]), {"worker": target.pk, "reason": "  "})
    assert empty.status_code == 400 and not Worker.objects.get(pk=target.pk).blocked
    outsider = Worker.objects.create(platform="mturk", external_id="A-OUTSIDER")
    assert client.post(reverse("analyst:worker_block", args=[topic.pk]),
                       {"worker": outsider.pk, "reason": "x"}).status_code == 404
    response = client.post(reverse("analyst:worker_block", args=[topic.pk]),
                           {"worker": target.pk, "reason": f"rushed {HOSTILE_TEXT}", "sort": "accuracy"})
    assert response.status_code == 302 and response["Location"].endswith("?sort=accuracy")
    target.refresh_from_db()
    assert target.blocked and target.blocked_reason == f"rushed {HOSTILE_TEXT}"
    with pytest.raises(ClaimRefused):
        assignment_claim(worker=target, topic=topic)
    page = client.get(reverse("analyst:workers", args=[topic.pk]))
    assert b"blocked" in page.content and HOSTILE_TEXT.encode() not in page.content
    assert client.post(reverse("analyst:worker_unblock", args=[topic.pk]), {"worker": target.pk}).status_code == 302
    target.refresh_from_db()
    assert not target.blocked and target.blocked_reason == ""
    assignment_claim(worker=target, topic=topic)  # no longer refused


@pytest.mark.django_db
def test_workers_sort_by_gold_accuracy(world):
    accounts, topic = world["accounts"], world["topic"]
    client = _client(accounts["analyst"])
    # A judged document as gold with the answer w0..w2 gave (d % 2 == 0) for one, the opposite for another:
    labels = _judged(topic)
    even = next(label for label in labels if label.document_id % 2 == 0)
    odd = next(label for label in labels if label.document_id % 2 == 1)
    client.post(reverse("analyst:gold_add", args=[topic.pk]), {"document": even.document_id, "relevant": "yes"})
    client.post(reverse("analyst:gold_add", args=[topic.pk]), {"document": odd.document_id, "relevant": "yes"})
    body = client.get(reverse("analyst:workers", args=[topic.pk]) + "?sort=accuracy").content.decode()
    assert "0.50 <span class=\"muted\">(1 / 2)</span>" in body
    worker_ids = [int(x) for x in re.findall(r'<tr id="worker-(\d+)"', body)]
    assert sorted(worker_ids) == sorted(_worker(n).pk for n in ("w0", "w1", "w2"))
    assert "↑" in body
    unknown = client.get(reverse("analyst:workers", args=[topic.pk]) + "?sort=bogus")
    assert unknown.status_code == 200


# --------------------------------------------------------------------------- browser



def _shots(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at {width}px"
    page.set_viewport_size({"width": 1280, "height": 900})


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_browser_gold_from_judged_document_and_block_a_worker(page, live_server, world):
    from tests.factories import PASSWORD

    topic = world["topic"]
    label = _judged(topic)[0]
    page.goto(live_server.url + "/accounts/login/")
    page.fill("#id_username", "ana")
    page.fill("#id_password", PASSWORD)
    page.click(".auth button[type=submit]")
    page.wait_for_load_state()

    page.goto(live_server.url + reverse("analyst:gold", args=[topic.pk]))
    _shots(page, "gold-documents")
    page.click(f"#judged-{label.document_id} button[value=yes]")
    page.wait_for_selector(f"#gold-{label.document_id}")
    assert "relevant" in page.inner_text(f"#gold-{label.document_id}")
    assert Label.objects.get(pk=label.pk).gold is True

    page.goto(live_server.url + reverse("analyst:workers", args=[topic.pk]))
    target = _worker("w1")
    row = f"#worker-{target.pk}"
    page.fill(f"{row} input[name=reason]", "answers too fast")
    page.click(f"{row} .block-form button[type=submit]")
    page.wait_for_selector(f"{row}.blocked")
    assert "answers too fast" in page.inner_text(row)
    _shots(page, "worker-quality")
    assert Worker.objects.get(pk=target.pk).blocked
