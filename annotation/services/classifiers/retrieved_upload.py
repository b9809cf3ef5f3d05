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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from pyroaring import BitMap

from annotation.models import Classifier, Corpus
from annotation.services.classifiers.classifier import (
    UNKNOWN_EXAMPLES,
    ClassifierError,
    ClassifierResult,
    _file_sha256,
    classifier_store,
)
from annotation.services.corpora.id_resolution import document_ids_resolve, document_ids_resolve_bitmap

READ_ROWS = 10_000  # Parquet rows per record batch
# Parquet ids resolved per call of document_ids_resolve, each one streamed pass over the corpus: large
# enough that an upload of up to a million ids is one pass (1M ids of a 10M corpus took four passes,
# 55 s, with batches of 250,000), small enough to bound memory: a full batch peaks about 210 MiB above the
# process's size (the ids, their set and the resolved dict; bench/bench_retrieved_bitmap.py --parquet).
RESOLVE_BATCH = 1_000_000
UNKNOWN_SHARE_MAX = 0.01  # refuse when more than 1% of the uploaded ids are not documents of the corpus
BITMAP_MAX_BYTES = 512 * 2**20  # a full 32-bit bitmap serialises to about 512 MiB: anything larger is not one


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


def _parquet_ids(path: Path, column: str) -> Iterator[list[str]]:
    """The ids of `column`, READ_ROWS at a time, as strings (integers in canonical decimal)."""
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
    row = 0
    try:
        for batch in parquet.iter_batches(batch_size=READ_ROWS, columns=[column]):
            values = batch.column(0).to_pylist()
            for offset, value in enumerate(values):
                if value is None or (isinstance(value, str) and not value.strip()):
                    raise ClassifierError(f"{path.name}: row {row + offset + 1} of column {column!r} has no id")
            row += len(values)
            yield [value.strip() if isinstance(value, str) else str(value) for value in values]
    except (pa.ArrowException, ValueError, OSError) as exc:
        if isinstance(exc, ClassifierError):
            raise
        raise ClassifierError(f"{path.name}: the Parquet data is corrupt after row {row:,} ({str(exc).strip()})") from exc


def classifier_create_from_parquet(
    *, corpus: Corpus, name: str, path: Path, column: str = "id", unknown_share_max: float = UNKNOWN_SHARE_MAX
) -> ClassifierResult:
    """A classifier whose retrieved set is the external ids in one column of a Parquet file.

    Strings are stripped; integers stand for their decimal text. A repeated id of a document counts once
    (a repeated unknown id is counted at each repeat: the file is never held whole).
    Refuses a corrupt file, a missing or non-id column, an empty cell, and a file with more than
    `unknown_share_max` ids that are not documents of the corpus.
    """
    path = Path(path)
    resolution = _Resolution()
    for external_ids in _batches(itertools.chain.from_iterable(_parquet_ids(path, column)), RESOLVE_BATCH):
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
    size_limited: bool = True,
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
        return classifier_create_from_parquet(corpus=corpus, name=name, path=path, column=column or "id")
    return classifier_create_from_bitmap(corpus=corpus, name=name, path=path)


__all__ = [
    "FORMATS", "UNKNOWN_SHARE_MAX", "RetrievedUploadTooLarge", "classifier_create_from_bitmap",
    "classifier_create_from_parquet", "classifier_create_from_retrieved_file", "retrieved_format_detect",
    "retrieved_upload_max_bytes", "retrieved_upload_too_large",
]
