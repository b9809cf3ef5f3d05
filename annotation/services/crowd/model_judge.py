"""A model judge: a crowd member of its own kind, whose answers are counted apart (issue 28).

The user actions, one service each (page, API and task call the same):

* ``model_judge_quote`` — which documents a run would read (per pair region: the topic's human sample of the
  region first, then a seeded simple random sample of the rest, up to the plan's count) and what it costs:
  tokens estimated from the prompt's characters (≈ 4 per token, plus the completion asked for) times the
  configured price per 1,000 tokens.  The same figure on the page and in the API.
* ``model_judge_launch`` — under the topic row lock: the guard (a binary topic with a pair, not archived, no
  live run, an endpoint configured for the endpoint kind), then the confirmed cost must equal a fresh quote's
  (``JudgeCostChanged`` otherwise, nothing created); creates the run and one pending ``ModelJudgment`` per
  document, and queues the task after commit.
* ``model_judge_run_execute`` — the task's body: reads the pending answers, asks the endpoint with at most
  ``MODEL_JUDGE_CONCURRENCY`` requests in flight (a thread pool; only the calling thread writes to the
  database), stores each answer or its failure, counts tokens and money.  Safe to run twice: a run that is
  not waiting does nothing, and only pending answers are asked.  A dead endpoint stops the run early (every
  answer of the first window "unreachable": the circuit breaker) with the remaining answers left pending for
  ``model_judge_retry``.
* ``model_judge_retry`` — a failed run back to waiting, its failed answers pending again, the task queued.

Never a human judgment: nothing here writes Judgment, Assignment, HitItem or Label rows, and estimation reads
the answers through ``model_judge_answers`` only.
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Sum
from django.db.models.functions import Length
from django.utils import timezone

from annotation.events import ModelJudgeFinished
from annotation.models import (
    ClassifierScore,
    Document,
    ModelJudgeRun,
    ModelJudgment,
    SampledDocument,
    SampleDraw,
    Topic,
)
from annotation.services.corpora.retrieved_sets import bitmap_draw, bitmap_from_ids, pair_regions
from annotation.services.crowd.judge_endpoint import (
    SYSTEM_PROMPT,
    EndpointConfig,
    JudgeFailure,
    judge_ask,
    judge_messages,
)
from core.errors import ApplicationError
from core.events import event_send_on_commit
from core.jobs import (
    JobStatus,
    job_begin,
    job_enqueue_on_commit,
    job_fail,
    job_finish,
    job_progress_add,
    job_retry,
    jobs_stuck_fail,
)

logger = logging.getLogger(__name__)

JUDGE_REGIONS = ("A12", "B1", "B2", "N")
# Characters per token for the quote (OpenAI's rule of thumb for English text); the spent figure uses the
# tokens the endpoint reports.
CHARS_PER_TOKEN = 4
# The documents asked per region by default: ten times the region's human sample, at least 500, at most the region.
DEFAULT_PER_HUMAN = 10
DEFAULT_MINIMUM = 500
MAX_PER_REGION = 1_000_000
_CENT = Decimal("0.0001")

# Defaults when config/settings/model_judge.py is not applied (its values come from the environment).
_DEFAULTS: dict[str, Any] = {
    "MODEL_JUDGE_BASE_URL": "",
    "MODEL_JUDGE_MODEL": "",
    "MODEL_JUDGE_API_KEY": "",
    "MODEL_JUDGE_TIMEOUT": 30.0,
    "MODEL_JUDGE_ATTEMPTS": 4,
    "MODEL_JUDGE_BACKOFF": 1.0,
    "MODEL_JUDGE_MAX_WAIT": 60.0,
    "MODEL_JUDGE_CONCURRENCY": 8,
    "MODEL_JUDGE_PRICE_PER_1K_TOKENS": Decimal("0"),
    "MODEL_JUDGE_MAX_DOCUMENT_CHARS": 6000,
    "MODEL_JUDGE_MAX_TOKENS": 60,
    "MODEL_JUDGE_STUCK_SECONDS": 1800,
}


def _conf(name: str) -> Any:
    return getattr(settings, name, _DEFAULTS[name])


class JudgeRefused(ApplicationError):
    http_status = 409
    code = "conflict"


class JudgeNotConfigured(ApplicationError):
    http_status = 409
    code = "judge-not-configured"


class JudgeCostChanged(ApplicationError):
    http_status = 409
    code = "cost-changed"

    def __init__(self, message: str, *, quote: JudgeQuote) -> None:
        super().__init__(message)
        self.quote = quote


@dataclass(frozen=True)
class JudgeQuote:
    """What a run would read and cost.  ``documents``: per region, the ids in the order they are read
    (human sample first).  ``cost`` is what the analyst confirms; ``fingerprint`` names the documents."""

    kind: str
    model: str
    plan: dict[str, int]
    seed: int
    documents: dict[str, list[int]] = field(repr=False)
    human_sampled: dict[str, int]
    tokens: int
    price_per_1k_tokens: Decimal
    cost: Decimal
    fingerprint: str

    @property
    def total(self) -> int:
        return sum(len(v) for v in self.documents.values())

    def summary(self) -> dict[str, Any]:
        """JSON-able, for the page and the API alike."""
        return {"kind": self.kind, "model": self.model, "plan": self.plan, "seed": self.seed,
                "documents": {h: len(v) for h, v in self.documents.items()}, "total": self.total,
                "human_sampled": self.human_sampled, "tokens": self.tokens,
                "price_per_1k_tokens": str(self.price_per_1k_tokens), "cost": str(self.cost),
                "fingerprint": self.fingerprint}


def endpoint_config() -> EndpointConfig:
    return EndpointConfig(
        base_url=_conf("MODEL_JUDGE_BASE_URL"), model=_conf("MODEL_JUDGE_MODEL"), api_key=_conf("MODEL_JUDGE_API_KEY"),
        timeout=_conf("MODEL_JUDGE_TIMEOUT"), attempts=_conf("MODEL_JUDGE_ATTEMPTS"),
        backoff=_conf("MODEL_JUDGE_BACKOFF"), max_wait=_conf("MODEL_JUDGE_MAX_WAIT"),
        max_tokens=_conf("MODEL_JUDGE_MAX_TOKENS"))


def model_judge_configured() -> bool:
    return bool(_conf("MODEL_JUDGE_BASE_URL") and _conf("MODEL_JUDGE_MODEL"))


def _human_sampled(topic: Topic) -> dict[str, list[int]]:
    """The topic's own pair-region sample (not certification's), per region, ascending ids."""
    rows = (SampledDocument.objects.filter(topic=topic, region__in=JUDGE_REGIONS, draw__purpose=SampleDraw.Purpose.PAIR)
            .exclude(draw__stratum_key__startswith="certification").values_list("region", "document_id"))
    out: dict[str, set[int]] = {h: set() for h in JUDGE_REGIONS}
    for region, doc in rows:
        out[region].add(doc)
    return {h: sorted(v) for h, v in out.items()}


def _seed(topic: Topic) -> int:
    runs = ModelJudgeRun.objects.filter(topic=topic).count()
    digest = hashlib.sha256(f"model-judge:{topic.pk}:{runs}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def _guard(topic: Topic, *, kind: str) -> None:
    if topic.is_multiclass:
        raise JudgeRefused("A model judge runs on one-topic (pair) reports only; topic sets are not supported yet.")
    if not hasattr(topic, "pair"):
        raise JudgeRefused("The topic has no classifier pair: its regions are what the judge samples.")
    if topic.archived_at is not None:
        raise JudgeRefused("The topic is archived.")
    if kind == ModelJudgeRun.Kind.ENDPOINT and not model_judge_configured():
        raise JudgeNotConfigured("No model judge is configured: set MODEL_JUDGE_BASE_URL and MODEL_JUDGE_MODEL.")


def model_judge_plan_default(*, topic: Topic) -> dict[str, int]:
    """Per region: ten times the human sample, at least 500 (capped at the region by the quote)."""
    human = _human_sampled(topic)
    return {h: max(DEFAULT_MINIMUM, DEFAULT_PER_HUMAN * len(human[h])) for h in JUDGE_REGIONS}


def model_judge_quote(*, topic: Topic, plan: dict[str, int] | None = None, kind: str = ModelJudgeRun.Kind.ENDPOINT,
                      classifier_id: int | None = None) -> JudgeQuote:
    """The documents and cost of a run (module docstring).  Deterministic for a topic until the next run."""
    _guard(topic, kind=kind)
    plan = dict(plan or model_judge_plan_default(topic=topic))
    for h, k in plan.items():
        if h not in JUDGE_REGIONS or not isinstance(k, int) or not 0 <= k <= MAX_PER_REGION:
            raise ApplicationError(f"A plan gives each of {', '.join(JUDGE_REGIONS)} a whole number of documents "
                                   f"from 0 to {MAX_PER_REGION:,} (got {h}: {k!r}).")
    seed = _seed(topic)
    regions = pair_regions(c1=topic.pair.c1, c2=topic.pair.c2)
    human = _human_sampled(topic)
    rng = np.random.default_rng(seed)
    documents: dict[str, list[int]] = {}
    for h in JUDGE_REGIONS:
        want = plan.get(h, 0)
        first = human[h][:want]
        extra = bitmap_draw(bitmap=regions.by_code(h), k=max(0, want - len(first)), rng=rng,
                            exclude=bitmap_from_ids(human[h]))
        documents[h] = first + extra
    total = sum(len(v) for v in documents.values())
    price = Decimal(_conf("MODEL_JUDGE_PRICE_PER_1K_TOKENS"))
    if kind == ModelJudgeRun.Kind.ENDPOINT and total:
        ids = [d for v in documents.values() for d in v]
        chars = 0
        for start in range(0, len(ids), 5_000):
            chars += Document.objects.filter(pk__in=ids[start:start + 5_000]).aggregate(
                c=Sum(Length("title")) + Sum(Length("text")))["c"] or 0
        cap = _conf("MODEL_JUDGE_MAX_DOCUMENT_CHARS")
        chars = min(chars, total * cap) + total * (len(SYSTEM_PROMPT) + len(topic.name) + len(topic.instructions) + 80)
        tokens = chars // CHARS_PER_TOKEN + total * _conf("MODEL_JUDGE_MAX_TOKENS")
    else:
        tokens = 0
    cost = (price * tokens / 1000).quantize(_CENT, rounding=ROUND_HALF_UP)
    model = _conf("MODEL_JUDGE_MODEL") if kind == ModelJudgeRun.Kind.ENDPOINT else f"classifier:{classifier_id}"
    digest = hashlib.sha256(repr((kind, model, seed, sorted((h, tuple(v)) for h, v in documents.items()))).encode())
    return JudgeQuote(kind=kind, model=model, plan={h: plan.get(h, 0) for h in JUDGE_REGIONS}, seed=seed,
                      documents=documents, human_sampled={h: len(v) for h, v in human.items()}, tokens=int(tokens),
                      price_per_1k_tokens=price, cost=cost, fingerprint=digest.hexdigest()[:16])


def model_judge_launch(*, topic_id: int, confirm_cost: Decimal, plan: dict[str, int] | None = None,
                       kind: str = ModelJudgeRun.Kind.ENDPOINT, classifier_id: int | None = None,
                       user: Any = None, enqueue: Callable[[int], Any] | None = None) -> ModelJudgeRun:
    """Start a run as confirmed (module docstring); ``enqueue(run_id)`` queues the task (default: Celery's)."""
    if kind == ModelJudgeRun.Kind.CLASSIFIER:
        if classifier_id is None:
            raise ApplicationError("A classifier judge needs the classifier whose scores it uses.")
    with transaction.atomic():
        # FOR UPDATE of the topic row only: the pair is a nullable outer join PostgreSQL will not lock.
        topic = Topic.objects.select_for_update(of=("self",)).select_related("pair").get(pk=topic_id)
        if ModelJudgeRun.objects.filter(topic=topic, status__in=[JobStatus.PENDING, JobStatus.RUNNING]).exists():
            raise JudgeRefused("A judge run of this topic is still going; wait for it to end.")
        quote = model_judge_quote(topic=topic, plan=plan, kind=kind, classifier_id=classifier_id)
        if Decimal(confirm_cost) != quote.cost:
            raise JudgeCostChanged(f"Nothing was started: the run costs ${quote.cost}, not the ${confirm_cost} "
                                   "confirmed. Check the quote and confirm its cost.", quote=quote)
        if not quote.total:
            raise JudgeRefused("Nothing to judge: the plan asks for no document.")
        run = ModelJudgeRun.objects.create(
            topic=topic, kind=kind, model=quote.model if kind == ModelJudgeRun.Kind.ENDPOINT else "",
            base_url=_conf("MODEL_JUDGE_BASE_URL") if kind == ModelJudgeRun.Kind.ENDPOINT else "",
            classifier_id=classifier_id if kind == ModelJudgeRun.Kind.CLASSIFIER else None, plan=quote.plan,
            seed=quote.seed, total=quote.total, tokens_quoted=quote.tokens, cost_confirmed=quote.cost,
            created_by=user if getattr(user, "is_authenticated", False) else None)
        ModelJudgment.objects.bulk_create(
            [ModelJudgment(run=run, topic=topic, document_id=d, region=h)
             for h, ids in quote.documents.items() for d in ids], batch_size=5_000)
        if enqueue is None:
            from annotation.tasks_judge import model_judge_run_task  # noqa: PLC0415 (tasks import this module)

            def enqueue(run_id: int) -> Any:
                return model_judge_run_task.delay(run_id=run_id)
        send = enqueue
        job_enqueue_on_commit(job=run, enqueue=lambda: send(run.pk))
    return run


def model_judge_retry(*, run_id: int, enqueue: Callable[[int], Any] | None = None) -> bool:
    """A failed run back to waiting, its failed answers pending again; the task queued after commit."""
    with transaction.atomic():
        if not job_retry(model=ModelJudgeRun, job_id=run_id):
            return False
        ModelJudgment.objects.filter(run_id=run_id, status=ModelJudgment.Status.FAILED).update(
            status=ModelJudgment.Status.PENDING, reason="", detail="")
        run = ModelJudgeRun.objects.get(pk=run_id)
        if enqueue is None:
            from annotation.tasks_judge import model_judge_run_task  # noqa: PLC0415 (tasks import this module)

            def enqueue(rid: int) -> Any:
                return model_judge_run_task.delay(run_id=rid)
        send = enqueue
        job_enqueue_on_commit(job=run, enqueue=lambda: send(run_id))
    return True


STUCK = ("The run stopped giving signs of life (its worker was lost or restarted). The answers received are kept; "
         "retry the run to ask the judge for the documents still pending.")


def model_judge_runs_stuck_fail(*, now: datetime | None = None) -> int:
    """The stuck sweep of model judge runs (core.jobs): a run waiting or running with no stored batch for
    MODEL_JUDGE_STUCK_SECONDS is failed with a message the analyst can act on (retry keeps its answers)."""
    older_than = timedelta(seconds=int(_conf("MODEL_JUDGE_STUCK_SECONDS")))
    return len(jobs_stuck_fail(model=ModelJudgeRun, older_than=older_than, message=STUCK, now=now))


# ------------------------------------------------------------------------------------------------ the run


def _price(prompt: int, completion: int) -> Decimal:
    return (Decimal(_conf("MODEL_JUDGE_PRICE_PER_1K_TOKENS")) * (prompt + completion) / 1000).quantize(
        _CENT, rounding=ROUND_HALF_UP)


def _store(run_id: int, results: list[tuple[int, Any]]) -> None:
    """Write a batch of answers (JudgeAnswer or JudgeFailure) and the run's counters, in one transaction."""
    now = timezone.now()
    prompt = completion = 0
    with transaction.atomic():
        for judgment_id, result in results:
            prompt += result.prompt_tokens
            completion += result.completion_tokens
            if isinstance(result, JudgeFailure):
                fields = dict(status=ModelJudgment.Status.FAILED, reason=result.reason, detail=result.detail)
            else:
                fields = dict(status=ModelJudgment.Status.OK, relevant=result.relevant,
                              probability=result.probability, reason="", detail="")
            ModelJudgment.objects.filter(pk=judgment_id, status=ModelJudgment.Status.PENDING).update(
                attempts=result.attempts, prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens, answered_at=now, **fields)
        job_progress_add(model=ModelJudgeRun, job_id=run_id, count=len(results),
                         prompt_tokens=F("prompt_tokens") + prompt, completion_tokens=F("completion_tokens") + completion,
                         cost_spent=F("cost_spent") + _price(prompt, completion))


def _classifier_answers(run: ModelJudgeRun, pending: list[tuple[int, int, str]]) -> None:
    """A scores classifier as judge: P(relevant) = its stored score clipped to [0, 1], the class = retrieved."""
    classifier = run.classifier
    assert classifier is not None
    from annotation.services.corpora.retrieved_sets import classifier_bitmap  # noqa: PLC0415 (only this kind)
    retrieved = classifier_bitmap(classifier=classifier)
    docs = [d for _, d, _ in pending]
    scores = dict(ClassifierScore.objects.filter(classifier=classifier, document_id__in=docs)
                  .values_list("document_id", "score"))
    now = timezone.now()
    with transaction.atomic():
        for judgment_id, doc, _ in pending:
            score = scores.get(doc)
            if score is None:
                ModelJudgment.objects.filter(pk=judgment_id).update(
                    status=ModelJudgment.Status.FAILED, reason="no-score", attempts=1, answered_at=now)
            else:
                ModelJudgment.objects.filter(pk=judgment_id).update(
                    status=ModelJudgment.Status.OK, relevant=doc in retrieved,
                    probability=min(1.0, max(0.0, float(score))), attempts=1, answered_at=now)
        job_progress_add(model=ModelJudgeRun, job_id=run.pk, count=len(pending))


def model_judge_run_execute(*, run_id: int, config: EndpointConfig | None = None, batch: int = 50) -> bool:
    """The task's body (module docstring).  False when the run was not waiting (a second delivery)."""
    if not job_begin(model=ModelJudgeRun, job_id=run_id):
        return False
    run = ModelJudgeRun.objects.select_related("topic", "classifier").get(pk=run_id)
    pending = list(ModelJudgment.objects.filter(run=run, status=ModelJudgment.Status.PENDING)
                   .order_by("id").values_list("id", "document_id", "region"))
    try:
        if run.kind == ModelJudgeRun.Kind.CLASSIFIER:
            _classifier_answers(run, pending)
        else:
            stopped = _endpoint_answers(run, pending, config or endpoint_config(), batch=batch)
            if stopped:
                job_fail(model=ModelJudgeRun, job_id=run_id, message=stopped,
                         detail={"reason": "unreachable", "pending": ModelJudgment.objects.filter(
                             run=run, status=ModelJudgment.Status.PENDING).count()})
                return True
    except Exception as exc:
        logger.exception("model judge run %s failed", run_id)
        job_fail(model=ModelJudgeRun, job_id=run_id, message=f"The run stopped: {type(exc).__name__}. See the log.")
        return True
    run.refresh_from_db()
    failed = ModelJudgment.objects.filter(run=run, status=ModelJudgment.Status.FAILED).count()
    with transaction.atomic():
        job_finish(job=run, error=f"{failed} of {run.total} documents failed (see their reasons)." if failed else "")
        # The report reads the latest finished run: it is stale now (estimation schedules the recompute).
        event_send_on_commit(event=ModelJudgeFinished(topic_id=run.topic_id, run_id=run.pk))
    return True


def _endpoint_answers(run: ModelJudgeRun, pending: list[tuple[int, int, str]], config: EndpointConfig, *,
                      batch: int) -> str:
    """Ask the endpoint for every pending answer with bounded concurrency; '' when done, else why it stopped."""
    topic = run.topic
    concurrency = max(1, int(_conf("MODEL_JUDGE_CONCURRENCY")))
    cap = _conf("MODEL_JUDGE_MAX_DOCUMENT_CHARS")
    docs = iter(pending)
    texts: dict[int, tuple[str, str]] = {}

    def load(chunk: Iterable[int]) -> None:
        texts.update({d: (t, x) for d, t, x in Document.objects.filter(pk__in=list(chunk))
                      .values_list("pk", "title", "text")})

    def ask(doc: int) -> Any:
        title, text = texts[doc]
        messages = judge_messages(topic_name=topic.name, instructions=topic.instructions, title=title, text=text,
                                  max_chars=cap)
        try:
            return judge_ask(config=config, messages=messages)
        except JudgeFailure as failure:
            return failure

    done: list[tuple[int, Any]] = []
    answered = unreachable = 0
    in_flight: dict[Future, int] = {}
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="model-judge") as pool:
        def submit_more() -> None:
            want = concurrency * 2 - len(in_flight)
            chunk = [next(docs, None) for _ in range(max(0, want))]
            chunk_rows = [c for c in chunk if c is not None]
            if chunk_rows:
                load(d for _, d, _ in chunk_rows)
            for judgment_id, doc, _ in chunk_rows:
                in_flight[pool.submit(ask, doc)] = judgment_id

        submit_more()
        while in_flight:
            finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
            for future in finished:
                judgment_id = in_flight.pop(future)
                result = future.result()
                answered += 1
                if isinstance(result, JudgeFailure) and result.reason == "unreachable":
                    unreachable += 1
                done.append((judgment_id, result))
            if len(done) >= batch or not in_flight:
                _store(run.pk, done)
                done = []
            # Circuit breaker: the first window of answers all "unreachable" → a dead endpoint; stop asking.
            if answered >= concurrency and unreachable == answered:
                for future in in_flight:
                    future.cancel()
                for future in list(in_flight):
                    if future.done() and not future.cancelled():
                        done.append((in_flight[future], future.result()))
                if done:
                    _store(run.pk, done)
                return (f"The endpoint {config.base_url} could not be reached ({answered} requests failed in a row); "
                        "the remaining documents are still waiting. Retry the run once it is up.")
            submit_more()
    if done:
        _store(run.pk, done)
    return ""


# ------------------------------------------------------------------------------------------------ reads


@dataclass(frozen=True)
class JudgeAnswers:
    """The answers of a topic's latest finished run, for estimation: per region, document id → P(relevant)
    (failed answers: None, the estimator's fixed 0.5), and the run's summary."""

    run_id: int
    finished_at: str
    by_region: dict[str, dict[int, float | None]]
    summary: dict[str, Any]


def model_judge_run_summary(*, run: ModelJudgeRun) -> dict[str, Any]:
    counts = dict(ModelJudgment.objects.filter(run=run).values_list("status").annotate(n=Count("id")))
    reasons = dict(ModelJudgment.objects.filter(run=run, status=ModelJudgment.Status.FAILED)
                   .values_list("reason").annotate(n=Count("id")))
    return {"id": run.pk, "kind": run.kind, "model": run.model, "status": run.status, "total": run.total,
            "processed": run.processed, "answered": counts.get("ok", 0), "failed": counts.get("failed", 0),
            "pending": counts.get("pending", 0), "failure_reasons": reasons, "plan": run.plan,
            "prompt_tokens": run.prompt_tokens, "completion_tokens": run.completion_tokens,
            "tokens_quoted": run.tokens_quoted, "cost_confirmed": str(run.cost_confirmed),
            "cost_spent": str(run.cost_spent), "error": run.error,
            "created_at": run.created_at.isoformat() if run.created_at else None,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None}


def model_judge_answers(*, topic_id: int) -> JudgeAnswers | None:
    """The latest done run's answers (None without one)."""
    run = ModelJudgeRun.objects.filter(topic_id=topic_id, status=JobStatus.DONE).order_by("-finished_at", "-id").first()
    if run is None:
        return None
    by_region: dict[str, dict[int, float | None]] = {h: {} for h in JUDGE_REGIONS}
    for doc, region, status, p in (ModelJudgment.objects.filter(run=run)
                                   .values_list("document_id", "region", "status", "probability").iterator(5_000)):
        by_region.setdefault(region, {})[doc] = p if status == ModelJudgment.Status.OK else None
    return JudgeAnswers(run_id=run.pk, finished_at=run.finished_at.isoformat() if run.finished_at else "",
                        by_region=by_region, summary=model_judge_run_summary(run=run))
