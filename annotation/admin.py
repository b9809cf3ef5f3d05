"""Admin pages for inspecting corpora, classifiers, topics, samples, HITs and judgments.

Rows that carry measurements (documents, classifiers, samples, HITs, judgments,
labels) are created by the services, never by hand here: those pages are read-only,
and the few actions call services. Binary fields (bitmaps) are never rendered,
only summarised; document text is escaped like everything Django renders.
"""
import json

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html

from annotation import models
from annotation.services.corpora.corpus_delete import (
    DELETE_BATCH,
    corpus_delete_refusal,
    corpus_delete_start,
    corpus_deletion_retry,
)
from annotation.services.corpora.corpus_import import corpus_totals_refresh
from annotation.services.corpora.retrieved_sets import bitmap_from_bytes
from annotation.services.crowd.workers import worker_block, worker_unblock
from core.errors import ApplicationError


def bitmap_summary(data) -> str:
    data = bytes(data or b"")
    if not data:
        return "empty"
    return f"{len(bitmap_from_bytes(data)):,} documents ({len(data):,} bytes compressed)"


def pretty_json(value) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str))


class ReadOnlyAdmin(admin.ModelAdmin):
    """Visible to staff, changed only through the services."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(models.Corpus)
class CorpusAdmin(admin.ModelAdmin):
    list_display = ["name", "document_count", "created_at"]
    search_fields = ["name", "description"]
    fields = ["name", "description", "document_count", "documents", "created_at"]
    readonly_fields = ["document_count", "documents", "created_at"]
    actions = ["refresh_totals", "delete_in_background"]

    def has_add_permission(self, request):
        return False  # corpora come from an import

    # Deleting a corpus is a task, in batches (annotation/services/corpora/corpus_delete.py): Django's own
    # delete collected and listed every document in the request (60,000: a timeout, nothing deleted).
    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def get_deleted_objects(self, objs, request):
        """The confirmation page's summary, from counts kept on the corpus: no row of it is collected."""
        corpora = list(objs)
        protected = [refusal for corpus in corpora if (refusal := corpus_delete_refusal(corpus=corpus))]
        summary = [f"Corpus “{corpus.name}”: its {corpus.document_count:,} documents and its classifiers, deleted "
                   f"in the background, {DELETE_BATCH:,} documents at a time" for corpus in corpora]
        counts = {"corpora": len(corpora), "documents": sum(corpus.document_count for corpus in corpora)}
        return summary, counts, set(), protected

    def _delete_start(self, request, corpus) -> None:
        try:
            started = corpus_delete_start(corpus=corpus, user=request.user)
        except ApplicationError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return
        where = reverse("admin:annotation_corpusdeletion_change", args=[started.deletion.pk])
        if started.already_running:
            self.message_user(request, format_html(
                "Corpus “{}” is being deleted already: <a href=\"{}\">its progress</a>.", started.name, where),
                messages.WARNING)
            return
        self.message_user(request, format_html(
            "Deleting corpus “{}” ({} documents, {} classifiers) in the background: its document count falls as it "
            "goes, <a href=\"{}\">its deletion</a> shows the progress (or why it stopped), and the corpus leaves "
            "this list when it is done.", started.name, f"{started.documents:,}", f"{started.classifiers:,}", where),
            messages.SUCCESS)

    def delete_model(self, request, obj):
        self._delete_start(request, obj)

    def delete_queryset(self, request, queryset):
        for corpus in queryset.defer("documents_bitmap"):
            self._delete_start(request, corpus)

    def response_delete(self, request, obj_display, obj_id):
        return HttpResponseRedirect(reverse("admin:annotation_corpus_changelist"))

    @admin.action(description="Delete the selected corpora (in the background, in batches)", permissions=["delete"])
    def delete_in_background(self, request, queryset):
        self.delete_queryset(request, queryset)

    @admin.display(description="documents bitmap")
    def documents(self, obj):
        return bitmap_summary(obj.documents_bitmap)

    @admin.action(description="Recount documents and rebuild the corpus bitmap")
    def refresh_totals(self, request, queryset):
        for corpus in queryset:
            corpus_totals_refresh(corpus=corpus)
        self.message_user(request, f"Refreshed {queryset.count()} corpora.", messages.SUCCESS)


@admin.register(models.Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ["external_id", "corpus", "short_title"]
    list_filter = ["corpus"]
    list_select_related = ["corpus"]
    search_fields = ["=external_id", "title"]
    # Counting millions of rows for every search is not worth it.
    show_full_result_count = False
    fields = readonly_fields = ("corpus", "external_id", "title", "text", "metadata_json", "content_hash")

    @admin.display(description="title")
    def short_title(self, obj):
        return (obj.title[:80] + "…") if len(obj.title) > 80 else obj.title

    @admin.display(description="metadata")
    def metadata_json(self, obj):
        return pretty_json(obj.metadata)


@admin.register(models.Classifier)
class ClassifierAdmin(ReadOnlyAdmin):
    list_display = ["name", "corpus", "kind", "retrieved_count", "short_fingerprint", "created_at"]
    list_filter = ["kind", "corpus"]
    list_select_related = ["corpus"]
    search_fields = ["name", "fingerprint"]
    fields = readonly_fields = (
        "corpus", "name", "kind", "definition_json", "retrieved_count", "retrieved", "fingerprint", "frozen_reason",
        "created_at",
    )

    @admin.display(description="fingerprint")
    def short_fingerprint(self, obj):
        return obj.fingerprint[:12]

    @admin.display(description="definition")
    def definition_json(self, obj):
        return pretty_json(obj.definition)

    @admin.display(description="retrieved set")
    def retrieved(self, obj):
        return bitmap_summary(obj.retrieved_bitmap)


@admin.register(models.ClassifierScore)
class ClassifierScoreAdmin(ReadOnlyAdmin):
    list_display = ["classifier", "document", "score"]
    list_select_related = ["classifier", "document"]
    list_filter = ["classifier"]
    search_fields = ["=document__external_id"]
    show_full_result_count = False
    raw_id_fields = ["classifier", "document"]


class ClassifierPairInline(admin.StackedInline):
    model = models.ClassifierPair
    can_delete = False
    raw_id_fields = ["c1", "c2"]

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class TopicClassifierInline(ReadOnlyInline):
    model = models.TopicClassifier
    raw_id_fields = ["classifier"]


@admin.register(models.Topic)
class TopicAdmin(admin.ModelAdmin):
    """Settings and instructions can be edited; the corpus and pair are fixed at creation (create_topic)."""

    list_display = ["name", "corpus", "status", "crowd", "aggregator", "target_recall", "created_at"]
    list_filter = ["status", "crowd", "aggregator", "corpus"]
    list_select_related = ["corpus"]
    search_fields = ["name", "instructions"]
    # Status moves through the sampling services, not by hand.
    readonly_fields = ["corpus", "status", "created_at"]
    # Frozen once sampling starts (annotation.services.topics.topic_settings): HITs already exist.
    frozen_after_draft = ["crowd", "hit_size"]
    inlines = [ClassifierPairInline, TopicClassifierInline]

    def has_add_permission(self, request):
        return False

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and obj.status != models.Topic.Status.DRAFT:
            fields += [name for name in self.frozen_after_draft if name not in fields]
        return fields


@admin.register(models.SampleDraw)
class SampleDrawAdmin(ReadOnlyAdmin):
    list_display = [
        "id", "topic", "purpose", "region", "stratum_key", "region_size", "requested", "drawn", "seed", "created_at",
    ]
    list_filter = ["purpose", "region", "topic"]
    list_select_related = ["topic"]
    fields = readonly_fields = (
        "topic", "purpose", "region", "classifier", "stratum_key", "seed", "region_size", "requested",
        "drawn", "excluded", "created_at",
    )

    @admin.display(description="excluded ids")
    def excluded(self, obj):
        return bitmap_summary(getattr(obj, "excluded_bitmap", b""))


@admin.register(models.SampledDocument)
class SampledDocumentAdmin(ReadOnlyAdmin):
    list_display = ["document", "topic", "region", "inclusion_probability", "draw"]
    list_filter = ["region", "topic"]
    list_select_related = ["document", "topic", "draw"]
    search_fields = ["=document__external_id"]
    raw_id_fields = ["draw", "document"]


@admin.register(models.Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = ["__str__", "user", "platform", "external_id", "blocked", "blocked_reason", "created_at"]
    list_filter = ["blocked", "platform"]
    search_fields = ["user__username", "external_id"]
    fields = ["user", "platform", "external_id", "blocked", "blocked_reason", "created_at"]
    readonly_fields = ["user", "platform", "external_id", "blocked", "blocked_reason", "created_at"]
    actions = ["block", "unblock"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Block the selected workers")
    def block(self, request, queryset):
        for worker in queryset:
            worker_block(worker=worker, reason=f"blocked in the admin by {request.user.get_username()}")
        self.message_user(request, f"Blocked {queryset.count()} workers.", messages.SUCCESS)

    @admin.action(description="Unblock the selected workers")
    def unblock(self, request, queryset):
        for worker in queryset:
            worker_unblock(worker=worker)
        self.message_user(request, f"Unblocked {queryset.count()} workers.", messages.SUCCESS)


class HitItemInline(ReadOnlyInline):
    model = models.HitItem
    raw_id_fields = ["document"]
    fields = ["position", "document", "is_gold"]


class AssignmentInline(ReadOnlyInline):
    model = models.Assignment
    raw_id_fields = ["worker"]
    fields = ["slot", "worker", "status", "claimed_at", "deadline", "submitted_at"]
    readonly_fields = ["claimed_at"]


@admin.register(models.Hit)
class HitAdmin(ReadOnlyAdmin):
    list_display = ["id", "topic", "status", "completed_assignments", "max_assignments", "reward", "external_id", "created_at"]
    list_filter = ["status", "topic"]
    list_select_related = ["topic"]
    search_fields = ["=external_id"]
    inlines = [HitItemInline, AssignmentInline]


class MturkConfirmationFilter(admin.SimpleListFilter):
    """MTurk answers waiting for MTurk's confirmation, or never confirmed (annotation.services.crowd.provisional)."""

    title = "MTurk confirmation"
    parameter_name = "mturk_confirmation"

    def lookups(self, request, model_admin):
        return [("pending", "waiting for MTurk"), ("unverified", "never confirmed: not counted")]

    def queryset(self, request, queryset):
        provisional = queryset.filter(provisional_answers__isnull=False)
        if self.value() == "pending":
            return provisional.filter(status=models.Assignment.Status.CLAIMED)
        if self.value() == "unverified":
            return provisional.filter(status=models.Assignment.Status.EXPIRED)
        return queryset


@admin.register(models.Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ["id", "hit", "worker", "slot", "status", "mturk_confirmation", "claimed_at", "deadline",
                    "submitted_at"]
    list_filter = ["status", MturkConfirmationFilter]
    list_select_related = ["hit", "worker", "worker__user"]
    search_fields = ["=external_id", "worker__user__username", "worker__external_id"]
    raw_id_fields = ["hit", "worker"]

    @admin.display(description="MTurk confirmation")
    def mturk_confirmation(self, obj) -> str:
        if obj.provisional_answers is not None:
            if obj.status == models.Assignment.Status.EXPIRED:
                return "never confirmed: not counted"
            return "waiting for MTurk"
        return "counted" if obj.external_id and obj.judgments.exists() else "—"


@admin.register(models.Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    list_display = ["id", "topic", "document", "worker", "relevant", "created_at"]
    list_filter = ["relevant", "topic"]
    list_select_related = ["topic", "document", "worker", "worker__user"]
    search_fields = ["=document__external_id", "worker__user__username", "worker__external_id"]
    raw_id_fields = ["assignment", "document", "worker"]
    show_full_result_count = False


@admin.register(models.Label)
class LabelAdmin(ReadOnlyAdmin):
    list_display = ["topic", "document", "votes_relevant", "votes_total", "majority", "posterior", "gold", "updated_at"]
    list_filter = ["majority", "gold", "topic"]
    list_select_related = ["topic", "document"]
    search_fields = ["=document__external_id"]
    raw_id_fields = ["document"]


@admin.register(models.TopicClass)
class TopicClassAdmin(ReadOnlyAdmin):
    list_display = ("topic", "position", "name")
    list_filter = ("topic",)


@admin.register(models.Router)
class RouterAdmin(ReadOnlyAdmin):
    list_display = ("name", "topic", "kind", "created_at", "archived_at")
    list_filter = ("kind",)


@admin.register(models.RouterPrediction)
class RouterPredictionAdmin(ReadOnlyAdmin):
    list_display = ("router", "document", "predicted")
    raw_id_fields = ("router", "document")


@admin.register(models.CorpusUpload)
class CorpusUploadAdmin(ReadOnlyAdmin):
    list_display = ["id", "corpus_name", "original_name", "status", "progress", "error_line", "created_by", "created_at"]
    list_filter = ["status"]
    search_fields = ["corpus_name", "original_name"]


@admin.register(models.CorpusDeletion)
class CorpusDeletionAdmin(ReadOnlyAdmin):
    """Deletions are written by their task only (annotation/services/corpora/corpus_delete.py); a failed one
    (an error, or the stuck sweep after a killed worker) can be run again: it continues where it stopped."""

    list_display = ["id", "corpus_name", "corpus_pk", "status", "progress", "error_short", "created_by",
                    "created_at", "finished_at"]
    list_filter = ["status"]
    search_fields = ["corpus_name"]
    fields = readonly_fields = ("corpus_name", "corpus_pk", "corpus", "status", "progress", "error", "created_by",
                                "created_at", "started_at", "heartbeat_at", "finished_at")
    actions = ["run_again"]

    @admin.display(description="progress")
    def progress(self, obj):
        if obj.status == models.CorpusDeletion.Status.RUNNING:
            return f"deleting… {obj.processed:,} of {obj.total:,} documents"
        if obj.status == models.CorpusDeletion.Status.DONE:
            return f"deleted {obj.total:,} documents"
        if obj.status == models.CorpusDeletion.Status.FAILED:
            return f"stopped after {obj.processed:,} of {obj.total:,} documents"
        return f"waiting ({obj.total:,} documents)"

    @admin.display(description="why it failed")
    def error_short(self, obj):
        return (obj.error[:120] + "…") if len(obj.error) > 120 else obj.error

    @admin.action(description="Run the selected deletions again (they continue where they stopped)")
    def run_again(self, request, queryset):
        for deletion in queryset:
            try:
                corpus_deletion_retry(deletion=deletion)
            except ApplicationError as exc:
                self.message_user(request, exc.message, messages.ERROR)
            else:
                self.message_user(request, f"Deleting corpus “{deletion.corpus_name}” again.", messages.SUCCESS)


@admin.register(models.ClassifierBuild)
class ClassifierBuildAdmin(ReadOnlyAdmin):
    """Builds are written by their tasks only (annotation/services/classifiers/classifier_builds.py)."""

    list_display = ["id", "name", "corpus", "kind", "status", "processed", "total", "shards", "created_at"]
    list_filter = ["status", "kind"]
    search_fields = ["name"]


@admin.register(models.RouterBuild)
class RouterBuildAdmin(ReadOnlyAdmin):
    """Router builds are written by their task only (annotation/services/classifiers/router_builds.py)."""

    list_display = ["id", "name", "topic", "kind", "status", "processed", "total", "created_at"]
    list_filter = ["status", "kind"]
    search_fields = ["name"]


@admin.register(models.ModelJudgeRun)
class ModelJudgeRunAdmin(ReadOnlyAdmin):
    """Judge runs are written by their task only (annotation/services/crowd/model_judge.py)."""

    list_display = ["id", "topic", "kind", "model", "status", "processed", "total", "cost_spent", "created_at"]
    list_filter = ["status", "kind"]


@admin.register(models.ModelJudgment)
class ModelJudgmentAdmin(ReadOnlyAdmin):
    list_display = ["run", "document", "region", "status", "relevant", "probability", "reason"]
    list_filter = ["status", "region"]
    raw_id_fields = ("run", "topic", "document")


@admin.register(models.ExternalCorpusSource)
class ExternalCorpusSourceAdmin(ReadOnlyAdmin):
    """Registered through annotation/services/corpora/backends/external.py (pages, API, command)."""

    list_display = ["corpus", "engine", "location", "connection_env", "document_count"]
    list_filter = ["engine"]


@admin.register(models.ExternalDraw)
class ExternalDrawAdmin(ReadOnlyAdmin):
    list_display = ["draw", "engine", "snapshot", "plan_snapshot", "created_at"]
    raw_id_fields = ("draw",)


@admin.register(models.Adjudication)
class AdjudicationAdmin(ReadOnlyAdmin):
    """Recorded by analysts through annotation/services/crowd/adjudication.py (page and API)."""

    list_display = ["topic", "document", "relevant", "user", "updated_at"]
    raw_id_fields = ("topic", "document")
    search_fields = ["reason"]


@admin.register(models.WorkerBonus)
class WorkerBonusAdmin(ReadOnlyAdmin):
    """Granted by analysts through annotation/services/crowd/bonuses.py (page and API); paid by its task."""

    list_display = ["topic", "worker", "amount", "fee", "status", "platform", "created_at", "paid_at"]
    list_filter = ["status", "platform"]
    raw_id_fields = ("topic", "worker")
    search_fields = ["reason", "request_token", "idempotency_key"]


# --- Users: each user's roles (annotation/roles.py groups) on the list, filterable ---------------

User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class UserWithRolesAdmin(DjangoUserAdmin):
    """Django's user admin with a roles column; roles are the groups of annotation/roles.py."""

    list_display = ["username", "email", "roles", "is_active", "is_staff", "last_login"]
    list_filter = ["groups", "is_active", "is_staff", "is_superuser"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("groups")

    @admin.display(description="roles")
    def roles(self, obj) -> str:
        return ", ".join(sorted(group.name for group in obj.groups.all())) or "—"
