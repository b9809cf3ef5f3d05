"""Corpora that stay in the team's engine through the API, the pages and the command (issue 29)."""
from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import Corpus, ExternalCorpusSource
from tests.annotation.corpora.backend_world import rows, write_parquet
from tests.factories import user_with_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder(tmp_path):
    return write_parquet(tmp_path / "lake", rows(60))


def test_register_read_and_check_through_the_api(analyst, folder):
    response = analyst.client.post("/api/v1/external-corpora/", {
        "name": "lake", "engine": "duckdb", "location": str(folder), "text_fields": ["text"],
        "connection_env": "TEAM_LAKE"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["document_count"], body["files"], body["sampled_documents"]) == (60, 2, 0)
    assert body["snapshot"].startswith("parquet:") and body["connection_env"] == "TEAM_LAKE"
    corpus_id = body["corpus_id"]
    assert analyst.client.get(f"/api/v1/external-corpora/{corpus_id}/").json()["snapshot"] == body["snapshot"]
    write_parquet(folder / "new", rows(5), parts=1)
    check = analyst.client.post(f"/api/v1/external-corpora/{corpus_id}/check/").json()
    assert check["ok"] and check["size"] == 65 and check["changes"][0].startswith("new/part-0.parquet added")


@pytest.mark.parametrize("payload, problem", [
    ({"connection_env": "postgres://u:secret@h/db"}, "NAME of an environment variable"),
    ({"id_field": 'id" OR 1=1 --'}, "no id column"),
    ({"text_fields": ["body`; DROP"]}, "no column"),
    ({"location": "/nowhere/at/all"}, "No Parquet file or folder"),
])
def test_a_refused_registration_is_a_problem_with_the_reason(analyst, folder, payload, problem):
    response = analyst.client.post("/api/v1/external-corpora/", {
        "name": "lake", "engine": "duckdb", "location": str(folder), **payload}, format="json")
    assert response.status_code == 400, response.content
    assert problem in response.json()["detail"]
    assert not Corpus.objects.filter(name="lake").exists()


def test_only_analysts_register(callers, folder):
    for role in ("annotator", None):
        response = callers[role].client.post("/api/v1/external-corpora/", {
            "name": "x", "engine": "duckdb", "location": str(folder)}, format="json")
        assert response.status_code == 403


def test_the_pages_register_show_and_check(client, folder):
    client.force_login(user_with_role("page-analyst", "analyst"))
    response = client.post(reverse("analyst:external_corpus_new"), {
        "name": "lake", "engine": "duckdb", "location": str(folder), "id_field": "id", "title_field": "title",
        "text_fields": "text", "connection_env": ""})
    source = ExternalCorpusSource.objects.get(corpus__name="lake")
    assert response.status_code == 302 and response["Location"] == reverse("analyst:external_corpus", args=[source.corpus_id])
    page = client.get(response["Location"]).content.decode()
    assert source.snapshot in page and "part-0.parquet" in page
    response = client.post(reverse("analyst:external_corpus_check", args=[source.corpus_id]), follow=True)
    assert "60 documents, unchanged" in response.content.decode()
    refused = client.post(reverse("analyst:external_corpus_new"), {
        "name": "bad", "engine": "duckdb", "location": str(folder), "id_field": "nope", "title_field": "title",
        "text_fields": "text", "connection_env": ""})
    assert refused.status_code == 200 and "no id column" in refused.content.decode()


def test_the_command_registers_and_checks(folder, capsys):
    call_command("corpus_register_external", "lake", "--location", str(folder), "--text-fields", "text")
    assert "60 documents" in capsys.readouterr().out
    call_command("corpus_register_external", "lake", "--check")
    assert "snapshot parquet:" in capsys.readouterr().out
    with pytest.raises(CommandError, match="NAME of an environment variable"):
        call_command("corpus_register_external", "other", "--location", str(folder), "--connection-env", "a=b")


def test_a_location_the_server_cannot_read_is_refused_with_its_reason():
    """A path longer than the file system allows (found by the schema fuzzer: 500 OSError 'File name too long')."""
    from annotation.services.corpora.backends.base import BackendError
    from annotation.services.corpora.backends.parquet_files import parquet_files

    with pytest.raises(BackendError, match="cannot be read by the server"):
        parquet_files("0" * 5000)
