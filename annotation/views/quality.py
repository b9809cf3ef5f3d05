"""Gold documents and worker quality of a topic (issue 12 item 7).

The gold page is the analyst's: add gold from a judged document or a CSV file, remove unused gold.
The worker-quality page may be read by analysts and managers; only analysts block and unblock.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.contrib import messages
from django.core import signing
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.forms import GoldCsvForm, WorkerBlockForm
from annotation.models import Label, Topic, Worker
from annotation.roles import CONFIGURE, READ_REPORTS, role_required
from annotation.selectors import (
    WorkerQuality,
    WorkerQualityRow,
    topic_fleiss_kappa,
    topic_gold_documents,
    topic_judged_documents,
    topic_worker_quality_rows,
)
from annotation.services.crowd.gold import (
    GOLD_CSV_MAX_BYTES,
    GoldCsvError,
    GoldCsvParse,
    gold_add_from_judged,
    gold_csv_apply,
    gold_csv_parse,
    gold_document_remove,
)
from annotation.services.crowd.workers import (
    GOLD_MIN_ANSWERS,
    worker_block,
    worker_public_id,
    worker_public_ids,
    worker_unblock,
)
from annotation.services.topics.topic_sets import topic_set_class_names
from core.errors import ApplicationError
from core.web import form_error

JUDGED_PER_PAGE = 50
CSV_CONFIRM_MAX_AGE = 3600  # seconds a parsed file may wait for its confirmation
PROBLEMS_SHOWN = 200


def _topic(topic_id: int) -> Topic:
    return get_object_or_404(Topic.objects.select_related("corpus").defer("corpus__documents_bitmap"), pk=topic_id)


def _csv_salt(topic: Topic) -> str:
    return f"gold-csv:{topic.pk}"


@dataclass(frozen=True)
class JudgedClassRow:
    """A topic set's judged document on the gold page: its votes and majority in words."""

    label: Label
    votes: str  # e.g. "Oil 2, none 1"
    majority: str  # the majority class's name, "tie" or "no sure vote"


def _class_votes_words(label: Label, names: Sequence[str]) -> str:
    counts = [(int(n), position) for position, n in enumerate(label.class_votes or []) if n]
    counts.sort(key=lambda c: (-c[0], c[1]))
    words = [f"{'none' if position == 0 else names[position] if position < len(names) else f'class {position}'} {n}"
             for n, position in counts]
    if label.votes_unsure:
        words.append(f"unsure {label.votes_unsure}")
    return ", ".join(words) or "no vote"


def _judged_class_rows(labels: Sequence[Label], names: Sequence[str]) -> list[JudgedClassRow]:
    rows = []
    for label in labels:
        sure = sum(int(n) for n in label.class_votes or [])
        if label.majority_class is not None and label.majority_class < len(names):
            majority = names[label.majority_class]
        else:
            majority = "tie" if sure else "no sure vote"
        rows.append(JudgedClassRow(label=label, votes=_class_votes_words(label, names), majority=majority))
    return rows


def _gold_page(request: HttpRequest, topic: Topic, *, form: GoldCsvForm | None = None,
               parsed: GoldCsvParse | None = None, status: int = 200) -> HttpResponse:
    page = Paginator(topic_judged_documents(topic=topic), JUDGED_PER_PAGE).get_page(request.GET.get("page"))
    gold = topic_gold_documents(topic=topic)
    form = form or GoldCsvForm()
    context: dict[str, object] = {"topic": topic, "gold": gold, "judged": page,
                                  "form": form, "min_answers": GOLD_MIN_ANSWERS}
    if topic.is_multiclass:
        names = topic_set_class_names(topic=topic)
        form.fields["file"].help_text = (
            "Columns id (the document's id in the corpus) and class (a topic's name, its number, or none), "
            "with a header line. At most 1 MB.")
        context["class_names"] = names
        # (position, name) in the order of the choice: the topics 1..M, then "None of these" (0).
        context["class_choices"] = [*enumerate(names)][1:] + [(0, names[0])]
        context["judged_rows"] = _judged_class_rows(list(page.object_list), names)
        context["gold_rows"] = [(g, names[g.gold_class] if g.gold_class is not None and g.gold_class < len(names)
                                 else f"class {g.gold_class}") for g in gold]
    else:
        context["gold_rows"] = [(g, "relevant" if g.gold else "not relevant") for g in gold]
    if parsed is not None:
        context["parsed"] = parsed
        context["problems"] = parsed.problems[:PROBLEMS_SHOWN]
        context["changed"] = sum(1 for line in parsed.lines if line.previous is not None
                                 and line.previous != line.answer)
        if parsed.lines:
            context["confirm_token"] = signing.dumps(
                [[line.document_id, line.answer] for line in parsed.lines], salt=_csv_salt(topic), compress=True)
    return render(request, "analyst/gold_documents.html", context, status=status)


@role_required(CONFIGURE)
@require_GET
def gold_documents(request: HttpRequest, topic_id: int) -> HttpResponse:
    return _gold_page(request, _topic(topic_id))


def _back_to_gold(request: HttpRequest, topic: Topic) -> HttpResponse:
    url = reverse("analyst:gold", args=[topic.pk])
    page = request.POST.get("page", "")
    return redirect(f"{url}?page={page}" if page.isdigit() else url)


@role_required(CONFIGURE)
@require_POST
def gold_add_judged(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    if topic.is_multiclass:
        return _gold_add_judged_class(request, topic)
    document_id, answer = request.POST.get("document", ""), request.POST.get("relevant", "")
    if not document_id.isdigit() or answer not in ("yes", "no"):
        raise ApplicationError("Choose a judged document and whether it is relevant.")
    label = gold_add_from_judged(topic=topic, document_id=int(document_id), relevant=answer == "yes")
    messages.success(request, f"Document {label.document.external_id!r} is now gold "
                              f"({'relevant' if label.gold else 'not relevant'}); the report leaves it out from its next recompute.")
    return _back_to_gold(request, topic)


def _gold_add_judged_class(request: HttpRequest, topic: Topic) -> HttpResponse:
    """A topic set's judged document becomes gold with the posted class (``gold_class``, a position 0..M)."""
    names = topic_set_class_names(topic=topic)
    document_id, raw_class = request.POST.get("document", ""), request.POST.get("gold_class", "").strip()
    if not document_id.isdigit() or not document_id.isascii():
        raise ApplicationError("Choose a judged document and its class.")
    if not (raw_class.isdigit() and raw_class.isascii() and int(raw_class) < len(names)):
        raise ApplicationError(f"Choose the document's class: one of the topic set's {len(names) - 1} topics "
                               f"or “{names[0]}” (class numbers 0 to {len(names) - 1}).")
    gold_class = int(raw_class)
    label = gold_add_from_judged(topic=topic, document_id=int(document_id), gold_class=gold_class)
    messages.success(request, f"Document {label.document.external_id!r} is now gold ({names[gold_class]}); "
                              "the report counts it with this class from its next recompute.")
    return _back_to_gold(request, topic)


@role_required(CONFIGURE)
@require_POST
def gold_csv_upload(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    form = GoldCsvForm(request.POST, request.FILES)
    if not form.is_valid():
        return _gold_page(request, topic, form=form, status=400)
    upload = form.cleaned_data["file"]
    try:
        if upload.size > GOLD_CSV_MAX_BYTES:
            raise GoldCsvError(f"The file is {upload.size:,} bytes; the limit is {GOLD_CSV_MAX_BYTES:,} bytes. "
                               "Split it into smaller files.")
        parsed = gold_csv_parse(topic=topic, data=upload.read(GOLD_CSV_MAX_BYTES + 1))
    except ApplicationError as exc:
        form_error(form, exc)
        return _gold_page(request, topic, form=form, status=400)
    if not parsed.lines and not parsed.problems:
        form_error(form, GoldCsvError("The file has a header but no lines: nothing to add."))
        return _gold_page(request, topic, form=form, status=400)
    if parsed.problems:
        # Nothing is added: the page lists the bad lines and asks before adding the good ones.
        return _gold_page(request, topic, parsed=parsed)
    added = gold_csv_apply(topic=topic, answers=[(line.document_id, line.answer) for line in parsed.lines])
    messages.success(request, f"{added} gold document{'s' if added != 1 else ''} added from the file.")
    return redirect("analyst:gold", topic_id=topic.pk)


@role_required(CONFIGURE)
@require_POST
def gold_csv_confirm(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    try:
        answers = signing.loads(request.POST.get("token", ""), salt=_csv_salt(topic), max_age=CSV_CONFIRM_MAX_AGE)
    except signing.SignatureExpired:
        raise GoldCsvError("The confirmation waited more than an hour; nothing was added. Upload the file again.") from None
    except signing.BadSignature:
        raise GoldCsvError("The confirmation could not be read; nothing was added. Upload the file again.") from None
    added = gold_csv_apply(topic=topic, answers=[
        (int(doc_id), int(answer) if topic.is_multiclass else bool(answer)) for doc_id, answer in answers])
    messages.success(request, f"{added} gold document{'s' if added != 1 else ''} added; the bad lines were skipped.")
    return redirect("analyst:gold", topic_id=topic.pk)


@role_required(CONFIGURE)
@require_POST
def gold_remove(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    document_id = request.POST.get("document", "")
    if not document_id.isdigit():
        raise ApplicationError("Choose a gold document to remove.")
    gold_document_remove(topic=topic, document_id=int(document_id))
    messages.success(request, "The document is no longer gold.")
    return redirect("analyst:gold", topic_id=topic.pk)


# --------------------------------------------------------------------------- workers

@dataclass(frozen=True)
class WorkerPageRow:
    """A row of the worker-quality page: the selector's row and the worker's public id (issue 27: the id the raw
    judgments export and the API show for the same worker, annotation.services.crowd.adjudication.worker_public_id)."""

    row: WorkerQualityRow
    worker: str

    @property
    def quality(self) -> WorkerQuality:
        return self.row.quality

    @property
    def blocked_reason(self) -> str:
        return self.row.blocked_reason

    @property
    def split_votes(self) -> int:
        return self.row.split_votes

    @property
    def split_minority(self) -> int:
        return self.row.split_minority


SORT_VALUES: dict[str, Callable[[WorkerPageRow], float | int | str | None]] = {
    "accuracy": lambda r: r.quality.gold_accuracy,
    "agreement": lambda r: r.quality.agreement,
    "judgments": lambda r: r.quality.judgments,
    "split": lambda r: r.split_minority,
    "worker": lambda r: r.worker.lower(),
}


def _page_rows(rows: list[WorkerQualityRow]) -> list[WorkerPageRow]:
    ids = worker_public_ids(worker_ids={r.quality.worker_id for r in rows})
    return [WorkerPageRow(row=r, worker=ids.get(r.quality.worker_id, r.quality.name)) for r in rows]


def _sorted(rows: list[WorkerPageRow], sort: str) -> tuple[list[WorkerPageRow], str]:
    """Rows by the chosen column ("-" first: descending); workers without a figure always come last."""
    value = SORT_VALUES.get(sort.lstrip("-"))
    if value is None:
        return rows, ""
    known = sorted((r for r in rows if value(r) is not None), key=lambda r: (value(r), r.quality.worker_id),
                   reverse=sort.startswith("-"))
    return known + [r for r in rows if value(r) is None], sort


@role_required(READ_REPORTS)
@require_GET
def workers(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    rows, sort = _sorted(_page_rows(topic_worker_quality_rows(topic=topic)), request.GET.get("sort", ""))
    return render(request, "analyst/workers.html", {
        "topic": topic, "rows": rows, "sort": sort, "kappa": topic_fleiss_kappa(topic=topic),
        "min_answers": GOLD_MIN_ANSWERS, "block_form": WorkerBlockForm(),
        "blocked": sum(1 for r in rows if r.quality.blocked),
    })


def _topic_worker(request: HttpRequest, topic: Topic) -> Worker:
    """The posted worker, who must have taken a HIT of this topic (404 for anyone else)."""
    worker_id = request.POST.get("worker", "")
    if not worker_id.isdigit():
        raise ApplicationError("Choose a worker of this topic.")
    return get_object_or_404(Worker.objects.filter(assignments__hit__topic=topic).distinct().select_related("user"),
                             pk=int(worker_id))


def _public(worker: Worker) -> str:
    return worker_public_id(worker_id=worker.pk, external_id=worker.external_id)


def _back_to_workers(request: HttpRequest, topic: Topic) -> HttpResponse:
    url = reverse("analyst:workers", args=[topic.pk])
    sort = request.POST.get("sort", "")
    return redirect(f"{url}?sort={sort}" if sort.lstrip("-") in SORT_VALUES else url)


@role_required(CONFIGURE)
@require_POST
def worker_block_view(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    worker = _topic_worker(request, topic)
    form = WorkerBlockForm(request.POST)
    if not form.is_valid():
        raise ApplicationError(f"Worker {_public(worker)} was not blocked: say why (a reason of at most 255 characters).")
    worker_block(worker=worker, reason=form.cleaned_data["reason"])
    messages.success(request, f"Worker {_public(worker)} is blocked: they can no longer take HITs in any topic.")
    return _back_to_workers(request, topic)


@role_required(CONFIGURE)
@require_POST
def worker_unblock_view(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    worker = _topic_worker(request, topic)
    worker_unblock(worker=worker)
    messages.success(request, f"Worker {_public(worker)} may take HITs again.")
    return _back_to_workers(request, topic)
