"""Uploaded retrieved ids: the file is streamed under MEDIA_ROOT in the request, read and resolved by one
task, then removed. The file helpers here serve the scores kind too (kinds/scores.py)."""
from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation.models import Classifier, ClassifierBuild, Corpus
from annotation.services.classifiers.classifier import (
    ClassifierError,
    ClassifierResult,
    classifier_create_from_ids,
    classifier_ids_read,
)
from annotation.services.classifiers.kinds import ClassifierKind, Progress, kind_register
from annotation.services.classifiers.kinds.steps import build_done

logger = logging.getLogger(__name__)

UPLOAD_DIR = "classifier-uploads"


def upload_absolute(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


def upload_file_save(*, original_name: str, chunks: Iterable[bytes]) -> str:
    """Stream an uploaded ids or scores file under MEDIA_ROOT; returns its path relative to MEDIA_ROOT."""
    safe_name = PurePath(original_name).name.replace(" ", "_")[-120:] or "classifier"
    relative = f"{UPLOAD_DIR}/{uuid.uuid4().hex}-{safe_name}"
    path = upload_absolute(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("wb") as out:
            for chunk in chunks:
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return relative


def upload_file_remove(relative: str) -> None:
    if not relative.startswith(f"{UPLOAD_DIR}/") or ".." in PurePath(relative).parts:
        return
    try:
        upload_absolute(relative).unlink(missing_ok=True)
    except OSError:
        logger.warning("could not delete the classifier upload %s", relative, exc_info=True)


class IdsKind(ClassifierKind):
    """definition in the build: {"file": <path under MEDIA_ROOT>, "source": <file name>, "ids": <count>}."""

    kind = Classifier.Kind.IDS
    steps = "run"
    upload_label = "Retrieved ids (one document id per line)"

    def _file_clean(self, definition: dict[str, Any]) -> tuple[dict[str, Any], Path]:
        relative = str(definition.get("file") or "")
        if not relative.startswith(f"{UPLOAD_DIR}/") or ".." in PurePath(relative).parts:
            raise ClassifierError("the uploaded file is missing")
        return ({"file": relative, "source": str(definition.get("source") or PurePath(relative).name)[:255]},
                upload_absolute(relative))

    def definition_clean(self, *, corpus: Corpus, definition: dict[str, Any]) -> dict[str, Any]:
        clean, path = self._file_clean(definition)
        clean["ids"] = len(classifier_ids_read(path=path))  # the format, checked now: errors name their line
        return clean

    def build_total(self, *, corpus: Corpus, definition: dict[str, Any]) -> int:
        return int(definition["ids"])

    def start_refused(self, *, definition: dict[str, Any]) -> None:
        upload_file_remove(str(definition.get("file") or ""))

    def cleanup(self, *, build: ClassifierBuild) -> None:
        upload_file_remove(str((build.definition or {}).get("file") or ""))

    def create(self, *, build: ClassifierBuild, path: Path) -> ClassifierResult:
        return classifier_create_from_ids(corpus=build.corpus, name=build.name, path=path,
                                          source=build.definition["source"])

    def run(self, *, build_id: int, progress: Progress) -> ClassifierBuild | None:
        build = ClassifierBuild.objects.select_related("corpus").get(pk=build_id)
        if build.status != ClassifierBuild.Status.RUNNING:
            return build
        relative = build.definition["file"]
        with transaction.atomic():  # the row lock makes a second run of the task wait, then leave it alone
            locked = ClassifierBuild.objects.select_for_update().get(pk=build_id)
            if locked.status != ClassifierBuild.Status.RUNNING:
                return locked
            result = self.create(build=build, path=upload_absolute(relative))
            locked.corpus = build.corpus
            build_done(locked, result.classifier, details={
                "read": result.read, "unknown_count": result.unknown_count,
                "unknown_examples": result.unknown_examples})
        upload_file_remove(relative)
        return locked

    def state(self, *, build: ClassifierBuild, details: dict[str, Any]) -> dict[str, Any]:
        return {}


kind_register(IdsKind())
