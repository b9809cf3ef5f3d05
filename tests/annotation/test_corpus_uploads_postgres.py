"""On PostgreSQL, import progress is visible to other connections while the import's transaction is still
open (issue 15 item 6), and the import stays all or nothing. Run with DATABASE_URL pointing at PostgreSQL."""
from __future__ import annotations

import json
import threading

import pytest
from django.db import connection, connections

from annotation.models import Corpus, CorpusUpload, Document
from annotation.services.corpora import corpus_import as corpus_import_module
from annotation.services.corpora import corpus_uploads
from tests.factories import require_postgres

pytestmark = pytest.mark.django_db(transaction=True)


def _rows(n: int, *, broken_last: bool = False) -> bytes:
    lines = [json.dumps({"id": f"p{i}", "title": "t", "body": f"b{i}"}) for i in range(n)]
    if broken_last:
        lines[-1] = '{"id": "broken", '
    return ("\n".join(lines) + "\n").encode()


def _observe_while_importing(monkeypatch, content: bytes) -> tuple[CorpusUpload, list[tuple[str, int, int]]]:
    """Run the import in a thread; after its second batch, another thread reads the upload row and the
    documents through its own connection while the import's transaction is still open."""
    require_postgres()
    monkeypatch.setattr(corpus_import_module, "BATCH_SIZE", 3)
    # Autocommit: the on-commit enqueue would run the (eager) import at once, in this thread.
    monkeypatch.setattr(corpus_uploads, "corpus_upload_enqueue", lambda **kwargs: True)
    upload = corpus_uploads.corpus_upload_create(corpus_name="Visible", original_name="v.jsonl",
                                                 chunks=iter([content]), id_field="id", text_fields=["title", "body"])
    batches, resume = threading.Event(), threading.Event()
    seen: list[tuple[str, int, int]] = []
    real_stage = corpus_import_module._Staging.write
    written = []

    def write_then_pause(self, cursor, rows):
        real_stage(self, cursor, rows)
        written.append(len(rows))
        if len(written) == 2:
            batches.set()
            assert resume.wait(30), "the observer never answered"

    monkeypatch.setattr(corpus_import_module._Staging, "write", write_then_pause)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            corpus_uploads.corpus_upload_run(upload_id=upload.pk)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connections.close_all()

    importer = threading.Thread(target=run)
    importer.start()
    try:
        assert batches.wait(30), "the import never reached its second batch"
        # This thread's own connection: a different session from the importer's.
        row = CorpusUpload.objects.get(pk=upload.pk)
        seen.append((row.status, row.progress, Document.objects.count()))
    finally:
        resume.set()
        importer.join(60)
    assert not errors, errors
    upload.refresh_from_db()
    return upload, seen


def test_progress_is_visible_while_the_import_transaction_is_open(monkeypatch):
    upload, seen = _observe_while_importing(monkeypatch, _rows(10))
    assert connection.vendor == "postgresql"
    # The first batch's progress (3) is visible outside while the second is staged; no document is yet.
    assert seen == [("running", 3, 0)]
    assert upload.status == "done" and upload.progress == 10 and Corpus.objects.get().document_count == 10
    assert "heartbeat" not in upload.summary and upload.summary["created"] == 10


def test_a_failed_import_still_writes_nothing(monkeypatch):
    upload, seen = _observe_while_importing(monkeypatch, _rows(10, broken_last=True))
    assert seen == [("running", 3, 0)]
    assert upload.status == "failed" and upload.error_line == 10
    assert Document.objects.count() == 0
