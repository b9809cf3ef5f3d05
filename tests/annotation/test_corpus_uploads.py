"""Browser uploads of corpora: stored on disk, imported by the task, safe to run twice, failures recorded."""
import json

import pytest

from annotation.models import Corpus, CorpusUpload
from annotation.services.corpora import corpus_uploads


def _create(content: bytes, name: str = "c.jsonl") -> CorpusUpload:
    return corpus_uploads.corpus_upload_create(corpus_name="Up", original_name=f"../../{name}",
                                               chunks=iter([content[:10], content[10:]]), id_field="id",
                                               text_fields=["title", "body"])


ROWS = b"".join(json.dumps({"id": f"x{i}", "title": "t", "body": f"b{i}"}).encode() + b"\n" for i in range(7))


@pytest.mark.django_db
def test_the_file_is_streamed_under_media_root_with_a_safe_name(settings):
    upload = _create(ROWS)
    path = corpus_uploads._absolute(upload.file_path)
    assert path.read_bytes() == ROWS and upload.file_size == len(ROWS)
    assert path.is_relative_to(settings.MEDIA_ROOT) and ".." not in upload.file_path


@pytest.mark.django_db
def test_run_imports_once_and_a_second_run_changes_nothing():
    upload = _create(ROWS)
    first = corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    assert first.status == "done" and first.corpus.document_count == 7 and first.progress == 7
    second = corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    assert second.status == "done" and Corpus.objects.get().document_count == 7


@pytest.mark.django_db
def test_a_bad_line_is_recorded_with_its_number():
    upload = _create(ROWS + b"not json\n")
    result = corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    assert result.status == "failed" and result.error_line == 8 and result.error_problem


@pytest.mark.django_db
def test_an_unexpected_error_marks_the_upload_failed_instead_of_running_for_ever(monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(corpus_uploads, "corpus_import", broken)  # the runner calls the importer by name
    upload = _create(ROWS)
    result = corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    assert result.status == "failed" and "unexpected error" in result.error_problem and result.finished_at


@pytest.mark.django_db
def test_a_missing_upload_row_is_ignored():
    assert corpus_uploads.corpus_upload_run(upload_id=12345) is None


@pytest.mark.django_db
def test_queue_down_keeps_the_file_and_a_retry_imports_it(monkeypatch, django_capture_on_commit_callbacks):
    from annotation import tasks as tasks_import

    def down(*args, **kwargs):
        raise ConnectionError("redis down")

    monkeypatch.setattr(tasks_import.corpus_import_task, "delay", down)
    with django_capture_on_commit_callbacks(execute=True):
        upload = _create(ROWS)
    upload.refresh_from_db()
    assert upload.status == "pending" and upload.error_problem == corpus_uploads.QUEUE_DOWN
    assert corpus_uploads._absolute(upload.file_path).exists()
    monkeypatch.undo()
    assert corpus_uploads.corpus_upload_enqueue(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done" and upload.error_problem == "" and upload.corpus.document_count == 7
