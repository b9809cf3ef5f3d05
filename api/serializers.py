"""Request and response shapes. Validation here mirrors the pages' forms (annotation/forms.py,
estimation/views/certification.py) so bad input is a 400 with field messages, never a database error."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation import limits
from annotation.models import (
    Classifier,
    ClassifierBuild,
    Corpus,
    CorpusUpload,
    Hit,
    Judgment,
    Router,
    RouterBuild,
    SampleDraw,
    Topic,
)
from annotation.services.classifiers import keywords
from annotation.services.classifiers.kinds import kinds_uploaded
from annotation.services.classifiers.router_builds import router_build_bad_lines
from annotation.services.crowd.workers import worker_public_id
from api.models import ApiToken
from estimation import limits as plan_limits
from estimation.models import CertificationPlan
from estimation.services.certification_plans import DEFAULT_DELTA1_BAND

HALF_WIDTH_MIN, HALF_WIDTH_MAX = limits.HALF_WIDTH
MARGIN_MIN, MARGIN_MAX = limits.MARGIN
MAX_COMPLEMENT = limits.COMPLEMENT_MAX


class ProblemSerializer(serializers.Serializer):
    """RFC 9457 problem details; `errors` holds field messages of a validation error."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    errors = serializers.DictField(required=False, child=serializers.ListField(child=serializers.CharField()))


# --------------------------------------------------------------------------- account


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    roles = serializers.ListField(child=serializers.CharField())
    permissions = serializers.ListField(child=serializers.CharField())
    token = serializers.CharField(allow_null=True, help_text="Name of the token used, null for a session.")


# The ModelSerializers below are output only (requests have their own serializers): their fields are read-only,
# so the schema carries no integer range that depends on the database backend (PostgreSQL's are 32-bit).


class TokenSerializer(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created_at", "last_used_at", "revoked_at"]
        read_only_fields = fields


# --------------------------------------------------------------------------- corpora


class CorpusSerializer(serializers.ModelSerializer):
    class Meta:
        model = Corpus
        fields = ["id", "name", "description", "document_count", "created_at"]
        read_only_fields = fields


class UploadSerializer(serializers.ModelSerializer):
    class Meta:
        model = CorpusUpload
        fields = ["id", "corpus_name", "original_name", "file_size", "id_field", "text_fields", "status", "progress",
                  "error_line", "error_problem", "summary", "corpus", "created_at", "finished_at"]
        read_only_fields = fields


def _text_fields(value: str) -> list[str]:
    fields = [f.strip() for f in value.split(",") if f.strip()]
    if not fields:
        raise serializers.ValidationError("Name at least one text field.")
    return fields


class ImportOptionsSerializer(serializers.Serializer):
    """Query parameters of a corpus import (both for a multipart upload and for a JSON Lines body)."""

    corpus_name = serializers.CharField(max_length=200, required=False,
                                        help_text="A new name creates a corpus; an existing one adds to it. "
                                                  "Required on /corpora/, ignored on /corpora/{id}/imports/.")
    id_field = serializers.CharField(max_length=100, default="id")
    text_fields = serializers.CharField(max_length=300, default="title,body",
                                        help_text="Comma-separated: the first is the title, the others the text.")

    def validate_corpus_name(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Enter a name.")
        return value.strip()

    def validate_id_field(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Name the id field.")
        return value.strip()

    def validate_text_fields(self, value: str) -> list[str]:
        return _text_fields(value)


class CorpusFileSerializer(serializers.Serializer):
    file = serializers.FileField(help_text=".jsonl, .csv, or either gzipped (.gz)")
    corpus_name = serializers.CharField(max_length=200, required=False)
    id_field = serializers.CharField(max_length=100, required=False)
    text_fields = serializers.CharField(max_length=300, required=False)


# --------------------------------------------------------------------------- classifiers


class ClassifierSerializer(serializers.ModelSerializer):
    corpus_document_count = serializers.IntegerField(source="corpus.document_count", read_only=True)
    not_retrieved_count = serializers.SerializerMethodField()

    class Meta:
        model = Classifier
        fields = ["id", "corpus", "name", "kind", "definition", "fingerprint", "retrieved_count",
                  "corpus_document_count", "not_retrieved_count", "frozen_reason", "archived_at", "created_at"]
        read_only_fields = fields

    def get_not_retrieved_count(self, obj: Classifier) -> int:
        return max(0, obj.corpus.document_count - obj.retrieved_count)


class ClassifierResultSerializer(serializers.Serializer):
    classifier = ClassifierSerializer()
    read = serializers.IntegerField(help_text="distinct ids read")
    unknown_count = serializers.IntegerField(help_text="ids that are no document of the corpus")
    unknown_examples = serializers.ListField(child=serializers.CharField())


class KeywordsCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    terms = serializers.ListField(child=serializers.CharField(max_length=200), min_length=1, max_length=500)
    # Needed (400 with the reason when absent: the service reads no field by default); optional here only so that
    # the refusal is the service's own sentence, the same on the page, the API and the CLI.
    fields = serializers.ListField(child=serializers.ChoiceField(choices=list(keywords.FIELDS)), required=False,
                                   min_length=1, help_text="Which fields to search. Needed: none is read by default "
                                                           "(400 without it).")


class NameSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)


class IdsFileSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="One external id per line (UTF-8).")
    name = serializers.CharField(max_length=200)


class ScoresQuerySerializer(NameSerializer):
    threshold = serializers.FloatField()


class ScoresFileSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="CSV `id,score`, header optional.")
    name = serializers.CharField(max_length=200)
    threshold = serializers.FloatField()


class RetrievedFileSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="A serialized 32-bit Roaring bitmap of integer external ids, or a Parquet "
                                           "file with a column of external ids.")
    name = serializers.CharField(max_length=200)
    format = serializers.ChoiceField(choices=["auto", "roaring", "parquet"], default="auto",
                                     help_text="auto recognises Parquet by its first bytes (PAR1); anything else is "
                                               "read as a bitmap.")
    column = serializers.CharField(max_length=200, default="id", help_text="Parquet: the column of external ids.")

    def validate_name(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Enter a name.")
        return value.strip()


class ThresholdSerializer(serializers.Serializer):
    threshold = serializers.FloatField()


# --------------------------------------------------------------------------- topics


class TopicSerializer(serializers.ModelSerializer):
    c1 = serializers.IntegerField(source="pair.c1_id", read_only=True, allow_null=True)
    c2 = serializers.IntegerField(source="pair.c2_id", read_only=True, allow_null=True)
    extra_classifiers = serializers.SerializerMethodField()

    class Meta:
        model = Topic
        fields = ["id", "name", "kind", "corpus", "status", "instructions", "seed_terms", "target_recall", "confidence",
                  "crowd", "aggregator", "hit_size", "reward_per_hit", "budget", "min_gold_accuracy", "allow_unsure", "c1", "c2",
                  "extra_classifiers", "scorer", "archived_at", "created_at"]
        read_only_fields = fields

    def get_extra_classifiers(self, obj: Topic) -> list[int]:
        return [link.classifier_id for link in obj.extra_classifiers.all()]


class TopicSettingsSerializer(serializers.Serializer):
    """What may change after creation (annotation/forms.py TopicSettingsForm); absent fields keep their value."""

    instructions = serializers.CharField(required=False, allow_blank=True, max_length=20_000)
    target_recall = serializers.FloatField(required=False, min_value=limits.TARGET_RECALL[0], max_value=limits.TARGET_RECALL[1])
    confidence = serializers.FloatField(required=False, min_value=limits.CONFIDENCE[0], max_value=limits.CONFIDENCE[1])
    crowd = serializers.ChoiceField(required=False, choices=Topic.Crowd.choices)
    aggregator = serializers.ChoiceField(required=False, choices=Topic.Aggregator.choices)
    hit_size = serializers.IntegerField(required=False, min_value=limits.HIT_SIZE[0], max_value=limits.HIT_SIZE[1])
    reward_per_hit = serializers.DecimalField(required=False, max_digits=limits.REWARD_DIGITS, decimal_places=2,
                                              min_value=limits.MONEY_MIN)
    budget = serializers.DecimalField(required=False, allow_null=True, max_digits=limits.BUDGET_DIGITS, decimal_places=2,
                                      min_value=limits.MONEY_MIN)
    allow_unsure = serializers.BooleanField(
        required=False, help_text="Offer annotators an “unsure” answer (judgments then carry relevant: null); "
                                  "may change at any time, new HITs follow it.")
    scorer = serializers.PrimaryKeyRelatedField(
        queryset=Classifier.objects.defer("retrieved_bitmap"), required=False, allow_null=True,
        help_text="A classifier of the topic's corpus that stores scores (kind scores or trained): the documents "
                  "neither classifier of the pair retrieved are then sampled by score strata. null clears it; it "
                  "cannot change once those documents have been sampled.")


class TopicCreateSerializer(TopicSettingsSerializer):
    corpus = serializers.PrimaryKeyRelatedField(queryset=Corpus.objects.defer("documents_bitmap"))
    name = serializers.CharField(max_length=200)
    c1 = serializers.PrimaryKeyRelatedField(queryset=Classifier.objects.defer("retrieved_bitmap"))
    c2 = serializers.PrimaryKeyRelatedField(queryset=Classifier.objects.defer("retrieved_bitmap"))
    extra = serializers.PrimaryKeyRelatedField(queryset=Classifier.objects.defer("retrieved_bitmap"), many=True,
                                               required=False)
    seed_terms = serializers.ListField(child=serializers.CharField(max_length=200), required=False, max_length=200)


class PlanQuerySerializer(serializers.Serializer):
    half_width = serializers.FloatField(default=0.05, min_value=HALF_WIDTH_MIN, max_value=HALF_WIDTH_MAX)
    margin = serializers.FloatField(required=False, min_value=MARGIN_MIN, max_value=MARGIN_MAX)


COMPLEMENT_HELP = ("The dependence check's total of documents neither classifier retrieved; absent: the plan's "
                   "size (the check is part of the default plan), 0: none.")


class QuoteQuerySerializer(serializers.Serializer):
    half_width = serializers.FloatField(default=0.05, min_value=HALF_WIDTH_MIN, max_value=HALF_WIDTH_MAX)
    complement = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_COMPLEMENT,
                                          help_text=COMPLEMENT_HELP)


class QuotePartSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="A12, B1, B2, N (the dependence check; N-1, N-2, … per score stratum "
                                          "when the topic has a scorer), or further-1, further-2, …")
    kind = serializers.ChoiceField(choices=["pair", "dependence_check", "further"])
    label = serializers.CharField()
    documents = serializers.IntegerField()
    at_most = serializers.BooleanField(help_text="True when the count is an upper bound (a further classifier's "
                                                 "precision sample, judged once where it overlaps the pair's).")
    cost = serializers.DecimalField(max_digits=12, decimal_places=2,
                                    help_text="The part's documents at the per-document rate.")
    text = serializers.CharField(help_text="The part in words, as every page and the CLI show it.")


class QuoteSerializer(serializers.Serializer):
    half_width = serializers.FloatField()
    complement = serializers.IntegerField()
    regions = serializers.DictField(child=serializers.IntegerField())
    strata = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="With a scorer: region N's new documents per score stratum key (their "
                                             "sum is regions.N); empty otherwise.")
    further = serializers.DictField(child=serializers.IntegerField())
    expected_half_width = serializers.DictField(
        child=serializers.FloatField(allow_null=True), allow_null=True,
        help_text="With a scorer: the half-width of each recall's design-based interval expected at the joint plan "
                  "({\"r1\", \"r2\"}), when the quote draws it; null otherwise.")
    documents = serializers.IntegerField()
    judgments = serializers.IntegerField()
    hits = serializers.IntegerField()
    exact = serializers.BooleanField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=2)
    committed = serializers.DecimalField(max_digits=12, decimal_places=2)
    budget = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    remaining = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    fingerprint = serializers.CharField()
    parts = QuotePartSerializer(many=True, help_text="The quote itemised: pair regions, the dependence check, "
                                                     "further classifiers.")
    documents_text = serializers.CharField(help_text="e.g. 'at most 329 documents' ('at most' only for a bound).")
    cost_text = serializers.CharField(help_text="e.g. 'at most $19.80'.")
    summary = serializers.CharField(help_text="The quote in one sentence, as the pages and the CLI say it.")


class LaunchSerializer(serializers.Serializer):
    half_width = serializers.FloatField(min_value=HALF_WIDTH_MIN, max_value=HALF_WIDTH_MAX)
    complement = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=MAX_COMPLEMENT,
                                          help_text=COMPLEMENT_HELP)
    confirm_cost = serializers.DecimalField(max_digits=12, decimal_places=2, min_value=Decimal("0"),
                                            help_text="The cost of the quote (GET …/quote/) you agree to spend.")
    confirm_fingerprint = serializers.CharField(required=False, max_length=2000,
                                                help_text="Optional: the quote's fingerprint, for an exact match.")


class LaunchResultSerializer(serializers.Serializer):
    topic = serializers.IntegerField()
    status = serializers.CharField()
    quote = QuoteSerializer()


class ProgressSerializer(serializers.Serializer):
    status = serializers.CharField()
    hits = serializers.IntegerField()
    hits_open = serializers.IntegerField()
    hits_complete = serializers.IntegerField()
    judgments_done = serializers.IntegerField()
    judgments_planned = serializers.IntegerField()
    judgments_outstanding = serializers.IntegerField()
    rewards_paid = serializers.DecimalField(max_digits=12, decimal_places=2)
    budget = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    latest_report_version = serializers.IntegerField(allow_null=True)


class DrawSerializer(serializers.ModelSerializer):
    class Meta:
        model = SampleDraw
        fields = ["id", "purpose", "region", "classifier", "stratum_key", "seed", "region_size", "requested", "drawn",
                  "created_at"]
        read_only_fields = fields


class HitSerializer(serializers.ModelSerializer):
    documents = serializers.SerializerMethodField()

    class Meta:
        model = Hit
        fields = ["id", "status", "reward", "max_assignments", "completed_assignments", "created_at", "documents"]
        read_only_fields = fields

    def get_documents(self, obj: Hit) -> list[dict[str, Any]]:
        return [{"document": item.document_id, "external_id": item.document.external_id, "position": item.position,
                 "is_gold": item.is_gold} for item in obj.items.all()]


class JudgmentSerializer(serializers.ModelSerializer):
    hit = serializers.IntegerField(source="assignment.hit_id", read_only=True)
    external_id = serializers.CharField(source="document.external_id", read_only=True)
    worker_public_id = serializers.SerializerMethodField(
        help_text="The worker's id as the worker-quality page and the raw judgments export show it: the platform's "
                  "worker id, else local- and a keyed hash.")

    class Meta:
        model = Judgment
        fields = ["id", "hit", "assignment", "document", "external_id", "worker", "worker_public_id", "relevant",
                  "choice", "created_at"]
        read_only_fields = fields
        extra_kwargs = {"choice": {"help_text": "Topic sets: the class position chosen (0 = none of these); null "
                                                "for an unsure answer and for binary topics."}}

    def get_worker_public_id(self, obj: Judgment) -> str:
        return worker_public_id(worker_id=obj.worker_id, external_id=obj.worker.external_id)


# --------------------------------------------------------------------------- topic sets (seed 002)

MAX_TOPIC_SET_DOCUMENTS = limits.TOPIC_SET_DOCUMENTS[1]


class TopicSetClassInSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(max_length=20_000, required=False, allow_blank=True, default="",
                                        help_text="What annotators read under the class's name.")


class TopicSetCreateSerializer(serializers.Serializer):
    corpus = serializers.PrimaryKeyRelatedField(queryset=Corpus.objects.defer("documents_bitmap"))
    name = serializers.CharField(max_length=200)
    classes = TopicSetClassInSerializer(many=True, min_length=2, max_length=20,
                                        help_text="The M topics (2 to 20), in the order of their positions 1..M; "
                                                  "“None of these” (position 0) is added for you.")
    instructions = serializers.CharField(required=False, allow_blank=True, max_length=20_000, default="")
    allow_unsure = serializers.BooleanField(required=False, default=False)
    aggregator = serializers.ChoiceField(required=False, choices=Topic.Aggregator.choices,
                                         default=Topic.Aggregator.MAJORITY)
    hit_size = serializers.IntegerField(required=False, min_value=limits.HIT_SIZE[0], max_value=limits.HIT_SIZE[1], default=5)
    reward_per_hit = serializers.DecimalField(required=False, allow_null=True, max_digits=limits.REWARD_DIGITS,
                                              decimal_places=2, min_value=limits.MONEY_MIN)
    budget = serializers.DecimalField(required=False, allow_null=True, max_digits=limits.BUDGET_DIGITS, decimal_places=2,
                                      min_value=limits.MONEY_MIN)


class TopicSetClassSerializer(serializers.Serializer):
    position = serializers.IntegerField(help_text="1..M; 0 is “None of these”")
    name = serializers.CharField()
    description = serializers.CharField()


class RouterSerializer(serializers.ModelSerializer):
    class Meta:
        model = Router
        fields = ["id", "topic", "name", "kind", "definition", "predicted_counts", "fingerprint", "archived_at",
                  "created_at"]
        read_only_fields = fields
        extra_kwargs = {"predicted_counts": {"help_text": "Documents of the corpus per predicted class position "
                                                         "0..M (0: none of these)."}}


class RouterBuildLineSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    problem = serializers.CharField()


class RouterBuildSerializer(serializers.ModelSerializer):
    """A router being built by a task (annotation RouterBuild): poll `url` until `status` is done or failed."""

    url = serializers.SerializerMethodField(help_text="Where to poll this build (also the 202's `Location`).")
    # Not an enum: Router's `kind` enum is the one schema component for upload/keywords (a second one collides).
    kind = serializers.CharField(read_only=True, help_text="The router's kind: `upload` or `keywords`.")
    router_id = serializers.IntegerField(allow_null=True, read_only=True,
                                         help_text="The router's id once the build is done, else null.")
    router = serializers.SerializerMethodField(help_text="The router once the build is done, else null.")
    lines = serializers.SerializerMethodField(help_text="A failed upload's bad lines found by the task "
                                                        "(at most the first 100; `error` says how many more).")

    class Meta:
        model = RouterBuild
        fields = ["id", "url", "topic", "name", "kind", "status", "processed", "total", "error", "lines",
                  "router_id", "router", "created_at", "started_at", "finished_at"]
        read_only_fields = fields
        extra_kwargs = {"processed": {"help_text": "Documents scanned (keywords) or lines read (upload) so far."},
                        "total": {"help_text": "Documents of the corpus (keywords) or lines of the file (upload)."},
                        "error": {"help_text": "Why the build failed (empty otherwise); an upload's bad lines "
                                               "follow its first line, one per line."}}

    def get_url(self, build: RouterBuild) -> str:
        return reverse("api:router_build", args=[build.pk])

    @extend_schema_field(RouterSerializer(allow_null=True))
    def get_router(self, build: RouterBuild) -> dict[str, Any] | None:
        if build.status != RouterBuild.Status.DONE or build.router is None:
            return None
        return dict(RouterSerializer(build.router).data)

    @extend_schema_field(RouterBuildLineSerializer(many=True))
    def get_lines(self, build: RouterBuild) -> list[dict[str, Any]]:
        return router_build_bad_lines(build=build)


class SampleProgressSerializer(serializers.Serializer):
    drawn = serializers.IntegerField(help_text="documents in the uniform sample")
    judged = serializers.IntegerField(help_text="of them, with all three judgments")
    decided = serializers.IntegerField(help_text="of them, with a majority class (or a Dawid–Skene posterior)")
    hits = serializers.IntegerField()
    judgments_done = serializers.IntegerField()
    judgments_planned = serializers.IntegerField()
    rewards_paid = serializers.DecimalField(max_digits=12, decimal_places=2)


class TopicSetSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField()
    corpus = serializers.IntegerField()
    status = serializers.CharField()
    instructions = serializers.CharField()
    allow_unsure = serializers.BooleanField()
    aggregator = serializers.CharField()
    crowd = serializers.CharField()
    hit_size = serializers.IntegerField()
    reward_per_hit = serializers.DecimalField(max_digits=8, decimal_places=2)
    budget = serializers.DecimalField(max_digits=10, decimal_places=2, allow_null=True)
    class_names = serializers.ListField(child=serializers.CharField(),
                                        help_text="Indexed by class position: [0] “None of these”, then 1..M.")
    classes = TopicSetClassSerializer(many=True)
    routers = RouterSerializer(many=True, help_text="Including archived ones (archived_at set).")
    sample = SampleProgressSerializer()
    archived_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class RouterCsvFileSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="CSV with a header `id,class`: id = a document's external id, class = a "
                                           "class name or position; 0, `none` or empty = none of these.")
    name = serializers.CharField(max_length=200)


class RouterRuleSerializer(serializers.Serializer):
    terms = serializers.ListField(child=serializers.CharField(max_length=200), min_length=1, max_length=500)
    fields = serializers.ListField(child=serializers.ChoiceField(choices=list(keywords.FIELDS)), required=False,
                                   min_length=1, help_text="Which fields to search. Needed: none is read by default "
                                                           "(400 naming the rule without it).")


# "class" is a Python keyword: declared apart. A class position 1..M, or a class's name.
RouterRuleSerializer._declared_fields["class"] = serializers.CharField(
    max_length=200, help_text="The class position (1..M) or the class's name.")


class RouterKeywordsSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    rules = RouterRuleSerializer(many=True, min_length=1, max_length=200,
                                 help_text="In precedence order: a document goes to the class of the first rule "
                                           "that matches it, to none of these if no rule does.")


class TopicSetPreviewQuerySerializer(serializers.Serializer):
    documents = serializers.IntegerField(min_value=1, max_value=MAX_TOPIC_SET_DOCUMENTS,
                                         help_text="The TOTAL size of the uniform sample wanted; documents already "
                                                   "drawn count towards it.")


class TopicSetPreviewSerializer(serializers.Serializer):
    documents = serializers.IntegerField(help_text="the total asked for")
    new_documents = serializers.IntegerField()
    hits = serializers.IntegerField()
    judgments = serializers.IntegerField()
    cost = serializers.DecimalField(max_digits=12, decimal_places=2)
    committed = serializers.DecimalField(max_digits=12, decimal_places=2)
    budget = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    budget_left = serializers.DecimalField(max_digits=12, decimal_places=2, allow_null=True)
    refused = serializers.CharField(allow_null=True, help_text="Why the launch would be refused (budget), else null.")


class TopicSetLaunchSerializer(TopicSetPreviewQuerySerializer):
    confirm_cost = serializers.DecimalField(max_digits=12, decimal_places=2, min_value=Decimal("0"),
                                            help_text="The `cost` of the preview (GET …/preview/) you agree to spend.")
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**32 - 1,
                                    help_text="Optional: the random seed of the draw (recorded either way).")


class TopicSetLaunchResultSerializer(serializers.Serializer):
    topic = serializers.IntegerField()
    status = serializers.CharField(help_text="`launched`: the sample is drawn and its HITs are open")
    drawn = serializers.IntegerField(help_text="documents drawn by this launch")
    hits = serializers.IntegerField(help_text="HITs created by this launch")
    sample_size = serializers.IntegerField(help_text="documents in the uniform sample now")
    preview = TopicSetPreviewSerializer()


# --------------------------------------------------------------------------- reports and certification


class ReportVersionSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    judgments = serializers.IntegerField()
    inputs_checksum = serializers.CharField()


class CertificationPlanCreateSerializer(serializers.Serializer):
    classifier = serializers.PrimaryKeyRelatedField(queryset=Classifier.objects.defer("retrieved_bitmap"))
    metric = serializers.ChoiceField(choices=CertificationPlan.Metric.choices,
                                     default=CertificationPlan.Metric.PAIR_RECALL)
    target = serializers.FloatField(min_value=plan_limits.TARGET[0], max_value=plan_limits.TARGET[1])
    alpha = serializers.FloatField(default=0.05, min_value=plan_limits.ALPHA[0], max_value=plan_limits.ALPHA[1])
    power = serializers.FloatField(default=0.9, min_value=plan_limits.POWER[0], max_value=plan_limits.POWER[1])
    monitoring = serializers.BooleanField(default=False)
    delta1_low = serializers.FloatField(default=DEFAULT_DELTA1_BAND[0], min_value=plan_limits.DELTA1_LOW[0],
                                         max_value=plan_limits.DELTA1_LOW[1])
    delta1_high = serializers.FloatField(default=DEFAULT_DELTA1_BAND[1], min_value=plan_limits.DELTA1_HIGH[0],
                                          max_value=plan_limits.DELTA1_HIGH[1])
    attempts = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=plan_limits.ATTEMPTS[0],
        max_value=plan_limits.ATTEMPTS[1],
        help_text="Attempts declared for this classifier and metric (any target, any topic). Leave it out to take "
                  "the family's declaration (1 for a first attempt); locking beyond it is refused.")
    dependence_check = serializers.BooleanField(default=False)


class LockSerializer(serializers.Serializer):
    confirm_cost = serializers.DecimalField(max_digits=12, decimal_places=2, min_value=Decimal("0"),
                                            help_text="The plan's estimated_cost: locking draws the sample and "
                                                      "publishes paid HITs.")


class JsonObjectSerializer(serializers.Serializer):
    """A free-form JSON object (a report, a plan description): its members are documented in docs/api.md."""


class ClassifierBuildSerializer(serializers.ModelSerializer):
    """A classifier being built by a task (annotation ClassifierBuild): poll `url` until `status` is done or failed."""

    url = serializers.SerializerMethodField(help_text="Where to poll this build (also the 202's `Location`).")
    kind = serializers.CharField(read_only=True, help_text="`keywords`, `ids` or `scores`.")
    classifier_id = serializers.IntegerField(allow_null=True, read_only=True,
                                             help_text="The classifier's id once the build is done, else null.")
    retrieved = serializers.SerializerMethodField(help_text="Documents retrieved, once done.")
    warnings = serializers.SerializerMethodField(help_text="Coverage warnings (matches nothing, most of the corpus).")
    unknown_count = serializers.SerializerMethodField(help_text="Uploaded ids that are no document of the corpus.")
    unknown_examples = serializers.SerializerMethodField(help_text="The first few of them.")

    class Meta:
        model = ClassifierBuild
        fields = ["id", "url", "corpus", "name", "kind", "status", "processed", "total", "shards", "error",
                  "classifier_id", "retrieved", "warnings", "unknown_count", "unknown_examples", "created_at",
                  "started_at", "finished_at"]
        read_only_fields = fields
        extra_kwargs = {"processed": {"help_text": "Documents scanned (keywords) or ids read (uploads) so far."},
                        "total": {"help_text": "Documents of the corpus (keywords) or ids of the file (uploads)."},
                        "error": {"help_text": "Why the build failed (empty otherwise)."}}

    def get_url(self, build: ClassifierBuild) -> str:
        return reverse("api:classifier_build", args=[build.pk])

    def _details(self, build: ClassifierBuild) -> dict:
        return build.details if isinstance(build.details, dict) else {}

    def get_retrieved(self, build: ClassifierBuild) -> int | None:
        return self._details(build).get("retrieved")

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_warnings(self, build: ClassifierBuild) -> list[str]:
        return list(self._details(build).get("warnings") or [])

    def get_unknown_count(self, build: ClassifierBuild) -> int:
        return int(self._details(build).get("unknown_count") or 0)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_unknown_examples(self, build: ClassifierBuild) -> list[str]:
        return list(self._details(build).get("unknown_examples") or [])


class ClassifierBuildFileSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=[kind.kind for kind in kinds_uploaded()], help_text="`ids`: one external id per line; "
                                                                       "`scores`: CSV `id,score`.")
    file = serializers.FileField()
    threshold = serializers.FloatField(required=False, allow_null=True,
                                       help_text="Scores only: retrieved = score ≥ threshold.")
