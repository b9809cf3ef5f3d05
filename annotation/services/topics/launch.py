"""The launch the analyst confirms: one guard for a topic and one for a topic set, used by the pages and the API.

A launch (or a top-up) spends money, so it is shown first (a quote for a topic, a preview for a topic
set) and carried out only when the analyst confirms what was shown. Both front-ends call the same
two steps:

* ``topic_launch_check`` / ``topic_set_launch_check``: the guard without the confirmation — what the
  confirmation page shows (or why there is nothing to confirm).
* ``topic_launch`` / ``topic_set_launch_confirmed``: under the topic row lock, the same guard, then the
  confirmed cost (and fingerprint, when given) compared with a fresh quote, then the draw (a task
  after commit for a topic; in the request for a topic set, whose draw is one uniform sample).

The guard, in order: the topic is not archived; its status allows a launch (draft or sampling; a
top-up only once launched); there is something to draw; the budget allows it. Refusals are
``LaunchRefused`` subclasses carrying a stable ``code`` and the quote or preview; a budget too small
for a topic is the HIT service's ``BudgetExceeded`` (the rule lives in ``hits_budget_check``).
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import ClassVar

from django.db import transaction

from annotation.models import Topic
from annotation.services.corpora.backends.base import BackendError, CorpusChangedError
from annotation.services.corpora.backends.external import RegionCountsPending
from annotation.services.crowd.hits import hits_budget_check
from annotation.services.sampling.draws import Launch, samples_launch_enqueue
from annotation.services.sampling.quote import LaunchQuote, topic_launch_quote
from annotation.services.topics.topic_sets import LaunchPreview, topic_set_launch, topic_set_launch_preview
from core.errors import ApplicationError

ARCHIVED_MESSAGE = "The {what} is archived: it takes no new samples. Unarchive it first (it comes back paused)."
STATUS_MESSAGE = "The {what} is {status}; resume it before launching."
NOT_LAUNCHED_MESSAGE = "Launch the topic first."


class LaunchRefused(ApplicationError):
    """A launch refused by the state of the topic; ``quote`` (a topic) or ``preview`` (a topic set) when computed."""

    http_status: ClassVar[int] = 409
    code: ClassVar[str] = "conflict"

    def __init__(self, message: str, *, quote: LaunchQuote | None = None, preview: LaunchPreview | None = None,
                 confirmed_cost: Decimal | None = None) -> None:
        super().__init__(message)
        self.quote = quote
        self.preview = preview
        self.confirmed_cost = confirmed_cost


class LaunchArchived(LaunchRefused):
    """The topic (or topic set) is archived: it takes no new samples."""


class LaunchStatusRefused(LaunchRefused):
    """The topic's status does not allow a launch (paused, closed; a top-up of a draft)."""


class NothingToDraw(LaunchRefused):
    """Every stratum already holds what the launch asks for: no HIT would be created."""

    code: ClassVar[str] = "nothing-to-draw"


class LaunchOverBudget(LaunchRefused):
    """A topic set's launch would pass its budget; the message (the preview's `refused`) has the amounts."""


class LaunchCostChanged(LaunchRefused):
    """What was confirmed (the cost, or the fingerprint of what was shown) differs from a fresh quote."""

    code: ClassVar[str] = "cost-changed"


class LaunchCounting(LaunchRefused):
    """A corpus in the team's engine: the pair's regions are being counted there (a task); launch once they are."""

    code: ClassVar[str] = "counting"


class LaunchCorpusChanged(LaunchRefused):
    """A corpus in the team's engine changed since the plan was counted; the message names the files."""

    code: ClassVar[str] = "corpus-changed"


def _what(topic: Topic) -> str:
    return "topic set" if topic.is_multiclass else "topic"


def _state_check(*, topic: Topic, top_up: bool = False) -> None:
    """Archived, then status: a launch needs a draft or sampling topic, a top-up a launched one."""
    what = _what(topic)
    if topic.archived_at is not None:
        raise LaunchArchived(ARCHIVED_MESSAGE.format(what=what))
    if top_up and topic.status == Topic.Status.DRAFT:
        raise LaunchStatusRefused(NOT_LAUNCHED_MESSAGE)
    if topic.status not in (Topic.Status.DRAFT, Topic.Status.ACTIVE):
        raise LaunchStatusRefused(STATUS_MESSAGE.format(what=what, status=topic.get_status_display().lower()))


# --------------------------------------------------------------------------- a topic (classifier pair)


def _topic_guard(*, topic: Topic, half_width: float, complement: int, top_up: bool) -> LaunchQuote:
    _state_check(topic=topic, top_up=top_up)
    try:
        quote = topic_launch_quote(topic=topic, half_width=half_width, complement=complement)
    except RegionCountsPending as exc:  # a corpus in the team's engine (annotation.services.corpora.backends.external)
        if exc.changes:
            raise LaunchCorpusChanged(
                f"Nothing was drawn: the corpus changed since the plan was counted ({'; '.join(exc.changes[:5])}"
                f"{'; …' if len(exc.changes) > 5 else ''}). The regions are being counted again in the engine; "
                "check the new plan and its cost, then launch.") from exc
        raise LaunchCounting(f"Nothing was drawn: {exc.message}") from exc
    except CorpusChangedError as exc:
        raise LaunchCorpusChanged(f"Nothing was drawn: {exc.message}") from exc
    except BackendError as exc:  # the engine cannot read the corpus now (files gone, unreadable)
        raise LaunchRefused(f"Nothing was drawn: {exc.message}") from exc
    if not quote.documents:
        raise NothingToDraw("Nothing to draw: every region already holds the documents this plan asks for. "
                            "Choose a narrower half-width (or a larger dependence check).", quote=quote)
    hits_budget_check(topic=topic, new_hits=quote.hits)
    return quote


def topic_launch_check(*, topic_id: int, half_width: float, complement: int = 0, top_up: bool = False) -> LaunchQuote:
    """The quote a confirmation shows, once the launch's guard passes (nothing is drawn or locked)."""
    topic = Topic.objects.get(pk=topic_id)
    return _topic_guard(topic=topic, half_width=half_width, complement=complement, top_up=top_up)


def topic_launch(*, topic_id: int, half_width: float, complement: int = 0, confirm_cost: Decimal,
                 confirm_fingerprint: str | None, top_up: bool = False) -> LaunchQuote:
    """Launch (or top up) the topic as confirmed: the draw runs in a task once the caller's transaction commits.

    Under the topic row lock: the guard, then `confirm_cost` must equal a fresh quote's cost and
    `confirm_fingerprint`, when given (the pages always give it), the quote's fingerprint; otherwise
    LaunchCostChanged with the fresh quote. Returns the quote the launch was made on.
    """
    with transaction.atomic():
        topic = Topic.objects.select_for_update().get(pk=topic_id)
        quote = _topic_guard(topic=topic, half_width=half_width, complement=complement, top_up=top_up)
        if confirm_cost != quote.cost or (confirm_fingerprint is not None and confirm_fingerprint != quote.fingerprint):
            raise LaunchCostChanged(f"Nothing was drawn: the launch costs ${quote.cost:.2f}, not the "
                                    f"${confirm_cost:.2f} confirmed. Check the quote and confirm its cost.",
                                    quote=quote, confirmed_cost=confirm_cost)
        options: dict[str, float | int | str] = {"half_width": half_width}
        if complement:
            options["complement"] = complement
        if quote.snapshot:  # a corpus in the team's engine: the draw refuses a corpus changed since this quote
            options["plan_snapshot"] = quote.snapshot
        samples_launch_enqueue(topic=topic, **options)
    return quote


# --------------------------------------------------------------------------- a topic set (uniform sample)


def _topic_set_guard(*, topic: Topic, documents: int) -> LaunchPreview:
    _state_check(topic=topic)
    preview = topic_set_launch_preview(topic=topic, documents=documents)
    if not preview.new_documents:
        raise NothingToDraw(f"Nothing to draw: the sample already holds the {documents} documents asked for "
                            "(or the whole corpus). Ask for a larger total to add documents.", preview=preview)
    if preview.refused:
        raise LaunchOverBudget(preview.refused, preview=preview)
    return preview


def topic_set_launch_check(*, topic_id: int, documents: int) -> LaunchPreview:
    """The preview a confirmation shows, once the launch's guard passes (nothing is drawn or locked)."""
    return _topic_set_guard(topic=Topic.objects.get(pk=topic_id), documents=documents)


@dataclass(frozen=True)
class TopicSetLaunched:
    preview: LaunchPreview  # what was confirmed
    launch: Launch  # what was drawn


def topic_set_launch_confirmed(*, topic_id: int, documents: int, confirm_cost: Decimal,
                               confirm_fingerprint: str | None, seed: int | None = None) -> TopicSetLaunched:
    """Draw the topic set's uniform sample up to `documents` in all, as confirmed, and open its HITs.

    Under the topic row lock: the guard, then `confirm_cost` must equal a fresh preview's cost and
    `confirm_fingerprint`, when given, the preview's fingerprint (LaunchCostChanged otherwise).
    """
    with transaction.atomic():
        topic = Topic.objects.select_for_update().get(pk=topic_id)
        preview = _topic_set_guard(topic=topic, documents=documents)
        if confirm_cost != preview.cost or (confirm_fingerprint is not None
                                            and confirm_fingerprint != preview.fingerprint):
            raise LaunchCostChanged(f"Nothing was drawn: the launch costs ${preview.cost:.2f}, not the "
                                    f"${confirm_cost:.2f} confirmed. Check the preview and confirm its cost.",
                                    preview=preview, confirmed_cost=confirm_cost)
        launch = topic_set_launch(topic=topic, documents=documents, seed=seed)
    return TopicSetLaunched(preview=preview, launch=launch)


__all__ = [
    "LaunchArchived",
    "LaunchCorpusChanged",
    "LaunchCostChanged",
    "LaunchCounting",
    "LaunchOverBudget",
    "LaunchQuote",
    "LaunchRefused",
    "LaunchStatusRefused",
    "NothingToDraw",
    "TopicSetLaunched",
    "topic_launch",
    "topic_launch_check",
    "topic_set_launch_check",
    "topic_set_launch_confirmed",
]
