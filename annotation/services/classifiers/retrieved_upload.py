"""Retrieved sets computed by another engine (Spark, Dask, Ray, pandas) uploaded as a file.

Two formats, both read with bounded memory, both giving a classifier of kind `ids`
(the retrieved set is the whole definition, so the fingerprint equals that of the
same set uploaded as a text file of ids):

* **Roaring bitmap** (`classifier_create_from_bitmap`): one 32-bit Roaring bitmap in the
  portable serialisation format (what pyroaring's `BitMap.serialize()`, CRoaring's
  `roaring_bitmap_portable_serialize` and Java's `RoaringBitmap.serialize` write).
  **Contract: its values are the corpus's external ids, read as integers**: the value
  42 means the document whose external id is the text "42" (canonical decimal, no
  leading zeros or sign). It therefore only suits corpora whose external ids are integers
  in 0 … 4,294,967,295. Corpora with other ids use Parquet.
* **Parquet** (`classifier_create_from_parquet`): one column (default "id") of strings
  or integers holding external ids, read in record batches of `READ_ROWS` rows.

docs/scaling.md shows a PySpark and a pandas snippet producing each file.

A bitmap's values are tested against the corpus's ids in one pass (the bitmap is the only set held);
Parquet ids are resolved to Document pks batch by batch (`RESOLVE_BATCH`). Ids that are not documents of
the corpus are counted and the first `UNKNOWN_EXAMPLES` named. More than
`UNKNOWN_SHARE_MAX` unknown ids (or none known at all) refuses the upload: such a file
was almost certainly made for another corpus or with the wrong id column.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pyroaring import BitMap

from annotation.models import Classifier, ClassifierBuild, Corpus
from annotation.services.classifiers.classifier import (
    UNKNOWN_EXAMPLES,
    ClassifierError,
    ClassifierResult,
    _file_sha256,
    classifier_store,
)
from annotation.services.classifiers.kinds.ids import upload_absolute, upload_file_remove, upload_file_save
from annotation.services.classifiers.kinds.steps import build_done
from annotation.services.corpora.id_resolution import document_ids_resolve, document_ids_resolve_bitmap
from core.errors import ApplicationError
from core.jobs import job_begin, job_enqueue, job_enqueue_on_commit, job_fail_exception, job_progress_add

LIVE = (ClassifierBuild.Status.PENDING, ClassifierBuild.Status.RUNNING)

READ_ROWS = 10_000  # Parquet rows per record batch
# Parquet ids resolved per call of document_ids_resolve, each one streamed pass over the corpus: large
# enough that an upload of up to a million ids is one pass (1M ids of a 10M corpus took four passes,
# 55 s, with batches of 250,000), small enough to bound memory: a full batch peaks about 210 MiB above the
# process's size (the ids, their set and the resolved dict; bench/bench_retrieved_bitmap.py --parquet).
RESOLVE_BATCH = 1_000_000
UNKNOWN_SHARE_MAX = 0.01  # refuse when more than 1% of the uploaded ids are not documents of the corpus
BITMAP_MAX_BYTES = 512 * 2**20  # a full 32-bit bitmap serialises to about 512 MiB: anything larger is not one
# A Parquet upload's footer is read in the request: more rows or a larger decompressed id column than these is
# refused before anything is resolved (a 167 kB file can declare 60 million rows). The job reads in batches.
PARQUET_MAX_ROWS = 100_000_000
PARQUET_MAX_UNCOMPRESSED_BYTES = 4 * 2**30

Progress = Callable[[int], None]


@dataclass
class _Resolution:
    """The running result of resolving uploaded ids batch by batch."""

    retrieved: BitMap = field(default_factory=BitMap)
    read: int = 0  # ids read (distinct for a bitmap; for Parquet, rows with an id minus repeats of known ids)
    unknown_count: int = 0
    unknown_examples: list[str] = field(default_factory=list)

    def add(self, *, corpus: Corpus, external_ids: list[str]) -> None:
        resolved = document_ids_resolve(corpus=corpus, external_ids=external_ids)
        for external_id in external_ids:
            pk = resolved.get(external_id)
            if pk is None:
                self.unknown_count += 1
                self.read += 1
                if len(self.unknown_examples) < UNKNOWN_EXAMPLES:
                    self.unknown_examples.append(external_id)
            elif pk not in self.retrieved:
                self.retrieved.add(pk)
                self.read += 1


def _batches(values: Iterable[str], size: int) -> Iterator[list[str]]:
    iterator = iter(values)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _store(
    *, corpus: Corpus, name: str, path: Path, resolution: _Resolution, definition: dict, unknown_share_max: float
) -> ClassifierResult:
    if resolution.read == 0:
        raise ClassifierError(f"{path.name}: the file holds no ids")
    if not resolution.retrieved:
        raise ClassifierError(
            f"{path.name}: none of the {resolution.read:,} ids is a document of corpus {corpus.name!r} "
            f"(for example {', '.join(map(repr, resolution.unknown_examples[:5]))})"
        )
    share = resolution.unknown_count / resolution.read
    if share > unknown_share_max:
        raise ClassifierError(
            f"{path.name}: {resolution.unknown_count:,} of the {resolution.read:,} ids ({share:.1%}) are not documents "
            f"of corpus {corpus.name!r} (at most {unknown_share_max:.0%} may be unknown); for example "
            f"{', '.join(map(repr, resolution.unknown_examples[:5]))}. Was the file made for another corpus or from "
            "the wrong id column?"
        )
    classifier = classifier_store(
        corpus=corpus, name=name, kind=Classifier.Kind.IDS,
        definition={**definition, "source": path.name, "sha256": _file_sha256(path)},
        retrieved=resolution.retrieved,
    )
    return ClassifierResult(
        classifier=classifier, read=resolution.read,
        unknown_count=resolution.unknown_count, unknown_examples=resolution.unknown_examples,
    )


# --- Roaring bitmap -------------------------------------------------------------


def _bitmap_read(path: Path) -> BitMap:
    try:
        size = path.stat().st_size
        if size > BITMAP_MAX_BYTES:
            raise ClassifierError(
                f"{path.name}: {size:,} bytes is larger than any 32-bit Roaring bitmap ({BITMAP_MAX_BYTES:,} bytes at most)"
            )
        data = path.read_bytes()
    except OSError as exc:
        raise ClassifierError(f"{path.name}: cannot open ({exc.strerror or exc})") from exc
    if not data:
        raise ClassifierError(f"{path.name}: the file is empty (expected a serialized Roaring bitmap)")
    try:
        bitmap = BitMap.deserialize(data)
    except (ValueError, IndexError) as exc:
        raise ClassifierError(
            f"{path.name}: not a serialized 32-bit Roaring bitmap in the portable format (corrupt, truncated, "
            "a 64-bit bitmap, or another kind of file)"
        ) from exc
    if len(bitmap.serialize()) < len(data):
        raise ClassifierError(
            f"{path.name}: {len(data) - len(bitmap.serialize()):,} bytes follow the bitmap (corrupt, or several "
            "bitmaps in one file)"
        )
    return bitmap


def classifier_create_from_bitmap(
    *, corpus: Corpus, name: str, path: Path, unknown_share_max: float = UNKNOWN_SHARE_MAX
) -> ClassifierResult:
    """A classifier whose retrieved set is a serialized Roaring bitmap of the corpus's integer external ids.

    The bitmap value n stands for the document whose external id is str(n). Refuses a corrupt file,
    an empty bitmap, and a bitmap with more than `unknown_share_max` ids that are not documents of the corpus.
    """
    path = Path(path)
    bitmap = _bitmap_read(path)
    # Tested against the bitmap itself (one pass over a large corpus, no batch of id strings).
    retrieved, found = document_ids_resolve_bitmap(corpus=corpus, values=bitmap)
    unknown = bitmap - found
    resolution = _Resolution(
        retrieved=retrieved, read=len(bitmap), unknown_count=len(unknown),
        unknown_examples=[str(value) for value in itertools.islice(unknown, UNKNOWN_EXAMPLES)],
    )
    return _store(
        corpus=corpus, name=name, path=path, resolution=resolution,
        definition={"format": "roaring"}, unknown_share_max=unknown_share_max,
    )


# --- Parquet --------------------------------------------------------------------


def parquet_max_rows() -> int:
    """The most rows a Parquet upload may have: settings.RETRIEVED_PARQUET_MAX_ROWS (default 100 million)."""
    return int(getattr(settings, "RETRIEVED_PARQUET_MAX_ROWS", PARQUET_MAX_ROWS))


def parquet_max_uncompressed_bytes() -> int:
    """The largest decompressed size of the id column: settings.RETRIEVED_PARQUET_MAX_UNCOMPRESSED_BYTES (4 GiB)."""
    return int(getattr(settings, "RETRIEVED_PARQUET_MAX_UNCOMPRESSED_BYTES", PARQUET_MAX_UNCOMPRESSED_BYTES))


def _parquet_limits_check(*, path: Path, parquet: Any, column: str) -> int:
    """Refuse a file whose footer declares more rows, or a larger decompressed id column, than the limits
    (a few kB of Parquet can declare 60 million rows); returns its row count. Reads the footer only."""
    metadata = parquet.metadata
    rows = int(metadata.num_rows)
    if rows > parquet_max_rows():
        raise ClassifierError(f"{path.name}: {rows:,} rows is more than the {parquet_max_rows():,} rows a "
                              "retrieved-set file may have; nothing was kept")
    index = parquet.schema_arrow.names.index(column)
    uncompressed = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        if index < row_group.num_columns:
            uncompressed += int(row_group.column(index).total_uncompressed_size or 0)
    if uncompressed > parquet_max_uncompressed_bytes():
        raise ClassifierError(f"{path.name}: column {column!r} decompresses to {uncompressed:,} bytes, more than the "
                              f"{parquet_max_uncompressed_bytes():,} bytes allowed; nothing was kept")
    return rows


def _parquet_open(path: Path, column: str) -> tuple[Any, int]:
    """The Parquet file with `column` checked (present, strings or integers, within the limits), and its rows."""
    import pyarrow as pa  # noqa: PLC0415 — heavy: pyarrow, only for Parquet uploads
    import pyarrow.parquet as pq  # noqa: PLC0415 — heavy: pyarrow, only for Parquet uploads

    if not path.is_file():
        raise ClassifierError(f"{path.name}: cannot open (no such file)")
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, ValueError, OSError) as exc:  # pyarrow reports a damaged footer as OSError
        raise ClassifierError(f"{path.name}: not a readable Parquet file ({str(exc).strip()})") from exc
    schema = parquet.schema_arrow
    if column not in schema.names:
        raise ClassifierError(
            f"{path.name}: no column {column!r}; the file has {', '.join(map(repr, schema.names)) or 'no columns'}"
        )
    kind = schema.field(column).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if not (pa.types.is_integer(kind) or pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise ClassifierError(f"{path.name}: column {column!r} holds {kind}; ids must be strings or integers")
    return parquet, _parquet_limits_check(path=path, parquet=parquet, column=column)


def _parquet_ids(path: Path, column: str, progress: Progress | None = None) -> Iterator[list[str]]:
    """The ids of `column`, READ_ROWS at a time, as strings (integers in canonical decimal); `progress` gets
    the rows of each batch read."""
    import pyarrow as pa  # noqa: PLC0415 — heavy: pyarrow, only for Parquet uploads

    parquet, _rows = _parquet_open(path, column)
    row = 0
    try:
        for batch in parquet.iter_batches(batch_size=READ_ROWS, columns=[column]):
            values = batch.column(0).to_pylist()
            for offset, value in enumerate(values):
                if value is None or (isinstance(value, str) and not value.strip()):
                    raise ClassifierError(f"{path.name}: row {row + offset + 1} of column {column!r} has no id")
            row += len(values)
            if progress is not None:
                progress(len(values))
            yield [value.strip() if isinstance(value, str) else str(value) for value in values]
    except (pa.ArrowException, ValueError, OSError) as exc:
        if isinstance(exc, ClassifierError):
            raise
        raise ClassifierError(f"{path.name}: the Parquet data is corrupt after row {row:,} ({str(exc).strip()})") from exc


def classifier_create_from_parquet(
    *, corpus: Corpus, name: str, path: Path, column: str = "id", unknown_share_max: float = UNKNOWN_SHARE_MAX,
    progress: Progress | None = None,
) -> ClassifierResult:
    """A classifier whose retrieved set is the external ids in one column of a Parquet file.

    Strings are stripped; integers stand for their decimal text. A repeated id of a document counts once
    (a repeated unknown id is counted at each repeat: the file is never held whole).
    Refuses a corrupt file, a missing or non-id column, an empty cell, a file past the row or decompressed-size
    limits, and a file with more than `unknown_share_max` ids that are not documents of the corpus.
    `progress` gets the rows of each batch read.
    """
    path = Path(path)
    resolution = _Resolution()
    ids = itertools.chain.from_iterable(_parquet_ids(path, column, progress))
    for external_ids in _batches(ids, RESOLVE_BATCH):
        resolution.add(corpus=corpus, external_ids=external_ids)
    return _store(
        corpus=corpus, name=name, path=path, resolution=resolution,
        definition={"format": "parquet", "column": column}, unknown_share_max=unknown_share_max,
    )


# --- either format, with the upload size limit (the page, the API and the command) ----------------

FORMATS = ("auto", "roaring", "parquet")
PARQUET_MAGIC = b"PAR1"


class RetrievedUploadTooLarge(ClassifierError):
    """The file passes RETRIEVED_UPLOAD_MAX_BYTES; nothing was kept. `extra["max_bytes"]` is the limit."""

    http_status = 413
    code = "too-large"

    def __init__(self, message: str, *, max_bytes: int) -> None:
        super().__init__(message)
        self.extra = {"max_bytes": max_bytes}


def retrieved_upload_max_bytes() -> int:
    """The largest file accepted: settings.RETRIEVED_UPLOAD_MAX_BYTES, by default the largest 32-bit bitmap."""
    return int(getattr(settings, "RETRIEVED_UPLOAD_MAX_BYTES", BITMAP_MAX_BYTES))


def retrieved_upload_too_large(*, size: int, name: str) -> RetrievedUploadTooLarge:
    limit = retrieved_upload_max_bytes()
    return RetrievedUploadTooLarge(
        f"{name}: {size:,} bytes is more than the {limit:,} bytes a retrieved-set file may have; nothing was kept",
        max_bytes=limit,
    )


def retrieved_format_detect(*, path: Path) -> str:
    """"parquet" when the file starts with Parquet's magic bytes, else "roaring" (refused there if it is not one)."""
    try:
        with Path(path).open("rb") as handle:
            head = handle.read(len(PARQUET_MAGIC))
    except OSError as exc:
        raise ClassifierError(f"{Path(path).name}: cannot open ({exc.strerror or exc})") from exc
    return "parquet" if head == PARQUET_MAGIC else "roaring"


def classifier_create_from_retrieved_file(
    *, corpus: Corpus, name: str, path: Path, file_format: str = "auto", column: str = "id",
    size_limited: bool = True, progress: Progress | None = None,
) -> ClassifierResult:
    """A classifier from a Roaring bitmap or a Parquet file (`file_format` "auto" looks at the first bytes).

    An upload (`size_limited`) larger than `retrieved_upload_max_bytes()` is refused before it is read (a file
    already on the server, `manage.py classifier_import_retrieved`, is not limited); every other refusal is the
    format's own (`classifier_create_from_bitmap`, `classifier_create_from_parquet`). Nothing is stored unless
    the whole file was read and accepted.
    """
    path = Path(path)
    if file_format not in FORMATS:
        raise ClassifierError(f"unknown format {file_format!r}: choose one of {', '.join(FORMATS)}")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ClassifierError(f"{path.name}: cannot open ({exc.strerror or exc})") from exc
    if size_limited and size > retrieved_upload_max_bytes():
        raise retrieved_upload_too_large(size=size, name=path.name)
    if not name.strip():
        raise ClassifierError("the classifier needs a name")
    if Classifier.objects.filter(corpus=corpus, name=name.strip()).exists():  # before reading a large file
        raise ClassifierError(f"corpus {corpus.name!r} already has a classifier named {name.strip()!r}")
    if file_format == "auto":
        file_format = retrieved_format_detect(path=path)
    if file_format == "parquet":
        return classifier_create_from_parquet(corpus=corpus, name=name, path=path, column=column or "id",
                                              progress=progress)
    result = classifier_create_from_bitmap(corpus=corpus, name=name, path=path)
    if progress is not None:
        progress(result.read)
    return result


# --- the upload as a job (the page and the API): stored in the request, resolved by a task ----------------

RETRIEVED_UNEXPECTED = "The upload stopped on an unexpected error; the details are in the server log."
RETRIEVED_QUEUE_DOWN = "The upload could not be queued (the task queue is unreachable). Upload it again when it is back."


def retrieved_file_precheck(*, path: Path, file_format: str = "auto", column: str = "id") -> tuple[str, int]:
    """What the request checks before it queues the job, reading at most a Parquet footer: the format (
    "roaring" or "parquet") and the ids to read (a Parquet file's rows; 0 for a bitmap, known once read).
    A Parquet file without the column, of the wrong type or past the row or decompressed-size limits, an
    empty file, and a file larger than any bitmap are refused here; the rest is the job's."""
    path = Path(path)
    if file_format not in FORMATS:
        raise ClassifierError(f"unknown format {file_format!r}: choose one of {', '.join(FORMATS)}")
    if file_format == "auto":
        file_format = retrieved_format_detect(path=path)
    if file_format == "parquet":
        return "parquet", _parquet_open(path, column or "id")[1]
    size = path.stat().st_size
    if size == 0:
        raise ClassifierError(f"{path.name}: the file is empty (expected a serialized Roaring bitmap)")
    if size > BITMAP_MAX_BYTES:
        raise ClassifierError(
            f"{path.name}: {size:,} bytes is larger than any 32-bit Roaring bitmap ({BITMAP_MAX_BYTES:,} bytes at most)")
    return "roaring", 0


def classifier_retrieved_upload_start(
    *, corpus: Corpus, name: str, original_name: str, chunks: Iterable[bytes], file_format: str = "auto",
    column: str = "id", user: Any = None,
) -> ClassifierBuild:
    """Store an uploaded Roaring bitmap or Parquet file and queue the job that resolves its ids (a
    ClassifierBuild of kind `ids`, polled on the build's page and at /api/v1/classifier-builds/{id}/).

    The request does only what is bounded: it streams the file to MEDIA_ROOT (refused past
    `retrieved_upload_max_bytes()`, RetrievedUploadTooLarge), checks the name and `retrieved_file_precheck`.
    Every refusal removes the file and raises ClassifierError; nothing is queued. Without a broker
    (CELERY_TASK_ALWAYS_EAGER) the job runs before this returns, and the build says done or failed.
    """
    name = name.strip()
    if not name:
        raise ClassifierError("the classifier needs a name")
    limit = retrieved_upload_max_bytes()
    source = Path(original_name or "retrieved").name[:255] or "retrieved"

    def limited() -> Iterator[bytes]:
        size = 0
        for chunk in chunks:
            size += len(chunk)
            if size > limit:
                raise retrieved_upload_too_large(size=size, name=source)
            yield chunk

    relative = upload_file_save(original_name=source, chunks=limited())
    try:
        if Classifier.objects.filter(corpus=corpus, name=name).exists() or ClassifierBuild.objects.filter(
                corpus=corpus, name=name, status__in=LIVE).exists():
            raise ClassifierError(f"corpus {corpus.name!r} already has a classifier named {name!r}")
        path = upload_absolute(relative)
        detected, rows = retrieved_file_precheck(path=path, file_format=file_format, column=column or "id")
    except ClassifierError as exc:
        upload_file_remove(relative)
        message = exc.message.replace(upload_absolute(relative).name, source)
        raise (exc if message == exc.message else ClassifierError(message)) from None
    build = ClassifierBuild.objects.create(
        corpus=corpus, name=name, kind=Classifier.Kind.IDS, total=rows,
        definition={"file": relative, "source": source, "retrieved": detected, "column": column or "id"},
        created_by=user if getattr(user, "pk", None) else None,
    )
    job_enqueue_on_commit(job=build, enqueue=lambda: classifier_retrieved_upload_enqueue(build_id=build.pk))
    return build


def classifier_retrieved_upload_enqueue(*, build_id: int) -> bool:
    """Queue the upload's task; with the broker down the build fails saying so and its file is removed."""
    from annotation.tasks_retrieved import classifier_retrieved_upload_task  # noqa: PLC0415 — the task imports this

    return job_enqueue(model=ClassifierBuild, job_id=build_id,
                       send=lambda: classifier_retrieved_upload_task.delay(build_id=build_id),
                       queue_down=RETRIEVED_QUEUE_DOWN, unexpected=RETRIEVED_UNEXPECTED,
                       on_fail=lambda: _build_file_remove(build_id))


def _build_file_remove(build_id: int) -> None:
    definition = ClassifierBuild.objects.filter(pk=build_id).values_list("definition", flat=True).first() or {}
    upload_file_remove(str(definition.get("file") or ""))


def classifier_retrieved_upload_run(*, build_id: int) -> ClassifierBuild | None:
    """The job: resolve the stored file's ids in batches (progress: ids read of the file's rows), store the
    classifier, mark the build done; any error fails it (a user's message for a bad file) and removes the file.
    A build not waiting (started already, finished) is left alone: safe to run twice."""
    if not job_begin(model=ClassifierBuild, job_id=build_id, details={"heartbeat": timezone.now().isoformat()}):
        return None
    build = ClassifierBuild.objects.select_related("corpus").get(pk=build_id)
    definition = build.definition or {}
    relative = str(definition.get("file") or "")
    source = str(definition.get("source") or "retrieved")

    def progress(count: int) -> None:
        job_progress_add(model=ClassifierBuild, job_id=build_id, count=count)

    try:
        with transaction.atomic():  # the row lock: the stuck sweep leaves a build it cannot lock alone
            locked = ClassifierBuild.objects.select_for_update().get(pk=build_id)
            path = upload_absolute(relative)
            if not relative or not path.is_file():
                raise ClassifierError(f"{source}: the uploaded file is missing")
            try:
                result = classifier_create_from_retrieved_file(
                    corpus=build.corpus, name=build.name, path=path, file_format=str(definition.get("retrieved")),
                    column=str(definition.get("column") or "id"), size_limited=False, progress=progress)
            except ClassifierError as exc:
                message = exc.message.replace(path.name, source)
                raise (exc if message == exc.message else ClassifierError(message)) from None
            locked.refresh_from_db()
            locked.corpus = build.corpus
            if locked.total < result.read:
                locked.total = result.read
                locked.save(update_fields=["total"])
            build_done(locked, result.classifier, details={
                "read": result.read, "unknown_count": result.unknown_count,
                "unknown_examples": result.unknown_examples, "source": source})
    except Exception as exc:
        if job_fail_exception(model=ClassifierBuild, job_id=build_id, exc=exc, unexpected=RETRIEVED_UNEXPECTED):
            upload_file_remove(relative)
        if not isinstance(exc, ApplicationError):
            raise
        return ClassifierBuild.objects.get(pk=build_id)
    upload_file_remove(relative)
    return locked


def classifier_retrieved_upload_result(*, build: ClassifierBuild) -> ClassifierResult | None:
    """A done build's result as the upload used to answer it (classifier, ids read, unknown ids); else None."""
    if build.status != ClassifierBuild.Status.DONE or build.classifier is None:
        return None
    details = build.details or {}
    return ClassifierResult(classifier=build.classifier, read=int(details.get("read") or 0),
                            unknown_count=int(details.get("unknown_count") or 0),
                            unknown_examples=list(details.get("unknown_examples") or []))


__all__ = [
    "FORMATS", "UNKNOWN_SHARE_MAX", "RetrievedUploadTooLarge", "classifier_create_from_bitmap",
    "classifier_create_from_parquet", "classifier_create_from_retrieved_file", "retrieved_format_detect",
    "retrieved_upload_max_bytes", "retrieved_upload_too_large", "classifier_retrieved_upload_start",
    "classifier_retrieved_upload_run", "classifier_retrieved_upload_result", "retrieved_file_precheck",
]
