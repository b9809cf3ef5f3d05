"""The OpenAPI schema: committed as docs/openapi.yaml (a change shows in review), served, and browsable."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiYamlRenderer
from drf_spectacular.validation import validate_schema

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
REGENERATE = "DJANGO_SETTINGS_MODULE=config.settings.test .venv/bin/python manage.py spectacular --file docs/openapi.yaml"


def _generated() -> str:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    validate_schema(schema)
    return OpenApiYamlRenderer().render(schema, renderer_context={}).decode()


def test_committed_schema_is_the_generated_one():
    assert COMMITTED.read_text(encoding="utf-8") == _generated(), (
        f"The API changed its schema: regenerate it ({REGENERATE}) and commit docs/openapi.yaml.")


def test_schema_is_served_and_lists_every_resource(db):
    response = Client().get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    paths = set(schema["paths"])
    for path in ("/api/v1/corpora/", "/api/v1/corpora/{corpus_id}/classifiers/ids/", "/api/v1/topics/{topic_id}/launch/",
                 "/api/v1/topics/{topic_id}/report/versions/{version}/", "/api/v1/certification-plans/{plan_id}/lock/"):
        assert path in paths
    assert schema["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer",
        "description": "A personal token from /account/tokens/ (shown once when created)."}
    launch = schema["paths"]["/api/v1/topics/{topic_id}/launch/"]["post"]
    assert any(p["name"] == "Idempotency-Key" and p["required"] for p in launch["parameters"])


def test_docs_page_uses_only_this_sites_scripts(db):
    client = Client()
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', html)
    assert scripts and all(src.startswith("/") and not src.startswith("//") for src in scripts)
    assert "<script>" not in html  # no inline script: the CSP allows none without a nonce
    assert "script-src 'self'" in response["Content-Security-Policy"]
    for src in scripts:
        assert client.get(src).status_code == 200, src


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_swagger_ui_renders_under_the_csp(browser, live_server):
    page = browser.new_page()
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text
            else None)
    try:
        page.goto(f"{live_server.url}/api/docs/swagger/")  # Swagger UI, to try calls; /api/docs/ is Redoc
        page.wait_for_selector(".swagger-ui .info .title", timeout=20_000)
        assert "Recall API" in page.inner_text(".swagger-ui .info .title")
        assert page.locator(".opblock-tag-section").count() >= 6  # account, corpora, classifiers, topics, ...
    finally:
        page.close()
    assert refused == []
