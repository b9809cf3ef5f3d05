"""A topic over a corpus that stays in the team's engine (DuckDB over Parquet) plans, quotes, launches and reproduces
through the same services, pages and API as an imported corpus (issue 29); no request counts the corpus."""
from __future__ import annotations

import os
import re
from html import unescape
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Corpus, Document, ExternalDraw, HitItem, SampledDocument, SampleDraw, Topic
from annotation.services.corpora.backends.base import CorpusChangedError, KeywordQuery, pair_counts
from annotation.services.corpora.backends.duckdb_parquet import DuckDBParquetBackend
from annotation.services.corpora.backends.external import (
    RegionCountsPending,
    external_classifier_create,
    external_corpus_register,
)
from annotation.services.corpora.backends.parquet_files import parquet_snapshot
from annotation.services.crowd.crowd_simulation import crowd_simulate
from annotation.services.sampling.draws import SamplingError, sample_draw_reproduce, samples_launch
from annotation.services.sampling.plan import topic_plan_describe
from annotation.services.sampling.quote import topic_launch_quote
from annotation.services.topics.launch import LaunchCorpusChanged, LaunchCounting, LaunchRefused, topic_launch
from annotation.services.topics.topic import topic_create
from api.services import api_token_create
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
TRUTH = "blog"  # the simulated crowd's truth: the document's source (a quarter of the rows)


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def data():
    return rows(300, seed=11)


@pytest.fixture
def folder(tmp_path, data):
    return write_parquet(tmp_path / "lake", data)


def _pair_topic(corpus, name: str = "Coffee") -> Topic:
    """Two keyword classifiers evaluated as engine queries, and a draft topic (the services the pages call)."""
    c1 = external_classifier_create(corpus=corpus, name="c1", kind="keywords",
                                    definition={"terms": C1_TERMS, "fields": ["title", "text"]})
    c2 = external_classifier_create(corpus=corpus, name="c2", kind="keywords",
                                    definition={"terms": C2_TERMS, "fields": ["title", "text"]})
    topic = topic_create(corpus=corpus, name=name, instructions="About coffee?", c1=c1, c2=c2)
    Topic.objects.filter(pk=topic.pk).update(crowd=Topic.Crowd.LOCAL, hit_size=5)
    topic.refresh_from_db()
    return topic


def _count_in_a_task(capture, topic: Topic) -> dict:
    """The plan without cached counts: no plan, the count queued after commit; run the queued task (eager)."""
    with capture(execute=True) as callbacks:
        pending = topic_plan_describe(topic=topic, half_width=HALF_WIDTH)
    assert pending["plan"] is None and "Counting the regions" in pending["plan_error"]
    assert len(callbacks) == 1
    return topic_plan_describe(topic=topic, half_width=HALF_WIDTH)


def _rewrite(path) -> None:
    """Rewrite a file of the corpus (its rows plus a new document): its size and time change."""
    table = pq.read_table(path)
    extra = pa.table({name: ["doc-added" if name == "id" else table.column(name)[0].as_py()]
                      for name in table.column_names})
    pq.write_table(pa.concat_tables([table, extra.cast(table.schema)]), path)
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


# --------------------------------------------------------------------------- services, end to end


def test_plan_quote_launch_simulate_report_and_reproduce_through_the_services(
        data, folder, django_capture_on_commit_callbacks):
    source = external_corpus_register(name="lake", engine="duckdb", location=str(folder), text_fields=["text"])
    topic = _pair_topic(source.corpus)
    snapshot = parquet_snapshot(str(folder)).token

    plan = _count_in_a_task(django_capture_on_commit_callbacks, topic)
    # The engine's counts equal the app database's on the same rows.
    imported = database_backend(import_rows("imported copy", data))
    expected = pair_counts(imported.region_counts([KeywordQuery(terms=tuple(C1_TERMS)),
                                                   KeywordQuery(terms=tuple(C2_TERMS))]))
    assert plan["counts"] == expected and all(expected[r] >= 15 for r in ("A12", "B1", "B2", "N"))
    assert plan["snapshot"] == plan["plan"]["snapshot"] == snapshot
    assert {row["region"]: row["size"] for row in plan["plan"]["rows"]} == {r: expected[r] for r in ("A12", "B1", "B2")}

    quote = topic_launch_quote(topic=topic, half_width=HALF_WIDTH)
    assert quote.snapshot == snapshot and quote.fingerprint.endswith(f";snapshot={snapshot}")
    assert quote.documents > 0 and quote.regions["A12"] == min(expected["A12"], quote.regions["A12"])

    with django_capture_on_commit_callbacks(execute=True):
        launched = topic_launch(topic_id=topic.pk, half_width=HALF_WIDTH, complement=quote.complement,
                                confirm_cost=quote.cost, confirm_fingerprint=quote.fingerprint)
    assert launched == quote
    sampled = set(SampledDocument.objects.filter(topic=topic).values_list("document_id", flat=True))
    assert len(sampled) == quote.documents
    # Only the sampled documents became Document rows, and the HITs hold exactly them.
    assert set(Document.objects.filter(corpus=source.corpus).values_list("pk", flat=True)) == sampled
    assert set(HitItem.objects.filter(hit__topic=topic).values_list("document_id", flat=True)) == sampled
    assert {d.plan_snapshot for d in ExternalDraw.objects.filter(draw__topic=topic)} == {snapshot}
    topic.refresh_from_db()
    assert topic.status == Topic.Status.ACTIVE

    summary = crowd_simulate(topic=topic, truth_field="source", truth_value=TRUTH, accuracy=1.0, workers=4, seed=2)
    assert summary.judgments == 3 * quote.documents
    report = topic_snapshot_create(topic_id=topic.pk, draws=500).report
    # The report measured the engine's regions on the sampled documents: sizes from the engine, every sampled
    # document judged (a perfect crowd), relevant as the truth says.
    truth = {r["id"]: r["source"] == TRUTH for r in data}
    by_region: dict[str, list[str]] = {}
    for region, external_id in SampledDocument.objects.filter(topic=topic).values_list("region", "document__external_id"):
        by_region.setdefault(region, []).append(external_id)
    regions = {r["name"]: r for r in report["regions"]}
    for region in ("A12", "B1", "B2"):
        assert regions[region]["size"] == expected[region]
        assert regions[region]["judged"] == len(by_region[region])
        assert regions[region]["relevant"] == sum(truth[i] for i in by_region[region])

    # Reproduce: each draw re-derives its documents in the engine from its seed and snapshot.
    for draw in SampleDraw.objects.filter(topic=topic):
        assert sample_draw_reproduce(draw=draw) == sorted(draw.documents.values_list("document_id", flat=True))


def test_a_file_rewritten_after_the_plan_refuses_the_launch_naming_it(folder, django_capture_on_commit_callbacks):
    source = external_corpus_register(name="lake", engine="duckdb", location=str(folder), text_fields=["text"])
    topic = _pair_topic(source.corpus)
    _count_in_a_task(django_capture_on_commit_callbacks, topic)
    quote = topic_launch_quote(topic=topic, half_width=HALF_WIDTH)
    _rewrite(folder / "part-1.parquet")
    with django_capture_on_commit_callbacks(execute=False), pytest.raises(LaunchCorpusChanged) as refused:
        topic_launch(topic_id=topic.pk, half_width=HALF_WIDTH, complement=quote.complement, confirm_cost=quote.cost,
                     confirm_fingerprint=quote.fingerprint)
    assert refused.value.code == "corpus-changed" and "part-1.parquet rewritten" in refused.value.message
    # The draw itself (the launch's task) refuses a corpus changed since the confirmed plan, naming the file too.
    with pytest.raises(CorpusChangedError, match=r"part-1\.parquet rewritten"):
        samples_launch(topic=topic, half_width=HALF_WIDTH, plan_snapshot=quote.snapshot)
    assert not SampleDraw.objects.filter(topic=topic).exists()
    assert not Document.objects.filter(corpus=source.corpus).exists()


def test_no_counts_yet_refuses_the_launch_and_the_quote_says_counting(folder, django_capture_on_commit_callbacks):
    source = external_corpus_register(name="lake", engine="duckdb", location=str(folder), text_fields=["text"])
    topic = _pair_topic(source.corpus)
    with django_capture_on_commit_callbacks(execute=False):
        with pytest.raises(RegionCountsPending, match="in the engine"):
            topic_launch_quote(topic=topic, half_width=HALF_WIDTH)
        with pytest.raises(LaunchCounting) as refused:
            topic_launch(topic_id=topic.pk, half_width=HALF_WIDTH, complement=0, confirm_cost=0,
                         confirm_fingerprint=None)
    assert refused.value.code == "counting"
    assert not SampleDraw.objects.filter(topic=topic).exists()


def test_files_gone_no_plan_and_a_refused_launch_with_the_reason(folder, django_capture_on_commit_callbacks):
    source = external_corpus_register(name="lake", engine="duckdb", location=str(folder), text_fields=["text"])
    topic = _pair_topic(source.corpus)
    _count_in_a_task(django_capture_on_commit_callbacks, topic)
    quote = topic_launch_quote(topic=topic, half_width=HALF_WIDTH)
    for path in folder.glob("*.parquet"):
        path.unlink()
    plan = topic_plan_describe(topic=topic, half_width=HALF_WIDTH)
    assert plan["plan"] is None and "holds no .parquet file" in plan["plan_error"]
    with pytest.raises(LaunchRefused, match="holds no .parquet file"):
        topic_launch(topic_id=topic.pk, half_width=HALF_WIDTH, complement=quote.complement, confirm_cost=quote.cost,
                     confirm_fingerprint=quote.fingerprint)
    assert not SampleDraw.objects.filter(topic=topic).exists()


def test_score_strata_on_an_engine_corpus_are_refused_with_the_reason(data, folder, django_capture_on_commit_callbacks):
    source = external_corpus_register(name="lake", engine="duckdb", location=str(folder), text_fields=["text"])
    topic = _pair_topic(source.corpus)
    scorer = external_classifier_create(corpus=source.corpus, name="scores", kind="scores", definition={
        "scores": [[r["id"], (i % 10) / 10] for i, r in enumerate(data)], "threshold": 0.5})
    _count_in_a_task(django_capture_on_commit_callbacks, topic)
    Topic.objects.filter(pk=topic.pk).update(scorer=scorer)
    topic.refresh_from_db()
    plan = topic_plan_describe(topic=topic, half_width=HALF_WIDTH)
    assert plan["plan"] is None and "score strata of N are not supported" in plan["plan_error"]
    with pytest.raises(SamplingError, match="score strata of N are not supported"):
        topic_launch_quote(topic=topic, half_width=HALF_WIDTH)
    with pytest.raises(SamplingError, match="score strata of N are not supported"):
        samples_launch(topic=topic, half_width=HALF_WIDTH)
    assert not SampleDraw.objects.filter(topic=topic).exists()


# --------------------------------------------------------------------------- the page


def _hidden(html: str) -> dict[str, str]:
    return {k: unescape(v) for k, v in re.findall(r'<input type="hidden" name="(confirm_\w+)" value="([^"]*)"', html)}


def test_the_pages_register_plan_without_counting_in_the_request_then_launch(
        data, folder, django_capture_on_commit_callbacks):
    client = Client()
    client.force_login(user_with_role("lake-analyst", "analyst"))
    response = client.post(reverse("analyst:external_corpus_new"), {
        "name": "lake", "engine": "duckdb", "location": str(folder), "id_field": "id", "title_field": "title",
        "text_fields": "text", "connection_env": ""})
    assert response.status_code == 302, response.content
    topic = _pair_topic(Corpus.objects.get(name="lake"))
    page = reverse("analyst:topic", args=[topic.pk])

    counted = []
    real = DuckDBParquetBackend.region_counts

    def spy(self, classifiers):
        counted.append(len(classifiers))
        return real(self, classifiers)

    with mock.patch.object(DuckDBParquetBackend, "region_counts", spy):
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            first = client.get(page, {"half_width": HALF_WIDTH})
        html = first.content.decode()
        assert first.status_code == 200 and "Counting the regions" in html and 'id="engine-counting"' in html
        assert counted == []  # the request did not count the corpus: it queued the count, to run after commit
        assert callbacks  # (the plan and the quote each ask; one task is queued per snapshot)
        with mock.patch("annotation.tasks_external.external_pair_count_task.delay") as delay:
            for callback in callbacks:
                callback()
        delay.assert_called_once_with(topic_id=topic.pk)
        cache.clear()  # the queued task was lost (a broker restart): the next page queues it again
        with django_capture_on_commit_callbacks(execute=False) as again:
            client.get(page, {"half_width": HALF_WIDTH})
        assert counted == [] and again
        for callback in again:
            callback()  # the task (eager): counts in the engine, outside the request, once
        assert counted == [2]
        with django_capture_on_commit_callbacks(execute=True) as none:
            shown = client.get(page, {"half_width": HALF_WIDTH}).content.decode()
        assert counted == [2] and not none and "Counting the regions" not in shown
        assert 'id="engine-counting"' not in shown

    url = reverse("analyst:topic_launch", args=[topic.pk])
    confirm = client.post(url, {"half_width": HALF_WIDTH})
    hidden = _hidden(confirm.content.decode())
    assert parquet_snapshot(str(folder)).token in hidden["confirm_fingerprint"]
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(url, {"half_width": HALF_WIDTH, **hidden})
    assert done.status_code == 302
    sampled = set(SampledDocument.objects.filter(topic=topic).values_list("document_id", flat=True))
    assert sampled and set(Document.objects.filter(corpus=topic.corpus).values_list("pk", flat=True)) == sampled

    # A file rewritten after the confirmation: refused on the page, naming the file; nothing more drawn.
    topup = reverse("analyst:topic_topup", args=[topic.pk])
    _rewrite(folder / "part-0.parquet")
    refused = client.post(topup, {"half_width": 0.1}, follow=True)
    assert "part-0.parquet rewritten" in unescape(refused.content.decode())
    assert set(SampledDocument.objects.filter(topic=topic).values_list("document_id", flat=True)) == sampled


# --------------------------------------------------------------------------- the API


def test_the_api_plans_quotes_launches_and_refuses_a_changed_corpus(folder, django_capture_on_commit_callbacks):
    api = APIClient()
    user = user_with_role("lake-api", "analyst")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=user, name='t').plaintext}")
    response = api.post("/api/v1/external-corpora/", {
        "name": "lake", "engine": "duckdb", "location": str(folder), "text_fields": ["text"]}, format="json")
    assert response.status_code == 201, response.content
    corpus = Corpus.objects.get(pk=response.json()["corpus_id"])
    topic = _pair_topic(corpus)
    base = f"/api/v1/topics/{topic.pk}"

    with django_capture_on_commit_callbacks(execute=True):
        pending = api.get(f"{base}/plan/", {"half_width": HALF_WIDTH}).json()
        quote_pending = api.get(f"{base}/quote/", {"half_width": HALF_WIDTH})
    assert pending["plan"] is None and pending["engine_counting"]["snapshot"] == parquet_snapshot(str(folder)).token
    assert quote_pending.status_code == 409, quote_pending.content
    plan = api.get(f"{base}/plan/", {"half_width": HALF_WIDTH}).json()
    assert plan["snapshot"] == pending["engine_counting"]["snapshot"] and plan["counts"]["A12"] > 0
    quote = api.get(f"{base}/quote/", {"half_width": HALF_WIDTH}).json()
    assert quote["fingerprint"].endswith(f";snapshot={plan['snapshot']}")

    # Changed after the quote: 409 with a stable code, naming the file; nothing drawn.
    _rewrite(folder / "part-0.parquet")
    body = {"half_width": HALF_WIDTH, "confirm_cost": quote["cost"], "confirm_fingerprint": quote["fingerprint"]}
    with django_capture_on_commit_callbacks(execute=False):
        refused = api.post(f"{base}/launch/", body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert refused.status_code == 409, refused.content
    assert "corpus-changed" in refused.json()["type"] and "part-0.parquet rewritten" in refused.json()["detail"]
    assert not SampleDraw.objects.filter(topic=topic).exists()

    # Re-planned on the new state: the launch goes through and draws in the engine.
    with django_capture_on_commit_callbacks(execute=True):
        api.get(f"{base}/plan/", {"half_width": HALF_WIDTH})
    quote = api.get(f"{base}/quote/", {"half_width": HALF_WIDTH}).json()
    body = {"half_width": HALF_WIDTH, "confirm_cost": quote["cost"], "confirm_fingerprint": quote["fingerprint"]}
    with django_capture_on_commit_callbacks(execute=True):
        launched = api.post(f"{base}/launch/", body, format="json", HTTP_IDEMPOTENCY_KEY="k2")
    assert launched.status_code == 202, launched.content
    assert SampledDocument.objects.filter(topic=topic).count() == quote["documents"]


# --------------------------------------------------------------------------- the launch's task counts nothing again


def test_the_launch_task_draws_with_the_confirmed_counts_without_recounting(
        data, folder, django_capture_on_commit_callbacks):
    source = external_corpus_register(name="lake", engine="duckdb", location=str(folder), text_fields=["text"])
    topic = _pair_topic(source.corpus)
    plan = _count_in_a_task(django_capture_on_commit_callbacks, topic)
    quote = topic_launch_quote(topic=topic, half_width=HALF_WIDTH)
    imported = database_backend(import_rows("imported copy", data))
    expected = pair_counts(imported.region_counts([KeywordQuery(terms=tuple(C1_TERMS)),
                                                   KeywordQuery(terms=tuple(C2_TERMS))]))

    counted: list[str] = []
    real_size, real_counts = DuckDBParquetBackend.region_size, DuckDBParquetBackend.region_counts

    def size_spy(self, region):
        counted.append("region_size")
        return real_size(self, region)

    def counts_spy(self, classifiers):
        counted.append("region_counts")
        return real_counts(self, classifiers)

    with mock.patch.object(DuckDBParquetBackend, "region_size", size_spy), \
            mock.patch.object(DuckDBParquetBackend, "region_counts", counts_spy):
        samples_launch(topic=topic, half_width=HALF_WIDTH, complement=quote.complement, plan_snapshot=quote.snapshot)
        # The snapshot is unchanged since the confirmed plan: the draw reads the plan's counts, counts nothing.
        assert counted == []
        draws = list(SampleDraw.objects.filter(topic=topic))
        assert {d.region for d in draws} == {"A12", "B1", "B2", "N"}
        assert all(d.region_size == expected[d.region] for d in draws)
        assert all(e.region_query["pair_counts"] == {"snapshot": plan["snapshot"], "counts": expected}
                   for e in ExternalDraw.objects.filter(draw__in=draws))

        # The cached counts lost before a top-up's task: the pair is counted once (one pass), not per region.
        cache.clear()
        samples_launch(topic=topic, half_width=0.1, complement=quote.complement, plan_snapshot=quote.snapshot)
        assert counted == ["region_counts"]
    assert all(d.region_size == expected[d.region] for d in SampleDraw.objects.filter(topic=topic))
