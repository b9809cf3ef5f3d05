"""A classifier pair: can it carry a recall estimate (not nested, identical or disjoint)?

Used when a topic is created (``annotation.services.topics.topic``), when a threshold moves
(``classifier_set_threshold``) and at every draw (``annotation.services.sampling.draws``), so it sits below all three.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from annotation.models import Classifier
from annotation.services.corpora.retrieved_sets import region_counts
from estimation.stats.pair_recall import pair_design_problems


@dataclass(frozen=True)
class PairCheck:
    """Whether a pair can carry a recall estimate: errors refuse it, warnings are shown on the topic page."""

    codes: tuple[str, ...]
    errors: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def refused(self) -> bool:
        return bool(self.errors)


_DIFFERENT_VIEW = "Pair it with a classifier built from a different view of the documents."


def _error_text(code: str, *, c1: Classifier, c2: Classifier) -> str:
    one, two = f"“{c1.name}”", f"“{c2.name}”"
    if code == "identical_sets":
        return (f"Classifiers {one} and {two} retrieve exactly the same documents: each would measure the other's "
                f"recall as 1 by construction. {_DIFFERENT_VIEW}")
    if code == "disjoint_pair":
        return (f"Classifiers {one} and {two} retrieve no document in common: the pair would measure a recall of 0 "
                f"for both by construction, which says nothing. {_DIFFERENT_VIEW}")
    # nested_b2_empty: A2 ⊆ A1; nested_b1_empty: A1 ⊆ A2.  X retrieves nothing Y does not.
    inner, outer = (two, one) if code == "nested_b2_empty" else (one, two)
    return (f"Classifier {inner} retrieves nothing {outer} does not: {outer}'s recall against it would be 1 by "
            f"construction, and {inner}'s only its recall relative to {outer}, not to the corpus. {_DIFFERENT_VIEW}")


def pair_design_check(
    *,
    c1: Classifier,
    c2: Classifier,
    counts: Mapping[str, int] | None = None,
    precisions: Mapping[str, float] | None = None,
    judged: Mapping[str, int] | None = None,
) -> PairCheck:
    """Can the pair (c1, c2) carry a recall estimate?  ``estimation.stats.pair_recall.pair_design_problems``.

    Refused (errors): one retrieved set contains the other (B1 or B2 empty), identical sets, or
    disjoint sets (A12 empty) — the pair's recall would be 1 or 0 by construction. Warnings:
    a region with fewer than 10 documents; with precision guesses (and a planned sample), a
    region expected to hold (or a sample expected to find) fewer than 5 relevant documents.
    `counts` are the pair's region sizes (retrieved_sets.region_counts) when the caller has them.
    """
    counts = counts if counts is not None else region_counts(c1=c1, c2=c2)
    precisions = precisions or {}
    judged = judged or {}
    result = pair_design_problems(
        size_a12=int(counts["A12"]), size_b1=int(counts["B1"]), size_b2=int(counts["B2"]),
        precision_a12=precisions.get("A12"), precision_b1=precisions.get("B1"), precision_b2=precisions.get("B2"),
        judged_a12=judged.get("A12"), judged_b1=judged.get("B1"), judged_b2=judged.get("B2"),
    )
    errors = tuple(_error_text(d.code, c1=c1, c2=c2) for d in result.problems if d.severity == "error")
    names = {"C1": f"“{c1.name}”", "C2": f"“{c2.name}”"}
    warnings = tuple(
        d.message.replace("C1", names["C1"]).replace("C2", names["C2"])
        for d in result.problems if d.severity != "error"
    )
    return PairCheck(codes=result.codes, errors=errors, warnings=warnings)
