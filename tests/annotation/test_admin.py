from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib import admin
from django.urls import reverse
from django.utils import timezone

from annotation import models
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
from estimation import models as emodels
from tests.factories import ClassifierFactory, CorpusFactory, DocumentFactory, TopicFactory, UserFactory

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert("pwned")</script>'


@pytest.fixture
def objects():
    corpus = CorpusFactory.create(documents_bitmap=bitmap_to_bytes(bitmap_from_ids([1, 2, 3])), document_count=3)
    doc = DocumentFactory.create(corpus=corpus, title=HOSTILE, text=f"body {HOSTILE}", metadata={"note": HOSTILE})
    c1 = ClassifierFactory.create(corpus=corpus, ids=[doc.pk])
    c2 = ClassifierFactory.create(corpus=corpus, ids=[doc.pk])
    c3 = ClassifierFactory.create(corpus=corpus, ids=[])
    score = models.ClassifierScore.objects.create(classifier=c1, document=doc, score=0.5)
    topic = TopicFactory.create(corpus=corpus, instructions=HOSTILE)
    models.ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    models.TopicClassifier.objects.create(topic=topic, classifier=c3)
    draw = models.SampleDraw.objects.create(topic=topic, purpose="pair", region="A12", seed=1, region_size=1, requested=1, drawn=1)
    sampled = models.SampledDocument.objects.create(draw=draw, topic=topic, document=doc, region="A12", inclusion_probability=1.0)
    user = UserFactory.create(username="annotator1")
    worker = models.Worker.objects.create(user=user)
    hit = models.Hit.objects.create(topic=topic, reward=Decimal("0.10"))
    item = models.HitItem.objects.create(hit=hit, topic=topic, document=doc, position=0)
    assignment = models.Assignment.objects.create(hit=hit, worker=worker, slot=0, deadline=timezone.now() + timedelta(hours=1))
    judgment = models.Judgment.objects.create(assignment=assignment, topic=topic, document=doc, worker=worker, relevant=True)
    label = models.Label.objects.create(topic=topic, document=doc, votes_relevant=1, votes_total=1, majority=True)
    snapshot = emodels.EstimateSnapshot.objects.create(
        topic=topic, version=1, code_version="x", aggregator="majority", inputs={"n": HOSTILE}, inputs_checksum="c", report={"r": 1}
    )
    plan = emodels.CertificationPlan.objects.create(
        topic=topic, classifier=c1, metric="pair_recall", target=0.8, status="locked", locked_at=timezone.now()
    )
    verdict = emodels.CertificationVerdict.objects.create(
        plan=plan, passed=True, estimate=0.9, lower_bound=0.85, inputs={}, code_version="x", checksum="c"
    )
    cert_draw = models.SampleDraw.objects.create(
        topic=topic, purpose="certification", region="A12", stratum_key=f"certification-plan:{plan.pk}", seed=2,
        region_size=1, requested=0,
    )
    link = emodels.CertificationPlanDraw.objects.create(plan=plan, draw=cert_draw)
    found = {o.__class__: o for o in (corpus, doc, c1, score, topic, draw, sampled, worker, hit, item, assignment, judgment,
                                       label, snapshot, plan, verdict, link, models.ClassifierPair.objects.get(topic=topic),
                                       models.TopicClassifier.objects.get(topic=topic))}
    found[models.CorpusUpload] = models.CorpusUpload.objects.create(
        corpus_name="up", original_name=HOSTILE, file_path="x.jsonl"
    )
    found[emodels.CertificationSizing] = emodels.CertificationSizing.objects.create(
        plan=plan, parameters="x", status="failed", total=3, processed=1, error=HOSTILE)
    found[models.CorpusDeletion] = models.CorpusDeletion.objects.create(
        corpus=corpus, corpus_pk=corpus.pk, corpus_name=HOSTILE, status="failed", total=10, processed=4,
        error=HOSTILE)
    found[models.ClassifierBuild] = models.ClassifierBuild.objects.create(
        corpus=corpus, name=HOSTILE, kind="keywords", definition={"terms": [HOSTILE], "fields": ["text"]}
    )
    topic_set = TopicFactory.create(corpus=corpus, name="topic set", kind="multiclass")
    found[models.TopicClass] = models.TopicClass.objects.create(topic=topic_set, position=1, name=HOSTILE)
    router = models.Router.objects.create(topic=topic_set, name=HOSTILE, kind="upload", predicted_counts=[2, 1])
    found[models.Router] = router
    found[models.RouterPrediction] = models.RouterPrediction.objects.create(router=router, document=doc, predicted=1)
    found[models.RouterBuild] = models.RouterBuild.objects.create(
        topic=topic_set, name=HOSTILE, kind="keywords", definition={"rules": [{"class": 1, "terms": [HOSTILE]}]},
        router=router, status="done")
    # Issues 27–29: judge runs and their answers, external corpora and their draws, adjudications.
    run = models.ModelJudgeRun.objects.create(topic=topic, kind="endpoint", model=HOSTILE, status="done")
    found[models.ModelJudgeRun] = run
    found[models.ModelJudgment] = models.ModelJudgment.objects.create(run=run, topic=topic, document=doc, region="A12",
                                                                      status="ok", relevant=True, probability=0.9,
                                                                      detail=HOSTILE)
    lake = models.Corpus.objects.create(name="lake " + HOSTILE)
    found[models.ExternalCorpusSource] = models.ExternalCorpusSource.objects.create(
        corpus=lake, engine="duckdb", location="/lake/" + HOSTILE, text_fields=["text"])
    found[models.ExternalDraw] = models.ExternalDraw.objects.create(draw=cert_draw, engine="duckdb", snapshot=HOSTILE)
    found[models.Adjudication] = models.Adjudication.objects.create(topic=topic, document=doc, relevant=True,
                                                                    reason=HOSTILE)
    found[models.WorkerBonus] = models.WorkerBonus.objects.create(
        topic=topic, worker=worker, rule="per_worker", rate="0.50", amount="0.50", fee="0.10", reason=HOSTILE,
        platform="mturk", idempotency_key=HOSTILE, request_token="recall-bonus-admin", status="failed", error=HOSTILE)
    return found


@pytest.fixture
def superuser_client(client):
    user = UserFactory.create(username="root", is_staff=True, is_superuser=True)
    client.force_login(user)
    return client


def test_every_registered_model_has_working_changelist_and_change_page(objects, superuser_client):
    registered = [m for m in admin.site._registry if m._meta.app_label in ("annotation", "estimation")]
    assert len(registered) >= 16
    for model in registered:
        obj = objects[model]
        meta = model._meta
        changelist = superuser_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        assert changelist.status_code == 200, meta.label
        change = superuser_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk]))
        assert change.status_code == 200, meta.label
        # Bitmaps are summarised, never dumped as bytes.
        assert "b&#x27;" not in change.content.decode() and "\\x" not in change.content.decode(), meta.label


def test_all_annotation_and_estimation_models_are_registered():
    from django.apps import apps

    wanted = [m for app in ("annotation", "estimation") for m in apps.get_app_config(app).get_models()]
    through = {models.ClassifierPair, models.TopicClassifier, models.HitItem}  # shown inline (topic, HIT)
    assert [m._meta.label for m in wanted if m not in admin.site._registry and m not in through] == []


def test_hostile_document_text_is_escaped(objects, superuser_client):
    doc = objects[models.Document]
    for url in (reverse("admin:annotation_document_change", args=[doc.pk]), reverse("admin:annotation_document_changelist")):
        body = superuser_client.get(url).content.decode()
        assert HOSTILE not in body
        assert "&lt;script&gt;" in body
    topic_page = superuser_client.get(reverse("admin:annotation_topic_change", args=[objects[models.Topic].pk])).content.decode()
    assert HOSTILE not in topic_page


def test_classifier_page_summarises_bitmap(objects, superuser_client):
    c1 = objects[models.Classifier]
    body = superuser_client.get(reverse("admin:annotation_classifier_change", args=[c1.pk])).content.decode()
    assert "1 documents (" in body
    assert c1.fingerprint in body


def test_measurement_rows_cannot_be_added_or_changed(objects, superuser_client):
    for name in ("document", "classifier", "judgment", "label", "sampledraw"):
        assert superuser_client.get(reverse(f"admin:annotation_{name}_add")).status_code == 403
    verdict = objects[emodels.CertificationVerdict]
    response = superuser_client.post(
        reverse("admin:estimation_certificationverdict_change", args=[verdict.pk]), {"passed": "", "estimate": "0.1"}
    )
    assert response.status_code == 403
    verdict.refresh_from_db()
    assert verdict.passed is True and verdict.estimate == 0.9


def test_corpus_refresh_action_calls_service(objects, superuser_client):
    corpus = objects[models.Corpus]
    response = superuser_client.post(
        reverse("admin:annotation_corpus_changelist"), {"action": "refresh_totals", "_selected_action": [corpus.pk]}
    )
    assert response.status_code == 302
    corpus.refresh_from_db()
    assert corpus.document_count == 1  # the bitmap said 3; the table holds 1


def test_non_staff_cannot_open_admin(objects, client):
    client.force_login(UserFactory.create(username="plain"))
    response = client.get(reverse("admin:annotation_document_changelist"))
    assert response.status_code == 302 and "/login" in response["Location"]


def test_crowd_and_hit_size_are_read_only_once_the_topic_left_draft(objects, superuser_client):
    from annotation.admin import TopicAdmin

    topic = objects[models.Topic]
    topic_admin = TopicAdmin(models.Topic, admin.site)
    request = superuser_client.get("/").wsgi_request
    assert topic.status == models.Topic.Status.DRAFT
    draft_fields = topic_admin.get_readonly_fields(request, topic)
    assert "crowd" not in draft_fields and "hit_size" not in draft_fields
    url = reverse("admin:annotation_topic_change", args=[topic.pk])
    assert 'name="hit_size"' in superuser_client.get(url).content.decode()

    models.Topic.objects.filter(pk=topic.pk).update(status=models.Topic.Status.ACTIVE)
    topic.refresh_from_db()
    frozen = topic_admin.get_readonly_fields(request, topic)
    assert {"crowd", "hit_size", "corpus", "status", "created_at"} <= set(frozen)
    page = superuser_client.get(url).content.decode()
    assert 'name="hit_size"' not in page and 'name="crowd"' not in page
    # A POST cannot change them either: read-only fields are not part of the form.
    before = (topic.crowd, topic.hit_size)
    data = {name: getattr(topic, name) for name in ("name", "instructions", "aggregator", "confidence",
                                                     "target_recall", "reward_per_hit") if hasattr(topic, name)}
    superuser_client.post(url, {**data, "crowd": "mturk", "hit_size": before[1] + 7})
    topic.refresh_from_db()
    assert (topic.crowd, topic.hit_size) == before


def test_the_user_list_shows_each_users_roles_and_filters_by_them(superuser_client):
    """Issue 15 item 1: the admin shows each user's roles."""
    from django.contrib.auth.models import Group

    from annotation.roles import roles_ensure
    from tests.factories import user_with_role

    user_with_role("alice", "analyst")
    user_with_role("bob", "manager").groups.add(roles_ensure()["annotator"])
    user_with_role("nobody")
    url = reverse("admin:auth_user_changelist")
    body = superuser_client.get(url).content.decode()
    assert "column-roles" in body
    assert ">analyst<" in body and ">annotator, manager<" in body and ">—<" in body
    filtered = superuser_client.get(url, {"groups__id__exact": Group.objects.get(name="analyst").pk}).content.decode()
    assert "alice" in filtered and "bob" not in filtered


def test_mturk_answers_waiting_or_never_confirmed_are_shown_as_such(objects, superuser_client):
    """Issue 15 item 3: provisional MTurk answers are visible, and marked as not counted."""
    hit, worker = objects[models.Hit], models.Worker.objects.create(platform="mturk", external_id="AFORGED1")
    deadline = timezone.now() + timedelta(hours=1)
    waiting = models.Assignment.objects.create(hit=hit, worker=worker, slot=1, deadline=deadline,
                                               external_id="3WAITING", provisional_answers={"1": True})
    never = models.Assignment.objects.create(hit=hit, worker=models.Worker.objects.create(platform="mturk",
                                                                                         external_id="AFORGED2"),
                                             slot=2, deadline=deadline, status="expired",
                                             external_id="3NEVER", provisional_answers={"1": False})
    url = reverse("admin:annotation_assignment_changelist")
    body = superuser_client.get(url).content.decode()
    assert "waiting for MTurk" in body and "never confirmed: not counted" in body
    only = superuser_client.get(url, {"mturk_confirmation": "unverified"}).content.decode()
    assert f'/{never.pk}/change/' in only and f'/{waiting.pk}/change/' not in only
