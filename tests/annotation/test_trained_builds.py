"""Issue 13 item 3: the trained classifier built as a task — training with cross-fitting, the corpus scored in
id-range shards from the weights saved once (sha256-checked), a threshold chosen for a target precision, progress,
failures, and the page that starts it."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, ClassifierBuild, ClassifierScore, Corpus, Document, Topic
from annotation.services.classifiers import classifier_builds as builds
from annotation.services.classifiers import trained
from annotation.services.classifiers.classifier import ClassifierError
from annotation.services.classifiers.classifier_builds import classifier_build_start
from annotation.services.classifiers.trained import MODEL_DIR, classifier_create_trained, threshold_for_precision
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes, classifier_bitmap
from annotation.tasks_builds import classifier_build_task
from tests.factories import HOSTILE, make_label, user_with_role

pytestmark = pytest.mark.django_db

FARM = ["wheat harvest in the fields", "grain prices for farmers", "the farm tractor and the barley crop",
        "rain helps the maize harvest", "farmers sell wheat and grain"]
SPORT = ["the football match ended", "a goal in the last minute", "the striker scored twice",
         "tennis final on sunday", "the coach praised the team"]


@pytest.fixture(autouse=True)
def _small_model(monkeypatch):
    monkeypatch.setattr(trained, "N_FEATURES", 2**16)  # a fit over 2**20 dense weights costs ~0.5 s each


def make_world(n: int = 120) -> tuple[Corpus, list[int], set[int]]:
    """Even positions are about farming (relevant); the article says so, with some noise words shared."""
    corpus = Corpus.objects.create(name="stories")
    docs = []
    for i in range(n):
        relevant = i % 2 == 0
        words = FARM if relevant else SPORT
        other = SPORT if relevant else FARM
        noise = other[i % 5] if i % 6 == 0 else ""  # some documents mention the other subject too
        article = f"{words[i % 5]}. {words[(i + 2) % 5]}. {noise} story {i}"
        docs.append(Document(corpus=corpus, external_id=f"s{i}", title=f"news {i}", text="",
                             metadata={"article": article}, content_hash=hashlib.sha256(str(i).encode()).hexdigest()))
    Document.objects.bulk_create(docs)
    pks = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks))
    corpus.document_count = len(pks)
    corpus.save()
    return corpus, pks, {pk for i, pk in enumerate(pks) if i % 2 == 0}


def judged_topic(corpus: Corpus, pks: list[int], relevant: set[int], n: int = 60, name: str = "farming",
                 flip: int | None = None) -> Topic:
    topic = Topic.objects.create(corpus=corpus, name=name)
    for pk in pks[:n]:
        make_label(topic, pk, relevant=(pk in relevant) != (pk == flip))
    return topic


def start(django_capture_on_commit_callbacks, corpus: Corpus, name: str, topic: Topic, *, shards: int | None = None,
          seed: int = 3, **extra) -> ClassifierBuild:
    definition = {"fields": ["article"], "labels_from": f"topic:{topic.pk}", "seed": seed, "threshold": 0.5, **extra}
    with django_capture_on_commit_callbacks(execute=True):
        build = classifier_build_start(corpus=corpus, name=name, kind="trained", definition=definition, shards=shards)
    build.refresh_from_db()
    return build


def scores_of(classifier: Classifier) -> dict[int, float]:
    return dict(ClassifierScore.objects.filter(classifier=classifier).values_list("document_id", "score"))


def model_files() -> list[Path]:
    folder = Path(django_settings.MEDIA_ROOT) / MODEL_DIR
    return sorted(folder.glob("*")) if folder.exists() else []


@pytest.fixture
def clean_models():
    before = set(model_files())
    yield
    for path in set(model_files()) - before:
        path.unlink(missing_ok=True)


# --- shards -----------------------------------------------------------------------------------------------


def test_one_and_four_shards_and_one_process_give_the_same_classifier(django_capture_on_commit_callbacks,
                                                                     clean_models):
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    one = start(django_capture_on_commit_callbacks, corpus, "one", topic, shards=1)
    four = start(django_capture_on_commit_callbacks, corpus, "four", topic, shards=4)
    assert one.status == four.status == ClassifierBuild.Status.DONE, (one.error, four.error)
    assert (one.shards, four.shards) == (1, 4)
    sync = classifier_create_trained(corpus=corpus, name="sync", fields=["article"], labels_from=topic, seed=3)
    c1, c4 = one.classifier, four.classifier
    assert c1 is not None and c4 is not None
    s1, s4 = scores_of(c1), scores_of(c4)
    assert set(s1) == set(pks)  # every document scored once
    assert s1 == s4 == scores_of(sync)  # bit for bit
    assert list(classifier_bitmap(classifier=c1)) == list(classifier_bitmap(classifier=c4)) \
        == list(classifier_bitmap(classifier=sync))
    assert c1.fingerprint == c4.fingerprint == sync.fingerprint
    assert c1.definition == c4.definition == sync.definition  # no build-private key leaks into the classifier
    assert "build" not in c1.definition and c1.definition["model"]["weights_sha256"]
    # The unseen half of the corpus is classified by its article alone.
    unseen = pks[60:]
    assert sum((s4[pk] >= 0.5) == (pk in relevant) for pk in unseen) / len(unseen) > 0.9
    assert four.processed == four.total == 120 and four.details["retrieved"] == c4.retrieved_count
    timings = four.details["shard_timings"]
    assert len(timings) == 4 and sum(t["documents"] for t in timings) == 120
    assert all(t["seconds"] >= 0 and t["cpu_seconds"] >= 0 for t in timings)
    # The shards' files are gone; the weights file stays, named by the build, and matches its sha256.
    four.refresh_from_db()
    saved = four.definition["build"]["model"]
    path = Path(django_settings.MEDIA_ROOT) / saved["file"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == saved["sha256"]
    assert not [p for p in model_files() if "-scores-" in p.name]


def test_cross_fitting_flipping_a_label_leaves_its_own_fold_unchanged(django_capture_on_commit_callbacks,
                                                                      monkeypatch, clean_models):
    """A training document's score comes from the model fitted without its fold: flipping its label changes the
    other folds' models and the full model, never the score of a document of its own fold (itself included).

    The folds are fixed here (by position, whatever the labels) so the flip cannot move documents between folds.
    """
    monkeypatch.setattr(trained, "folds_assign",
                        lambda *, labels, seed, folds=trained.FOLDS: np.arange(len(labels)) % folds)
    corpus, pks, relevant = make_world()
    flipped = pks[10]  # position 10 of the sorted training pks: fold 0
    plain = start(django_capture_on_commit_callbacks, corpus, "plain", judged_topic(corpus, pks, relevant))
    moved = start(django_capture_on_commit_callbacks, corpus, "moved",
                  judged_topic(corpus, pks, relevant, name="flipped", flip=flipped), shards=3)
    assert plain.status == moved.status == "done", (plain.error, moved.error)
    a, b = scores_of(plain.classifier), scores_of(moved.classifier)
    training = sorted(pks[:60])
    own_fold = [pk for i, pk in enumerate(training) if i % trained.FOLDS == training.index(flipped) % trained.FOLDS]
    other_folds = [pk for pk in training if pk not in own_fold]
    assert flipped in own_fold and len(own_fold) == 12
    assert all(a[pk] == b[pk] for pk in own_fold)  # exactly: the same model scored them
    assert sum(a[pk] != b[pk] for pk in other_folds) == len(other_folds)  # their models saw the flipped label
    outside = pks[60:]
    assert sum(a[pk] != b[pk] for pk in outside) == len(outside)  # the full model saw it too


# --- target precision ----------------------------------------------------------------------------------


def test_threshold_for_a_target_precision_is_the_lowest_reaching_it():
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.3])
    labels = np.array([True, True, False, True, False])
    # Retrieved at t: ≤0.30 → 3/5; (0.30, 0.60] → 3/4; (0.60, 0.70] → 2/3; (0.70, 0.80] → 2/2.
    assert threshold_for_precision(scores=scores, labels=labels, target=0.5) == 0.01
    assert threshold_for_precision(scores=scores, labels=labels, target=0.75) == 0.31
    assert threshold_for_precision(scores=scores, labels=labels, target=0.9) == 0.71
    # Only [0.7 -, 0.6 +, 0.3 -]: ≤0.30 → 1/3; (0.30, 0.60] → 1/2; (0.60, 0.70] → 0/1.
    with pytest.raises(ClassifierError, match="best cross-validated precision at any threshold is 0.500"):
        threshold_for_precision(scores=scores[2:], labels=labels[2:], target=0.8)
    with pytest.raises(ClassifierError, match="no threshold retrieves any training document"):
        threshold_for_precision(scores=np.array([0.001]), labels=np.array([True]), target=0.5)


def test_a_build_for_a_target_precision_picks_the_threshold_from_the_out_of_fold_scores(
        django_capture_on_commit_callbacks, clean_models):
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    build = start(django_capture_on_commit_callbacks, corpus, "target", topic, threshold=None, target_precision=0.95)
    assert build.status == "done", build.error
    c = build.classifier
    threshold = c.definition["threshold"]
    assert c.definition["target_precision"] == 0.95 and build.details["target_precision"] == 0.95
    # Recomputed here from the stored out-of-fold scores of the training documents and their labels.
    scores = scores_of(c)
    training = sorted(pks[:60])
    s = np.array([scores[pk] for pk in training])
    y = np.array([pk in relevant for pk in training])

    def precision(t: float) -> float | None:
        hit = s >= t
        return float(np.sum(hit & y) / np.sum(hit)) if hit.any() else None

    reached = [t for t in trained.TARGET_GRID if (precision(t) or 0) >= 0.95]
    assert threshold == reached[0]
    assert set(classifier_bitmap(classifier=c)) == {pk for pk, v in scores.items() if v >= threshold}
    assert build.details["cv_precision"] == pytest.approx(precision(threshold))


def test_an_unreachable_target_fails_the_build_with_the_reason(django_capture_on_commit_callbacks, clean_models):
    corpus, pks, relevant = make_world()
    topic = Topic.objects.create(corpus=corpus, name="coin flips")
    rng = np.random.default_rng(0)
    for pk in pks[:80]:
        make_label(topic, pk, relevant=bool(rng.random() < 0.5))  # labels unrelated to the text
    before = set(model_files())
    build = start(django_capture_on_commit_callbacks, corpus, "hopeless", topic, threshold=None,
                  target_precision=0.99)
    assert build.status == "failed" and "no threshold reaches the target precision 0.990" in build.error
    assert not Classifier.objects.filter(name="hopeless").exists()
    assert set(model_files()) == before  # nothing left behind


# --- the request, progress, failures -----------------------------------------------------------------------


def test_the_request_refuses_mistakes_at_once_and_starts_nothing():
    corpus, pks, relevant = make_world(60)
    topic = judged_topic(corpus, pks, relevant, n=30)  # 15 + 15: too few
    other = Corpus.objects.create(name="other")
    foreign = Topic.objects.create(corpus=other, name="foreign")
    base = {"fields": ["article"], "labels_from": f"topic:{topic.pk}", "seed": 1, "threshold": 0.5}
    cases = [
        ({}, r"15 relevant and 15 not relevant.*at least 20"),
        ({"labels_from": f"topic:{foreign.pk}"}, "choose the training labels"),
        ({"labels_from": "topic:x"}, "choose the training labels"),
        ({"fields": ["nosuch"]}, "has a field “nosuch”"),
        ({"threshold": None}, "threshold or a target precision"),
        ({"threshold": None, "target_precision": 1.5}, "strictly between 0 and 1"),
        ({"threshold": "abc"}, "not a number"),
        ({"seed": -1}, "seed"),
    ]
    for change, message in cases:
        with pytest.raises(ClassifierError, match=message):
            classifier_build_start(corpus=corpus, name="t", kind="trained", definition={**base, **change})
    assert not ClassifierBuild.objects.exists()


def test_progress_phases_and_a_second_run(django_capture_on_commit_callbacks, monkeypatch, clean_models):
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    monkeypatch.setattr(trained, "SCORE_CHUNK", 25)
    phases: list[str] = []
    processed: list[int] = []
    original_phase, original_add = builds._phase, builds._progress_add

    def phase_spy(build_id: int, phase: str) -> None:
        original_phase(build_id, phase)
        state = builds.classifier_build_state(build=ClassifierBuild.objects.get(pk=build_id))
        phases.append(state["status_display"])

    def add_spy(build_id: int, count: int) -> None:
        original_add(build_id, count)
        processed.append(ClassifierBuild.objects.get(pk=build_id).processed)

    monkeypatch.setattr(builds, "_phase", phase_spy)
    monkeypatch.setattr(builds, "_progress_add", add_spy)
    build = start(django_capture_on_commit_callbacks, corpus, "progress", topic, shards=2)
    assert build.status == "done", build.error
    assert phases[0] == "Building (training: fit 0 of 6)" and phases[6] == "Building (training: fit 6 of 6)"
    assert phases[-1] == "Building (storing the scores)"
    assert processed == sorted(processed) and processed[-1] == 120 and len(processed) == 6  # 60 + 60 in chunks of 25
    assert classifier_build_task.delay(build_id=build.pk).get() == {"started": False}
    assert Classifier.objects.filter(corpus=corpus).count() == 1


def test_a_tampered_model_file_fails_the_build_and_its_files_are_removed(django_capture_on_commit_callbacks,
                                                                        monkeypatch, clean_models):
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    original = trained.trained_model_save

    def tampered(**kwargs):
        saved = original(**kwargs)
        path = Path(django_settings.MEDIA_ROOT) / saved["file"]
        path.write_bytes(path.read_bytes() + b"x")
        return saved

    monkeypatch.setattr(trained, "trained_model_save", tampered)
    before = set(model_files())
    build = start(django_capture_on_commit_callbacks, corpus, "tampered", topic, shards=2)
    assert build.status == "failed" and build.error == builds.UNEXPECTED
    assert not Classifier.objects.filter(name="tampered").exists()
    assert set(model_files()) == before


def test_the_saved_model_holds_plain_arrays_only(clean_models):
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    request = trained.trained_request_check(corpus=corpus, fields=["article"], labels_from=topic, seed=2)
    _, fitted = trained.trained_fit(corpus=corpus, request=request)
    saved = trained.trained_model_save(fitted=fitted, prefix="test-plain")
    with np.load(Path(django_settings.MEDIA_ROOT) / saved["file"], allow_pickle=False) as arrays:
        assert sorted(arrays.files) == ["classes", "coef", "intercept", "oof_pks", "oof_scores"]
    loaded = trained.trained_model_load(**saved)
    assert loaded.oof == fitted.oof
    texts = ["wheat harvest", "the striker scored"]
    features = trained.vectorizer().transform(texts)
    assert np.array_equal(loaded.model.predict_proba(features), fitted.model.predict_proba(features))
    with pytest.raises(ValueError, match="sha256"):
        trained.trained_model_load(file=saved["file"], sha256="0" * 64)
    with pytest.raises(ValueError, match="not a trained-model path"):
        trained.trained_model_load(file="../../etc/passwd", sha256=saved["sha256"])


# --- the page ----------------------------------------------------------------------------------------------


def test_the_page_starts_a_build_and_its_page_follows_it(settings, monkeypatch, django_capture_on_commit_callbacks,
                                                        clean_models):
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    topic.name = "farming " + HOSTILE
    topic.save()
    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker: the request only queues the build
    queued: list[int] = []
    enqueue = builds.classifier_build_enqueue
    monkeypatch.setattr(builds, "classifier_build_enqueue", lambda *, build_id: queued.append(build_id) or True)
    url = reverse("analyst:classifier_trained", args=[corpus.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"name": "t", "view_fields": ["article"], "labels_from": f"topic:{topic.pk}",
                                     "threshold": "", "target_precision": "0.9", "seed": "4"})
    monkeypatch.setattr(builds, "classifier_build_enqueue", enqueue)
    build = ClassifierBuild.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("analyst:classifier_build",
                                                                         args=[build.pk])
    assert not Classifier.objects.filter(name="t").exists() and queued == [build.pk]  # queued after commit
    assert build.definition["request"]["target_precision"] == 0.9 and build.definition["request"]["threshold"] is None
    page = client.get(response["Location"]).content.decode()
    assert "Documents scored" in page and "Target precision" in page and "Waiting" in page
    settings.CELERY_TASK_ALWAYS_EAGER = True
    classifier_build_task.delay(build_id=build.pk)  # what the worker does
    status = client.get(reverse("analyst:classifier_build_status", args=[build.pk])).json()
    assert status["status"] == "done" and status["percent"] == 100 and status["target_precision"] == 0.9
    done = client.get(response["Location"]).content.decode()
    # No corpus design behind these labels: the figure is named as agreement with them, never a corpus precision.
    assert 'id="build-trained"' in done and "agreement with the training labels (not the corpus precision)" in done
    assert HOSTILE not in done
    # Neither a threshold nor a target: the form says so, nothing starts.
    again = client.post(url, {"name": "u", "view_fields": ["article"], "labels_from": f"topic:{topic.pk}",
                              "threshold": "", "target_precision": "", "seed": "4"})
    assert again.status_code == 200 and "Give a threshold or a target precision" in again.content.decode()
    assert ClassifierBuild.objects.count() == 1
    assert json.loads(json.dumps(status))  # the status is plain JSON
