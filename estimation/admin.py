"""Admin pages for stored estimates and certification records: read-only, they are evidence."""
from django.contrib import admin

from annotation.admin import ReadOnlyAdmin, pretty_json
from estimation import models


@admin.register(models.EstimateSnapshot)
class EstimateSnapshotAdmin(ReadOnlyAdmin):
    list_display = ["topic", "version", "aggregator", "judgments", "code_version", "created_at"]
    list_filter = ["aggregator", "topic"]
    list_select_related = ["topic"]
    # A tuple: Django's stubs type fields and readonly_fields as different (invariant) lists.
    fields = readonly_fields = ("topic", "version", "aggregator", "judgments", "code_version", "inputs_checksum", "report_json", "inputs_json", "created_at")

    @admin.display(description="report")
    def report_json(self, obj):
        return pretty_json(obj.report)

    @admin.display(description="inputs")
    def inputs_json(self, obj):
        return pretty_json(obj.inputs)


@admin.register(models.CertificationPlan)
class CertificationPlanAdmin(ReadOnlyAdmin):
    list_display = ["id", "topic", "classifier", "metric", "target", "alpha", "power", "status", "created_at", "locked_at"]
    list_filter = ["metric", "status"]
    list_select_related = ["topic", "classifier"]
    raw_id_fields = ["classifier"]


@admin.register(models.CertificationSizing)
class CertificationSizingAdmin(ReadOnlyAdmin):
    list_display = ["id", "plan", "status", "processed", "total", "created_at", "finished_at"]
    list_filter = ["status"]
    list_select_related = ["plan"]
    raw_id_fields = ["plan"]


@admin.register(models.CertificationPlanDraw)
class CertificationPlanDrawAdmin(ReadOnlyAdmin):
    list_display = ["id", "plan", "draw"]
    list_select_related = ["plan", "draw"]
    raw_id_fields = ["plan", "draw"]


@admin.register(models.CertificationVerdict)
class CertificationVerdictAdmin(ReadOnlyAdmin):
    list_display = ["plan", "passed", "estimate", "lower_bound", "code_version", "created_at"]
    list_filter = ["passed"]
    list_select_related = ["plan"]
    # A tuple: Django's stubs type fields and readonly_fields as different (invariant) lists.
    fields = readonly_fields = ("plan", "passed", "estimate", "lower_bound", "code_version", "checksum", "inputs_json", "created_at")

    @admin.display(description="inputs")
    def inputs_json(self, obj):
        return pretty_json(obj.inputs)
