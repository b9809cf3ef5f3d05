"""Field-value filters (annotation/services/classifiers/field_values.py): created in the request, not built
by a task (`steps` None): classifier_build_start refuses it ("not built here")."""
from __future__ import annotations

from typing import Any

from annotation.models import Classifier
from annotation.services.classifiers.kinds import ClassifierKind, kind_register


class FieldValuesKind(ClassifierKind):
    kind = Classifier.Kind.FIELD_VALUES

    def fingerprint_parts(self, definition: dict[str, Any]) -> dict[str, Any]:
        return {"field": definition["field"], "values": sorted(definition["values"])}

    def fields_read(self, definition: dict[str, Any]) -> list[str] | None:
        return [definition["field"]]


kind_register(FieldValuesKind())
