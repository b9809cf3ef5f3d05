"""The report of a topic over a corpus that stays in the team's engine (issue 29): the classifiers' sizes are the
engine's counts (never a 0 read from the empty bitmaps), the region sizes are those the draws recorded (a lost cache
entry or a later recount changes nothing), and ids repeated in the files are refused with the id named."""
from __future__ import annotations

import re
from html import unescape

import pyarrow.parquet as pq
import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation.models import Document, ExternalDraw, SampledDocument, SampleDraw, Topic, TopicClassifier
from annotation.services.corpora.backends.base import KeywordQuery, pair_counts
from annotation.services.corpora.backends.external import (
    DuplicateIdsError,
    external_classifier_create,
    external_corpus_register,
    external_pair_plan,
)
from annotation.services.crowd.crowd_simulation import crowd_simulate
from annotation.services.sampling.draws import samples_launch
from annotation.services.sampling.plan import topic_plan_describe
from annotation.services.sampling.quote import topic_launch_quote
from annotation.services.topics.launch import LaunchRefused, topic_launch
from annotation.services.topics.topic import topic_create
from estimation.services.inputs import topic_inputs_gather
from estimation.services.recompute import topic_snapshot_create
from tests.annotation.corpora.backend_world import (
    C1_TERMS,
    C2_TERMS,
    database_backend,
    import_rows,
    rows,
    write_parquet,
)
from tests.factories import user_with_role

pytestmark = pytest.mark.django_db

HALF_WIDTH = 0.15
TRUTH = "blog"


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def data():
    return rows(300, seed=11)


def _expected(data) -> dict[str, int]:
    """The pair's region sizes counted by the app's database on the same rows (not by the engine)."""
    imported = database_backend(import_rows("imported copy", data))
    return pair_counts(imported.region_counts([KeywordQuery(terms=tuple(C1_TERMS)), KeywordQuery(terms=tuple(C2_TERMS))]))


def _topic(folder) -> Topic:
    source = external_corpus_register(name="lake", engine="duckdb", location=str(folder), text_fields=["text"])
    corpus = source.corpus
    c1 = external_classifier_create(corpus=corpus, name="c1", kind="keywords",
                                    definition={"terms": C1_TERMS, "fields": ["title", "text"]})
    c2 = external_classifier_create(corpus=corpus, name="c2", kind="keywords",
                                    definition={"terms": C2_TERMS, "fields": ["title", "text"]})
    topic = topic_create(corpus=corpus, name="Coffee", instructions="About coffee?", c1=c1, c2=c2)
    Topic.objects.filter(pk=topic.pk).update(crowd=Topic.Crowd.LOCAL, hit_size=5)
    topic.refresh_from_db()
    return topic


def _count(capture, topic: Topic) -> None:
    """The plan page queues the count; run it (eager), as the worker would."""
    with capture(execute=True):
        topic_plan_describe(topic=topic, half_width=HALF_WIDTH)
    assert topic_plan_describe(topic=topic, half_width=HALF_WIDTH)["plan"] is not None


def _launched_and_judged(capture, topic: Topic) -> None:
    _count(capture, topic)
    quote = topic_launch_quote(topic=topic, half_width=HALF_WIDTH)
    with capture(execute=True):
        topic_launch(topic_id=topic.pk, half_width=HALF_WIDTH, complement=quote.complement,
                     confirm_cost=quote.cost, confirm_fingerprint=quote.fingerprint)
    assert SampledDocument.objects.filter(topic=topic).count() == quote.documents > 0
    crowd_simulate(topic=topic, truth_field="source", truth_value=TRUTH, accuracy=1.0, workers=4, seed=2)


def test_engine_classifiers_report_the_engine_counts_and_say_what_is_not_counted(
        tmp_path, data, django_capture_on_commit_callbacks):
    topic = _topic(write_parquet(tmp_path / "lake", data))
    expected = _expected(data)
    _launched_and_judged(django_capture_on_commit_callbacks, topic)
    pair = topic.pair

    report = topic_snapshot_create(topic_id=topic.pk, draws=300).report
    rows_by_role = {row["role"]: row for row in report["classifiers"]}
    # |A1| and |A2| as the database counts them on the same rows (the empty bitmaps gave 0).
    assert rows_by_role["c1"]["retrieved"] == expected["A1"] > 0
    assert rows_by_role["c2"]["retrieved"] == expected["A2"] > 0
    # Which of the pair retrieved each judged document: known from its region (was empty for every document).
    inputs = topic_inputs_gather(topic=topic)
    members = {"A12": [pair.c1_id, pair.c2_id], "B1": [pair.c1_id], "B2": [pair.c2_id]}
    for region, ids in members.items():
        sample = inputs.sample(region)
        assert sample is not None and sample.judged > 0
        assert {tuple(r) for r in sample.retrieved_by} == {tuple(ids)}

    # A further classifier (the engine counts no overlap of it with the pair): its row says so, never 0, and the
    # blocks that need the overlap are left out with the reason.
    third = external_classifier_create(corpus=topic.corpus, name="c3", kind="keywords",
                                       definition={"terms": ["tea"], "fields": ["title", "text"]})
    TopicClassifier.objects.create(topic=topic, classifier=third)
    report = topic_snapshot_create(topic_id=topic.pk, draws=300).report
    row = next(r for r in report["classifiers"] if r["id"] == third.pk)
    assert row["retrieved"] == "not counted for an engine corpus"
    assert row["f1"]["estimate"] is None
    notes = [d for d in report["diagnostics"] if d["code"] == "engine_not_counted"]
    assert len(notes) == 1 and "c3" in notes[0]["message"] and "not counted for an engine corpus" in notes[0]["message"]
    assert report["pooled_recall"] is None and report["dependence"] is None


def test_the_report_reads_the_sizes_the_draws_recorded_not_the_cache(tmp_path, data, django_capture_on_commit_callbacks):
    folder = write_parquet(tmp_path / "lake", data)
    topic = _topic(folder)
    expected = _expected(data)
    _launched_and_judged(django_capture_on_commit_callbacks, topic)
    recorded = [d.region_query.get("pair_counts") for d in ExternalDraw.objects.filter(draw__topic=topic)]
    assert recorded and all(r is not None and r["counts"] == expected for r in recorded)

    cache.clear()  # every cached count lost (a cache restart): the report does not answer "counting" (409)
    regions = {r["name"]: r["size"] for r in topic_snapshot_create(topic_id=topic.pk, draws=300).report["regions"]}
    assert {k: regions[k] for k in ("A12", "B1", "B2")} == {k: expected[k] for k in ("A12", "B1", "B2")}

    # The corpus grows after the draws and is counted again: the report still measures the state the draws drew.
    grown = data + [{**data[0], "id": f"more-{i}", "title": "coffee espresso"} for i in range(40)]
    write_parquet(folder, grown)
    recount = external_pair_plan(topic=topic)
    assert recount.counts["A12"] == expected["A12"] + 40
    report = topic_snapshot_create(topic_id=topic.pk, draws=300).report
    regions = {r["name"]: r["size"] for r in report["regions"]}
    assert {k: regions[k] for k in ("A12", "B1", "B2")} == {k: expected[k] for k in ("A12", "B1", "B2")}
    assert report["corpus_size"] == len(data)


def test_ids_repeated_in_the_files_refuse_the_draw_naming_one(tmp_path, data, django_capture_on_commit_callbacks):
    folder = write_parquet(tmp_path / "lake", data)
    # A third file repeats the rows of the first: each of its ids twice, whichever the draw takes first.
    pq.write_table(pq.read_table(folder / "part-0.parquet"), folder / "part-9.parquet")
    first_half = {r["id"] for r in data[:150]}
    topic = _topic(folder)
    _count(django_capture_on_commit_callbacks, topic)
    quote = topic_launch_quote(topic=topic, half_width=HALF_WIDTH)

    with pytest.raises(DuplicateIdsError) as refused:  # the launch's task: a clear refusal, not an IntegrityError
        samples_launch(topic=topic, half_width=HALF_WIDTH, plan_snapshot=quote.snapshot)
    named = re.search(r"holds the id '([^']+)'", refused.value.message)
    assert named and named.group(1) in first_half and "in 2 rows" in refused.value.message
    assert not SampleDraw.objects.filter(topic=topic).exists()
    assert not Document.objects.filter(corpus=topic.corpus).exists()

    # The plan page and the launch say it too, until the files change.
    plan = topic_plan_describe(topic=topic, half_width=HALF_WIDTH)
    assert plan["plan"] is None and f"holds the id '{named.group(1)}'" in plan["plan_error"]
    client = Client()
    client.force_login(user_with_role("lake-analyst", "analyst"))
    page = client.get(reverse("analyst:topic", args=[topic.pk]), {"half_width": HALF_WIDTH})
    assert page.status_code == 200 and f"holds the id '{named.group(1)}'" in unescape(page.content.decode())
    with pytest.raises(LaunchRefused, match=named.group(1)):
        topic_launch(topic_id=topic.pk, half_width=HALF_WIDTH, complement=quote.complement, confirm_cost=quote.cost,
                     confirm_fingerprint=quote.fingerprint)
    (folder / "part-9.parquet").unlink()
    with django_capture_on_commit_callbacks(execute=True):
        topic_plan_describe(topic=topic, half_width=HALF_WIDTH)
    assert topic_plan_describe(topic=topic, half_width=HALF_WIDTH)["plan"] is not None
