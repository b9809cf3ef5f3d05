from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from annotation.models import Assignment, Hit, Judgment, Label, SampledDocument, Worker
from annotation.services.crowd.crowd_simulation import SimulationError, crowd_simulate, document_is_on_topic
from annotation.services.crowd.labels import gold_document_add
from annotation.services.sampling.draws import samples_launch
from tests.factories import make_pair_world

pytestmark = pytest.mark.django_db


def test_truth_from_metadata_value_or_list():
    assert document_is_on_topic(metadata={"topics": ["a", "wheat"]}, truth_field="topics", truth_value="wheat")
    assert not document_is_on_topic(metadata={"topics": ["a"]}, truth_field="topics", truth_value="wheat")
    assert document_is_on_topic(metadata={"cat": "wheat"}, truth_field="cat", truth_value="wheat")
    assert not document_is_on_topic(metadata={}, truth_field="cat", truth_value="wheat")


def test_perfect_crowd_labels_equal_the_truth():
    world = make_pair_world(n=800, prevalence=0.2, seed=2)
    samples_launch(topic=world.topic, per_region=10, seed=1)
    summary = crowd_simulate(topic=world.topic, truth_field="topics", accuracy=1.0, workers=5)
    sampled = set(SampledDocument.objects.filter(topic=world.topic).values_list("document_id", flat=True))
    assert summary.judgments == 3 * len(sampled) == Judgment.objects.count()
    assert summary.assignments == 3 * Hit.objects.filter(topic=world.topic).count()
    assert summary.cost == summary.assignments * world.topic.reward_per_hit
    for label in Label.objects.filter(topic=world.topic):
        assert label.votes_total == 3
        assert label.majority == (label.document_id in world.relevant)
    # Simulated workers are ordinary accounts, and none answered a document twice.
    assert Worker.objects.filter(user__username__startswith="sim-worker-").count() == 5
    assert Judgment.objects.values("worker", "document").distinct().count() == Judgment.objects.count()


def test_spammers_get_blocked_on_gold():
    world = make_pair_world(n=1500, prevalence=0.2, seed=6, min_gold_accuracy=0.9)
    # Gold documents outside the pair's regions, so none is also a sample document: with a sampled
    # gold document, workers who met it as gold could not take its HIT, and a small crowd might not fill it.
    for doc_id in [d for d in world.doc_ids if d not in world.a1 | world.a2][-40:]:
        gold_document_add(topic=world.topic, document=world.topic.corpus.documents.get(pk=doc_id),
                          relevant=doc_id in world.relevant)
    samples_launch(topic=world.topic, per_region=40, seed=1)
    summary = crowd_simulate(topic=world.topic, truth_field="topics", accuracy=1.0, workers=6, spammers=3, seed=4)
    spammers = Worker.objects.filter(user__username__in=["sim-worker-07", "sim-worker-08", "sim-worker-09"])
    honest = Worker.objects.filter(user__username__startswith="sim-worker-").exclude(pk__in=spammers)
    assert not honest.filter(blocked=True).exists()
    assert spammers.filter(blocked=True).count() >= 2  # random answers: ~50% right on gold, far below 90%
    assert summary.blocked == Worker.objects.filter(blocked=True).count()
    # Every sample document still ends with exactly three judgments (blocked workers' slots are re-offered).
    sample_labels = Label.objects.filter(topic=world.topic, gold__isnull=True)
    assert set(sample_labels.values_list("votes_total", flat=True)) == {3}
    assert not Assignment.objects.filter(hit__topic=world.topic, status="claimed").exists()


def test_simulate_crowd_command_prints_judgments_and_cost():
    world = make_pair_world(n=500, prevalence=0.2, seed=8, topic_name="wheat")
    call_command("draw_samples", "--topic", "wheat", "--per-region", "5", "--seed", "3", stdout=StringIO())
    out = StringIO()
    call_command("simulate_crowd", "--topic", "wheat", "--truth-field", "topics", "--workers", "4", "--seed", "2", stdout=out)
    judged = Judgment.objects.filter(topic=world.topic).count()
    assert f"Judgments made: {judged}" in out.getvalue()
    assert "Cost: $" in out.getvalue()
    with pytest.raises(CommandError, match="No topic"):
        call_command("simulate_crowd", "--topic", "nope", "--truth-field", "topics", stdout=StringIO())
    with pytest.raises(CommandError, match="three distinct workers"):
        call_command("simulate_crowd", "--topic", "wheat", "--truth-field", "topics", "--workers", "2", stdout=StringIO())


def test_draw_samples_command_reports_and_refuses_clearly():
    make_pair_world(n=500, prevalence=0.2, seed=8, topic_name="wheat", budget="0.30")
    with pytest.raises(CommandError, match="budget"):
        call_command("draw_samples", "--topic", "wheat", "--per-region", "5", stdout=StringIO())
    out = StringIO()
    call_command("draw_samples", "--topic", "wheat", "--per-region", "1", "--seed", "1", stdout=out)
    assert "3 documents drawn, 1 HITs created" in out.getvalue()
    out = StringIO()
    call_command("draw_samples", "--topic", "wheat", "--per-region", "1", "--seed", "1", stdout=out)
    assert "Nothing new to draw" in out.getvalue()
    with pytest.raises(CommandError, match="No topic named 'nope'"):
        call_command("draw_samples", "--topic", "nope", stdout=StringIO())


@pytest.mark.slow
def test_end_to_end_recall_interval_contains_the_planted_recall():
    """Corpus with planted truth → pair → draw → simulated crowd (95%) → labels → report.

    The report (estimation.services.reports.topic_report_build) must bracket the
    true recall of both classifiers computed from the planted labels.
    """
    world = make_pair_world(n=4000, prevalence=0.08, recall1=0.7, recall2=0.55, noise=0.01, seed=21)
    launch = samples_launch(topic=world.topic, per_region=70, seed=5)
    assert launch.hits
    summary = crowd_simulate(topic=world.topic, truth_field="topics", accuracy=0.95, workers=30, seed=3)
    assert summary.judgments > 0
    sampled = set(SampledDocument.objects.filter(topic=world.topic).values_list("document_id", flat=True))
    labels = dict(Label.objects.filter(topic=world.topic, document_id__in=sampled).values_list("document_id", "majority"))
    assert set(labels) == sampled and None not in labels.values()
    errors = sum(labels[d] != (d in world.relevant) for d in sampled)
    assert errors / len(sampled) < 0.03  # majority of three 95% workers errs ~0.7% of the time

    from estimation.services.reports import topic_report_build

    report = topic_report_build(topic=world.topic, draws=4000, seed=1)
    rel, a1, a2 = world.relevant, world.a1, world.a2
    t12, tb1, tb2 = len(a1 & a2 & rel), len((a1 - a2) & rel), len((a2 - a1) & rel)
    # What the pair measures (notes §8): r1* = T12/(T12 + T_B2), r2* = T12/(T12 + T_B1).  The corpus truth
    # differs from it by the world's chance dependence; with regions judged almost whole the interval is
    # narrow, so it must cover r*, and the truth must lie in the sensitivity band (δ1 0.8–1.25).  Asserting
    # the corpus truth itself was a coverage event at one sample, and PostgreSQL's ids change the sample.
    for name, which, pair_truth in (("C1", 1, t12 / (t12 + tb2)), ("C2", 2, t12 / (t12 + tb1))):
        interval = report["recall_eq1"][name]
        truth = world.true_recall(which)
        assert interval["low"] <= pair_truth <= interval["high"], (name, pair_truth, interval)
        assert interval["low"] / 1.25 <= truth <= min(1.0, interval["high"] / 0.8), (name, truth, interval)
        assert interval["high"] - interval["low"] < 0.4
    assert np.isfinite(report["recall_eq1"]["C1"]["estimate"])


@pytest.mark.slow
def test_end_to_end_on_the_demo_corpus(tmp_path):
    """The demo set-up (generated corpus, title and body keyword filters, topic) → draw → crowd → report."""
    from annotation.demo.setup import DEMO_TOPIC, DEMO_TOPIC_NAME, demo_setup_run
    from annotation.models import Document, Topic
    from annotation.services.corpora.retrieved_sets import classifier_bitmap
    from annotation.services.sampling.draws import planned_region_sizes
    from estimation.services.reports import topic_report_build

    demo_setup_run(documents=20_000, seed=11, directory=tmp_path)
    topic = Topic.objects.get(name=DEMO_TOPIC_NAME)
    pair = topic.pair
    a1, a2 = set(classifier_bitmap(classifier=pair.c1)), set(classifier_bitmap(classifier=pair.c2))
    relevant = {
        pk for pk, metadata in Document.objects.filter(corpus=topic.corpus).values_list("pk", "metadata")
        if DEMO_TOPIC.name in (metadata.get("topics") or [])
    }
    assert relevant and a1 & a2
    planned = planned_region_sizes(topic=topic, half_width=0.1)
    launch = samples_launch(topic=topic, half_width=0.1, seed=9)
    regions = {"A12": a1 & a2, "B1": a1 - a2, "B2": a2 - a1}
    assert {d.region: d.drawn for d in launch.draws} == {r: min(n, len(regions[r])) for r, n in planned.items() if n}
    crowd_simulate(topic=topic, truth_field="topics", truth_value=DEMO_TOPIC.name, accuracy=0.95, workers=30, seed=2)
    sampled = set(SampledDocument.objects.filter(topic=topic).values_list("document_id", flat=True))
    assert not Label.objects.filter(topic=topic, document_id__in=sampled, majority__isnull=True).exists()
    report = topic_report_build(topic=topic, draws=4000, seed=1)
    # The pair's estimand is the recall of C1 among the documents C2 finds, T12 / (T12 + T_B2):
    # sampling error is all the interval accounts for. The corpus-wide recall differs from it by the
    # dependence the finite corpus happens to have (δ1 ≠ 1 by chance: ~200 relevant documents),
    # which the report states as its δ1 sensitivity band.
    for name, retrieved, other in (("C1", a1, a2), ("C2", a2, a1)):
        truth = len(retrieved & relevant) / len(relevant)
        estimand = len(retrieved & other & relevant) / len(other & relevant)
        interval = report["recall_eq1"][name]
        assert interval["low"] <= estimand <= interval["high"], (name, estimand, interval)
        key = {"C1": "r1", "C2": "r2"}[name]
        band_low = min(row[f"{key}_low"] for row in report["sensitivity"])
        band_high = max(row[f"{key}_high"] for row in report["sensitivity"])
        assert band_low <= truth <= band_high, (name, truth, band_low, band_high)


def test_only_local_topics_are_simulated():
    from annotation.models import Topic

    world = make_pair_world(n=300, seed=8, crowd=Topic.Crowd.MTURK)
    with pytest.raises(SimulationError, match="only built-in-crowd topics"):
        crowd_simulate(topic=world.topic, truth_field="topics")
