"""Analyst pages: topic sets (issue 13 item 1, seed 002) — create, routers, launch with a confirmation, HIT preview.

A topic set is a Topic of kind "multiclass": M classes plus "none of these", a uniform sample of the corpus
judged by three workers, and routers (multi-class classifiers) measured against it. The views parse, call
annotation.services.topics.topic_sets / routers and render; the single-topic pages send a topic set here (the HIT
preview, rename, archive and delete are the single topic's pages, which handle both kinds).
"""
from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import messages
from django.db.models import QuerySet
from django.forms import BaseForm
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.forms import RouterNameForm, RouterRuleForm, RouterUploadForm, TopicSetForm, TopicSetLaunchForm
from annotation.models import Corpus, Hit, Router, RouterBuild, Topic
from annotation.roles import CONFIGURE, role_required
from annotation.selectors import topic_progress, topic_set_sample_progress
from annotation.services.classifiers.keywords import corpus_keyword_fields
from annotation.services.classifiers.router_builds import (
    LIVE,
    router_build_error_parts,
    router_build_start,
    router_build_state,
)
from annotation.services.classifiers.routers import (
    ROUTER_CSV_MAX_BYTES,
    RouterError,
    router_archive,
    router_delete,
    router_delete_blockers,
    router_keyword_predictions,
    router_unarchive,
    routers_for_topic,
)
from annotation.services.crowd.platforms import platform_get
from annotation.services.topics.launch import (
    LaunchCostChanged,
    LaunchOverBudget,
    LaunchRefused,
    NothingToDraw,
    topic_set_launch_check,
    topic_set_launch_confirmed,
)
from annotation.services.topics.topic_sets import (
    LaunchPreview,
    topic_set_class_names,
    topic_set_classes,
    topic_set_create,
    topic_set_expected_per_class,
)
from core.errors import ApplicationError
from core.web import form_error

# Bad lines of a router upload listed on the page (the service keeps them all; the message counts them).
BAD_LINES_SHOWN = 100
# The sample size the launch form suggests first (the corpus, if smaller).
DEFAULT_SAMPLE = 300
# The keyword router's preview scans the corpus in the request: offered up to this many documents
# (bench/bench_routers.py: 4 rules over 50,000 documents took 7.6 s at load average 16 on 2 cores, SQLite).
KEYWORD_PREVIEW_MAX_DOCUMENTS = 10_000


def _topic_sets() -> QuerySet[Topic]:
    return Topic.objects.select_related("corpus").defer("corpus__documents_bitmap")


def _topic_set(topic_id: int) -> Topic:
    """The topic, 404 if absent; callers send a single (binary) topic to its own page."""
    return get_object_or_404(_topic_sets(), pk=topic_id)


def _to_topic_page(topic: Topic) -> HttpResponse:
    return redirect("analyst:topic", topic_id=topic.pk)


def _router(router_id: int) -> Router:
    return get_object_or_404(Router.objects.select_related("topic", "topic__corpus")
                             .defer("topic__corpus__documents_bitmap"), pk=router_id)


# --------------------------------------------------------------------------- create


@role_required(CONFIGURE)
def topic_set_new(request: HttpRequest) -> HttpResponse:
    """A new topic set: corpus, name, instructions, the classes (one per line), unsure, aggregator, money."""
    corpora = Corpus.objects.defer("documents_bitmap").order_by("name")
    initial: dict[str, Any] = {}
    raw = request.GET.get("corpus") or ""
    if raw.isdigit() and corpora.filter(pk=int(raw)).exists():
        initial["corpus"] = int(raw)
    form = TopicSetForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            topic = topic_set_create(
                corpus=data["corpus"], name=data["name"], classes=data["classes"],
                instructions=data["instructions"], allow_unsure=data["allow_unsure"],
                aggregator=data["aggregator"], hit_size=data["hit_size"],
                reward_per_hit=data["reward_per_hit"], budget=data["budget"])
        except ApplicationError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Topic set “{topic.name}” created with {len(data['classes'])} topics. "
                                      "Add a router, then launch its sample.")
            return redirect("analyst:topic_set", topic_id=topic.pk)
    return render(request, "analyst/topic_set_form.html", {"form": form, "has_corpus": corpora.exists()})


# --------------------------------------------------------------------------- detail


def _router_rows(router: Router, names: list[str]) -> list[tuple[str, int]]:
    """(class name, documents the router sends there), "none of these" last."""
    counts = list(router.predicted_counts or [])
    counts += [0] * (len(names) - len(counts))
    return [(names[position], counts[position]) for position in (*range(1, len(names)), 0)]


@role_required(CONFIGURE)
def topic_set_detail(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic_set(topic_id)
    if not topic.is_multiclass:
        return _to_topic_page(topic)
    names = topic_set_class_names(topic=topic)
    routers = routers_for_topic(topic=topic, include_archived=True)
    progress = topic_set_sample_progress(topic=topic)
    planned = max(progress.drawn, min(DEFAULT_SAMPLE, topic.corpus.document_count))
    context = {
        "topic": topic, "classes": topic_set_classes(topic=topic), "none_name": names[0],
        "routers": [(router, _router_rows(router, names)) for router in routers if router.archived_at is None],
        "archived_routers": [router for router in routers if router.archived_at is not None],
        "router_builds": list(RouterBuild.objects.filter(topic=topic, status__in=LIVE).order_by("created_at", "pk")
                              .only("pk", "name", "status", "processed", "total")),
        "class_names": [*names[1:], names[0]],
        "sample": progress, "progress": topic_progress(topic=topic),
        "launch_form": TopicSetLaunchForm(initial={"documents": planned}),
        "expected": topic_set_expected_per_class(topic=topic, documents=max(1, planned)),
    }
    # Publishing happens after commit and is retried by the reconcile job; say when it has not happened yet.
    context["mturk_unpublished"] = platform_get(topic.crowd).unpublished_count(topic=topic)
    return render(request, "analyst/topic_set_detail.html", context)


# --------------------------------------------------------------------------- launch


@role_required(CONFIGURE)
@require_POST
def topic_set_launch_view(request: HttpRequest, topic_id: int) -> HttpResponse:
    """First POST: the confirmation page (documents, HITs, judgments, cost, committed, budget left); second
    POST, carrying what was shown: the launch, if nothing changed in between (annotation.services.topics.launch)."""
    topic = _topic_set(topic_id)
    if not topic.is_multiclass:
        return _to_topic_page(topic)
    form = TopicSetLaunchForm(request.POST)
    back = redirect("analyst:topic_set", topic_id=topic.pk)
    if not form.is_valid():
        messages.error(request, "Enter the sample size as a whole number of documents, 1 or more.")
        return back
    documents = form.cleaned_data["documents"]
    try:
        if not form.confirming:
            return _confirmation(request, topic, documents, topic_set_launch_check(topic_id=topic.pk,
                                                                                  documents=documents))
        launched = topic_set_launch_confirmed(topic_id=topic.pk, documents=documents,
                                              confirm_cost=form.cleaned_data["confirm_cost"],
                                              confirm_fingerprint=form.cleaned_data["confirm_fingerprint"] or "")
    except NothingToDraw:
        drawn = topic_set_sample_progress(topic=topic).drawn
        messages.warning(request, f"Nothing to draw: the sample already holds {drawn} documents, as many as the "
                                  f"{documents} asked for (or the whole corpus), so no HIT would be created and "
                                  "nothing spent. Ask for a larger total to add documents.")
        return back
    except LaunchOverBudget as exc:  # the confirmation page says why, with the amounts
        assert exc.preview is not None
        return _confirmation(request, topic, documents, exc.preview)
    except LaunchCostChanged as exc:
        assert exc.preview is not None and exc.confirmed_cost is not None
        changed = (f"Nothing was drawn: the figures changed since the confirmation page (it showed "
                   f"${exc.confirmed_cost:.2f}; now ${exc.preview.cost:.2f}, with the budget and sample below). "
                   "Check them and confirm again.")
        return _confirmation(request, topic, documents, exc.preview, changed=changed, status=409)
    except LaunchRefused as exc:  # archived, or a status that takes no launch
        messages.error(request, exc.message)
        return back
    launch, preview = launched.launch, launched.preview
    if not launch.documents:
        messages.warning(request, "Nothing was drawn: the sample already held the documents asked for.")
    else:
        messages.success(request, f"The sample is drawn: {launch.documents} new documents in {len(launch.hits)} "
                                  f"HITs, ${preview.cost:.2f} if every assignment is done.")
    return back


def _confirmation(request: HttpRequest, topic: Topic, documents: int, preview: LaunchPreview, *,
                  changed: str | None = None, status: int = 200) -> HttpResponse:
    context = {"topic": topic, "preview": preview, "documents": documents, "changed": changed,
               "fingerprint": preview.fingerprint, "per_document": Hit.ASSIGNMENTS_PER_HIT,
               "remaining": None if preview.budget_left is None else preview.budget_left - preview.cost,
               "expected": topic_set_expected_per_class(topic=topic, documents=documents)}
    return render(request, "analyst/topic_set_launch_confirm.html", context, status=status)


# --------------------------------------------------------------------------- routers: create


def _bad_lines(exc: ApplicationError) -> list[tuple[int, str]]:
    lines = getattr(exc, "lines", None) or []
    return [(int(number), str(reason)) for number, reason in lines]


@role_required(CONFIGURE)
def router_upload(request: HttpRequest, topic_id: int) -> HttpResponse:
    """A router from a CSV of id,class; every bad line is listed with its number and reason, nothing stored."""
    topic = _topic_set(topic_id)
    if not topic.is_multiclass:
        return _to_topic_page(topic)
    form = RouterUploadForm(request.POST or None, request.FILES or None)
    context: dict[str, Any] = {"topic": topic, "form": form, "bad_lines": [], "bad_lines_more": 0,
                               "class_names": topic_set_class_names(topic=topic),
                               "max_mb": ROUTER_CSV_MAX_BYTES // 1_000_000}
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        if upload.size > ROUTER_CSV_MAX_BYTES:
            form.add_error("file", f"The file is larger than {ROUTER_CSV_MAX_BYTES // 1_000_000} MB.")
        else:
            try:  # the name and the header now; every line in the build's task
                build = router_build_start(topic=topic, name=form.cleaned_data["name"], kind=Router.Kind.UPLOAD,
                                           data=upload.chunks(), source_name=upload.name or "upload.csv",
                                           user=request.user)
            except RouterError as exc:
                bad = _bad_lines(exc)
                if bad:
                    form.add_error(None, f"{len(bad)} bad line{'s' if len(bad) != 1 else ''} in the file: nothing "
                                         "was stored. Correct them and upload the file again.")
                    context["bad_lines"] = bad[:BAD_LINES_SHOWN]
                    context["bad_lines_more"] = max(0, len(bad) - BAD_LINES_SHOWN)
                else:
                    form_error(form, exc)
            else:
                return _after_start(request, build)
    return render(request, "analyst/topic_set_router_upload.html", context)


def _after_start(request: HttpRequest, build: RouterBuild) -> HttpResponse:
    """The router when its build already finished (no broker: it ran in this request), else the build page."""
    if build.status != RouterBuild.Status.DONE or build.router is None:
        return redirect("analyst:router_build", router_build_id=build.pk)
    return _router_created(request, build.router)


def _router_created(request: HttpRequest, router: Router) -> HttpResponse:
    routed = sum((router.predicted_counts or [0])[1:])
    messages.success(request, f"Router “{router.name}” created: it sends {routed} documents to the topics and "
                              "the others to none of them.")
    return redirect("analyst:router", router_id=router.pk)


def _rule_forms(request: HttpRequest, topic: Topic, choices: list[tuple[str, str]]) -> list[tuple[str, RouterRuleForm]]:
    """One rule form per class (prefix rule-<position>), in class order; bound on POST."""
    rows = []
    for topic_class in topic_set_classes(topic=topic):
        form = RouterRuleForm(request.POST or None, prefix=f"rule-{topic_class.position}",
                              initial={"position": topic_class.position, "order": topic_class.position,
                                       "fields": ["title", "text"]})
        base: BaseForm = form  # RouterRuleForm declares a field named "fields": reach the form's dict through BaseForm
        cast(forms.MultipleChoiceField, base.fields["fields"]).choices = choices
        rows.append((topic_class.name, form))
    return rows


def _rules(rows: list[tuple[str, RouterRuleForm]], name_form: RouterNameForm) -> list[dict[str, Any]] | None:
    """The rules in precedence order (order, then class position), classes without terms left out; None (with
    the errors on the forms) when a row is wrong or no class has terms."""
    rules: list[tuple[int, int, dict[str, Any]]] = []
    valid = True
    for class_name, form in rows:
        if not form.is_valid():
            valid = False
            continue
        data = form.cleaned_data
        if not data["terms"]:
            continue
        if not data["fields"]:
            form.add_error("fields", f"Choose where to search for the terms of “{class_name}”.")
            valid = False
            continue
        rules.append((data["order"], data["position"],
                      {"class": data["position"], "terms": data["terms"], "fields": data["fields"]}))
    if valid and not rules:
        name_form.add_error(None, "Give terms for at least one topic: a router with no rule sends every document "
                                  "to none of them.")
        return None
    return [rule for _, _, rule in sorted(rules, key=lambda r: (r[0], r[1]))] if valid else None


@role_required(CONFIGURE)
def router_keywords(request: HttpRequest, topic_id: int) -> HttpResponse:
    """A keyword router: terms (and fields) per class, tried in the order given; the first matching rule wins."""
    topic = _topic_set(topic_id)
    if not topic.is_multiclass:
        return _to_topic_page(topic)
    choices = [(name, {"title": "Title", "text": "Text"}.get(name, name))
               for name in corpus_keyword_fields(corpus=topic.corpus)]
    previewing = request.method == "POST" and "preview" in request.POST
    name_form = RouterNameForm(None if previewing else (request.POST or None), prefix="router",
                               initial={"name": request.POST.get("router-name", "")})
    rows = _rule_forms(request, topic, choices)
    names = topic_set_class_names(topic=topic)
    preview: dict[str, Any] | None = None
    if previewing:
        rules = _rules(rows, name_form)
        if rules is not None:
            preview = _keyword_preview(topic, rules, names)
    elif request.method == "POST":
        name_ok = name_form.is_valid()
        rules = _rules(rows, name_form)
        if name_ok and rules is not None:
            try:
                build = router_build_start(topic=topic, name=name_form.cleaned_data["name"],
                                           kind=Router.Kind.KEYWORDS, rules=rules, user=request.user)
            except ApplicationError as exc:
                form_error(name_form, exc)
            else:
                return _after_start(request, build)
    return render(request, "analyst/topic_set_router_keywords.html",
                  {"topic": topic, "name_form": name_form, "rows": rows, "none_name": names[0], "preview": preview,
                   "preview_max": KEYWORD_PREVIEW_MAX_DOCUMENTS})


def _keyword_preview(topic: Topic, rules: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """Documents per class these rules would give, in one pass over the corpus; only on corpora small enough
    for a request (KEYWORD_PREVIEW_MAX_DOCUMENTS)."""
    if topic.corpus.document_count > KEYWORD_PREVIEW_MAX_DOCUMENTS:
        return {"too_large": True}
    if any(not 1 <= rule["class"] < len(names) for rule in rules):
        return {"error": "A rule names a topic this set does not have; reload the page."}
    try:
        predictions = router_keyword_predictions(topic=topic, rules=rules)
    except ApplicationError as exc:
        return {"error": exc.message}
    counts = [0] * len(names)
    for position in predictions.values():
        counts[position] += 1
    counts[0] = max(0, topic.corpus.document_count - len(predictions))
    return {"rows": [(names[position], counts[position]) for position in (*range(1, len(names)), 0)]}


# --------------------------------------------------------------------------- routers: builds


def _rules_named(definition: Any, names: list[str]) -> list[dict[str, Any]]:
    """A keyword definition's rules with each class by name (its number if the set no longer has it)."""
    rules = (definition if isinstance(definition, dict) else {}).get("rules") or []
    return [{"class": names[rule["class"]] if 0 <= rule["class"] < len(names) else rule["class"],
             "terms": rule.get("terms", []), "fields": rule.get("fields", [])} for rule in rules]


@role_required(CONFIGURE)
@require_GET
def router_build_detail(request: HttpRequest, router_build_id: int) -> HttpResponse:
    """A router being built: progress (the page polls its status), then a link to it, or why it failed."""
    build = get_object_or_404(RouterBuild.objects.select_related("topic", "topic__corpus")
                              .defer("topic__corpus__documents_bitmap"), pk=router_build_id)
    names = topic_set_class_names(topic=build.topic)
    return render(request, "analyst/topic_set_router_build.html", {
        "build": build, "topic": build.topic, "state": router_build_state(build=build),
        "rules": _rules_named(build.definition, names) if build.kind == Router.Kind.KEYWORDS else [],
        **router_build_error_parts(build=build)})


@role_required(CONFIGURE)
@require_GET
def router_build_status(request: HttpRequest, router_build_id: int) -> JsonResponse:
    build = get_object_or_404(RouterBuild.objects.defer("definition"), pk=router_build_id)
    state = router_build_state(build=build)
    state["router_url"] = reverse("analyst:router", args=[build.router_id]) if build.router_id else None
    return JsonResponse(state)


# --------------------------------------------------------------------------- routers: detail, archive, delete


@role_required(CONFIGURE)
def router_detail(request: HttpRequest, router_id: int) -> HttpResponse:
    router = _router(router_id)
    names = topic_set_class_names(topic=router.topic)
    rules = _rules_named(router.definition, names)
    return render(request, "analyst/topic_set_router_detail.html", {
        "router": router, "topic": router.topic, "rows": _router_rows(router, names), "rules": rules,
        "blockers": router_delete_blockers(router=router)})


@role_required(CONFIGURE)
def router_archive_view(request: HttpRequest, router_id: int) -> HttpResponse:
    """GET: what archiving does, with a Confirm button; POST: archive (it leaves new reports; nothing is lost)."""
    router = _router(router_id)
    if request.method == "POST":
        router_archive(router=router)
        messages.success(request, f"Router “{router.name}” archived: new reports leave it out. Its predictions "
                                  "are kept, and reports already made still name it.")
        return redirect("analyst:router", router_id=router.pk)
    return render(request, "analyst/topic_set_router_archive.html", {"router": router, "topic": router.topic,
                                                                      "unarchive": False})


@role_required(CONFIGURE)
def router_unarchive_view(request: HttpRequest, router_id: int) -> HttpResponse:
    """GET: what unarchiving does, with a Confirm button; POST: unarchive (new reports measure it again)."""
    router = _router(router_id)
    if request.method == "POST":
        router_unarchive(router=router)
        messages.success(request, f"Router “{router.name}” is back: new reports measure it again.")
        return redirect("analyst:router", router_id=router.pk)
    return render(request, "analyst/topic_set_router_archive.html", {"router": router, "topic": router.topic,
                                                                      "unarchive": True})


@role_required(CONFIGURE)
def router_delete_view(request: HttpRequest, router_id: int) -> HttpResponse:
    """GET: what deleting does, or why it is refused; POST: delete (refused with the reason once measured)."""
    router = _router(router_id)
    if request.method == "POST":
        try:
            router_delete(router=router)
        except ApplicationError as exc:  # judged since the page was shown: the page now says why
            messages.error(request, exc.message)
            return redirect("analyst:router_delete", router_id=router.pk)
        messages.success(request, f"Router “{router.name}” deleted.")
        return redirect("analyst:topic_set", topic_id=router.topic_id)
    return render(request, "analyst/topic_set_router_delete.html", {
        "router": router, "topic": router.topic, "blockers": router_delete_blockers(router=router)})
