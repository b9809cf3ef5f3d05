"""Uploaded scores with a threshold: as uploaded ids (kinds/ids.py), the file a CSV `id,score`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from annotation.models import Classifier, ClassifierBuild, Corpus
from annotation.services.classifiers.classifier import (
    ClassifierResult,
    classifier_create_from_scores,
    classifier_scores_read,
    classifier_threshold_check,
)
from annotation.services.classifiers.kinds import kind_register
from annotation.services.classifiers.kinds.ids import IdsKind


class ScoresKind(IdsKind):
    """definition in the build: that of ids plus "threshold"."""

    kind = Classifier.Kind.SCORES
    has_threshold = True
    upload_label = "Scores (CSV: id,score) with a threshold"

    def definition_clean(self, *, corpus: Corpus, definition: dict[str, Any]) -> dict[str, Any]:
        clean, path = self._file_clean(definition)
        clean["threshold"] = classifier_threshold_check(definition.get("threshold"))  # type: ignore[arg-type]  # None: refused
        clean["ids"] = len(classifier_scores_read(path=path))  # the format, checked now: errors name their line
        return clean

    def fingerprint_parts(self, definition: dict[str, Any]) -> dict[str, Any]:
        return {"threshold": float(definition["threshold"])}

    def create(self, *, build: ClassifierBuild, path: Path) -> ClassifierResult:
        return classifier_create_from_scores(corpus=build.corpus, name=build.name, path=path,
                                             threshold=build.definition["threshold"],
                                             source=build.definition["source"])


kind_register(ScoresKind())
