"""Corpora that stay in the team's engine (issue 29): register, check, classify, plan and draw.

Only the sampled documents enter the app's database: ``external_region_draw`` asks the engine for
the region's size and the first n ids of its hash order (annotation.services.corpora.backends.base),
fetches those documents' text and stores them as Document rows of the corpus, which annotators and
reports read as any other. The classifiers' retrieved sets stay in the engine: a Classifier row of an
external corpus holds its definition and count, and an empty bitmap.

Every draw records the corpus snapshot it measured (ExternalDraw). A draw given the snapshot of its
plan refuses a corpus that changed since (CorpusChangedError, naming the files added, removed or
rewritten): the plan's region sizes, and so the inclusion probabilities, would no longer hold.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from annotation.models import (
    Classifier,
    ClassifierPair,
    Corpus,
    Document,
    ExternalCorpusSource,
    ExternalDraw,
    Region,
    SampledDocument,
    SampleDraw,
    Topic,
)
from annotation.services.corpora.backends.base import (
    BackendError,
    ClassifierQuery,
    CorpusBackend,
    CorpusChangedError,
    DocumentRecord,
    FieldValueQuery,
    IdsQuery,
    KeywordQuery,
    RegionQuery,
    ScoresQuery,
    Snapshot,
    StoredClassifierQuery,
    pair_counts,
    pair_region,
    snapshot_explain,
)
from annotation.services.corpora.backends.parquet_files import parquet_snapshot
from annotation.services.corpora.backends.registry import ENGINES, corpus_backend_open, source_backend_open
from annotation.services.corpora.corpus_import import content_hash
from annotation.services.corpora.engine_counts import (
    RECORDED_KEY,
    RegionCountsPending,
    RegionCountsStale,
    corpus_in_engine,
    engine_counts_latest,
    engine_counts_of,
    engine_counts_record,
    engine_counts_store,
)
from annotation.services.corpora.retrieved_sets import bitmap_from_bytes, bitmap_from_ids, bitmap_to_bytes

logger = logging.getLogger(__name__)
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")
MAX_CORPUS_COUNT = 2**31 - 1  # Corpus.document_count is a PositiveIntegerField


# --------------------------------------------------------------------------- register and check


@dataclass(frozen=True)
class ExternalCheck:
    ok: bool
    size: int | None
    snapshot: str
    changes: list[str]
    error: str


def external_corpus_register(
    *, name: str, engine: str, location: str, id_field: str = "id", title_field: str = "title",
    text_fields: Sequence[str] = ("text",), connection_env: str = "", description: str = "",
) -> ExternalCorpusSource:
    """Register a corpus whose documents stay where they are; refused (BackendError) unless the engine reads them."""
    name = name.strip()
    if not name:
        raise BackendError("Give the corpus a name.")
    if engine not in ENGINES:
        raise BackendError(f"Unknown engine {engine!r} (use one of {', '.join(ENGINES)}).")
    if connection_env and not _ENV_NAME.match(connection_env):
        raise BackendError("The connection is given by the NAME of an environment variable (capitals, digits, "
                           f"underscores), never by its value: {connection_env!r} is not such a name.")
    if Corpus.objects.filter(name=name).exists():
        raise BackendError(f"A corpus named {name!r} exists already.")
    fields = [f.strip() for f in text_fields if f.strip()] or ["text"]
    source = ExternalCorpusSource(engine=engine, location=location.strip(), connection_env=connection_env,
                                  id_field=id_field.strip() or "id", title_field=title_field.strip(),
                                  text_fields=fields)
    backend = source_backend_open(source=source)  # refuses unreadable files or missing columns
    size = backend.size()
    snapshot = backend.snapshot()
    with transaction.atomic():
        corpus = Corpus.objects.create(name=name, description=description, document_count=min(size, MAX_CORPUS_COUNT))
        source.corpus = corpus
        _record(source, size=size, snapshot=snapshot)
        source.save()
    return source


def _record(source: ExternalCorpusSource, *, size: int, snapshot: Snapshot) -> None:
    source.document_count = size
    source.snapshot = snapshot.token
    source.snapshot_manifest = [list(row) for row in snapshot.manifest]
    source.checked_at = timezone.now()
    source.last_error = ""


def external_corpus_check(*, source: ExternalCorpusSource) -> ExternalCheck:
    """Test the connection: open the engine, count the documents, take the snapshot; record them (or the error)."""
    previous = list(source.snapshot_manifest or [])
    try:
        backend = source_backend_open(source=source)
        size = backend.size()
        snapshot = backend.snapshot()
    except BackendError as exc:
        ExternalCorpusSource.objects.filter(pk=source.pk).update(last_error=exc.message, checked_at=timezone.now())
        source.refresh_from_db()
        return ExternalCheck(ok=False, size=None, snapshot=source.snapshot, changes=[], error=exc.message)
    changes = snapshot_explain(before=previous, after=snapshot) if source.snapshot and snapshot.token != source.snapshot else []
    _record(source, size=size, snapshot=snapshot)
    source.save()
    Corpus.objects.filter(pk=source.corpus_id).update(document_count=min(size, MAX_CORPUS_COUNT))
    return ExternalCheck(ok=True, size=size, snapshot=snapshot.token, changes=changes, error="")


# --------------------------------------------------------------------------- classifiers as queries


def classifier_query(*, classifier: Classifier) -> ClassifierQuery:
    """The classifier as the corpus's engine evaluates it (an imported corpus: its stored bitmap)."""
    if not ExternalCorpusSource.objects.filter(corpus_id=classifier.corpus_id).exists():
        return StoredClassifierQuery(classifier_id=classifier.pk)
    definition = classifier.definition or {}
    if classifier.kind == Classifier.Kind.KEYWORDS:
        return KeywordQuery(terms=tuple(definition.get("terms", [])), fields=tuple(definition.get("fields", ["title", "text"])))
    if classifier.kind == Classifier.Kind.FIELD_VALUES:
        return FieldValueQuery(field=str(definition.get("field", "")), values=tuple(definition.get("values", [])))
    if classifier.kind == Classifier.Kind.IDS and "ids" in definition:
        return IdsQuery(ids=tuple(definition["ids"]))
    if classifier.kind == Classifier.Kind.SCORES and "scores" in definition:
        return ScoresQuery(scores=tuple((str(i), float(v)) for i, v in definition["scores"]),
                           threshold=float(definition["threshold"]))
    raise BackendError(f"A {classifier.get_kind_display()} classifier cannot be evaluated in the corpus's engine.")


def external_classifier_create(*, corpus: Corpus, name: str, kind: str, definition: dict) -> Classifier:
    """A classifier of an external corpus: its definition and count; its retrieved set stays in the engine.

    keywords {"terms": [normalised terms], "fields": [...]}; field_values {"field": f, "values": [...]};
    ids {"ids": [...]}; scores {"scores": [[id, score], ...], "threshold": t} (joined by id in the engine).
    """
    if not ExternalCorpusSource.objects.filter(corpus=corpus).exists():
        raise BackendError(f"Corpus {corpus.name!r} is imported: create its classifiers as usual.")
    if Classifier.objects.filter(corpus=corpus, name=name).exists():
        raise BackendError(f"Corpus {corpus.name!r} has a classifier named {name!r} already.")
    probe = Classifier(corpus=corpus, name=name, kind=kind, definition=definition)
    backend = corpus_backend_open(corpus=corpus)
    count = backend.classifier_count(classifier_query(classifier=probe))
    snapshot = backend.snapshot()
    canonical = json.dumps({"kind": kind, "definition": definition, "snapshot": snapshot.token}, sort_keys=True)
    probe.fingerprint = hashlib.sha256(canonical.encode()).hexdigest()
    probe.retrieved_bitmap = b""
    probe.retrieved_count = count
    probe.save()
    return probe


# --------------------------------------------------------------------------- plan and draw


@dataclass(frozen=True)
class ExternalPlan:
    """The pair's region sizes as the engine counted them, and the snapshot they describe."""

    snapshot: str
    engine: str
    counts: dict[str, int]


def _pair_queries(*, topic: Topic) -> tuple[ClassifierQuery, ClassifierQuery]:
    pair = topic.pair
    return classifier_query(classifier=pair.c1), classifier_query(classifier=pair.c2)


def topic_region_query(*, topic: Topic, region: str, classifier: Classifier | None = None) -> RegionQuery:
    if region in ("A12", "B1", "B2", "A1", "A2", Region.NEITHER):
        c1, c2 = _pair_queries(topic=topic)
        return pair_region(c1=c1, c2=c2, code=region)
    if region == Region.RETRIEVED and classifier is not None:
        return RegionQuery(classifiers=(classifier_query(classifier=classifier),), membership=(True,))
    if region == Region.UNIFORM:
        return RegionQuery()
    raise BackendError(f"Region {region!r} cannot be drawn from.")


def external_pair_plan(*, topic: Topic, backend: CorpusBackend | None = None) -> ExternalPlan:
    """Count the pair's regions in the corpus's engine (one pass) and name the snapshot they were counted on.

    Corpus-sized work (about 9 s for 10M documents with DuckDB): run it in a task (external_pair_count_run), never
    in a request. The counts are kept in the cache per (pair, snapshot), where pages read them
    (``external_pair_counts``)."""
    backend = backend or corpus_backend_open(corpus=topic.corpus)
    snapshot = backend.snapshot()
    counts = pair_counts(backend.region_counts(list(_pair_queries(topic=topic))))
    source = ExternalCorpusSource.objects.filter(corpus_id=topic.corpus_id).first()
    if source is not None and source.snapshot != snapshot.token:
        # The plan is a fresh look at the corpus: recorded, so a later change can be explained file by file.
        _record(source, size=counts["A12"] + counts["B1"] + counts["B2"] + counts["N"], snapshot=snapshot)
        source.save()
    plan = ExternalPlan(snapshot=snapshot.token, engine=backend.engine, counts=counts)
    pair = topic.pair
    engine_counts_store(c1=pair.c1, c2=pair.c2, snapshot=snapshot.token, engine=backend.engine, counts=counts,
                        manifest=snapshot.manifest)
    return plan


# --------------------------------------------------------------------------- counts kept for pages (issue 29)
#
# No page request does corpus-sized work. The pair's region counts are kept per (classifier pair, snapshot)
# (annotation.services.corpora.engine_counts, Django's cache): a page takes the corpus's snapshot (a listing of its
# files, milliseconds), reads the counts of that snapshot, and when they are not there queues the count as a task
# and says so (RegionCountsPending).

_COUNT_FAILED = "Counting the regions"
COUNT_QUEUED_SECONDS = 600  # one queued count per (topic, snapshot) at a time, however often the page is shown


def corpus_is_external(*, corpus_id: int) -> bool:
    """Whether the corpus stays in the team's engine (it has an ExternalCorpusSource)."""
    return corpus_in_engine(corpus_id=corpus_id)


def external_snapshot(*, corpus_id: int) -> Snapshot:
    """The corpus's current snapshot without opening the engine: its Parquet files' names, sizes and times
    (both engines read Parquet files, and name their state by parquet_snapshot alike)."""
    source = ExternalCorpusSource.objects.get(corpus_id=corpus_id)
    return parquet_snapshot(source.location)


def external_pair_counts_cached(*, c1: Classifier, c2: Classifier, snapshot: str) -> ExternalPlan | None:
    """The pair's region counts of ``snapshot`` if they were counted already (a cache read), else None."""
    entry = engine_counts_of(c1=c1, c2=c2, snapshot=snapshot)
    if entry is None:
        return None
    return ExternalPlan(snapshot=entry["snapshot"], engine=entry["engine"], counts=dict(entry["counts"]))


def external_pair_counts(*, c1: Classifier, c2: Classifier) -> ExternalPlan:
    """The pair's region counts for the corpus as it is now, read from the cache: never counted here.

    When they are not cached, the count is queued as a task (once the caller's transaction commits) and
    RegionCountsPending says so, with what changed since the pair was last counted. A state of the corpus a
    draw found ids repeated in is refused (DuplicateIdsError, naming one) until its files change."""
    snapshot = external_snapshot(corpus_id=c1.corpus_id)
    duplicates = _get_quietly(_duplicates_key(corpus_id=c1.corpus_id, snapshot=snapshot.token))
    if duplicates:
        raise DuplicateIdsError(str(duplicates))
    plan = external_pair_counts_cached(c1=c1, c2=c2, snapshot=snapshot.token)
    if plan is not None:
        return plan
    topic_id = ClassifierPair.objects.filter(c1=c1, c2=c2).values_list("topic_id", flat=True).first()
    if topic_id is not None:
        external_pair_count_enqueue(topic_id=topic_id, snapshot=snapshot.token)
    latest = engine_counts_latest(c1=c1, c2=c2)
    changes: list[str] = []
    counted = ""
    if latest and latest.get("snapshot") and latest["snapshot"] != snapshot.token:
        counted = latest["snapshot"]
        changes = snapshot_explain(before=latest.get("manifest") or [], after=snapshot) or [
            "its content differs from the state last counted"]
    corpus = Corpus.objects.only("name").get(pk=c1.corpus_id)
    failed = (ExternalCorpusSource.objects.filter(corpus_id=c1.corpus_id).values_list("last_error", flat=True)
              .first() or "")
    failure = f" The last attempt failed: {failed}" if failed.startswith(_COUNT_FAILED) else ""
    if changes:
        message = (f"Corpus {corpus.name!r} changed since the pair {c1.name!r} / {c2.name!r} was last counted: "
                   f"{_changes_words(changes)}. Counting the regions again in the engine…; the plan shows once "
                   f"the count is done (reload the page).{failure}")
    else:
        message = (f"Counting the regions of {c1.name!r} / {c2.name!r} in the engine… (corpus {corpus.name!r}, "
                   f"a task: the plan shows once the count is done; reload the page).{failure}")
    error = RegionCountsStale if changes else RegionCountsPending
    raise error(message, snapshot=snapshot.token, changes=changes, counted_snapshot=counted)


class DuplicateIdsError(BackendError):
    """The corpus's files hold an id more than once: a draw would store one document twice, and the region
    counts count it twice. The message names an id that repeats; nothing is drawn."""

    http_status = 409
    code = "duplicate-ids"


DUPLICATES_CACHE_SECONDS = 30 * 24 * 3600


def _duplicates_key(*, corpus_id: int, snapshot: str) -> str:
    return f"engine-duplicate-ids:{corpus_id}:{hashlib.sha256(snapshot.encode()).hexdigest()[:32]}"


def _get_quietly(key: str) -> object:
    try:
        return cache.get(key)
    except Exception:  # a cache that is down: the draw checks the ids again
        logger.warning("cache read failed for %s", key, exc_info=True)
        return None


def _duplicates_refuse(*, topic: Topic, snapshot: str, ids: Sequence[str]) -> None:
    """DuplicateIdsError naming the first id of ``ids`` that repeats (and kept for the snapshot, so the plan, the
    quote and the launch say it too); nothing when every id is distinct."""
    times = Counter(ids)
    repeated = next((i for i in ids if times[i] > 1), None)
    if repeated is None:
        return
    source = ExternalCorpusSource.objects.filter(corpus_id=topic.corpus_id).first()
    field = source.id_field if source is not None else "id"
    message = (f"Corpus {topic.corpus.name!r} holds the id {repeated!r} (its {field!r} column) in "
               f"{times[repeated]} rows: every document needs its own id, or the region counts count it twice and the sample would store it "
               "twice. Nothing was drawn. Remove the repeated rows from the files (or register the corpus with a "
               "column that is unique) and plan again.")
    try:
        cache.set(_duplicates_key(corpus_id=topic.corpus_id, snapshot=snapshot), message,
                  timeout=DUPLICATES_CACHE_SECONDS)
    except Exception:  # the next draw finds the repeat again
        logger.warning("cache write failed for the duplicate ids of corpus %s", topic.corpus_id, exc_info=True)
    raise DuplicateIdsError(message)


def _changes_words(changes: Sequence[str]) -> str:
    return "; ".join(changes[:5]) + (f"; and {len(changes) - 5} more" if len(changes) > 5 else "")


def external_pair_count_enqueue(*, topic_id: int, snapshot: str) -> None:
    """Queue the count of the topic's pair once the caller's transaction commits (once per snapshot at a time)."""
    def queue() -> None:
        try:
            fresh = cache.add(f"external-pair-count-queued:{topic_id}:{snapshot}", 1, timeout=COUNT_QUEUED_SECONDS)
        except Exception:  # a cache that is down: queue anyway (the task is safe to run twice)
            logger.warning("cache add failed for the count of topic %s", topic_id, exc_info=True)
            fresh = True
        if fresh:
            from annotation.tasks_external import external_pair_count_task  # noqa: PLC0415 (the task imports this)

            external_pair_count_task.delay(topic_id=topic_id)

    transaction.on_commit(queue, robust=True)


def external_pair_count_run(*, topic_id: int) -> ExternalPlan | None:
    """The task's body: count the topic's pair in the engine unless the current snapshot's counts are cached.

    Safe to run twice (the second finds the counts cached). None when the topic is gone or has no pair."""
    topic = Topic.objects.select_related("corpus").filter(pk=topic_id).first()
    if topic is None:
        return None
    try:
        pair = ClassifierPair.objects.select_related("c1", "c2").get(topic=topic)
    except ClassifierPair.DoesNotExist:
        return None
    try:
        snapshot = external_snapshot(corpus_id=topic.corpus_id)
        cached = external_pair_counts_cached(c1=pair.c1, c2=pair.c2, snapshot=snapshot.token)
        if cached is not None:
            return cached
        plan = external_pair_plan(topic=topic)
    except BackendError as exc:  # shown by the plan page while it waits (and on the corpus's page)
        ExternalCorpusSource.objects.filter(corpus_id=topic.corpus_id).update(
            last_error=f"{_COUNT_FAILED} of topic {topic.name!r} failed: {exc.message}", checked_at=timezone.now())
        raise
    ExternalCorpusSource.objects.filter(corpus_id=topic.corpus_id, last_error__startswith=_COUNT_FAILED).update(
        last_error="")
    return plan




def _plan_manifest(*, topic: Topic, plan_snapshot: str) -> list:
    """The file listing of the state a plan counted: the source's last recorded state, else the pair's last count."""
    source = ExternalCorpusSource.objects.filter(corpus_id=topic.corpus_id).first()
    if source is not None and source.snapshot == plan_snapshot:
        return list(source.snapshot_manifest or [])
    pair = ClassifierPair.objects.select_related("c1", "c2").filter(topic=topic).first()
    latest = engine_counts_latest(c1=pair.c1, c2=pair.c2) if pair is not None else None
    if latest and latest.get("snapshot") == plan_snapshot:
        return list(latest.get("manifest") or [])
    return []


def _corpus_changed(*, topic: Topic, plan_snapshot: str, now: Snapshot,
                    backend: CorpusBackend | None = None) -> CorpusChangedError:
    recorded = _plan_manifest(topic=topic, plan_snapshot=plan_snapshot)
    changes = snapshot_explain(before=recorded, after=now) if recorded else []
    detail = ("; ".join(changes[:5]) + (f"; and {len(changes) - 5} more" if len(changes) > 5 else "")) if changes else (
        "its content differs from the state the plan counted")
    return CorpusChangedError(
        f"Corpus {topic.corpus.name!r} changed since the plan of topic {topic.name!r} "
        f"(planned on {plan_snapshot}, now {now.token}): {detail}. The planned region sizes no longer describe it; "
        "plan again (re-count the regions) before drawing."
    )


def external_plan_snapshot_check(*, topic: Topic, plan_snapshot: str) -> Snapshot:
    """The corpus's current snapshot (a listing of its files), refused (CorpusChangedError, naming the files) when a
    plan's snapshot is given and the corpus changed since."""
    now = external_snapshot(corpus_id=topic.corpus_id)
    if plan_snapshot and now.token != plan_snapshot:
        raise _corpus_changed(topic=topic, plan_snapshot=plan_snapshot, now=now)
    return now


def _documents_store(*, corpus: Corpus, records: Sequence[DocumentRecord]) -> dict[str, int]:
    """The sampled documents as Document rows of the corpus (created once; an existing row is kept)."""
    ids = [r.external_id for r in records]
    existing = dict(Document.objects.filter(corpus=corpus, external_id__in=ids).values_list("external_id", "pk"))
    new = []
    for record in records:
        if record.external_id in existing:
            continue
        metadata_json = json.dumps(record.metadata, ensure_ascii=False, sort_keys=True, default=str)
        new.append(Document(corpus=corpus, external_id=record.external_id, title=record.title, text=record.text,
                            metadata=json.loads(metadata_json),
                            content_hash=content_hash(title=record.title, text=record.text, metadata_json=metadata_json)))
    Document.objects.bulk_create(new, batch_size=1000)
    return dict(Document.objects.filter(corpus=corpus, external_id__in=ids).values_list("external_id", "pk"))


def _query_json(region: RegionQuery) -> dict:
    def plain(value):
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
            if isinstance(value, IdsQuery):
                fields = {"ids": len(value.ids)}
            if isinstance(value, ScoresQuery):
                fields = {"scores": len(value.scores), "threshold": value.threshold}
            return {"type": type(value).__name__, **fields}
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        return value

    return plain(region)


PAIR_COUNTED = ("A12", "B1", "B2", "A1", "A2", Region.NEITHER)  # sizes the pair's one counting pass gives


def _pair_counts_at(*, topic: Topic, backend: CorpusBackend, snapshot: Snapshot) -> dict:
    """The pair's counts of ``snapshot`` as a draw records them (engine_counts_record): the cached counts the plan
    showed when there (a cache read: the draw does not count the region again), else counted once, in one pass, and
    kept for the next region's draw."""
    pair = topic.pair
    entry = engine_counts_of(c1=pair.c1, c2=pair.c2, snapshot=snapshot.token)
    if entry is None:
        plan = external_pair_plan(topic=topic, backend=backend)
        if plan.snapshot != snapshot.token:
            raise _corpus_changed(topic=topic, plan_snapshot=snapshot.token, now=backend.snapshot())
        entry = {"counts": plan.counts}
    return engine_counts_record(snapshot=snapshot.token, counts=entry["counts"])


def external_region_draw(
    *, topic: Topic, region: str, k: int, seed: int, purpose: str, plan_snapshot: str = "",
    classifier: Classifier | None = None, stratum_key: str = "", backend: CorpusBackend | None = None,
) -> SampleDraw:
    """Draw k more documents of a region of an external corpus's topic (a top-up excludes the stratum's earlier draws).

    The same stratum rules as annotation.services.sampling.draws.region_sample_draw: all the stratum's documents
    carry inclusion probability n_total/|region|, and a region whose size changed since its first draw is refused.
    With ``plan_snapshot``, a corpus that changed since the plan is refused (CorpusChangedError).
    """
    if k < 0:
        raise BackendError(f"Cannot draw a negative number of documents ({k}).")
    backend = backend or corpus_backend_open(corpus=topic.corpus)
    now = backend.snapshot()
    if plan_snapshot and now.token != plan_snapshot:
        raise _corpus_changed(topic=topic, backend=backend, plan_snapshot=plan_snapshot, now=now)
    query = topic_region_query(topic=topic, region=region, classifier=classifier)
    with transaction.atomic():
        previous = list(SampleDraw.objects.select_for_update().filter(
            topic=topic, purpose=purpose, region=region, classifier=classifier, stratum_key=stratum_key))
        recorded = _pair_counts_at(topic=topic, backend=backend, snapshot=now) if region in PAIR_COUNTED else None
        region_size = recorded["counts"][region] if recorded is not None else backend.region_size(query)
        changed = [d for d in previous if d.region_size != region_size]
        if changed:
            raise CorpusChangedError(
                f"Region {region} of topic {topic.name!r} had {changed[0].region_size} documents when first drawn "
                f"and has {region_size} now; a top-up would not be a simple random sample.")
        already = dict(SampledDocument.objects.filter(draw__in=previous)
                       .values_list("document__external_id", "document_id"))
        ids = backend.draw(query, n=k, seed=seed, exclude=sorted(already))
        _duplicates_refuse(topic=topic, snapshot=now.token, ids=ids)
        records = backend.fetch(ids)
        _duplicates_refuse(topic=topic, snapshot=now.token, ids=[r.external_id for r in records])
        pks = _documents_store(corpus=topic.corpus, records=records)
        missing = [i for i in ids if i not in pks]
        if missing:
            raise CorpusChangedError(f"The engine drew {missing[0]!r} but could not fetch it: the corpus changed during the draw.")
        draw = SampleDraw.objects.create(
            topic=topic, purpose=purpose, region=region, classifier=classifier, stratum_key=stratum_key, seed=seed,
            region_size=region_size, requested=k, drawn=len(ids),
            excluded_bitmap=bitmap_to_bytes(bitmap_from_ids(already.values())),
        )
        region_query = _query_json(query)
        if recorded is not None:  # the pair's sizes the draw used: its report reads them (no cache needed)
            region_query[RECORDED_KEY] = recorded
        ExternalDraw.objects.create(draw=draw, engine=backend.engine, snapshot=now.token, plan_snapshot=plan_snapshot,
                                    region_query=region_query)
        if ids:
            probability = (len(already) + len(ids)) / region_size
            SampledDocument.objects.filter(draw__in=previous).update(inclusion_probability=probability)
            SampledDocument.objects.bulk_create([
                SampledDocument(draw=draw, topic=topic, document_id=pks[i], region=region, inclusion_probability=probability)
                for i in ids
            ], batch_size=2000)
        return draw


def external_samples_draw(
    *, topic: Topic, per_region: int | Mapping[str, int], seed_for: Callable[[str, int], int], plan_snapshot: str = "",
    regions: Sequence[str] = ("A12", "B1", "B2"), purpose: str = SampleDraw.Purpose.PAIR,
    backend: CorpusBackend | None = None,
) -> list[SampleDraw]:
    """The stratified pair sample of an external corpus's topic up to ``per_region`` per region (a total per region,
    or one total for all).

    ``seed_for(region, earlier draws of the stratum)`` gives each draw's seed: the launch passes its own
    derivation (annotation.services.sampling.draws.draw_seed_derive over launch_stream), which sits above
    this package, so seeds derive as for imported corpora."""
    backend = backend or corpus_backend_open(corpus=topic.corpus)
    draws = []
    for region in regions:
        previous = SampleDraw.objects.filter(topic=topic, purpose=purpose, region=region, classifier=None, stratum_key="")
        taken = SampledDocument.objects.filter(draw__in=previous).count()
        k = (per_region if isinstance(per_region, int) else int(per_region.get(region, 0))) - taken
        if k <= 0:
            continue
        draws.append(external_region_draw(topic=topic, region=region, k=k, seed=seed_for(region, previous.count()),
                                          purpose=purpose, plan_snapshot=plan_snapshot, backend=backend))
    return draws


def external_draw_reproduce(*, draw: SampleDraw, backend: CorpusBackend | None = None) -> list[str]:
    """Re-derive a draw's ids from its seed and exclusions; refused if the corpus is not in the snapshot it measured."""
    backend = backend or corpus_backend_open(corpus=draw.topic.corpus)
    record = ExternalDraw.objects.get(draw=draw)
    now = backend.snapshot()
    if now.token != record.snapshot:
        raise _corpus_changed(topic=draw.topic, backend=backend, plan_snapshot=record.snapshot, now=now)
    excluded = list(Document.objects.filter(pk__in=list(bitmap_from_bytes(draw.excluded_bitmap)))
                    .values_list("external_id", flat=True))
    query = topic_region_query(topic=draw.topic, region=draw.region, classifier=draw.classifier)
    return backend.draw(query, n=draw.requested, seed=draw.seed, exclude=excluded)

