"""Serializers of corpora that stay in the team's engine (issue 29): register, read, check."""
from __future__ import annotations

from rest_framework import serializers

from annotation.models import ExternalCorpusSource


class ExternalCorpusRegisterSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    engine = serializers.ChoiceField(choices=ExternalCorpusSource.Engine.choices)
    location = serializers.CharField(max_length=1000, help_text="A folder of Parquet files (or one file), as the server sees it.")
    id_field = serializers.CharField(max_length=200, default="id")
    title_field = serializers.CharField(max_length=200, default="title", allow_blank=True)
    text_fields = serializers.ListField(child=serializers.CharField(max_length=200), default=["text"], max_length=20)
    connection_env = serializers.CharField(
        max_length=100, default="", allow_blank=True,
        help_text="The NAME of an environment variable of the server (e.g. a Spark master URL); never its value.")
    description = serializers.CharField(default="", allow_blank=True, max_length=5000)


class ExternalCorpusSerializer(serializers.ModelSerializer):
    corpus_id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(source="corpus.name", read_only=True)
    files = serializers.SerializerMethodField()
    sampled_documents = serializers.SerializerMethodField()

    class Meta:
        model = ExternalCorpusSource
        fields = ["corpus_id", "name", "engine", "location", "connection_env", "id_field", "title_field", "text_fields",
                  "document_count", "snapshot", "files", "checked_at", "last_error", "sampled_documents"]

    def get_files(self, obj: ExternalCorpusSource) -> int:
        return len(obj.snapshot_manifest or [])

    def get_sampled_documents(self, obj: ExternalCorpusSource) -> int:
        return obj.corpus.documents.count()


class ExternalCheckSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    size = serializers.IntegerField(allow_null=True)
    snapshot = serializers.CharField()
    changes = serializers.ListField(child=serializers.CharField())
    error = serializers.CharField(allow_blank=True)
