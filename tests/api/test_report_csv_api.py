"""GET /api/v1/topics/{id}/report/csv/: the report page's CSV for a token (what `recall report --format csv` reads)."""
from __future__ import annotations

import json

from django.test import Client

from tests.factories import build_topic


def test_the_csv_is_the_pages_csv_whatever_the_accept_header(manager):
    built = build_topic()
    url = f"/api/v1/topics/{built.topic.pk}/report/csv/"
    for accept in ("text/csv", "application/json", "*/*"):
        response = manager.client.get(url, HTTP_ACCEPT=accept)
        assert response.status_code == 200, (accept, response.content[:200])
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert response["Content-Disposition"].endswith('-report-v1.csv"')
    page = Client()
    page.force_login(manager.user)
    assert response.content == page.get(f"/reports/topics/{built.topic.pk}/report.csv").content


def test_refusals_are_problems(manager, annotator):
    built = build_topic()
    url = f"/api/v1/topics/{built.topic.pk}/report/csv/"
    forbidden = annotator.client.get(url, HTTP_ACCEPT="text/csv")
    assert forbidden.status_code == 403 and forbidden["Content-Type"].startswith("application/problem+json")
    bad = manager.client.get(url + "?version=x", HTTP_ACCEPT="text/csv")
    assert bad.status_code == 400 and "version" in json.loads(bad.content)["errors"]
    missing = manager.client.get(url + "?version=7")
    assert missing.status_code == 404 and json.loads(missing.content)["status"] == 404
    assert manager.client.get("/api/v1/topics/999999/report/csv/").status_code == 404
