"""Issue 26 items 3, 6, 7, 8 (pages without a browser): webhooks in the navigation of the roles that may use them,
the demo accounts named on the sign-in page, Redoc as the API reference, no empty table header on the tokens page,
and a report whose "What to know" opens with what a manager acts on (method notes under Details)."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from annotation.services.accounts import demo_accounts_ensure
from tests.factories import user_with_role

pytestmark = pytest.mark.django_db


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _nav_links(html: str) -> list[str]:
    nav = re.search(r'<nav class="mainnav topbar-wide"[^>]*>(.*?)</nav>', html, re.S)
    assert nav, "the page has the main navigation"
    return re.findall(r'href="([^"]+)"', nav.group(1))


def test_webhooks_are_in_the_navigation_of_the_roles_that_may_open_them():
    manager = _signed_in(user_with_role("max", "manager"))
    assert "/webhooks/" in _nav_links(manager.get("/reports/").content.decode())
    assert manager.get("/webhooks/").status_code == 200
    annotator = _signed_in(user_with_role("ann", "annotator"))
    assert "/webhooks/" not in _nav_links(annotator.get("/account/tokens/").content.decode())
    assert annotator.get("/webhooks/").status_code == 403


def test_phone_menu_holds_the_same_links_as_the_wide_navigation():
    html = _signed_in(user_with_role("max", "manager")).get("/reports/").content.decode()
    menu = re.search(r'<details class="navmenu">(.*?)</details>', html, re.S)
    assert menu and "<summary>Menu</summary>" in menu.group(1)
    assert re.findall(r'href="([^"]+)"', menu.group(1))[: len(_nav_links(html))] == _nav_links(html)


def test_sign_in_page_names_the_demo_accounts_when_the_server_has_them():
    assert 'id="demo-accounts"' not in Client().get("/accounts/login/").content.decode()
    demo_accounts_ensure()
    html = Client().get("/accounts/login/").content.decode()
    assert 'id="demo-accounts"' in html
    assert "<code>analyst</code> / <code>analyst-demo</code>" in html
    assert "<code>manager</code> / <code>manager-demo</code>" in html


def test_api_reference_is_redoc_served_by_this_site_and_swagger_is_one_level_down():
    client = Client()
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<redoc spec-url=\"/api/schema/\"" in html
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', html)
    assert scripts and all(src.startswith("/static/") for src in scripts) and "redoc" in scripts[0]
    assert "<script>" not in html and "fonts.googleapis" not in html
    swagger = client.get("/api/docs/swagger/")
    assert swagger.status_code == 200 and "swagger" in swagger.content.decode().lower()


def test_tokens_table_has_no_empty_header_and_labels_its_cells_for_phones():
    client = _signed_in(user_with_role("max", "manager"))
    client.post("/account/tokens/", {"name": "nightly"})
    html = client.get("/account/tokens/").content.decode()
    headers = re.findall(r"<th[^>]*>(.*?)</th>", html, re.S)
    assert headers and all(re.sub(r"<[^>]+>", "", h).strip() for h in headers)
    assert 'data-label="Last used"' in html and 'class="tokens"' in html


def test_demo_instructions_name_the_buttons_the_annotator_sees():
    from django.template.loader import get_template

    from annotation.demo.setup import DEMO_INSTRUCTIONS

    source = get_template("annotator/assignment.html").template.source
    for button in ("On topic", "Off topic"):
        assert button in source and f"Answer {button}" in DEMO_INSTRUCTIONS
    assert "Relevant" not in DEMO_INSTRUCTIONS and "relevant" not in DEMO_INSTRUCTIONS


def test_no_table_of_these_templates_has_an_empty_header_cell():
    """axe's empty-table-header, found by reading the templates (some tables show only with data the tour lacks)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "templates"
    mine = [*root.glob("analyst/topic_*.html"), *root.glob("webhooks/*.html"), root / "account" / "tokens.html",
            root / "reports" / "_report_body.html"]
    empty = [f"{path.relative_to(root)}" for path in mine
             if re.search(r"<th(\s[^>]*)?>\s*</th>", path.read_text(encoding="utf-8"))]
    assert empty == []
