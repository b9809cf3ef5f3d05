"""The demo topic set (four planted commodities, a keyword router) end to end: launch → simulated crowd → report."""
from collections import Counter

import numpy as np
import pytest

from annotation.demo.corpus import DEFAULT_TOPICS
from annotation.demo.setup import DEMO_TOPIC_SET_NAME, demo_setup_run
from annotation.models import NONE_OF_THESE, Document, Label, RouterPrediction, SampledDocument, Topic
from annotation.services.crowd.crowd_simulation import crowd_simulate, document_true_class
from annotation.services.topics.topic_sets import topic_set_launch

pytestmark = pytest.mark.django_db


def test_true_class_is_the_first_named_class_ignoring_case():
    classes = ["Coffee", "Cocoa", "Gold"]
    assert document_true_class(metadata={"topics": ["gold"]}, truth_field="topics", classes=classes) == 3
    assert document_true_class(metadata={"topics": ["cocoa", "coffee"]}, truth_field="topics", classes=classes) == 1
    assert document_true_class(metadata={"topics": "COCOA"}, truth_field="topics", classes=classes) == 2
    assert document_true_class(metadata={"topics": []}, truth_field="topics", classes=classes) == NONE_OF_THESE
    assert document_true_class(metadata={}, truth_field="topics", classes=classes) == NONE_OF_THESE


def test_demo_topic_set_launch_crowd_report(tmp_path):
    from estimation.services.recompute import topic_snapshot_create

    demo_setup_run(documents=4000, seed=5, directory=tmp_path)
    topic = Topic.objects.get(name=DEMO_TOPIC_SET_NAME)
    assert topic.is_multiclass
    assert [c.name.lower() for c in topic.classes.order_by("position")] == [t.name for t in DEFAULT_TOPICS]
    router = topic.routers.get()
    # The router sends the planted stories it finds to their own desk far more often than to another.
    classes = [t.name for t in DEFAULT_TOPICS]
    truth = {pk: document_true_class(metadata=m, truth_field="topics", classes=classes)
             for pk, m in Document.objects.filter(corpus=topic.corpus).values_list("pk", "metadata")}
    predicted = dict(RouterPrediction.objects.filter(router=router).values_list("document_id", "predicted"))
    agree = sum(1 for pk, p in predicted.items() if truth[pk] == p)
    assert agree > 0.5 * len(predicted) > 0

    topic_set_launch(topic=topic, documents=150, seed=3)
    crowd_simulate(topic=topic, truth_field="topics", accuracy=0.95, workers=12, seed=4)
    sampled = set(SampledDocument.objects.filter(topic=topic).values_list("document_id", flat=True))
    assert len(sampled) == 150
    labels = Label.objects.filter(topic=topic, document_id__in=sampled)
    assert labels.count() == 150 and not labels.filter(votes_total__lt=3).exists()
    majority = dict(labels.values_list("document_id", "majority_class"))
    wrong = sum(1 for pk, c in majority.items() if c is not None and c != truth[pk])
    assert wrong <= 5, wrong  # three workers at 0.95: a wrong majority is rare

    snapshot = topic_snapshot_create(topic_id=topic.pk, draws=2000)
    report = snapshot.report
    assert report["kind"] == "multiclass" and report["sample"]["judged"] >= 145
    entry = report["routers"][0]
    matrix = np.array(entry["confusion"], dtype=float)
    # The confusion matrix is the router against the majority labels of the judged sample.
    expected = Counter((majority[pk], predicted.get(pk, NONE_OF_THESE)) for pk in sampled if majority[pk] is not None)
    for (true_class, predicted_class), count in expected.items():
        assert matrix[true_class, predicted_class] == count
    assert matrix.sum() == sum(expected.values())
