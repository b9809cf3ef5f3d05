"""The Mechanical Turk external HIT page for a topic set (issue 13 item 1): one choice per class, none of these.

The preview and the accepted page offer each class by name (escaped, descriptions shown), "None of
these" and, where the topic allows it, "Unsure"; the POST stores the class positions as provisional
answers (they count once MTurk confirms the assignment); a missing answer shows the form again with
the choices kept. Single-topic pages keep their yes/no choices. Fixtures are built with the models directly.
"""
import re
from decimal import Decimal
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, Hit, HitItem, Judgment, Label, Topic, TopicClass
from tests.factories import DocumentFactory, TopicFactory

pytestmark = pytest.mark.django_db

MTURK_HIT_ID = "3Z8UJEJOCZEG603II1EL4BE2QUB93V"
ASSIGNMENT = "3AAAAAAAAAAAAAAAAAAAAAAAAAAAA1"
WORKER = "A1WORKER0000001"
SANDBOX_WORKER_SITE = "https://workersandbox.mturk.com"
HOSTILE = "<script>alert('x')</script>"
CLASSES = (("Mining " + HOSTILE, "Gold & <silver> mines"), ("Farming", "Crops, livestock"), ("Shipping", ""))


def _hit(*, allow_unsure: bool = False, documents: int = 3, mturk_hit_id: str = MTURK_HIT_ID) -> Hit:
    topic = TopicFactory.create(crowd=Topic.Crowd.MTURK, status=Topic.Status.ACTIVE, kind=Topic.Kind.MULTICLASS,
                                reward_per_hit=Decimal("0.05"), allow_unsure=allow_unsure,
                                instructions=f"Which industry? {HOSTILE}")
    TopicClass.objects.bulk_create(TopicClass(topic=topic, position=p, name=n, description=d)
                                   for p, (n, d) in enumerate(CLASSES, start=1))
    hit = Hit.objects.create(topic=topic, reward=topic.reward_per_hit, external_id=mturk_hit_id)
    for position in range(documents):
        document = DocumentFactory.create(corpus=topic.corpus, title=f"Doc {position}", text=f"Text {position}")
        HitItem.objects.create(hit=hit, topic=topic, document=document, position=position)
        Label.objects.create(topic=topic, document=document, class_votes=[0] * (len(CLASSES) + 1))
    return hit


def _docs(hit: Hit) -> list[int]:
    return list(HitItem.objects.filter(hit=hit).order_by("position").values_list("document_id", flat=True))


def _url(hit: Hit, **params) -> str:
    defaults = {"assignmentId": ASSIGNMENT, "hitId": hit.external_id, "workerId": WORKER,
                "turkSubmitTo": SANDBOX_WORKER_SITE}
    return f"/mturk/hit/{hit.pk}/?" + urlencode({**defaults, **params})


def _values(body: str, doc_id: int) -> list[str]:
    return re.findall(rf'name="doc-{doc_id}" value="([^"]*)"', body)


def _post(client: Client, hit: Hit, answers: dict[int, str]):
    found = re.search(r'name="token" value="([^"]+)"', client.get(_url(hit)).content.decode())
    assert found is not None, "the page carries no token field"
    token = found.group(1)
    data = {"assignmentId": ASSIGNMENT, "hitId": hit.external_id, "workerId": WORKER,
            "turkSubmitTo": SANDBOX_WORKER_SITE, "token": token}
    data.update({f"doc-{doc_id}": value for doc_id, value in answers.items()})
    return client.post(f"/mturk/hit/{hit.pk}/", data)


def test_accepted_page_offers_each_class_and_none_of_these_escaped(client):
    hit = _hit()
    response = client.get(_url(hit))
    body = response.content.decode()
    assert response.status_code == 200
    for doc_id in _docs(hit):
        assert _values(body, doc_id) == ["c1", "c2", "c3", "c0"]
    assert "Yes, on topic" not in body and "Unsure" not in body
    assert body.count("None of these</label>") == 3
    assert HOSTILE not in body and "<silver>" not in body
    assert "Mining &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body
    assert "Gold &amp; &lt;silver&gt; mines" in body and "Crops, livestock" in body
    # No inline script on the form page: the policy stays as it is for single topics.
    assert "<script" not in body


def test_preview_lists_the_classes_but_no_form(client):
    hit = _hit()
    body = client.get(_url(hit, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE")).content.decode()
    assert "Farming" in body and "Crops, livestock" in body and "None of these" in body
    assert "<form" not in body and 'type="radio"' not in body


def test_unsure_is_offered_where_the_topic_allows_it(client):
    hit = _hit(allow_unsure=True)
    body = client.get(_url(hit)).content.decode()
    assert _values(body, _docs(hit)[0]) == ["c1", "c2", "c3", "c0", "u"]


def test_submit_stores_class_positions_as_provisional_answers(client):
    hit = _hit(allow_unsure=True)
    docs = _docs(hit)
    response = _post(client, hit, {docs[0]: "c2", docs[1]: "c0", docs[2]: "u"})
    body = response.content.decode()
    assert response.status_code == 200, body[:3000]
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in body
    assert 'name="judgments" value="3"' in body
    assignment = Assignment.objects.get(external_id=ASSIGNMENT)
    assert assignment.provisional_answers == {str(docs[0]): 2, str(docs[1]): 0, str(docs[2]): None}
    assert not Judgment.objects.exists()  # nothing counts before MTurk confirms the assignment


def test_unsure_posted_where_not_allowed_is_a_missing_answer(client):
    hit = _hit(allow_unsure=False)
    docs = _docs(hit)
    response = _post(client, hit, {docs[0]: "c3", docs[1]: "c1", docs[2]: "u"})
    assert response.status_code == 400
    body = response.content.decode()
    assert 'role="alert"' in body
    # The form again, the two classes chosen still checked, the third document unanswered.
    assert re.search(rf'name="doc-{docs[0]}" value="c3"[^>]* checked', body)
    assert re.search(rf'name="doc-{docs[1]}" value="c1"[^>]* checked', body)
    assert not re.search(rf'name="doc-{docs[2]}" value="[^"]*"[^>]* checked', body)
    assert Assignment.objects.get(external_id=ASSIGNMENT).provisional_answers is None


def test_the_classes_are_read_once_not_per_document(client):
    def queries(hit: Hit, mturk_assignment_id: str) -> int:
        client.get(_url(hit, assignmentId=mturk_assignment_id))  # the first visit records the assignment
        with CaptureQueriesContext(connection) as captured:
            assert client.get(_url(hit, assignmentId=mturk_assignment_id)).status_code == 200
        return len(captured)

    small = queries(_hit(documents=1, mturk_hit_id="3Z8UJEJOCZEG603II1EL4BE2QUB9AA"), "3AAAAAAAAAAAAAAAAAAAAAAAAAAAA2")
    large = queries(_hit(documents=8, mturk_hit_id="3Z8UJEJOCZEG603II1EL4BE2QUB9BB"), "3AAAAAAAAAAAAAAAAAAAAAAAAAAAA3")
    assert small == large


def test_single_topic_page_keeps_yes_and_no(client):
    topic = TopicFactory.create(crowd=Topic.Crowd.MTURK, status=Topic.Status.ACTIVE)
    hit = Hit.objects.create(topic=topic, reward=Decimal("0.05"), external_id=MTURK_HIT_ID)
    document = DocumentFactory.create(corpus=topic.corpus)
    HitItem.objects.create(hit=hit, topic=topic, document=document, position=0)
    Label.objects.create(topic=topic, document=document)
    body = client.get(_url(hit)).content.decode()
    assert _values(body, document.pk) == ["1", "0"]
    assert "None of these" not in body and "annotator.css" not in body
