"""The annotator path's per-request overhead with a shared cache (issue 15): sessions read from the cache,
permission sets kept in it (core/auth.py) — and a role revoked or granted still counts on the very next request.

The shared cache is Redis in production; here the per-process memory cache stands in for it (one process),
with the settings production derives from CACHE_URL (tests/config/test_settings.py checks that derivation).
"""
import pytest
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment, HitItem
from annotation.roles import ANNOTATE
from annotation.services.sampling.draws import samples_launch
from core import auth as core_auth
from tests.factories import make_pair_world, user_with_role

pytestmark = pytest.mark.django_db

# The submit-and-next cycle measured without the shared cache: 31 queries (tests/annotation/test_submit_next.py),
# four of them before the view runs — the session row, the user row, the user's own permissions and its groups'
# permissions. With the shared cache the session and both permission queries are gone.
OVERHEAD_QUERIES_SAVED = 3
SUBMIT_AND_NEXT_QUERIES = 31 - OVERHEAD_QUERIES_SAVED
HIT_PAGE_QUERIES = 9 - OVERHEAD_QUERIES_SAVED
OVERHEAD_TABLES = ('FROM "django_session"', 'FROM "auth_permission"', 'FROM "auth_group"')


@pytest.fixture
def shared_cache(settings):
    from django.core.cache import cache

    settings.SESSION_ENGINE = "core.sessions"
    settings.AUTH_PERMISSION_CACHE_SECONDS = 300
    cache.clear()
    yield cache
    cache.clear()


@pytest.fixture
def world():
    world = make_pair_world(n=500, prevalence=0.2, seed=3)
    samples_launch(topic=world.topic, per_region=10, seed=1)  # 30 documents: six HITs of five
    return world


def _first_hit(client) -> tuple[str, dict[str, str]]:
    client.post("/annotate/next/")
    assignment = Assignment.objects.get(status="claimed")
    docs = HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True)
    return reverse("annotator:assignment", args=[assignment.pk]), {**{f"doc-{d}": "1" for d in docs}, "then": "next"}


def _overhead(captured) -> list[str]:
    return [q["sql"][:120] for q in captured.captured_queries if any(t in q["sql"] for t in OVERHEAD_TABLES)]


def test_without_the_shared_cache_each_request_reads_session_and_permissions(client, world):
    """The baseline the budget below is measured against (the test settings have no shared cache)."""
    client.force_login(user_with_role("ann", "annotator"))
    url, _ = _first_hit(client)
    client.get(url)
    with CaptureQueriesContext(connection) as page:
        assert client.get(url).status_code == 200
    assert len(_overhead(page)) == OVERHEAD_QUERIES_SAVED, _overhead(page)


def test_with_the_shared_cache_the_cycle_skips_session_and_permission_queries(shared_cache, client, world):
    client.force_login(user_with_role("ann", "annotator"))
    url, data = _first_hit(client)
    client.get(url)  # the first request of a process fills the cache
    with CaptureQueriesContext(connection) as page:
        assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as submit:
        response = client.post(url, data)
    assert response.status_code == 200 and 'id="hit-form"' in response.content.decode()
    assert _overhead(page) == [] and _overhead(submit) == []
    assert len(page) <= HIT_PAGE_QUERIES, [q["sql"][:120] for q in page.captured_queries]
    assert len(submit) <= SUBMIT_AND_NEXT_QUERIES, [q["sql"][:120] for q in submit.captured_queries]
    # Nothing is written for the request itself: no session save, no last_login.
    writes = [q["sql"] for q in submit.captured_queries if q["sql"].startswith(("UPDATE", "INSERT", "DELETE"))]
    assert not any('"django_session"' in s or '"auth_user"' in s for s in writes), writes


def test_a_removed_role_is_refused_on_the_next_request(shared_cache, client, world):
    user = user_with_role("ann", "annotator")
    client.force_login(user)
    assert client.get("/annotate/").status_code == 200
    assert client.get("/annotate/").status_code == 200  # served from the cache
    user.groups.remove(Group.objects.get(name="annotator"))
    assert client.get("/annotate/").status_code == 403


def test_a_permission_taken_from_the_group_is_refused_on_the_next_request(shared_cache, client, world):
    client.force_login(user_with_role("ann", "annotator"))
    assert client.get("/annotate/").status_code == 200
    group = Group.objects.get(name="annotator")
    group.permissions.remove(Permission.objects.get(codename=ANNOTATE.split(".")[1]))
    assert client.get("/annotate/").status_code == 403
    group.permissions.add(Permission.objects.get(codename=ANNOTATE.split(".")[1]))
    assert client.get("/annotate/").status_code == 200


def test_a_granted_role_counts_on_the_next_request(shared_cache, client, world):
    user = user_with_role("late", None)
    client.force_login(user)
    assert client.get("/annotate/").status_code == 403
    user.groups.add(Group.objects.get(name="annotator"))
    assert client.get("/annotate/").status_code == 200


def test_a_deleted_group_takes_its_permissions_with_it(shared_cache, client, world):
    """Deleting a group removes its links without m2m_changed; the group's post_delete bumps the version."""
    client.force_login(user_with_role("ann", "annotator"))
    assert client.get("/annotate/").status_code == 200
    Group.objects.get(name="annotator").delete()
    assert client.get("/annotate/").status_code == 403


def test_an_entry_under_an_old_version_is_never_trusted(shared_cache, client, world):
    """Another process's change (simulated: a forged entry granting nothing, then a version bump) wins."""
    user = user_with_role("ann", "annotator")
    client.force_login(user)
    assert client.get("/annotate/").status_code == 200
    key = core_auth.permissions_cache_key(user)
    version = shared_cache.get(core_auth.VERSION_KEY)
    shared_cache.set(key, (version, frozenset()), 300)  # what a revoke seen elsewhere would have cached
    assert client.get("/annotate/").status_code == 403  # the cache is really what answers
    shared_cache.set(key, ("some-older-version", frozenset()), 300)
    assert client.get("/annotate/").status_code == 200  # a stale version is recomputed from the database


def test_an_id_freed_by_a_deleted_account_never_carries_its_permissions(shared_cache, client, world):
    """SQLite can hand a deleted account's id to the next one: the cached set must not follow the id."""
    from django.contrib.auth import get_user_model

    old = user_with_role("old-analyst", "analyst")
    client.force_login(old)
    assert client.get("/analyst/").status_code == 200  # cached: analyst permissions under this id
    pk = old.pk
    old.delete()
    newcomer = get_user_model().objects.create_user(pk=pk, username="newcomer", password="x")  # no role
    client.force_login(newcomer)
    assert client.get("/analyst/").status_code == 403


def test_a_cache_that_fails_costs_queries_not_the_request(shared_cache, client, world, monkeypatch):
    client.force_login(user_with_role("ann", "annotator"))

    def broken(*args, **kwargs):
        raise ConnectionError("redis is down")

    monkeypatch.setattr(core_auth.cache, "get_many", broken)
    monkeypatch.setattr(core_auth.cache, "set", broken)
    with CaptureQueriesContext(connection) as page:
        assert client.get("/annotate/").status_code == 200
    assert any('FROM "auth_permission"' in q["sql"] for q in page.captured_queries)
    other = user_with_role("other", None)
    client.force_login(other)
    assert client.get("/annotate/").status_code == 403


def test_a_sign_out_with_the_cache_down_still_signs_out(shared_cache, client, world, monkeypatch):
    """core.sessions: Django's cached_db would answer this sign-out with a 500 (its cache delete is unguarded)."""
    from django.contrib.sessions.models import Session

    client.force_login(user_with_role("ann", "annotator"))
    assert client.get("/annotate/").status_code == 200
    key = client.session.session_key

    def broken(*args, **kwargs):
        raise ConnectionError("redis is down")

    for name in ("get", "get_many", "set", "add", "delete"):
        monkeypatch.setattr(shared_cache, name, broken)
    assert client.get("/annotate/").status_code == 200  # read from the database
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert not Session.objects.filter(session_key=key).exists()
    assert client.get("/annotate/").status_code == 302  # to sign-in
