"""Keyword filters (annotation/services/classifiers/keywords.py): a sharded scan of the corpus."""
from __future__ import annotations

from typing import Any

from django.db import transaction
from pyroaring import BitMap

from annotation.models import Classifier, ClassifierBuild, Corpus
from annotation.services.classifiers import keywords
from annotation.services.classifiers.classifier import ClassifierError, classifier_store
from annotation.services.classifiers.kinds import ClassifierKind, Phase, Progress, kind_register
from annotation.services.classifiers.kinds.steps import bitmap_decode, bitmap_encode, build_done
from annotation.services.classifiers.trained import COLUMNS


class KeywordsKind(ClassifierKind):
    kind = Classifier.Kind.KEYWORDS
    steps = "scan"

    def definition_clean(self, *, corpus: Corpus, definition: dict[str, Any]) -> dict[str, Any]:
        try:
            terms = keywords.terms_normalize(definition.get("terms") or [])
            fields = keywords.fields_for_corpus(definition.get("fields") or keywords.FIELDS, corpus=corpus)
            if not terms:
                raise ClassifierError("give at least one non-empty term")
            keywords.KeywordMatcher(terms)  # refuses what cannot be matched, now rather than in the task
        except keywords.KeywordError as exc:
            raise ClassifierError(str(exc)) from exc
        return {"terms": terms, "fields": fields}

    def fingerprint_parts(self, definition: dict[str, Any]) -> dict[str, Any]:
        return {"terms": sorted(definition["terms"]), "fields": sorted(definition["fields"])}

    def fields_read(self, definition: dict[str, Any]) -> list[str] | None:
        return list(definition.get("fields") or COLUMNS)

    def shard(self, *, build: ClassifierBuild, pk_range: tuple[int, int], progress: Progress) -> str:
        found = keywords.keyword_scan(corpus=build.corpus, terms=build.definition["terms"],
                                      fields=build.definition["fields"], pk_range=pk_range, progress=progress)
        return bitmap_encode(found)

    def finish(self, *, build_id: int, shard_results: list[str], phase: Phase) -> ClassifierBuild | None:
        retrieved = BitMap()
        for encoded in shard_results:
            retrieved |= bitmap_decode(encoded)
        with transaction.atomic():
            build = ClassifierBuild.objects.select_for_update().select_related("corpus").filter(pk=build_id).first()
            if build is None or build.status != ClassifierBuild.Status.RUNNING:
                return build
            classifier = classifier_store(corpus=build.corpus, name=build.name, kind=build.kind,
                                          definition=build.definition, retrieved=retrieved)
            build_done(build, classifier, details={})
        return build


kind_register(KeywordsKind())
