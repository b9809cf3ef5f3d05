"""The report of a topic set through the product: judged labels and router predictions → snapshot → report."""
import numpy as np
import pytest

from annotation.models import (
    Label,
    Region,
    Router,
    RouterPrediction,
    SampledDocument,
    SampleDraw,
    Topic,
    TopicClass,
)
from estimation.services import recompute
from estimation.services.multiclass_report import (
    MulticlassReportError,
    multiclass_probability_above,
    multiclass_sample_size_plan,
)
from tests.factories import CorpusFactory, TopicFactory, make_documents, topic_set_judged_build

pytestmark = pytest.mark.django_db

# Seed 002, Figure 3 (rows: true class, columns: predicted class), and Table 1 (notes §5, alpha = beta = 1).
FIGURE_3 = [
    [145, 1, 2, 1, 0],
    [5, 256, 22, 9, 6],
    [5, 24, 234, 36, 19],
    [1, 18, 32, 243, 25],
    [1, 5, 9, 38, 254],
]
TABLE_1 = {
    "micro": dict(score=0.814, mean=0.803, sd=0.011, below=0.395, hdi=(0.782, 0.824)),
    "macro": dict(score=0.828, mean=0.815, sd=0.010, below=0.063, hdi=(0.796, 0.834)),
}


def _as_topic_set(matrix):
    """Figure 3 with class 0 ("none of these") neither judged nor predicted in front."""
    size = len(matrix) + 1
    return [[0] * size] + [[0] + list(row) for row in matrix]


@pytest.fixture(scope="module")
def figure_3_report(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        world = topic_set_judged_build(confusion=_as_topic_set(FIGURE_3),
                                       classes=["c1", "c2", "c3", "c4", "c5"], router_name="seed 002 classifier")
        snapshot = recompute.topic_snapshot_create(topic_id=world.topic.pk, draws=200_000)
        report = snapshot.report
        yield report
        # Module-scoped rows outside the per-test transaction: remove them all (later tests expect no corpus).
        corpus = world.topic.corpus
        world.topic.delete()
        corpus.delete()


@pytest.mark.parametrize("average", ["micro", "macro"])
def test_seed_002_table_1_through_the_product(figure_3_report, average):
    report = figure_3_report
    assert report["kind"] == "multiclass"
    assert report["judged_documents"] == 1391
    (router,) = report["routers"]
    assert router["confusion"][1][1:] == FIGURE_3[0]
    assert router["posterior"]["none_modelled"] is False
    # Seed 002's prior (alpha = beta = 1) is reported beside the default one.
    result, expected = router["seed_prior"][average], TABLE_1[average]
    assert router["seed_prior"]["prior"] == 1.0
    assert result["score"] == pytest.approx(expected["score"], abs=0.0005)
    assert result["mean"] == pytest.approx(expected["mean"], abs=0.003)
    assert result["sd"] == pytest.approx(expected["sd"], abs=0.003)
    assert result["below"] == pytest.approx(expected["below"], abs=0.015)
    assert result["hdi"][0] == pytest.approx(expected["hdi"][0], abs=0.003)
    assert result["hdi"][1] == pytest.approx(expected["hdi"][1], abs=0.003)


def test_reference_and_sample_size_from_the_stored_report(figure_3_report):
    router_id = figure_3_report["routers"][0]["id"]
    router = figure_3_report["routers"][0]
    above = multiclass_probability_above(report=figure_3_report, reference=0.8)[router_id]
    assert above["micro"] == pytest.approx(router["posterior"]["micro"]["above"], abs=0.002)
    assert above["macro"] == pytest.approx(router["posterior"]["macro"]["above"], abs=0.002)
    # The default prior (1/K) pulls less than the seed's: more mass above 0.8 than Table 1's 1 - 0.063.
    assert above["macro"] > 1 - 0.063
    assert multiclass_probability_above(report=figure_3_report, reference=0.99)[router_id]["macro"] == 0.0
    plan = multiclass_sample_size_plan(report=figure_3_report, router_id=router_id, width=0.02)
    # Half the present HDI width (about 0.038) costs about four times the sample.
    assert plan.current_n == 1391
    assert 4000 < plan.n < 6500
    with pytest.raises(MulticlassReportError):
        multiclass_sample_size_plan(report=figure_3_report, router_id=router_id + 999, width=0.02)
    with pytest.raises(MulticlassReportError):
        multiclass_sample_size_plan(report=figure_3_report, router_id=router_id, width=2)


def test_undecided_gold_none_and_archived_routers():
    world = topic_set_judged_build(confusion=[[4, 1, 0], [2, 5, 1], [0, 1, 6]], classes=["A", "B"])
    topic, docs = world.topic, world.docs
    # An archived router is in no report; a second live router is.
    Router.objects.create(topic=topic, name="old", kind="upload", fingerprint="x", archived_at="2026-01-01T00:00Z")
    everything_b = Router.objects.create(topic=topic, name="all B", kind="upload", fingerprint="y")
    RouterPrediction.objects.bulk_create(RouterPrediction(router=everything_b, document_id=d, predicted=2)
                                         for d in docs)
    # Three more sampled documents: one tied (undecided), one pending, one made gold (class A).
    extra = make_documents(CorpusFactory.create(), 1)
    draw = SampleDraw.objects.get(topic=topic)
    tied, pending, gold = docs[:3]
    Label.objects.filter(topic=topic, document_id=tied).update(majority_class=None, class_votes=[1, 1, 1])
    Label.objects.filter(topic=topic, document_id=pending).update(majority_class=None, votes_total=2,
                                                                   class_votes=[2, 0, 0])
    Label.objects.filter(topic=topic, document_id=gold).update(gold_class=1)
    # A certification draw's labels are never read by the report.
    certification = SampleDraw.objects.create(topic=topic, purpose=SampleDraw.Purpose.CERTIFICATION,
                                              region=Region.UNIFORM, seed=2, region_size=1, requested=1, drawn=1)
    SampledDocument.objects.create(draw=certification, topic=topic, document_id=extra[0], region=Region.UNIFORM,
                                   inclusion_probability=1.0)
    Label.objects.create(topic=topic, document_id=extra[0], votes_total=3, class_votes=[0, 3, 0], majority_class=1)
    assert draw.documents.count() == 20

    report = recompute.topic_snapshot_create(topic_id=topic.pk, draws=4000).report
    sample = report["sample"]
    assert (sample["sampled"], sample["judged"], sample["undecided"], sample["pending"], sample["gold"]) == \
        (20, 18, 1, 1, 1)
    assert any(d["code"] == "undecided" for d in report["diagnostics"])
    assert [r["name"] for r in report["routers"]] == ["all B", "router"]
    router = report["routers"][1]
    # Rows true class: docs 0..4 were none (0), 5..12 class A, 13..19 class B; tied 0 and pending 1 dropped,
    # doc 2 (a none→none document) made gold class A: it moves to row A, column none.
    assert router["confusion"] == [[1, 1, 0], [3, 5, 1], [0, 1, 6]]
    assert report["classes"][1]["name"] == "A"
    per_class = {row["name"]: row for row in router["posterior"]["per_class"]}
    assert per_class["A"]["recall"] == pytest.approx(5 / 9)
    assert per_class["A"]["precision"] == pytest.approx(5 / 7)
    assert router["posterior"]["none_modelled"] is True
    assert router["posterior"]["averaged"] == [1, 2]
    # "All B" recalls all of B and none of A: macro F1 = (0 + 2*7/(7+18)) / 2.
    assert report["routers"][0]["posterior"]["macro"]["score"] == pytest.approx((2 * 7 / 25) / 2)


def test_snapshot_is_versioned_by_its_inputs():
    world = topic_set_judged_build(confusion=[[3, 1, 0], [1, 4, 0], [0, 1, 4]])
    first = recompute.topic_snapshot_create(topic_id=world.topic.pk, draws=2000)
    assert recompute.topic_snapshot_create(topic_id=world.topic.pk, draws=2000).version == first.version
    Label.objects.filter(topic=world.topic, document_id=world.docs[0]).update(majority_class=2)
    second = recompute.topic_snapshot_create(topic_id=world.topic.pk, draws=2000)
    assert second.version == first.version + 1
    assert second.report["routers"][0]["confusion"][2][0] == 1
    # A class label saved after the latest snapshot makes the topic stale for the sweep.
    assert world.topic.pk not in recompute.snapshots_stale_topic_ids()
    label = Label.objects.get(topic=world.topic, document_id=world.docs[1])
    label.majority_class = 1
    label.save()
    assert world.topic.pk in recompute.snapshots_stale_topic_ids()


def test_dawid_skene_posteriors_count_as_expected_counts():
    world = topic_set_judged_build(confusion=[[2, 0, 0], [0, 2, 0], [0, 0, 2]], aggregator="dawid_skene")
    # The first document (true none, routed none) is 60/40 between none and A by its posterior.
    Label.objects.filter(topic=world.topic, document_id=world.docs[0]).update(class_posterior=[0.6, 0.4, 0.0])
    report = recompute.topic_snapshot_create(topic_id=world.topic.pk, draws=2000).report
    assert report["sample"]["soft_labels"] is True
    confusion = report["routers"][0]["confusion"]
    assert confusion[0][0] == pytest.approx(1.6)
    assert confusion[1][0] == pytest.approx(0.4)
    assert confusion[1][1] == pytest.approx(2.0)


def test_no_router_no_labels_no_crash():
    corpus = CorpusFactory.create()
    make_documents(corpus, 3)
    topic = TopicFactory.create(corpus=corpus, kind=Topic.Kind.MULTICLASS)
    TopicClass.objects.create(topic=topic, position=1, name="A")
    TopicClass.objects.create(topic=topic, position=2, name="B")
    report = recompute.topic_snapshot_create(topic_id=topic.pk).report
    assert report["kind"] == "multiclass"
    assert {d["code"] for d in report["diagnostics"]} >= {"no_judgments", "no_router"}
    assert report["routers"] == []


# --------------------------------------------------------------------------- coverage, end to end

RUNS = 50
CORPUS = 2000
SAMPLE = 500
SHARES = [0.3, 0.25, 0.2, 0.15, 0.1]  # none of these, then four topics
ROUTER_ACCURACY = [0.7, 0.85, 0.8, 0.75, 0.7]
WORKER_ACCURACY = 0.9


def _truth_macro_f1(true: np.ndarray, predicted: np.ndarray, size: int) -> float:
    """The router's macro-F1 over the topics 1..M on the whole corpus, counted by hand."""
    scores = []
    for k in range(1, size):
        tp = np.sum((true == k) & (predicted == k))
        fp = np.sum((true != k) & (predicted == k))
        fn = np.sum((true == k) & (predicted != k))
        scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


def _other(rng: np.random.Generator, value: int, size: int) -> int:
    choice = int(rng.integers(size - 1))
    return choice if choice < value else choice + 1


@pytest.mark.slow
def test_macro_f1_hdi_covers_the_corpus_truth(capsys):
    size = len(SHARES)
    corpus = CorpusFactory.create()
    docs = np.array(make_documents(corpus, CORPUS))
    covered = 0
    for run in range(RUNS):
        rng = np.random.default_rng(1000 + run)
        true = rng.choice(size, size=CORPUS, p=SHARES)
        predicted = np.array([t if rng.random() < ROUTER_ACCURACY[t] else _other(rng, t, size) for t in true])
        truth = _truth_macro_f1(true, predicted, size)

        topic = TopicFactory.create(corpus=corpus, kind=Topic.Kind.MULTICLASS, name=f"coverage {run}")
        TopicClass.objects.bulk_create(TopicClass(topic=topic, position=i, name=f"topic {i}") for i in range(1, size))
        router = Router.objects.create(topic=topic, name="router", kind="upload", fingerprint=str(run),
                                       predicted_counts=np.bincount(predicted, minlength=size).tolist())
        RouterPrediction.objects.bulk_create(
            RouterPrediction(router=router, document_id=int(d), predicted=int(p))
            for d, p in zip(docs, predicted, strict=True) if p != 0)
        chosen = rng.choice(CORPUS, size=SAMPLE, replace=False)
        draw = SampleDraw.objects.create(topic=topic, purpose=SampleDraw.Purpose.UNIFORM, region=Region.UNIFORM,
                                         seed=run, region_size=CORPUS, requested=SAMPLE, drawn=SAMPLE)
        SampledDocument.objects.bulk_create(
            SampledDocument(draw=draw, topic=topic, document_id=int(docs[i]), region=Region.UNIFORM,
                            inclusion_probability=SAMPLE / CORPUS) for i in chosen)
        labels = []
        for i in chosen:
            answers = [int(true[i]) if rng.random() < WORKER_ACCURACY else _other(rng, int(true[i]), size)
                       for _ in range(3)]
            votes = np.bincount(answers, minlength=size)
            majority = int(np.argmax(votes)) if votes.max() >= 2 else None
            labels.append(Label(topic=topic, document_id=int(docs[i]), votes_total=3, class_votes=votes.tolist(),
                                majority_class=majority))
        Label.objects.bulk_create(labels)

        report = recompute.topic_snapshot_create(topic_id=topic.pk, draws=4000).report
        low, high = report["routers"][0]["posterior"]["macro"]["hdi"]
        covered += low <= truth <= high
    coverage = covered / RUNS
    with capsys.disabled():
        print(f"\nmacro-F1 95% HDI covered the corpus truth in {covered}/{RUNS} runs ({coverage:.0%})")
    assert coverage >= 0.9


def test_agreement_is_fleiss_kappa_over_every_class():
    world = topic_set_judged_build(confusion=[[1, 0, 0], [0, 1, 0], [0, 0, 2]])
    votes = {world.docs[0]: [3, 0, 0], world.docs[1]: [0, 2, 1], world.docs[2]: [0, 0, 3], world.docs[3]: [1, 0, 2]}
    for document_id, class_votes in votes.items():
        Label.objects.filter(topic=world.topic, document_id=document_id).update(class_votes=class_votes)
    agreement = recompute.topic_snapshot_create(topic_id=world.topic.pk, draws=2000).report["agreement"]
    # By hand: per-document agreement (sum n^2 - 3) / 6 = 1, 1/3, 1, 1/3 -> mean 2/3; class shares 4/12, 2/12, 6/12
    # -> chance agreement 1/9 + 1/36 + 1/4 = 7/18; kappa = (2/3 - 7/18) / (1 - 7/18) = 5/11.
    assert agreement["documents"] == 4
    assert agreement["fleiss_kappa"] == pytest.approx(5 / 11)
