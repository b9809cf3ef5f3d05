"""Every URL pattern, as every role and as an anonymous visitor: allowed ones work, the others are refused.

The walk iterates the project's resolver, so a URL added by anyone is checked
automatically; a path parameter this file cannot fill makes the test fail with a
message saying which fixture id to add.
"""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotation.models import CorpusUpload, Hit
from annotation.roles import ANNOTATE, CONFIGURE, READ_REPORTS

ROLES = ("analyst", "manager", "annotator", "norole", "staff")
ROLE_PERMS = {
    "analyst": {CONFIGURE, READ_REPORTS},
    "manager": {READ_REPORTS},
    "annotator": {ANNOTATE},
    "norole": set(),
    "staff": set(),  # staff without a role group: admin only
}
# Which permission each area needs.
NAMESPACE_PERM = {"analyst": CONFIGURE, "reports": READ_REPORTS, "annotator": ANNOTATE, "webhooks": READ_REPORTS}
# Pages whose rule differs from their area's.
URL_PERM = {"analyst:workers": READ_REPORTS}  # managers read worker quality; blocking stays with analysts
# Every signed-in account, whatever its role: one's own API tokens.
SIGNED_IN = {"account"}
# Answered as JSON, never with a sign-in redirect: tests/api/test_roles.py checks every endpoint for every role
# (tokens and sessions); this walk only checks that none answers a 5xx.
API = {"api"}
# Open to everyone, with the reason.
PUBLIC = {
    "login": "the sign-in page",
    "logout": "signing out (POST only)",
    "home": "sends anonymous visitors to sign-in and each role to its start page",
    # Mechanical Turk workers have no account here: the external HIT page is opened inside
    # MTurk's frame and is protected by MTurk's assignment parameters and a signed form token.
    "mturk:hit": "MTurk ExternalQuestion page, public to MTurk workers by design",
    "admin:login": "the admin's own sign-in page",
    "admin:logout": "the admin's sign-out",
    "healthz": "liveness probe for the load balancer (core/health.py): no sign-in, no session",
    "api_docs": "the API reference (Redoc): the published schema, no data",
    "api_docs_swagger": "Swagger UI over the same published schema, to try calls with one's own token",
    "metrics": "Prometheus scrape: its own bearer token or network rule (METRICS_*), 404 when neither is set",
    "account:oidc_start": "signing in through the identity provider (404 when OIDC is not configured)",
    "account:oidc_callback": "the identity provider's answer to a sign-in (404 when OIDC is not configured)",
}
SIGN_OUT = {"logout", "admin:logout"}
# Deletions: the first allowed role's POST deletes the fixture, so the next allowed role finds nothing (404).
DELETES = {"webhooks:endpoint_delete"}


def _walk(patterns, prefix_ns: str = "", converters: dict | None = None):
    for entry in patterns:
        conv = dict(converters or {})
        conv.update(getattr(entry.pattern, "converters", {}) or {})
        if isinstance(entry, URLResolver):
            ns = entry.namespace
            yield from _walk(entry.url_patterns, f"{prefix_ns}{ns}:" if ns else prefix_ns, conv)
        elif isinstance(entry, URLPattern):
            yield prefix_ns, entry, conv


def url_patterns() -> list[tuple[str, list[str], str]]:
    """(full name, parameter names, regex) of every named pattern of the project."""
    found = []
    for ns, pattern, conv in _walk(get_resolver().url_patterns):
        if not pattern.name:
            continue
        params = sorted(set(conv) | set(pattern.pattern.regex.groupindex))
        found.append((f"{ns}{pattern.name}", params, str(pattern.pattern)))
    return found


@pytest.fixture
def params(world):
    from annotation.services.crowd.assignments import assignment_claim
    from annotation.services.crowd.workers import worker_for_user
    from annotation.services.sampling.draws import samples_launch

    hit = Hit.objects.filter(topic=world["topic"]).order_by("pk").first()
    # Views of one's own assignment answer 404 for anybody else's: the annotator account holds this one.
    samples_launch(topic=world["topic"], per_region=7, seed=8)
    assignment = assignment_claim(worker=worker_for_user(user=world["accounts"]["annotator"]), topic=world["topic"])
    assert assignment is not None
    upload = CorpusUpload.objects.create(corpus_name="x", original_name="x.jsonl", file_path="none", status="failed",
                                         error_problem="test")
    from estimation.models import CertificationPlan  # certification pages (estimation/views/certification.py)

    plan = CertificationPlan.objects.create(topic=world["topic"], classifier=world["c1"], metric="pair_recall",
                                            target=0.8)
    from api.services import api_token_create
    from webhooks.models import WebhookDelivery, WebhookEndpoint

    token = api_token_create(user=world["accounts"]["annotator"], name="walk")
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.org/in", secret="s", events=["report.updated"])
    # The delivery hangs on another endpoint, so the delete walked first does not take it along.
    kept = WebhookEndpoint.objects.create(url="https://hooks.example.org/kept", secret="s", events=["report.updated"])
    delivery = WebhookDelivery.objects.create(endpoint=kept, event="report.updated", payload={"x": 1},
                                              status="failed")
    from annotation.models import ClassifierBuild

    build = ClassifierBuild.objects.create(corpus=world["corpus"], name="walked build", kind="keywords",
                                           definition={"terms": ["x"], "fields": ["text"]}, status="failed",
                                           error="test")
    # A topic set's router (annotation/views/topic_sets.py); a judged label keeps the walked delete refused.
    from annotation.models import Label, Router, Topic, TopicClass

    topic_set = Topic.objects.create(corpus=world["corpus"], name="walked set", kind=Topic.Kind.MULTICLASS)
    TopicClass.objects.bulk_create([TopicClass(topic=topic_set, position=1, name="a"),
                                    TopicClass(topic=topic_set, position=2, name="b")])
    router = Router.objects.create(topic=topic_set, name="walked router", kind=Router.Kind.UPLOAD,
                                   predicted_counts=[len(world["ids"]), 0, 0], fingerprint="walk")
    Label.objects.create(topic=topic_set, document_id=world["ids"][0], votes_total=1, class_votes=[1, 0, 0])
    from annotation.models import RouterBuild  # a router being built (annotation/views/topic_sets.py)

    router_build = RouterBuild.objects.create(topic=topic_set, name="walked router build", kind=Router.Kind.UPLOAD,
                                              status=RouterBuild.Status.FAILED, error="test")
    # A model judge's run (annotation/views/model_judge.py), failed so its retry has something to do.
    from annotation.models import ModelJudgeRun

    judge_run = ModelJudgeRun.objects.create(topic=world["topic"], kind=ModelJudgeRun.Kind.CLASSIFIER,
                                             status="failed", error="test")
    # An external corpus (issue 29): its pages answer 404 for a corpus whose documents were imported.
    from annotation.models import Corpus, ExternalCorpusSource

    external = ExternalCorpusSource.objects.create(corpus=Corpus.objects.create(name="walked lake"),
                                                   engine=ExternalCorpusSource.Engine.DUCKDB,
                                                   location="/nonexistent-walked-lake", text_fields=["text"])
    return {
        "run_id": judge_run.pk,
        # Per URL name, parameters that differ from the shared ones.
        "by_name": {"analyst:external_corpus": {"corpus_id": external.corpus_id},
                    "analyst:external_corpus_check": {"corpus_id": external.corpus_id}},
        "router_build_id": router_build.pk,
        "token_id": token.token.pk, "build_id": build.pk, "router_id": router.pk,
        "endpoint_id": endpoint.pk, "delivery_id": delivery.pk, "version": 1,
        "topic_id": world["topic"].pk, "corpus_id": world["corpus"].pk, "classifier_id": world["c1"].pk,
        "upload_id": upload.pk, "hit_id": hit.pk, "assignment_id": assignment.pk, "plan_id": plan.pk,
        # admin
        "app_label": "annotation", "object_id": str(world["topic"].pk), "content_type_id": 1, "user_id": 1,
        "id": 1, "url": "",
    }


def _client(role: str | None, accounts) -> Client:
    client = Client()
    if role:
        client.force_login(accounts[role])
    return client


def _is_login_redirect(response, *, admin: bool = False) -> bool:
    target = "/admin/login/" if admin else reverse("login")
    return response.status_code == 302 and response["Location"].startswith(target)


@pytest.mark.django_db
def test_every_url_allows_its_role_and_refuses_the_others(world, params):
    accounts = world["accounts"]
    shared = {role: _client(role, accounts) for role in (*ROLES, None)}
    problems, checked = [], 0
    for name, names, route in url_patterns():
        namespace = name.split(":", 1)[0] if ":" in name else ""
        missing = [p for p in names if p not in params]
        if missing:
            problems.append(f"{name} ({route}): add a fixture value for {missing} in tests/web/test_roles.py")
            continue
        if namespace == "admin":
            if name != "admin:index" and names:
                # Every admin view goes through the same staff check as the index; walk only the parameterless ones.
                continue
        url = reverse(name, kwargs={p: params["by_name"].get(name, {}).get(p, params[p]) for p in names})
        for role in (*ROLES, None):
            for method in ("get", "post"):
                # A sign-out URL gets a client of its own, so it does not sign the next requests out.
                client = _client(role, accounts) if name in SIGN_OUT else shared[role]
                response = getattr(client, method)(url)
                checked += 1
                code = response.status_code
                if code >= 500:
                    problems.append(f"{method.upper()} {url} as {role}: {code}")
                    continue
                if namespace in API:
                    continue
                if name in PUBLIC:
                    if _is_login_redirect(response) and name not in ("home", *SIGN_OUT):
                        problems.append(f"{method.upper()} {url} as {role}: public page sent to sign-in")
                    continue
                if namespace == "admin":
                    allowed = role == "staff"
                    # Staff get past the admin's sign-in check (what a view then answers is the admin's business).
                    ok = (not _is_login_redirect(response, admin=True)) if allowed \
                        else _is_login_redirect(response, admin=True)
                    if not ok:
                        problems.append(f"{method.upper()} {url} as {role}: {code} ({'allowed' if allowed else 'refused'} expected)")
                    continue
                if namespace in SIGNED_IN:
                    # One's own objects only: another account's token answers 404.
                    ok = _is_login_redirect(response) if role is None else code in (200, 404, 405) or (
                        method == "post" and code in (302, 400))
                    if not ok:
                        problems.append(f"{method.upper()} {url} as {role or 'anonymous'}: {code}")
                    continue
                perm = URL_PERM.get(name, NAMESPACE_PERM.get(namespace))
                if perm is None:
                    problems.append(f"{name}: no rule for namespace {namespace!r}; add it to NAMESPACE_PERM or PUBLIC")
                    break
                allowed = role is not None and perm in ROLE_PERMS[role]
                if role is None:
                    ok = _is_login_redirect(response)
                elif not allowed:
                    ok = code == 403
                else:
                    # GET of a POST-only action is 405; a form posted empty re-renders (200, or 400
                    # where the view says so) or redirects back.
                    ok = code in (200, 405) or (method == "post" and code == 400) \
                        or (method == "post" and code == 404 and name in DELETES) \
                        or (code == 302 and not _is_login_redirect(response))
                if not ok:
                    problems.append(f"{method.upper()} {url} as {role or 'anonymous'}: {code} "
                                    f"({'allowed' if allowed else 'refused'} expected)")
    assert not problems, "\n".join(problems)
    assert checked > 100  # the walk really covered the URL map


def test_walk_finds_the_areas_of_every_engineer():
    names = {name for name, _, _ in url_patterns()}
    for expected in ("home", "login", "analyst:topics", "analyst:corpus_upload", "reports:topics", "reports:topic",
                     "admin:index", "mturk:hit"):
        assert expected in names


@pytest.mark.django_db
@pytest.mark.parametrize("role,start", [("analyst", "/analyst/"), ("manager", "/reports/"),
                                        ("annotator", "/annotate/"), ("staff", "/admin/")])
def test_home_sends_each_role_to_its_start_page(accounts, role, start):
    response = _client(role, accounts).get("/")
    assert response.status_code == 302 and response["Location"] == start


@pytest.mark.django_db
def test_home_sends_anonymous_visitors_to_sign_in_and_explains_a_missing_role(accounts):
    assert _is_login_redirect(Client().get("/"))
    response = _client("norole", accounts).get("/")
    assert response.status_code == 200 and b"has no role yet" in response.content


@pytest.mark.django_db
def test_sign_in_with_the_standard_form_lands_on_the_role_page(accounts):
    from tests.factories import PASSWORD

    client = Client()
    page = client.get(reverse("login"))
    assert page.status_code == 200 and b'name="username"' in page.content
    response = client.post(reverse("login"), {"username": "max", "password": PASSWORD}, follow=True)
    assert response.redirect_chain[-1][0] == "/reports/"
    wrong = Client().post(reverse("login"), {"username": "max", "password": "nope"})
    assert wrong.status_code == 200 and b"errorlist" in wrong.content
