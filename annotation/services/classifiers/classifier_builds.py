"""Classifiers built by tasks, with progress, never in a web request (issue 15).

A build is a `ClassifierBuild` row: what to build (kind and definition), its progress (documents or ids
processed of the total), and at the end the classifier it stored or the error that stopped it.

* `classifier_build_start` validates everything it can at once (the name, the terms and fields, the
  uploaded file's format) and raises ClassifierError, so a user mistake never becomes a failed build; it
  queues the build after commit (without a broker, CELERY_TASK_ALWAYS_EAGER, it runs the build at once).
* Keyword builds split the corpus's document ids into `shards` id ranges holding about the same number of
  documents; each range is scanned by its own task (a Celery group, spread over every worker) and a chord
  callback unions the shards' bitmaps and stores the classifier with `classifier_store`. The union of the
  ranges is the whole corpus, so the retrieved set and the fingerprint are those of a one-process scan,
  whatever the number of shards. Without a broker (CELERY_TASK_ALWAYS_EAGER) the group runs inline.
* Trained classifiers (issue 13 item 3, annotation/services/classifiers/trained.py): the request checks fields, partner and
  label counts (`trained_request_check`); the task fits the model with cross-fitting (progress: fit k of 6),
  saves its weights once under MEDIA_ROOT with their sha256 (`trained_model_save`), then scores the corpus in
  the same id-range shards as a keyword build (group + chord); each shard loads and checks the saved weights,
  writes its (ids, scores) to a file and returns the file's name and sha256; the chord callback reads them,
  stores the classifier and one score row per document (COPY on PostgreSQL). Scores do not depend on the split,
  so any number of shards gives the one-process classifier. The weights file is kept (the build names it);
  the shards' files are removed at the end, every file of a failed build too.
* Uploaded ids and scores are one task (resolving ids is one database pass).
* Progress is written by plain UPDATEs in autocommit (no transaction is open during a scan), so the
  page sees it at once; shards add to it atomically and a shard run twice cannot push it past the total.
* Every task is safe to run twice: a build that is no longer pending is not started again, a finished one
  is not stored again. Any exception marks the build failed with a message; a build with no progress for
  CLASSIFIER_BUILD_STUCK_SECONDS (its worker lost) is failed by `classifier_builds_stuck_fail` (beat).
"""
from __future__ import annotations

import base64
import json
import logging
import time
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path, PurePath
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Least
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from pyroaring import BitMap

from annotation.models import Classifier, ClassifierBuild, Corpus, Topic
from annotation.services.classifiers import keywords, trained
from annotation.services.classifiers.classifier import (
    ClassifierError,
    classifier_coverage_warnings,
    classifier_create_from_ids,
    classifier_create_from_scores,
    classifier_ids_read,
    classifier_scores_read,
    classifier_store,
    classifier_threshold_check,
)
from annotation.services.corpora.retrieved_sets import corpus_bitmap

logger = logging.getLogger(__name__)

UPLOAD_DIR = "classifier-uploads"
# Default number of shards of a keyword build: one per this many documents, at most MAX_SHARDS.
DOCUMENTS_PER_SHARD = 250_000
MAX_SHARDS = 64
DEFAULT_STUCK_SECONDS = 30 * 60
UNEXPECTED = "The build stopped on an unexpected error; the details are in the server log."
STUCK = ("The build stopped making progress (its worker or the database went away) and nothing has been heard "
         "from it since. Nothing was stored: start it again.")
QUEUE_DOWN = "The build could not be queued (the task queue is unreachable). Start it again when it is back."
BUILDABLE = (Classifier.Kind.KEYWORDS, Classifier.Kind.IDS, Classifier.Kind.SCORES, Classifier.Kind.TRAINED)
SHARDED = (Classifier.Kind.KEYWORDS, Classifier.Kind.TRAINED)


# --- start ----------------------------------------------------------------------------------------------


def _name_check(*, corpus: Corpus, name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ClassifierError("the classifier needs a name")
    if Classifier.objects.filter(corpus=corpus, name=name).exists():
        raise ClassifierError(f"corpus “{corpus.name}” already has a classifier named “{name}”; choose another name")
    busy = ClassifierBuild.objects.filter(corpus=corpus, name=name,
                                          status__in=[ClassifierBuild.Status.PENDING, ClassifierBuild.Status.RUNNING])
    if busy.exists():
        raise ClassifierError(f"a classifier named “{name}” is being built for corpus “{corpus.name}”; choose another "
                              "name or wait for it")
    return name


def _keyword_definition(*, corpus: Corpus, definition: dict) -> dict:
    try:
        terms = keywords.terms_normalize(definition.get("terms") or [])
        fields = keywords.fields_for_corpus(definition.get("fields") or keywords.FIELDS, corpus=corpus)
        if not terms:
            raise ClassifierError("give at least one non-empty term")
        keywords.KeywordMatcher(terms)  # refuses what cannot be matched, now rather than in the task
    except keywords.KeywordError as exc:
        raise ClassifierError(str(exc)) from exc
    return {"terms": terms, "fields": fields}


def _number(value: Any, what: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ClassifierError(f"{what} {value!r} is not a number") from None


def _trained_definition(*, corpus: Corpus, definition: dict) -> dict:
    """{"fields", "labels_from": "topic:<id>" | "classifier:<id>", "partner_id", "seed", "threshold",
    "target_precision"} → the checked request (see trained.trained_request_check)."""
    kind, _, raw = str(definition.get("labels_from") or "").partition(":")
    labels_from: Topic | Classifier | None = None
    if raw.isdigit() and kind == "topic":
        labels_from = Topic.objects.filter(pk=int(raw), corpus=corpus).first()
    elif raw.isdigit() and kind == "classifier":
        labels_from = Classifier.objects.defer("retrieved_bitmap").filter(pk=int(raw), corpus=corpus).first()
    if labels_from is None:
        raise ClassifierError("choose the training labels: a topic or a classifier of this corpus")
    partner = None
    partner_id = definition.get("partner_id")
    if partner_id not in (None, ""):
        partner = Classifier.objects.defer("retrieved_bitmap").filter(pk=int(partner_id), corpus=corpus).first()
        if partner is None:
            raise ClassifierError("the partner classifier is not a classifier of this corpus")
    seed = definition.get("seed")
    if not isinstance(seed, int) or seed < 0:
        raise ClassifierError("the seed is a whole number, 0 or more")
    request = trained.trained_request_check(
        corpus=corpus, fields=definition.get("fields") or [], labels_from=labels_from, seed=seed,
        threshold=_number(definition.get("threshold"), "threshold"),
        target_precision=_number(definition.get("target_precision"), "target precision"), partner=partner)
    return {"request": request}


def _upload_absolute(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


def classifier_build_file_save(*, original_name: str, chunks: Iterable[bytes]) -> str:
    """Stream an uploaded ids or scores file under MEDIA_ROOT; returns its path relative to MEDIA_ROOT."""
    safe_name = PurePath(original_name).name.replace(" ", "_")[-120:] or "classifier"
    relative = f"{UPLOAD_DIR}/{uuid.uuid4().hex}-{safe_name}"
    path = _upload_absolute(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("wb") as out:
            for chunk in chunks:
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return relative


def _file_remove(relative: str) -> None:
    if not relative.startswith(f"{UPLOAD_DIR}/") or ".." in PurePath(relative).parts:
        return
    try:
        _upload_absolute(relative).unlink(missing_ok=True)
    except OSError:
        logger.warning("could not delete the classifier upload %s", relative, exc_info=True)


def _file_definition(*, kind: str, definition: dict) -> dict:
    relative = str(definition.get("file") or "")
    if not relative.startswith(f"{UPLOAD_DIR}/") or ".." in PurePath(relative).parts:
        raise ClassifierError("the uploaded file is missing")
    path = _upload_absolute(relative)
    out: dict[str, Any] = {"file": relative, "source": str(definition.get("source") or PurePath(relative).name)[:255]}
    if kind == Classifier.Kind.SCORES:
        out["threshold"] = classifier_threshold_check(definition.get("threshold"))  # type: ignore[arg-type]  # None: refused
        count = len(classifier_scores_read(path=path))  # the format, checked now: errors name their line
    else:
        count = len(classifier_ids_read(path=path))
    out["ids"] = count
    return out


def _shard_count(*, documents: int, shards: int | None) -> int:
    if shards is None:
        shards = -(-documents // DOCUMENTS_PER_SHARD)
    return max(1, min(int(shards), MAX_SHARDS, max(documents, 1)))


def classifier_build_start(*, corpus: Corpus, name: str, kind: str, definition: dict, user: Any = None,
                           shards: int | None = None) -> ClassifierBuild:
    """Validate a classifier and queue its build (after commit); ClassifierError for every user mistake.

    keywords: definition {"terms": [...], "fields": [...]} (fields: title, text or metadata fields of the
    corpus); ids: {"file": <path under MEDIA_ROOT from classifier_build_file_save>, "source": <file name>};
    scores: the same plus "threshold"; trained: see `_trained_definition`. `shards` splits a keyword or trained
    build (default: one per 250,000 documents).
    """
    if kind not in BUILDABLE:
        raise ClassifierError(f"a {kind} classifier is not built here")
    if shards is not None and not 1 <= int(shards) <= MAX_SHARDS:
        raise ClassifierError(f"shards must be between 1 and {MAX_SHARDS}")
    try:
        name = _name_check(corpus=corpus, name=name)
        if kind == Classifier.Kind.KEYWORDS:
            clean = _keyword_definition(corpus=corpus, definition=definition)
            total = corpus.document_count
            shard_count = _shard_count(documents=total, shards=shards)
        elif kind == Classifier.Kind.TRAINED:
            clean = _trained_definition(corpus=corpus, definition=definition)
            total = corpus.document_count
            shard_count = _shard_count(documents=total, shards=shards)
        else:
            clean = _file_definition(kind=kind, definition=definition)
            total, shard_count = clean["ids"], 1
    except ClassifierError:
        if kind not in SHARDED:
            _file_remove(str(definition.get("file") or ""))
        raise
    build = ClassifierBuild.objects.create(
        corpus=corpus, name=name, kind=kind, definition=clean, total=total, shards=shard_count,
        created_by=user if getattr(user, "pk", None) else None,
    )
    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        # No broker, no worker: the build runs now, in the caller's transaction (a rollback forgets both).
        classifier_build_enqueue(build_id=build.pk)
        build.refresh_from_db()
    else:
        transaction.on_commit(lambda: classifier_build_enqueue(build_id=build.pk))
    return build


def classifier_build_enqueue(*, build_id: int) -> bool:
    """Queue the build's task; with the broker down, fail the build with the reason and return False."""
    from annotation.tasks_builds import classifier_build_task

    try:
        classifier_build_task.delay(build_id=build_id)
    except Exception:  # noqa: BLE001 - the row says what happened instead of staying "waiting"
        if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
            # The build ran in-process and failed: the task recorded why (a no-op if it did).
            logger.warning("classifier build %s failed in-process", build_id, exc_info=True)
            _fail(build_id, UNEXPECTED)
        else:
            logger.warning("could not queue classifier build %s", build_id, exc_info=True)
            _fail(build_id, QUEUE_DOWN)
        return False
    return True


# --- run --------------------------------------------------------------------------------------------------


def _fail(build_id: int, message: str) -> None:
    build = ClassifierBuild.objects.filter(pk=build_id).only("kind", "definition").first()
    updated = ClassifierBuild.objects.filter(
        pk=build_id, status__in=[ClassifierBuild.Status.PENDING, ClassifierBuild.Status.RUNNING],
    ).update(status=ClassifierBuild.Status.FAILED, error=message[:2000], finished_at=timezone.now())
    if updated and build is not None and build.kind == Classifier.Kind.TRAINED:
        trained.trained_files_remove(prefix=_trained_prefix(build_id))
    elif updated and build is not None and build.kind != Classifier.Kind.KEYWORDS:
        _file_remove(str(build.definition.get("file") or ""))


def classifier_build_fail(*, build_id: int, exc: BaseException) -> None:
    """Record why a build stopped: the message of a user-facing error, else a pointer to the log."""
    from core.errors import ApplicationError

    if isinstance(exc, ApplicationError):
        _fail(build_id, exc.message)
    else:
        logger.error("classifier build %s failed", build_id, exc_info=exc)
        _fail(build_id, UNEXPECTED)


def _heartbeat() -> dict:
    # While a build runs, its details hold only the heartbeat: a shard's write replaces it whole.
    return {"heartbeat": timezone.now().isoformat()}


def _progress_add(build_id: int, count: int) -> None:
    ClassifierBuild.objects.filter(pk=build_id, status=ClassifierBuild.Status.RUNNING).update(
        processed=Least(F("processed") + count, F("total")), details=_heartbeat())


def classifier_build_begin(*, build_id: int) -> ClassifierBuild | None:
    """Mark a waiting build running and return it; None when it is not waiting (started already, or gone)."""
    now = timezone.now()
    if not ClassifierBuild.objects.filter(pk=build_id, status=ClassifierBuild.Status.PENDING).update(
            status=ClassifierBuild.Status.RUNNING, started_at=now, processed=0,
            details={"heartbeat": now.isoformat()}):
        return None
    return ClassifierBuild.objects.select_related("corpus").get(pk=build_id)


def classifier_build_shard_ranges(*, corpus: Corpus, shards: int) -> list[tuple[int, int]]:
    """`shards` half-open id ranges [lo, hi) holding about the same number of the corpus's documents.

    Together they cover every document of the corpus exactly once (the last one ends past the largest id).
    """
    ids = corpus_bitmap(corpus=corpus)
    if len(ids) == 0:
        return [(0, 1)]
    shards = max(1, min(shards, len(ids)))
    starts = [ids[(len(ids) * i) // shards] for i in range(shards)]
    ends = [*starts[1:], ids.max() + 1]
    return list(zip(starts, ends, strict=True))


def _bitmap_encode(bitmap: BitMap) -> str:
    return base64.b64encode(bitmap.serialize()).decode("ascii")


def _bitmap_decode(text: str) -> BitMap:
    return BitMap.deserialize(base64.b64decode(text))


def classifier_build_shard(*, build_id: int, pk_from: int, pk_to: int) -> str:
    """Scan one id range of a keyword build; returns its retrieved set (serialised for the chord)."""
    build = ClassifierBuild.objects.select_related("corpus").get(pk=build_id)
    if build.status != ClassifierBuild.Status.RUNNING:
        return _bitmap_encode(BitMap())  # failed meanwhile (another shard): the chord will not store anything
    if build.kind == Classifier.Kind.TRAINED:
        return _trained_shard(build, pk_from, pk_to)
    found = keywords.keyword_scan(
        corpus=build.corpus, terms=build.definition["terms"], fields=build.definition["fields"],
        pk_range=(pk_from, pk_to), progress=lambda n: _progress_add(build_id, n))
    return _bitmap_encode(found)


def classifier_build_finish(*, build_id: int, shard_results: list[str]) -> ClassifierBuild | None:
    """Union the shards' sets and store the classifier; a build not running (done, failed) is left alone."""
    kind = ClassifierBuild.objects.filter(pk=build_id).values_list("kind", flat=True).first()
    if kind == Classifier.Kind.TRAINED:
        return _trained_finish(build_id, shard_results)
    retrieved = BitMap()
    for encoded in shard_results:
        retrieved |= _bitmap_decode(encoded)
    with transaction.atomic():
        build = ClassifierBuild.objects.select_for_update().select_related("corpus").filter(pk=build_id).first()
        if build is None or build.status != ClassifierBuild.Status.RUNNING:
            return build
        classifier = classifier_store(corpus=build.corpus, name=build.name, kind=build.kind,
                                      definition=build.definition, retrieved=retrieved)
        _done(build, classifier, details={})
    return build


def _trained_prefix(build_id: int) -> str:
    return f"build-{build_id}"


def _phase(build_id: int, phase: str) -> None:
    ClassifierBuild.objects.filter(pk=build_id, status=ClassifierBuild.Status.RUNNING).update(
        details={**_heartbeat(), "phase": phase})


def classifier_build_train(*, build_id: int) -> list[tuple[int, int]] | None:
    """Fit a trained build's model (cross-fitted), save it, and return the id ranges its shards score.

    None when the build is no longer running (failed meanwhile): nothing is left behind.
    """
    build = ClassifierBuild.objects.select_related("corpus").get(pk=build_id)
    if build.status != ClassifierBuild.Status.RUNNING:
        return None
    request = build.definition["request"]
    fits = trained.FOLDS + 1
    _phase(build_id, f"training: fit 0 of {fits}")
    definition, fitted = trained.trained_fit(
        corpus=build.corpus, request=request, progress=lambda k: _phase(build_id, f"training: fit {k} of {fits}"))
    saved = trained.trained_model_save(fitted=fitted, prefix=f"{_trained_prefix(build_id)}-model")
    stored = ClassifierBuild.objects.filter(pk=build_id, status=ClassifierBuild.Status.RUNNING).update(
        definition={**definition, "build": {"request": request, "model": saved}},
        details={**_heartbeat(), "phase": "scoring"})
    if not stored:
        trained.trained_files_remove(prefix=_trained_prefix(build_id))
        return None
    return classifier_build_shard_ranges(corpus=build.corpus, shards=build.shards)


def _trained_shard(build: ClassifierBuild, pk_from: int, pk_to: int) -> str:
    wall, cpu = time.perf_counter(), time.process_time()
    model = trained.trained_model_load(**build.definition["build"]["model"])
    pks, scores = trained.trained_score_range(
        corpus=build.corpus, fields=build.definition["fields"], model=model.model, oof=model.oof,
        pk_range=(pk_from, pk_to), progress=lambda n: _progress_add(build.pk, n))
    saved = trained.trained_scores_save(pks=pks, scores=scores,
                                        prefix=f"{_trained_prefix(build.pk)}-scores-{pk_from}")
    timing = {"documents": len(pks), "seconds": round(time.perf_counter() - wall, 3),
              "cpu_seconds": round(time.process_time() - cpu, 3)}
    return json.dumps({**saved, "timing": timing})


def _trained_finish(build_id: int, shard_results: list[str]) -> ClassifierBuild | None:
    build = ClassifierBuild.objects.filter(pk=build_id).first()
    if build is None or build.status != ClassifierBuild.Status.RUNNING:
        return build
    _phase(build_id, "storing the scores")
    results = [json.loads(result) for result in shard_results if result]
    parts = [trained.trained_scores_load(file=r["file"], sha256=r["sha256"]) for r in results]
    pks = np.concatenate([p for p, _ in parts]) if parts else np.empty(0, dtype=np.int64)
    scores = np.concatenate([s for _, s in parts]) if parts else np.empty(0, dtype=np.float64)
    order = np.argsort(pks, kind="stable")
    pks, scores = pks[order], scores[order]
    with transaction.atomic():
        build = ClassifierBuild.objects.select_for_update().select_related("corpus").filter(pk=build_id).first()
        if build is None or build.status != ClassifierBuild.Status.RUNNING:
            return build
        definition = {k: v for k, v in build.definition.items() if k != "build"}
        classifier = trained.trained_store(corpus=build.corpus, name=build.name, definition=definition,
                                           pks=pks, scores=scores)
        at = definition["cross_validation"]["at_threshold"]
        _done(build, classifier, details={"threshold": definition["threshold"],
                                          "cv_precision": at["precision"], "cv_recall": at["recall"],
                                          "target_precision": definition.get("target_precision"),
                                          "shard_timings": [r.get("timing") for r in results]})
    trained.trained_files_remove(prefix=f"{_trained_prefix(build_id)}-scores")
    return build


def _done(build: ClassifierBuild, classifier: Classifier, *, details: dict) -> None:
    started = build.started_at or build.created_at
    now = timezone.now()
    warnings = classifier_coverage_warnings(retrieved=classifier.retrieved_count,
                                            corpus_size=build.corpus.document_count)
    build.status = ClassifierBuild.Status.DONE
    build.classifier = classifier
    build.processed = build.total
    build.finished_at = now
    build.details = {**details, "retrieved": classifier.retrieved_count, "warnings": warnings,
                     "seconds": round((now - started).total_seconds(), 3)}
    build.save(update_fields=["status", "classifier", "processed", "finished_at", "details"])


def classifier_build_upload_run(*, build_id: int) -> ClassifierBuild | None:
    """Build an ids or scores classifier from its stored file; the file is removed afterwards."""
    build = ClassifierBuild.objects.select_related("corpus").get(pk=build_id)
    if build.status != ClassifierBuild.Status.RUNNING:
        return build
    definition = build.definition
    path = _upload_absolute(definition["file"])
    with transaction.atomic():  # the row lock makes a second run of the task wait, then leave it alone
        locked = ClassifierBuild.objects.select_for_update().get(pk=build_id)
        if locked.status != ClassifierBuild.Status.RUNNING:
            return locked
        if build.kind == Classifier.Kind.SCORES:
            result = classifier_create_from_scores(corpus=build.corpus, name=build.name, path=path,
                                                   threshold=definition["threshold"], source=definition["source"])
        else:
            result = classifier_create_from_ids(corpus=build.corpus, name=build.name, path=path,
                                                source=definition["source"])
        locked.corpus = build.corpus
        _done(locked, result.classifier, details={
            "read": result.read, "unknown_count": result.unknown_count, "unknown_examples": result.unknown_examples})
    _file_remove(definition["file"])
    return locked


# --- stuck builds -----------------------------------------------------------------------------------------


def _stuck_after() -> timedelta:
    return timedelta(seconds=int(getattr(settings, "CLASSIFIER_BUILD_STUCK_SECONDS", DEFAULT_STUCK_SECONDS)))


def _last_sign_of_life(build: ClassifierBuild) -> datetime:
    beat = build.details.get("heartbeat") if isinstance(build.details, dict) else None
    parsed = parse_datetime(beat) if isinstance(beat, str) else None
    return parsed or build.started_at or build.created_at


def classifier_builds_stuck_fail(*, now: datetime | None = None) -> int:
    """Fail waiting or running builds with no sign of life (progress, heartbeat) for the stuck delay."""
    now = now or timezone.now()
    limit = _stuck_after()
    failed = 0
    live = ClassifierBuild.objects.filter(status__in=[ClassifierBuild.Status.PENDING, ClassifierBuild.Status.RUNNING])
    for build in live.only("pk", "details", "started_at", "created_at"):
        if now - _last_sign_of_life(build) < limit:
            continue
        with transaction.atomic():  # look again under the row lock: progress written meanwhile keeps it alive
            fresh = live.select_for_update().filter(pk=build.pk).first()
            if fresh is None or now - _last_sign_of_life(fresh) < limit:
                continue
        _fail(build.pk, STUCK)
        failed += 1
    return failed


# --- the page -----------------------------------------------------------------------------------------------


def classifier_build_state(*, build: ClassifierBuild) -> dict[str, Any]:
    """What the build page and its JSON status show."""
    finished = build.status in (ClassifierBuild.Status.DONE, ClassifierBuild.Status.FAILED)
    percent = 100 if build.status == ClassifierBuild.Status.DONE else (
        int(100 * build.processed / build.total) if build.total else 0)
    details = build.details if isinstance(build.details, dict) else {}
    status_display = build.get_status_display()
    if build.kind == Classifier.Kind.TRAINED and build.status == ClassifierBuild.Status.RUNNING:
        status_display = f"{status_display} ({details.get('phase') or 'scoring'})"
    state: dict[str, Any] = {
        "status": build.status, "status_display": status_display, "finished": finished,
        "processed": build.processed, "total": build.total, "percent": percent, "shards": build.shards,
        "error": build.error, "classifier_id": build.classifier_id,
        "retrieved": details.get("retrieved"), "warnings": details.get("warnings", []),
        "unknown_count": details.get("unknown_count", 0), "unknown_examples": details.get("unknown_examples", []),
    }
    if build.kind == Classifier.Kind.TRAINED:
        state.update({"phase": details.get("phase"), "threshold": details.get("threshold"),
                      "cv_precision": details.get("cv_precision"), "cv_recall": details.get("cv_recall"),
                      "target_precision": details.get("target_precision")})
    return state

