"""Trained classifiers (annotation/services/classifiers/trained.py): fit once in the task (cross-fitted, the
weights saved with their sha256), then score the corpus in id-range shards; the last step stores the scores.
Every file of a failed build is removed."""
from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
from django.db import transaction

from annotation.models import Classifier, ClassifierBuild, Corpus, Topic
from annotation.services.classifiers import trained
from annotation.services.classifiers.classifier import ClassifierError
from annotation.services.classifiers.kinds import ClassifierKind, Phase, Progress, kind_register
from annotation.services.classifiers.kinds.steps import build_done


def _number(value: Any, what: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ClassifierError(f"{what} {value!r} is not a number") from None


def _quality(definition: dict[str, Any]) -> dict[str, Any]:
    """What the build's page and the API show: the corpus estimates when there is a design; the agreement with
    the training labels (cv_*) otherwise, and always as a diagnostic."""
    at = definition["cross_validation"]["at_threshold"]
    quality: dict[str, Any] = {"cv_precision": at["precision"], "cv_recall": at["recall"]}
    estimate = definition.get("corpus_estimate")
    if estimate:
        corpus_at = estimate["at_threshold"]
        quality.update({"corpus_precision": corpus_at["precision"], "corpus_recall": corpus_at["recall"],
                        "retrieved": corpus_at["retrieved"], "weighted_auc": estimate["scorer"]["weighted_auc"],
                        "relevant_share_in_top": estimate["scorer"]["relevant_share_in_top"]})
    return quality


def files_prefix(build_id: int) -> str:
    return f"build-{build_id}"


class TrainedKind(ClassifierKind):
    kind = Classifier.Kind.TRAINED
    steps = "train"
    has_threshold = True

    def definition_clean(self, *, corpus: Corpus, definition: dict[str, Any]) -> dict[str, Any]:
        """{"fields", "labels_from": "topic:<id>" | "classifier:<id>", "partner_id", "seed", "threshold",
        "target_precision"} → the checked request (see trained.trained_request_check)."""
        kind, _, raw = str(definition.get("labels_from") or "").partition(":")
        labels_from: Topic | Classifier | None = None
        if raw.isdigit() and kind == "topic":
            labels_from = Topic.objects.filter(pk=int(raw), corpus=corpus).first()
        elif raw.isdigit() and kind == "classifier":
            labels_from = Classifier.objects.defer("retrieved_bitmap").filter(pk=int(raw), corpus=corpus).first()
        if labels_from is None:
            raise ClassifierError("choose the training labels: a topic or a classifier of this corpus")
        partner = None
        partner_id = definition.get("partner_id")
        if partner_id not in (None, ""):
            partner = Classifier.objects.defer("retrieved_bitmap").filter(pk=int(partner_id), corpus=corpus).first()
            if partner is None:
                raise ClassifierError("the partner classifier is not a classifier of this corpus")
        seed = definition.get("seed")
        if not isinstance(seed, int) or seed < 0:
            raise ClassifierError("the seed is a whole number, 0 or more")
        request = trained.trained_request_check(
            corpus=corpus, fields=definition.get("fields") or [], labels_from=labels_from, seed=seed,
            threshold=_number(definition.get("threshold"), "threshold"),
            target_precision=_number(definition.get("target_precision"), "target precision"), partner=partner)
        return {"request": request}

    def fingerprint_parts(self, definition: dict[str, Any]) -> dict[str, Any]:
        # What decides its output: the view it reads, its training labels, its seed and its threshold.
        return {"fields": sorted(definition["fields"]), "labels": definition.get("labels"),
                "seed": definition.get("seed"), "threshold": float(definition["threshold"])}

    def fields_read(self, definition: dict[str, Any]) -> list[str] | None:
        return list(definition["fields"])

    def prepare(self, *, build: ClassifierBuild, phase: Phase) -> bool:
        """Fit the model (cross-fitted) and save it; False when the build stopped meanwhile (nothing is left)."""
        request = build.definition["request"]
        fits = trained.FOLDS + 1
        phase(f"training: fit 0 of {fits}")
        definition, fitted = trained.trained_fit(corpus=build.corpus, request=request,
                                                 progress=lambda k: phase(f"training: fit {k} of {fits}"))
        saved = trained.trained_model_save(fitted=fitted, prefix=f"{files_prefix(build.pk)}-model")
        stored = ClassifierBuild.objects.filter(pk=build.pk, status=ClassifierBuild.Status.RUNNING).update(
            definition={**definition, "build": {"request": request, "model": saved}})
        if not stored:
            trained.trained_files_remove(prefix=files_prefix(build.pk))
            return False
        phase("scoring")
        return True

    def shard(self, *, build: ClassifierBuild, pk_range: tuple[int, int], progress: Progress) -> str:
        wall, cpu = time.perf_counter(), time.process_time()
        model = trained.trained_model_load(**build.definition["build"]["model"])
        pks, scores = trained.trained_score_range(corpus=build.corpus, fields=build.definition["fields"],
                                                  model=model.model, oof=model.oof, pk_range=pk_range,
                                                  progress=progress)
        saved = trained.trained_scores_save(pks=pks, scores=scores,
                                            prefix=f"{files_prefix(build.pk)}-scores-{pk_range[0]}")
        timing = {"documents": len(pks), "seconds": round(time.perf_counter() - wall, 3),
                  "cpu_seconds": round(time.process_time() - cpu, 3)}
        return json.dumps({**saved, "timing": timing})

    def finish(self, *, build_id: int, shard_results: list[str], phase: Phase) -> ClassifierBuild | None:
        build = ClassifierBuild.objects.filter(pk=build_id).first()
        if build is None or build.status != ClassifierBuild.Status.RUNNING:
            return build
        phase("estimating precision and recall on the corpus")
        results = [json.loads(result) for result in shard_results if result]
        parts = [trained.trained_scores_load(file=r["file"], sha256=r["sha256"]) for r in results]
        pks = np.concatenate([p for p, _ in parts]) if parts else np.empty(0, dtype=np.int64)
        scores = np.concatenate([s for _, s in parts]) if parts else np.empty(0, dtype=np.float64)
        order = np.argsort(pks, kind="stable")
        pks, scores = pks[order], scores[order]
        # The corpus figures (and a threshold chosen for a target precision) need every score: computed here,
        # before the lock. A target the labels cannot support fails the build with the reason.
        design = build.definition.get("design")
        judged = None if design is None else trained.trained_design_labels(
            model=trained.trained_model_load(**build.definition["build"]["model"]), design=design)
        definition = trained.trained_finalise(definition=build.definition, judged=judged, pks=pks, scores=scores)
        phase("storing the scores")
        with transaction.atomic():
            build = ClassifierBuild.objects.select_for_update().select_related("corpus").filter(pk=build_id).first()
            if build is None or build.status != ClassifierBuild.Status.RUNNING:
                return build
            classifier = trained.trained_store(corpus=build.corpus, name=build.name, definition=definition,
                                               pks=pks, scores=scores)
            build_done(build, classifier, details={"threshold": definition["threshold"],
                                                   **_quality(definition),
                                                   "target_precision": definition.get("target_precision"),
                                                   "shard_timings": [r.get("timing") for r in results]})
        trained.trained_files_remove(prefix=f"{files_prefix(build_id)}-scores")
        return build

    def cleanup(self, *, build: ClassifierBuild) -> None:
        trained.trained_files_remove(prefix=files_prefix(build.pk))

    def status_detail(self, *, build: ClassifierBuild, details: dict[str, Any]) -> str | None:
        return details.get("phase") or "scoring"

    def state(self, *, build: ClassifierBuild, details: dict[str, Any]) -> dict[str, Any]:
        return {"phase": details.get("phase"), "threshold": details.get("threshold"),
                "cv_precision": details.get("cv_precision"), "cv_recall": details.get("cv_recall"),
                "corpus_precision": details.get("corpus_precision"), "corpus_recall": details.get("corpus_recall"),
                "weighted_auc": details.get("weighted_auc"),
                "relevant_share_in_top": details.get("relevant_share_in_top"),
                "target_precision": details.get("target_precision")}


kind_register(TrainedKind())
