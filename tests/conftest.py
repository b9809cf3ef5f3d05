import pytest


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _not_in_a_celery_worker():
    """Each test starts outside a Celery worker.

    A worker started in this process (tests/test_celery_worker.py, celery.contrib.testing) marks the process as a
    worker for good, after which ``AsyncResult.get()`` refuses to block ("Never call result.get() within a task!")
    in every later test, whatever the order pytest runs them in.
    """
    from celery._state import _set_task_join_will_block

    _set_task_join_will_block(False)


# --- the browser (Debian's chromium driven by Playwright) -------------------------------------------

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for a test module; skipped without /usr/bin/chromium unless REQUIRE_BROWSER=1 (CI),
    which turns the skip into a failure. Playwright's download of its own browser is never used."""
    import os
    from pathlib import Path

    if not Path(CHROMIUM).exists():
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1 but {CHROMIUM} is missing (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing")
    # Playwright's sync API runs an event loop in this thread; the ORM calls made by the test stay synchronous.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield instance
        instance.close()
