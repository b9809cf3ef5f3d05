"""Corpora, classifiers, topics, samples, HITs and judgments.

Invariants live in the database (unique and check constraints); the services in
`annotation/services/` are the only writers. Retrieved sets are stored as
compressed (Roaring) bitmaps of Document primary keys, so region counts and
uniform draws are set operations in memory rather than joins over millions of rows.
"""
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from core.jobs import Job


class Corpus(models.Model):
    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    # Maintained by the import service: COUNT(*) over millions of rows is not free.
    document_count = models.PositiveIntegerField(default=0)
    # Roaring bitmap of the corpus's Document ids, for uniform draws without a table scan.
    documents_bitmap = models.BinaryField(default=b"")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "corpora"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Document(models.Model):
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=255)
    title = models.TextField(blank=True)
    text = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # sha256 of the canonical (title, text, metadata): re-imports compare it to
    # tell "same document again" from "same id, different content".
    content_hash = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["corpus", "external_id"], name="document_external_id_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.corpus_id}:{self.external_id}"


class Classifier(models.Model):
    class Kind(models.TextChoices):
        KEYWORDS = "keywords", "Keyword filter"
        IDS = "ids", "Uploaded retrieved ids"
        SCORES = "scores", "Uploaded scores with a threshold"
        FIELD_VALUES = "field_values", "Field values (author in a list, mention of an account)"
        TRAINED = "trained", "Trained on another view (logistic regression)"

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="classifiers")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # keywords: {"terms": [...], "fields": ["title", "text"]}
    # ids:      {"source": "<file name>", "sha256": "..."}
    # scores:   {"source": "<file name>", "sha256": "...", "threshold": 0.5}
    definition = models.JSONField(default=dict)
    # sha256 over kind, definition and the retrieved set: reports name exactly what they measured.
    fingerprint = models.CharField(max_length=64)
    retrieved_bitmap = models.BinaryField()
    retrieved_count = models.PositiveIntegerField(default=0)
    # Why the classifier may no longer change (set by whoever depends on it, e.g. estimation when a
    # certification plan that certifies it is locked); empty while it may change.
    frozen_reason = models.CharField(max_length=300, blank=True, default="")
    # Archived classifiers are hidden from lists and forms; nothing measured with them is lost.
    archived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["corpus", "name"]
        constraints = [
            models.UniqueConstraint(fields=["corpus", "name"], name="classifier_name_unique"),
            models.CheckConstraint(
                condition=Q(kind__in=["keywords", "ids", "scores", "field_values", "trained"]),
                name="classifier_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class BuildStatus(models.TextChoices):
    """The status of a classifier or router build (the API's BuildStatusEnum)."""

    PENDING = "pending", "Waiting"
    RUNNING = "running", "Building"
    DONE = "done", "Built"
    FAILED = "failed", "Failed"


class ClassifierBuild(Job):
    """A classifier being built by a task (keywords over millions of documents, training): the page polls this row.

    The build computes the retrieved set (possibly in id-range shards run in parallel) and then creates the
    Classifier; until then nothing else sees it. Status, progress, times and the failure's detail are those of
    every background job (core.jobs.Job).
    """

    job_legacy_heartbeat_field = "details"

    Status = BuildStatus

    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="classifier_builds")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Classifier.Kind.choices)
    definition = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Documents processed so far (progress; `total` in all); shards the build was split into.
    processed = models.PositiveBigIntegerField(default=0)
    shards = models.PositiveSmallIntegerField(default=1)
    error = models.TextField(blank=True, default="")
    # Free-form facts of the build for its page (warnings, training metrics, shard timings).
    details = models.JSONField(default=dict, blank=True)
    classifier = models.ForeignKey(Classifier, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "running", "done", "failed"]), name="classifier_build_status_valid"
            ),
            models.CheckConstraint(condition=Q(processed__lte=F("total")) | Q(total=0),
                                   name="classifier_build_progress_valid"),
            models.CheckConstraint(condition=Q(shards__gte=1), name="classifier_build_shards_positive"),
        ]


class ClassifierScore(models.Model):
    """Uploaded scores, kept so the threshold of a scores classifier can be changed."""

    classifier = models.ForeignKey(Classifier, on_delete=models.CASCADE, related_name="scores")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["classifier", "document"], name="classifier_score_unique"),
        ]


class CrowdField(models.CharField):
    """Topic.crowd: its choices (one per crowd platform) are left out of migrations.

    They constrain forms, the admin and the API, never the database, so a new crowd platform
    (annotation.services.crowd.platforms) adds its Topic.Crowd choice without a migration.
    """

    def deconstruct(self) -> Any:
        name, _path, args, kwargs = super().deconstruct()
        kwargs.pop("choices", None)
        return name, "django.db.models.CharField", args, kwargs


class Topic(models.Model):
    class Crowd(models.TextChoices):
        # One value per crowd platform module (annotation/services/crowd/platforms/); no migration needed.
        LOCAL = "local", "Built-in annotators"
        MTURK = "mturk", "Amazon Mechanical Turk"

    class Aggregator(models.TextChoices):
        MAJORITY = "majority", "Majority of three"
        DAWID_SKENE = "dawid_skene", "Dawid–Skene posterior"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        ACTIVE = "active", "Sampling"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    class Kind(models.TextChoices):
        # One topic measured by a classifier pair (seed 000): judgments are on topic / off topic.
        BINARY = "binary", "One topic (on topic / off topic)"
        # A topic set (seed 002): M mutually exclusive topics plus "none of these"; a router sends each
        # document to one of them; judgments choose one class (Judgment.choice), labels count votes per class.
        MULTICLASS = "multiclass", "Topic set (one of several topics)"

    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT, related_name="topics")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.BINARY)
    name = models.CharField(max_length=200, unique=True)
    instructions = models.TextField(blank=True)
    seed_terms = models.JSONField(default=list, blank=True)
    target_recall = models.FloatField(default=0.8)
    confidence = models.FloatField(default=0.95)
    crowd = CrowdField(max_length=16, choices=Crowd.choices, default=Crowd.LOCAL)
    aggregator = models.CharField(max_length=16, choices=Aggregator.choices, default=Aggregator.MAJORITY)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    hit_size = models.PositiveSmallIntegerField(default=5)
    reward_per_hit = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("0.10"))
    budget = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    # Workers below this accuracy on gold documents are blocked automatically.
    min_gold_accuracy = models.FloatField(default=0.7)
    # Offer annotators a third answer, "unsure" (stored as Judgment.relevant NULL; excluded from the majority).
    allow_unsure = models.BooleanField(default=False)
    # Archived topics are hidden from lists and take no new HITs; their reports stay readable.
    archived_at = models.DateTimeField(null=True, blank=True)
    # A classifier of the corpus that stores a score per document (kind "scores" or "trained"): when set, the
    # dependence check's sample of N is split into score strata, each drawn as its own simple random sample
    # (annotation.services.sampling.strata). PROTECT: the strata of earlier draws are re-derived from its scores.
    scorer = models.ForeignKey(Classifier, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        # The three roles are groups holding these permissions (annotation/roles.py).
        permissions = [
            ("configure_topics", "Analyst: import corpora, define classifiers and topics, launch sampling"),
            ("read_reports", "Manager: read recall reports, certify classifiers, export"),
            ("annotate", "Annotator: take HITs and judge documents"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(target_recall__gt=0) & Q(target_recall__lt=1), name="topic_target_recall_range"
            ),
            models.CheckConstraint(
                condition=Q(confidence__gt=0.5) & Q(confidence__lt=1), name="topic_confidence_range"
            ),
            models.CheckConstraint(condition=Q(hit_size__gte=1), name="topic_hit_size_positive"),
            models.CheckConstraint(condition=Q(reward_per_hit__gte=0), name="topic_reward_nonnegative"),
            models.CheckConstraint(condition=Q(kind__in=["binary", "multiclass"]), name="topic_kind_valid"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_multiclass(self) -> bool:
        return self.kind == self.Kind.MULTICLASS


# The class position that means "none of these topics" in a topic set: judgments, labels and router
# predictions use it; it has no TopicClass row.
NONE_OF_THESE = 0


class TopicClass(models.Model):
    """One of a topic set's M mutually exclusive classes, at positions 1..M (0 is "none of these")."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="classes")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=200)
    # What annotators read under the class's name.
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["topic", "position"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "position"], name="topic_class_position_unique"),
            models.UniqueConstraint(fields=["topic", "name"], name="topic_class_name_unique"),
            models.CheckConstraint(condition=Q(position__gte=1), name="topic_class_position_positive"),
        ]

    def __str__(self) -> str:
        return self.name


class Router(models.Model):
    """A multi-class classifier of a topic set: it sends each document of the corpus to one class, or to none."""

    class Kind(models.TextChoices):
        UPLOAD = "upload", "Uploaded predictions (id, predicted class)"
        KEYWORDS = "keywords", "One keyword filter per class, in precedence order"

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="routers")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # upload:   {"source": "<file name>", "sha256": "..."}
    # keywords: {"rules": [{"class": <position>, "terms": [...], "fields": [...]}, ...]}, first match wins
    definition = models.JSONField(default=dict)
    # Documents of the corpus per predicted class position 0..M (0: none of these).
    predicted_counts = models.JSONField(default=list)
    # sha256 over kind, definition and the predictions: reports name exactly what they measured.
    fingerprint = models.CharField(max_length=64)
    archived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic", "name"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "name"], name="router_name_unique"),
            models.CheckConstraint(condition=Q(kind__in=["upload", "keywords"]), name="router_kind_valid"),
        ]

    def __str__(self) -> str:
        return self.name


class RouterPrediction(models.Model):
    """A router's class for one document; a document without a row was sent to none of the topics."""

    router = models.ForeignKey(Router, on_delete=models.CASCADE, related_name="predictions")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    predicted = models.PositiveSmallIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["router", "document"], name="router_prediction_unique"),
            models.CheckConstraint(condition=Q(predicted__gte=1), name="router_prediction_class_positive"),
        ]


class RouterBuild(Job):
    """A router being built by a task (issue 15): the page polls this row; the Router exists once it is done.

    definition: keywords {"rules": [...]} (checked, in precedence order); upload {"file": <path under
    MEDIA_ROOT>, "sha256": ..., "source": <original file name>} (the file is removed when the build ends).
    Status, progress, times and the failure's detail are those of every background job (core.jobs.Job).
    """

    Status = BuildStatus

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="router_builds")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Router.Kind.choices)
    definition = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Documents scanned (keywords) or lines read (upload) so far (`total` in all).
    processed = models.PositiveBigIntegerField(default=0)
    # Why it failed, for the user: an upload's bad lines one per line ("line 7: unknown class 'x'"); the same
    # lines as data in `error_detail` ({"lines": [{"line": 7, "problem": ...}]}).
    error = models.TextField(blank=True, default="")
    router = models.ForeignKey(Router, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "running", "done", "failed"]), name="router_build_status_valid"
            ),
            models.CheckConstraint(condition=Q(kind__in=["upload", "keywords"]), name="router_build_kind_valid"),
            models.CheckConstraint(condition=Q(processed__lte=F("total")) | Q(total=0),
                                   name="router_build_progress_valid"),
        ]


class ClassifierPair(models.Model):
    """The two (ideally conditionally independent) classifiers whose overlap measures recall."""

    topic = models.OneToOneField(Topic, on_delete=models.CASCADE, related_name="pair")
    c1 = models.ForeignKey(Classifier, on_delete=models.PROTECT, related_name="+")
    c2 = models.ForeignKey(Classifier, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=~Q(c1=F("c2")), name="pair_distinct_classifiers"),
        ]

    def __str__(self) -> str:
        return f"{self.c1} × {self.c2}"


class TopicClassifier(models.Model):
    """A further classifier measured against the topic's pair (seed 000, Sec. 6)."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="extra_classifiers")
    classifier = models.ForeignKey(Classifier, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "classifier"], name="topic_classifier_unique"),
        ]


class Region(models.TextChoices):
    A12 = "A12", "A1 ∩ A2"
    B1 = "B1", "A1 ∖ A2"
    B2 = "B2", "A2 ∖ A1"
    A1 = "A1", "A1 (paper design)"
    A2 = "A2", "A2 (paper design)"
    RETRIEVED = "R", "Retrieved set of a further classifier"
    UNIFORM = "U", "Uniform over the corpus"
    GOLD = "G", "Gold documents"
    # The complement of the pair's union: its sample is the dependence check (issue 11).
    NEITHER = "N", "Retrieved by neither classifier: U ∖ (A1 ∪ A2)"


# The one plain name of each region on every page (issue 12 item 8, issue 26 item 2): the report, the
# certification pages, the sampling plan, the launch review, the plots and the exports show these, never the codes
# (the codes stay in the JSON and under "Details"). "first"/"second" are the pair's c1/c2; where the pair is known,
# estimation.templatetags.report_extras.region_name puts the classifier's name in their place ("found only by
# Title keywords"). A mapping, not new Region labels: the labels are part of the migration state.
REGION_NAMES: dict[str, str] = {
    "A12": "found by both",
    "B1": "found only by the first classifier",
    "B2": "found only by the second classifier",
    "N": "found by neither",
    "A1": "everything the first classifier found",
    "A2": "everything the second classifier found",
    "R": "found by a further classifier",
    "U": "whole corpus",
    "G": "gold documents",
}


def region_name(code: object, c1: str | None = None, c2: str | None = None) -> str:
    """The plain name of a region code ("A12" → "found by both"), with the classifier's name in place of
    "the first/second classifier" when given ("found only by Title keywords"). Unknown codes are returned as
    they are. The one rule for services (the launch quote) and templates (report_extras.region_name)."""
    text = str(code)
    base = text.split(":", 1)[0]
    name = REGION_NAMES.get(text) or REGION_NAMES.get(base) or text
    if base in ("B1", "A1") and c1:
        return name.replace("the first classifier", c1)
    if base in ("B2", "A2") and c2:
        return name.replace("the second classifier", c2)
    return name


class SampleDraw(models.Model):
    """One seeded draw from one region; enough is recorded to reproduce it."""

    class Purpose(models.TextChoices):
        PAIR = "pair", "Pair regions (stratified)"
        PAPER = "paper", "Paper design (A1, A2, A12)"
        PRECISION = "precision", "Precision of a further classifier"
        UNIFORM = "uniform", "Uniform validation sample"
        CERTIFICATION = "certification", "Certification sample"

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="draws")
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    region = models.CharField(max_length=4, choices=Region.choices)
    classifier = models.ForeignKey(Classifier, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # Opaque part of the stratum's identity, set by whoever owns the stratum: empty for the
    # topic's own samples, e.g. "certification-plan:7" for a certification sample (estimation
    # links the draw to its plan on its side: estimation.CertificationPlanDraw).
    stratum_key = models.CharField(max_length=64, blank=True, default="")
    seed = models.BigIntegerField()
    region_size = models.PositiveIntegerField()
    requested = models.PositiveIntegerField()
    drawn = models.PositiveIntegerField(default=0)
    # Roaring bitmap of the ids excluded from the region when this draw was made
    # (earlier draws of the same stratum, caller's exclusions): with the seed, it
    # re-derives the drawn ids exactly (annotation.services.sampling.draws.sample_draw_reproduce).
    excluded_bitmap = models.BinaryField(default=b"", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]


class SampledDocument(models.Model):
    draw = models.ForeignKey(SampleDraw, on_delete=models.CASCADE, related_name="documents")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    region = models.CharField(max_length=4, choices=Region.choices)
    inclusion_probability = models.FloatField()

    class Meta:
        constraints = [
            # Top-ups never redraw a document already sampled for the same purpose and region.
            models.UniqueConstraint(fields=["draw", "document"], name="sampled_document_unique_in_draw"),
            models.CheckConstraint(
                condition=Q(inclusion_probability__gt=0) & Q(inclusion_probability__lte=1),
                name="sampled_document_probability_range",
            ),
        ]
        indexes = [models.Index(fields=["topic", "region"]), models.Index(fields=["topic", "document"])]


class Worker(models.Model):
    """A person who judges: a local account, or a worker id on a crowd platform (Topic.Crowd, e.g. MTurk)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="worker"
    )
    # The crowd platform (a Topic.Crowd value) that knows this worker by `external_id`; "" for local accounts.
    platform = models.CharField(max_length=16, blank=True, default="")
    external_id = models.CharField(max_length=64, null=True, blank=True)
    blocked = models.BooleanField(default=False)
    blocked_reason = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(user__isnull=False) | Q(external_id__isnull=False), name="worker_has_identity"
            ),
            # A worker id is unique on its platform (two platforms may hand out the same string).
            models.UniqueConstraint(fields=["platform", "external_id"], name="worker_external_id_unique"),
            models.CheckConstraint(
                condition=Q(external_id__isnull=True) | ~Q(platform=""), name="worker_external_id_has_platform"
            ),
        ]

    def __str__(self) -> str:
        if self.external_id:
            return self.external_id
        user = self.user if self.user_id else None
        return user.get_username() if user is not None else f"worker {self.pk}"


class Hit(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open"
        COMPLETE = "complete", "Complete"
        CANCELLED = "cancelled", "Cancelled"

    ASSIGNMENTS_PER_HIT = 3

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="hits")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    reward = models.DecimalField(max_digits=8, decimal_places=2)
    max_assignments = models.PositiveSmallIntegerField(default=ASSIGNMENTS_PER_HIT)
    completed_assignments = models.PositiveSmallIntegerField(default=0)
    # The HIT's id on its topic's crowd platform (MTurk's HITId), set once published there.
    external_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["topic", "status"]),
            # Claims walk a topic's open HITs in id order and stop at the first few with a free
            # place: without this the database would examine every open HIT of the topic per claim.
            models.Index(fields=["topic", "id"], condition=Q(status="open"), name="hit_open_by_topic"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(completed_assignments__lte=F("max_assignments")), name="hit_completed_le_max"
            ),
        ]


class HitItem(models.Model):
    hit = models.ForeignKey(Hit, on_delete=models.CASCADE, related_name="items")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()
    is_gold = models.BooleanField(default=False)

    class Meta:
        ordering = ["hit", "position"]
        constraints = [
            models.UniqueConstraint(fields=["hit", "document"], name="hit_item_unique_in_hit"),
            # A sampled document is judged in exactly one HIT per topic (gold ones recur).
            models.UniqueConstraint(
                fields=["topic", "document"], condition=Q(is_gold=False), name="hit_item_once_per_topic"
            ),
        ]


class Assignment(models.Model):
    class Status(models.TextChoices):
        CLAIMED = "claimed", "In progress"
        SUBMITTED = "submitted", "Submitted"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        EXPIRED = "expired", "Expired"

    LIVE_STATUSES = ("claimed", "submitted", "approved")

    hit = models.ForeignKey(Hit, on_delete=models.CASCADE, related_name="assignments")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="assignments")
    # Which of the HIT's three places this assignment holds; freed when it expires.
    slot = models.PositiveSmallIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.CLAIMED)
    claimed_at = models.DateTimeField(auto_now_add=True)
    deadline = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    # The assignment's id on the crowd platform (MTurk's AssignmentId).
    external_id = models.CharField(max_length=64, null=True, blank=True, unique=True)
    feedback = models.CharField(max_length=1024, blank=True)
    # Answers ({document id: answer}) waiting for the crowd platform to confirm the assignment
    # (annotation.services.crowd.provisional): they count only once confirmed, when they become
    # judgments and this is cleared. Pending while "claimed"; kept, never counted, once "expired".
    provisional_answers = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hit", "worker"], condition=~Q(status="expired"), name="assignment_one_live_per_worker"
            ),
            models.UniqueConstraint(
                fields=["hit", "slot"],
                condition=Q(status__in=["claimed", "submitted", "approved"]),
                name="assignment_slot_unique_live",
            ),
            models.CheckConstraint(condition=Q(slot__lt=3), name="assignment_slot_range"),
        ]
        indexes = [models.Index(fields=["status", "deadline"])]


class Judgment(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="judgments")
    # NULL: the worker answered "unsure" (only where Topic.allow_unsure); it fills the worker's place but is
    # left out of the majority (annotation.services.crowd.labels).
    relevant = models.BooleanField(null=True)
    # Topic sets only: the class position chosen (0: none of these); NULL there means "unsure". Binary
    # topics leave it NULL; a judgment never carries both a relevance and a class.
    choice = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(relevant__isnull=True) | Q(choice__isnull=True), name="judgment_relevant_or_choice"
            ),
            models.UniqueConstraint(fields=["assignment", "document"], name="judgment_once_per_assignment"),
            models.UniqueConstraint(fields=["topic", "worker", "document"], name="judgment_once_per_worker"),
        ]
        indexes = [models.Index(fields=["topic", "document"])]


class Label(models.Model):
    """The aggregated label of a judged document for a topic."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="labels")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    votes_relevant = models.PositiveSmallIntegerField(default=0)
    votes_total = models.PositiveSmallIntegerField(default=0)
    # "Unsure" answers: counted in votes_total, never in the majority (taken over the sure votes only).
    votes_unsure = models.PositiveSmallIntegerField(default=0)
    majority = models.BooleanField(null=True)
    # P(relevant) from Dawid–Skene when the topic asks for it.
    posterior = models.FloatField(null=True, blank=True)
    # Known answer for gold documents.
    gold = models.BooleanField(null=True, blank=True)
    # Topic sets only: votes per class position 0..M (0: none of these; unsure votes in votes_unsure), the
    # class most votes chose once complete (NULL: tied or no sure vote), the Dawid–Skene posterior per
    # class when the topic asks for it, and the known class of a gold document.
    class_votes = models.JSONField(default=list, blank=True)
    majority_class = models.PositiveSmallIntegerField(null=True, blank=True)
    class_posterior = models.JSONField(null=True, blank=True)
    gold_class = models.PositiveSmallIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "document"], name="label_unique"),
            models.CheckConstraint(condition=Q(votes_relevant__lte=F("votes_total")), name="label_votes_valid"),
            models.CheckConstraint(
                condition=Q(votes_total__gte=F("votes_relevant") + F("votes_unsure")), name="label_votes_unsure_valid"
            ),
        ]


class CorpusUpload(Job):
    """A corpus file uploaded in the browser, imported by a task; the page polls this row.

    Status, times and the failure's detail are those of every background job (core.jobs.Job); its progress
    and message keep their names (`progress`, `error_problem`), and `summary` held the heartbeat before 0017.
    """

    job_processed_field = "progress"
    job_message_field = "error_problem"
    job_legacy_heartbeat_field = "summary"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        RUNNING = "running", "Importing"
        DONE = "done", "Imported"
        FAILED = "failed", "Failed"

    corpus_name = models.CharField(max_length=200)
    original_name = models.CharField(max_length=255)
    # Where the upload was streamed to, relative to MEDIA_ROOT.
    file_path = models.CharField(max_length=500)
    file_size = models.PositiveBigIntegerField(default=0)
    id_field = models.CharField(max_length=100, default="id")
    text_fields = models.JSONField(default=list)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Records read so far, reported by the importer's progress callback.
    progress = models.PositiveBigIntegerField(default=0)
    error_line = models.PositiveIntegerField(null=True, blank=True)
    error_problem = models.TextField(blank=True)
    summary = models.JSONField(default=dict, blank=True)
    corpus = models.ForeignKey(Corpus, null=True, blank=True, on_delete=models.SET_NULL, related_name="uploads")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "running", "done", "failed"]), name="corpus_upload_status_valid"
            ),
        ]


class CorpusDeletion(Job):
    """A corpus being deleted by a task, in batches (issue 25; annotation/services/corpora/corpus_delete.py): the
    admin's list of deletions shows "deleting… n of m documents" and, when it failed, why.

    The corpus row goes last, so `corpus` becomes null when the deletion is done; its id and name are kept here.
    A deletion cut short (a killed worker, the stuck sweep) is run again from the admin and continues where it
    stopped. Status, progress (`processed` documents of `total`), times and the failure's message are those of
    every background job (core.jobs.Job).
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        RUNNING = "running", "Deleting"
        DONE = "done", "Deleted"
        FAILED = "failed", "Failed"

    corpus = models.ForeignKey(Corpus, null=True, blank=True, on_delete=models.SET_NULL, related_name="deletions")
    corpus_pk = models.PositiveBigIntegerField()
    corpus_name = models.CharField(max_length=200)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Documents deleted so far by this run (`total`: the documents the corpus had when it began).
    processed = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "running", "done", "failed"]), name="corpus_deletion_status_valid"
            ),
            models.CheckConstraint(condition=Q(processed__lte=F("total")) | Q(total=0),
                                   name="corpus_deletion_progress_valid"),
        ]

    def __str__(self) -> str:
        return f"deletion of corpus {self.corpus_name} ({self.corpus_pk})"


class ModelJudgeRun(Job):
    """A model judge's run over documents of a binary pair topic (issue 28): a crowd member of its own kind.

    The judge reads the topic's instructions and each document and answers a class and P(relevant); its answers
    (ModelJudgment) are stored apart from human judgments: they never fill an assignment slot, never count as
    votes, never reach a Label.  ``kind`` "endpoint": an OpenAI-compatible chat endpoint (``model`` and
    ``base_url`` recorded, never the key); "classifier": a scores classifier's stored scores used as P(relevant).
    ``plan`` is the documents asked per region ({"A12": 1500, ...}); ``seed`` draws them (the topic's human
    samples first, then a simple random sample of the rest of the region).  ``cost_confirmed`` is the quote the
    analyst confirmed; tokens and ``cost_spent`` are counted as answers arrive.  Status and progress are those
    of every background job (core.jobs.Job).
    """

    class Kind(models.TextChoices):
        ENDPOINT = "endpoint", "Chat endpoint (OpenAI-compatible)"
        CLASSIFIER = "classifier", "Scores classifier"

    Status = BuildStatus

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="judge_runs")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.ENDPOINT)
    model = models.CharField(max_length=200, blank=True, default="")
    base_url = models.CharField(max_length=500, blank=True, default="")
    classifier = models.ForeignKey(Classifier, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    plan = models.JSONField(default=dict)
    seed = models.BigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    processed = models.PositiveBigIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    tokens_quoted = models.PositiveBigIntegerField(default=0)
    cost_confirmed = models.DecimalField(max_digits=12, decimal_places=4, default=Decimal("0"))
    cost_spent = models.DecimalField(max_digits=12, decimal_places=4, default=Decimal("0"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "running", "done", "failed"]), name="model_judge_run_status_valid"
            ),
            models.CheckConstraint(condition=Q(kind__in=["endpoint", "classifier"]), name="model_judge_run_kind_valid"),
            models.CheckConstraint(condition=Q(cost_spent__gte=0), name="model_judge_run_cost_nonnegative"),
        ]


class ModelJudgment(models.Model):
    """One document's answer from a model judge run: never a Judgment, never a vote (issue 28).

    ``status`` pending → ok | failed; a failed answer keeps its ``reason`` ("timeout", "rate-limited",
    "server-error", "malformed", "unreachable", "no-score") and ``attempts``; it is left out of every estimate.
    ``region`` is the pair region the document was drawn from."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        OK = "ok", "Answered"
        FAILED = "failed", "Failed"

    run = models.ForeignKey(ModelJudgeRun, on_delete=models.CASCADE, related_name="judgments")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    region = models.CharField(max_length=4, choices=Region.choices)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    relevant = models.BooleanField(null=True, blank=True)
    probability = models.FloatField(null=True, blank=True)
    reason = models.CharField(max_length=32, blank=True, default="")
    detail = models.TextField(blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "document"], name="model_judgment_once_per_run"),
            models.CheckConstraint(condition=Q(status__in=["pending", "ok", "failed"]), name="model_judgment_status_valid"),
            models.CheckConstraint(
                condition=Q(probability__isnull=True) | (Q(probability__gte=0) & Q(probability__lte=1)),
                name="model_judgment_probability_range",
            ),
            models.CheckConstraint(
                condition=~Q(status="ok") | Q(relevant__isnull=False, probability__isnull=False),
                name="model_judgment_ok_has_answer",
            ),
        ]
        indexes = [models.Index(fields=["run", "status"]), models.Index(fields=["topic", "document"])]


class ExternalCorpusSource(models.Model):
    """A corpus that stays in the team's engine (issue 29): where its documents are, and the state last seen.

    Only the sampled documents are copied into Document rows of ``corpus`` (so a corpus with a source holds its
    sample, not its documents); sizes, region counts and draws run in the engine
    (annotation.services.corpora.backends). ``connection_env`` names an environment variable (e.g. a Spark
    master URL or a storage credential) read at use: no secret is stored here.
    """

    class Engine(models.TextChoices):
        DUCKDB = "duckdb", "DuckDB over Parquet files"
        SPARK = "spark", "Apache Spark over Parquet files"

    corpus = models.OneToOneField(Corpus, on_delete=models.CASCADE, related_name="external_source")
    engine = models.CharField(max_length=16, choices=Engine.choices)
    location = models.CharField(max_length=1000)
    connection_env = models.CharField(max_length=100, blank=True, default="")
    id_field = models.CharField(max_length=200, default="id")
    title_field = models.CharField(max_length=200, blank=True, default="title")
    text_fields = models.JSONField(default=list)
    document_count = models.PositiveBigIntegerField(default=0)
    snapshot = models.CharField(max_length=100, blank=True, default="")
    # [[file name, size, mtime_ns], ...] of the snapshot: explains what changed when the corpus changes.
    snapshot_manifest = models.JSONField(default=list, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(engine__in=["duckdb", "spark"]), name="external_source_engine_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.corpus} ({self.engine})"


class ExternalDraw(models.Model):
    """The corpus state a draw of an external corpus measured: its snapshot at the draw, and at the plan."""

    draw = models.OneToOneField(SampleDraw, on_delete=models.CASCADE, related_name="external")
    engine = models.CharField(max_length=16)
    snapshot = models.CharField(max_length=100)
    plan_snapshot = models.CharField(max_length=100, blank=True, default="")
    # The region as the engine evaluated it (classifier definitions, membership, stratum): what was drawn from.
    region_query = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)


class Adjudication(models.Model):
    """An analyst's final answer for a split or disputed document of a single topic (issue 27).

    Estimates read it as they read gold (estimation.services.inputs): the document's label is this answer,
    counted as certain. Written only by annotation.services.crowd.adjudication.document_adjudicate.
    """

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="adjudications")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="adjudications")
    relevant = models.BooleanField()
    reason = models.TextField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "document"], name="adjudication_one_per_document"),
            models.CheckConstraint(condition=~Q(reason=""), name="adjudication_has_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.topic_id}/{self.document_id}: {'relevant' if self.relevant else 'not relevant'}"


class WorkerBonus(models.Model):
    """A bonus for one worker of a topic (issue 27): confirmed with its cost, paid exactly once.

    Written only by annotation.services.crowd.bonuses (bonus_grant, bonus_pay). ``request_token`` is made when
    the row is created and sent as MTurk's UniqueRequestToken, so a retried SendBonus never pays twice; the
    caller's ``idempotency_key`` makes a second grant of the same batch impossible (one row per topic, worker
    and key). The built-in crowd moves no money: its bonuses are recorded as granted, for the operator's payroll.
    """

    class Rule(models.TextChoices):
        PER_WORKER = "per_worker", "A fixed amount per worker"
        PER_JUDGMENT = "per_judgment", "An amount per judgment"

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting to be paid"
        PAID = "paid", "Paid"
        GRANTED = "granted", "Granted (paid outside the app)"
        FAILED = "failed", "Failed"

    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="bonuses")
    worker = models.ForeignKey(Worker, on_delete=models.PROTECT, related_name="bonuses")
    rule = models.CharField(max_length=16, choices=Rule.choices)
    # The rule's amount (per worker, or per judgment) and what this worker gets: amount, or amount × judgments.
    rate = models.DecimalField(max_digits=8, decimal_places=2)
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    fee = models.DecimalField(max_digits=10, decimal_places=2, default=Decimal("0.00"))
    judgments = models.PositiveIntegerField(default=0)
    reason = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    platform = models.CharField(max_length=16)
    idempotency_key = models.CharField(max_length=200)
    request_token = models.CharField(max_length=64, unique=True)
    # The platform's assignment the bonus was sent against (MTurk requires one).
    assignment_external_id = models.CharField(max_length=64, blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["topic", "worker", "idempotency_key"], name="worker_bonus_once_per_key"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="worker_bonus_amount_positive"),
            models.CheckConstraint(condition=~Q(reason=""), name="worker_bonus_has_reason"),
            models.CheckConstraint(condition=~Q(idempotency_key=""), name="worker_bonus_has_key"),
            models.CheckConstraint(condition=Q(status__in=["pending", "paid", "granted", "failed"]),
                                   name="worker_bonus_status_valid"),
        ]
        indexes = [models.Index(fields=["status", "id"])]

    def __str__(self) -> str:
        return f"{self.topic_id}/{self.worker_id}: ${self.amount} ({self.status})"
