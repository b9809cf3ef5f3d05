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


# --- parallel runs (pytest-xdist, `bin/test` runs two workers with --dist loadfile) -----------------
#
# Each worker has its own test database (pytest-django appends the worker id: test_<name>_gw0, ...), its
# own tmp_path (MEDIA_ROOT above) and its own live_server port. What a worker no longer has is Django's
# global test order: serially, pytest-django runs every transactional test (transaction=True,
# live_server) after every other database test, so no test ever starts on a database that a
# transactional test flushed. Under --dist loadfile a worker runs whole modules one after the other, so a
# plain `db` test may follow a flush. The flush empties every table, and post_migrate puts back only the
# content types and permissions; the rows that migrations made (the role groups of
# annotation/migrations/0009_roles.py and their permissions) are gone. So the rows a freshly migrated
# test database holds are recorded once per worker and put back after each transactional test: every
# test starts on the database it would have started on serially.

_FRESH_ROWS: dict[str, str] = {}  # database alias -> JSON of the rows migrations created
_BLOCKER: list = []


def _fresh_rows_models():
    from django.apps import apps

    # Recreated by post_migrate after a flush (with new primary keys: hence natural foreign keys below).
    recreated = {"contenttypes.contenttype", "auth.permission", "sessions.session"}
    return [m for m in apps.get_models() if m._meta.label_lower not in recreated and not m._meta.proxy]


def _fresh_rows_dump(alias: str) -> str:
    from django.core import serializers

    objects = []
    for model in _fresh_rows_models():
        objects.extend(model._default_manager.using(alias).order_by("pk"))
    return serializers.serialize("json", objects, use_natural_foreign_keys=True) if objects else ""


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's set-up, then a record of the rows migrations left in each test database."""
    from django.db import connections

    with django_db_blocker.unblock():
        for alias in connections:
            _FRESH_ROWS[alias] = _fresh_rows_dump(alias)
    _BLOCKER.append(django_db_blocker)
    yield


def _flushes_the_database(item: pytest.Item) -> bool:
    """pytest-django's own test of whether a test is transactional (its tables are flushed at its end)."""
    from django.test import TestCase, TransactionTestCase
    from pytest_django.plugin import validate_django_db

    cls = getattr(item, "cls", None)
    if cls is not None and issubclass(cls, TransactionTestCase):
        return not issubclass(cls, TestCase)
    marker = item.get_closest_marker("django_db")
    if marker is not None:
        transaction, reset_sequences, *_ = validate_django_db(marker)
        if transaction or reset_sequences:
            return True
    fixtures = getattr(item, "fixturenames", ())
    return "transactional_db" in fixtures or "live_server" in fixtures


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    result = yield  # the test's fixtures are finalised here: a transactional test's flush has happened
    # (After the last test, nextitem is None and the test databases are gone already.)
    if _BLOCKER and nextitem is not None and _flushes_the_database(item):
        from django.db import connections

        with _BLOCKER[0].unblock():
            for alias, rows in _FRESH_ROWS.items():
                if rows:  # saved by primary key: rows still present are updated, never doubled
                    connections[alias].creation.deserialize_db_from_string(rows)
    return result


# What each worker gets: whole modules (--dist loadfile: a module's browser, live server and e2e stack are
# set up once, in one process), except that the two modules of tests/e2e/ form one unit: they run one
# after the other on one worker, so two production-like stacks (gunicorn, Celery worker and beat each)
# never compete for the machine at once. Modules are handed out in collection order, and each worker
# orders its collection with the longest modules first (the e2e stack, then modules with browser or slow
# tests), so that no long module starts last and runs alone at the end.

E2E_DIR = "tests/e2e/"


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class ModuleScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return E2E_DIR if nodeid.startswith(E2E_DIR) else super()._split_scope(nodeid)

    config.option.loadscopereorder = False  # keep the collection order below (xdist sorts by test count)
    return ModuleScheduling(config, log)


@pytest.hookimpl(trylast=True)  # after pytest-django's ordering, which it keeps within each module
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import os

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a run in one process keeps pytest-django's order

    def module_rank(item: pytest.Item) -> int:
        if item.nodeid.startswith(E2E_DIR):
            return 0
        return 1 if item.path in long_modules else 2

    long_modules = {item.path for item in items
                    if item.get_closest_marker("browser") or item.get_closest_marker("slow")}
    items.sort(key=module_rank)  # stable: the order within a rank and within a module is kept


MTURK_SANDBOX_URL = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"


@pytest.fixture
def mturk_sandbox(settings, monkeypatch):
    """The MTurk sandbox and no AWS credentials from the environment: nothing can reach a real account."""
    settings.MTURK_ENVIRONMENT = "sandbox"
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def mturk_stub(mturk_sandbox):
    """botocore's Stubber on the client every MTurk service call uses; fails the test on a call not stubbed or
    a stubbed response left unused."""
    import boto3
    from botocore.stub import Stubber

    from annotation.crowds.mturk_client import mturk_client_override

    client = boto3.client("mturk", region_name="us-east-1", endpoint_url=MTURK_SANDBOX_URL,
                          aws_access_key_id="test", aws_secret_access_key="test")
    with Stubber(client) as stubber, mturk_client_override(client):
        yield stubber
        stubber.assert_no_pending_responses()
