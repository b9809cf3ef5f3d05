"""One topic measured through the app's database and through DuckDB over the same documents' Parquet files:
identical region counts, draws and reports; a changed corpus between plan and draw is refused and explained;
hostile identifiers, terms and values cannot inject (issue 29)."""
from __future__ import annotations

import os
import time

import pytest

from annotation.models import Document, ExternalCorpusSource, ExternalDraw, SampleDraw
from annotation.services.classifiers.keywords import terms_normalize
from annotation.services.corpora.backends.base import (
    BackendError,
    CorpusChangedError,
    FieldValueQuery,
    IdsQuery,
    KeywordQuery,
    RegionQuery,
    ScoreRange,
    ScoresQuery,
    hash_order_take,
    pair_counts,
    pair_region,
)
from annotation.services.corpora.backends.duckdb_parquet import DuckDBParquetBackend
from annotation.services.corpora.backends.external import (
    external_corpus_check,
    external_corpus_register,
    external_draw_reproduce,
    external_pair_plan,
    external_region_draw,
    external_samples_draw,
)
from tests.annotation.corpora.backend_world import (
    C1_TERMS,
    C2_TERMS,
    database_backend,
    drawn,
    external_topic,
    import_rows,
    imported_topic,
    report,
    rows,
    seeds,
    write_parquet,
)

pytestmark = pytest.mark.django_db

K1 = KeywordQuery(terms=tuple(C1_TERMS))
K2 = KeywordQuery(terms=tuple(C2_TERMS))


@pytest.fixture
def data():
    return rows()


@pytest.fixture
def folder(tmp_path, data):
    return write_parquet(tmp_path / "corpus", data)


def test_database_and_duckdb_agree_on_size_counts_and_draws(data, folder):
    db = database_backend(import_rows("imported", data))
    duck = DuckDBParquetBackend(location=str(folder))
    assert db.size() == duck.size() == len(data)
    counts = pair_counts(db.region_counts([K1, K2]))
    assert counts == pair_counts(duck.region_counts([K1, K2]))
    assert all(counts[c] > 20 for c in ("A12", "B1", "B2", "N"))  # the data exercises every region
    source = FieldValueQuery(field="source", values=("NEWS",))
    assert db.region_counts([K1, K2, source]) == duck.region_counts([K1, K2, source])
    for code in ("A12", "B1", "B2", "N", "A1", "A2"):
        region = pair_region(c1=K1, c2=K2, code=code)
        assert db.region_size(region) == duck.region_size(region) == counts[code]
        for seed in (0, 1, 2**61 + 7):
            first = duck.draw(region, n=15, seed=seed)
            assert first == db.draw(region, n=15, seed=seed)
            # The reference: the first n of the region in md5("<seed>:<id>") order.
            assert first == hash_order_take(seed=seed, ids=duck.draw(region, n=10**6, seed=0), n=15)
            assert duck.draw(region, n=15, seed=seed, exclude=first[:5]) == db.draw(region, n=15, seed=seed, exclude=first[:5])
    assert db.draw(RegionQuery(), n=30, seed=9) == duck.draw(RegionQuery(), n=30, seed=9)
    ids = duck.draw(RegionQuery(), n=5, seed=9)
    assert [(r.external_id, r.title, r.text) for r in db.fetch(ids)] == [(r.external_id, r.title, r.text) for r in duck.fetch(ids)]


def test_uploaded_ids_and_scores_are_joined_by_id_in_both(data, folder):
    db = database_backend(import_rows("imported", data))
    duck = DuckDBParquetBackend(location=str(folder))
    uploaded = IdsQuery(ids=tuple(r["id"] for r in data[::3]) + ("not-in-corpus",))
    scores = ScoresQuery(scores=tuple((r["id"], (i % 10) / 10) for i, r in enumerate(data)), threshold=0.5)
    assert db.region_counts([uploaded, scores]) == duck.region_counts([uploaded, scores])
    stratum = pair_region(c1=K1, c2=K2, code="N", stratum=ScoreRange(scores=scores, low=0.2, high=0.6))
    assert db.region_size(stratum) == duck.region_size(stratum) > 0
    assert db.draw(stratum, n=7, seed=4) == duck.draw(stratum, n=7, seed=4)


def test_same_topic_same_draws_and_report_through_database_and_duckdb(data, folder):
    imported = imported_topic(data)
    external = external_topic(folder)
    plans = [external_pair_plan(topic=t) for t in (imported, external)]
    assert plans[0].counts == plans[1].counts
    for topic, plan in zip((imported, external), plans, strict=True):
        external_samples_draw(topic=topic, per_region=12, seed_for=seeds(2026), plan_snapshot=plan.snapshot)
        external_samples_draw(topic=topic, per_region={"A12": 20, "B1": 20, "B2": 20}, seed_for=seeds(77),
                              plan_snapshot=plan.snapshot)  # a top-up, to totals per region
    assert drawn(imported) == drawn(external)
    assert {r: len(v) for r, v in drawn(external).items()} == {"A12": 20, "B1": 20, "B2": 20}
    assert report(imported, plans[0].counts) == report(external, plans[1].counts)
    # Only the sample entered the database, and each draw names the corpus state it measured.
    assert Document.objects.filter(corpus=external.corpus).count() == 60
    assert set(ExternalDraw.objects.filter(draw__topic=external).values_list("snapshot", flat=True)) == {plans[1].snapshot}
    for draw in SampleDraw.objects.filter(topic=external):
        assert sorted(external_draw_reproduce(draw=draw)) == sorted(
            draw.documents.values_list("document__external_id", flat=True))


def test_a_top_up_is_the_continuation_of_one_draw(folder):
    topic = external_topic(folder)
    first = external_region_draw(topic=topic, region="B1", k=6, seed=5, purpose=SampleDraw.Purpose.PAIR)
    second = external_region_draw(topic=topic, region="B1", k=9, seed=5, purpose=SampleDraw.Purpose.PAIR)
    union = [*first.documents.order_by("id").values_list("document__external_id", flat=True),
             *second.documents.order_by("id").values_list("document__external_id", flat=True)]
    duck = DuckDBParquetBackend(location=str(folder))
    c1, c2 = KeywordQuery(terms=tuple(C1_TERMS), fields=("title", "text")), KeywordQuery(terms=tuple(C2_TERMS), fields=("title", "text"))
    assert union == duck.draw(pair_region(c1=c1, c2=c2, code="B1"), n=15, seed=5)
    size = first.region_size
    assert set(second.documents.values_list("inclusion_probability", flat=True)) == {15 / size}
    assert set(first.documents.values_list("inclusion_probability", flat=True)) == {15 / size}


def test_a_file_added_between_plan_and_draw_is_refused_and_named(data, folder):
    topic = external_topic(folder)
    plan = external_pair_plan(topic=topic)
    write_parquet(folder / "late", data[:10], parts=1)
    with pytest.raises(CorpusChangedError) as caught:
        external_samples_draw(topic=topic, per_region=5, seed_for=seeds(1), plan_snapshot=plan.snapshot)
    assert "late/part-0.parquet added" in caught.value.message
    assert "plan again" in caught.value.message
    assert not SampleDraw.objects.filter(topic=topic).exists()


def test_a_file_rewritten_between_plan_and_draw_is_refused_and_named(data, folder):
    topic = external_topic(folder)
    plan = external_pair_plan(topic=topic)
    time.sleep(0.01)
    write_parquet(folder, [dict(r, text=r["text"] + " coffee") for r in data], parts=2)
    os.utime(folder / "part-1.parquet", ns=(time.time_ns(), time.time_ns()))
    with pytest.raises(CorpusChangedError) as caught:
        external_samples_draw(topic=topic, per_region=5, seed_for=seeds(1), plan_snapshot=plan.snapshot)
    assert "part-0.parquet rewritten" in caught.value.message
    # Without the change the same plan draws.
    topic2 = external_topic(write_parquet(folder.parent / "fresh", data), name="fresh")
    plan2 = external_pair_plan(topic=topic2)
    assert external_samples_draw(topic=topic2, per_region=5, seed_for=seeds(1), plan_snapshot=plan2.snapshot)


def test_register_and_check_record_size_and_snapshot(data, folder, monkeypatch):
    source = external_corpus_register(name="big", engine="duckdb", location=str(folder), connection_env="TEAM_LAKE")
    assert (source.document_count, source.corpus.document_count) == (len(data), len(data))
    assert source.snapshot.startswith("parquet:") and len(source.snapshot_manifest) == 2
    check = external_corpus_check(source=source)
    assert check.ok and check.size == len(data) and check.changes == []
    write_parquet(folder / "more", data[:3], parts=1)
    check = external_corpus_check(source=source)
    assert check.size == len(data) + 3 and check.changes == [
        f"more/part-0.parquet added ({(folder / 'more/part-0.parquet').stat().st_size} bytes)"]
    (folder / "more/part-0.parquet").unlink()
    for p in folder.glob("*.parquet"):
        p.unlink()
    check = external_corpus_check(source=source)
    assert not check.ok and "no .parquet file" in check.error
    assert ExternalCorpusSource.objects.get(pk=source.pk).last_error == check.error


@pytest.mark.parametrize("env", ["postgres://user:secret@db/x", "lower_case", "A B", "X;rm"])
def test_a_connection_is_named_by_an_environment_variable_never_given(folder, env):
    with pytest.raises(BackendError, match="NAME of an environment variable"):
        external_corpus_register(name="x", engine="duckdb", location=str(folder), connection_env=env)


HOSTILE_FIELDS = ['text" OR 1=1 --', "text`) OR (1=1", "text'; DROP TABLE x; --", '"; SELECT 1; --', "a\x00b"]


@pytest.mark.parametrize("field", HOSTILE_FIELDS)
def test_hostile_field_names_are_refused_not_run(folder, field):
    duck = DuckDBParquetBackend(location=str(folder))
    for query in (KeywordQuery(terms=("coffee",), fields=(field,)), FieldValueQuery(field=field, values=("news",))):
        with pytest.raises(BackendError, match="has no field"):
            duck.classifier_count(query)
    with pytest.raises(BackendError):
        external_corpus_register(name="h", engine="duckdb", location=str(folder), id_field=field)


def test_hostile_column_names_in_the_files_are_quoted(tmp_path):
    names = {"id": 'i"d', "title": "ti`tle", "text": "te'xt\" --", "source": "so;urce", "c0": "c0", "n": "__c0"}
    data = [{"id": f"x{i}", "title": "t", "text": "coffee" if i % 2 else "tea", "source": "a", "c0": False, "n": "y"}
            for i in range(10)]
    folder = write_parquet(tmp_path / "h", data, parts=1, columns=names)
    duck = DuckDBParquetBackend(location=str(folder), id_field='i"d', title_field="ti`tle", text_fields=("te'xt\" --",))
    assert duck.classifier_count(KeywordQuery(terms=("coffee",), fields=("te'xt\" --",))) == 5
    assert duck.classifier_count(FieldValueQuery(field="so;urce", values=("A",))) == 10
    assert duck.fetch(["x1"])[0].text == "coffee"  # read from the hits table the count kept
    assert duck.fetch(["x2"])[0].metadata == {"so;urce": "a", "c0": False, "__c0": "y"}  # read from the files
    reserved = write_parquet(tmp_path / "r", data, parts=1, columns={**names, "n": "__recall_id"})
    with pytest.raises(BackendError, match="reserved for the app's own columns"):
        DuckDBParquetBackend(location=str(reserved), id_field='i"d', title_field="ti`tle", text_fields=("te'xt\" --",))


HOSTILE_TERMS = ["'); DROP TABLE __docs; --", "$p0", ":p0", "coffee' OR '1'='1", "(?i).*", ".*", "\\", "a]b[", "$$", "%", "_"]


@pytest.mark.parametrize("term", HOSTILE_TERMS)
def test_hostile_terms_and_values_are_parameters(data, folder, term):
    db = database_backend(import_rows("imported", data))
    duck = DuckDBParquetBackend(location=str(folder))
    for query in (KeywordQuery(terms=tuple(terms_normalize([term]))), FieldValueQuery(field="source", values=(term,)),
                  IdsQuery(ids=(term, data[0]["id"]))):
        assert duck.classifier_count(query) == db.classifier_count(query)
    assert duck.size() == len(data)  # nothing was dropped


def test_hostile_location_is_a_path_not_sql(tmp_path, data):
    folder = write_parquet(tmp_path / "it's'); DROP TABLE x; --", data)
    assert DuckDBParquetBackend(location=str(folder)).size() == len(data)
    with pytest.raises(BackendError, match="No Parquet file or folder"):
        DuckDBParquetBackend(location=str(tmp_path / "missing' OR 1=1"))
