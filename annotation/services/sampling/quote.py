"""What a launch or top-up of a topic will draw and cost, before anything is drawn (issue 12 item 5).

The same arithmetic as ``samples_draw``: a region smaller than its target is taken whole, and
documents already sampled in a region count toward its total. Read-only; the launch guard
(annotation.services.topics.launch) compares a fresh quote with the one the analyst confirmed.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import Count

from annotation.models import Hit, SampledDocument, SampleDraw, Topic, region_name
from annotation.services.crowd.crowds import crowd_cost_per_assignment
from annotation.services.crowd.hits import topic_committed_cost
from annotation.services.sampling.complement import complement_default
from annotation.services.sampling.draws import PairSizes, pair_sizes, planned_region_sizes, topic_scored_plan
from annotation.services.sampling.strata import StratumTarget, strata_targets, stratum_words


def _pair_new_documents(*, topic: Topic, targets: Mapping[str, int], sizes: Mapping[str, int]) -> dict[str, int]:
    """{region: new documents} for a launch up to `targets` (totals per region), as samples_draw counts them."""
    sampled = dict(
        SampledDocument.objects.filter(topic=topic, draw__purpose=SampleDraw.Purpose.PAIR)
        .values("region").annotate(n=Count("pk")).values_list("region", "n")
    )
    return {region: max(0, min(total, sizes.get(region, 0)) - sampled.get(region, 0))
            for region, total in targets.items()}


@dataclass(frozen=True)
class LaunchQuote:
    """What a launch or top-up will draw and cost, shown before anything is drawn (issue 12 item 5).

    `regions` holds the new documents per pair region ("N": the dependence check); `further`
    the new documents of each further classifier's precision sample, an upper bound since those
    the pair's sample already holds are queued once. Costs are what the HITs cost if every
    assignment is done (reward + crowd fees), as annotation.services.crowd.hits prices the budget.
    """

    half_width: float
    complement: int
    regions: dict[str, int]
    further: dict[str, int]
    hit_size: int
    assignments_per_hit: int
    per_assignment: Decimal
    committed: Decimal
    budget: Decimal | None
    # With a scorer: N's new documents per score stratum (key → documents), their sum is regions["N"]; and each
    # stratum's label in words. Empty without a scorer (N is then one simple random sample).
    strata: dict[str, int] = field(default_factory=dict)
    strata_labels: dict[str, str] = field(default_factory=dict)
    # With a scorer: the design-based interval's half-width expected at the joint plan ({"r1", "r2"}; the plan's
    # figure, estimation.stats.stratified.stratified_sample_plan), when the quote draws that plan; else None.
    expected_half_width: dict[str, float | None] | None = None
    # A corpus in the team's engine: the snapshot whose region counts the quote priced ("" for an imported corpus).
    # The launch draws with it as the plan's snapshot, so a corpus changed since is refused, naming the files.
    snapshot: str = ""
    # The pair's classifier names, for the regions' plain names in the itemised parts (annotation.models.region_name).
    pair_names: tuple[str | None, str | None] = (None, None)

    @property
    def exact(self) -> bool:
        return not any(self.further.values())

    @property
    def check_documents(self) -> int:
        return self.regions.get("N", 0)

    @property
    def documents(self) -> int:
        return sum(self.regions.values()) + sum(self.further.values())

    @property
    def judgments(self) -> int:
        return self.documents * self.assignments_per_hit

    @property
    def hits(self) -> int:
        return math.ceil(self.documents / max(1, self.hit_size))

    @property
    def per_hit(self) -> Decimal:
        return self.per_assignment * self.assignments_per_hit

    @property
    def cost(self) -> Decimal:
        return (self.per_hit * self.hits).quantize(Decimal("0.01"))

    @property
    def remaining(self) -> Decimal | None:
        """Budget left after this launch (None: no budget set)."""
        return None if self.budget is None else self.budget - self.committed - self.cost

    # ---- the figures in words: every page, the API and the CLI show these, never their own arithmetic

    @property
    def bound_words(self) -> str:
        """"at most " when the quote is a bound (a further classifier's precision sample), else ""."""
        return "" if self.exact else "at most "

    @property
    def per_document(self) -> Decimal:
        """What one judged document costs: its share of a HIT, for each of the HIT's assignments."""
        return self.per_hit / max(1, self.hit_size)

    @property
    def parts(self) -> list[dict[str, Any]]:
        """The quote itemised: the pair's regions, the dependence check (N), each further classifier's precision
        sample (a bound: documents the pair's sample already holds are judged once). Each part's cost is its
        documents at the per-document rate; the total is priced in whole HITs (``cost``)."""
        items: list[tuple[str, str, str, int, bool]] = []
        neither = f"the region “{region_name('N')}”"
        for region, n in self.regions.items():
            if region == "N" and self.strata:
                for index, (key, m) in enumerate(self.strata.items(), start=1):
                    items.append((f"N-{index}", "dependence_check",
                                  f"Dependence check, {neither}, {self.strata_labels[key]}", m, False))
            elif region == "N":
                items.append(("N", "dependence_check", f"Dependence check, {neither}", n, False))
            else:
                items.append((region, "pair", f"The region “{region_name(region, *self.pair_names)}”", n, False))
        for index, (name, n) in enumerate(self.further.items(), start=1):
            items.append((f"further-{index}", "further", f"Further classifier {name} (precision sample)", n, True))
        parts = []
        for key, kind, label, n, at_most in items:
            cost = (self.per_document * n).quantize(Decimal("0.01"))
            words = "at most " if at_most else ""
            parts.append({"key": key, "kind": kind, "label": label, "documents": n, "at_most": at_most,
                          "cost": cost,
                          "text": f"{label}: {words}{n} document{'s' if n != 1 else ''}, {words}${cost:.2f}"})
        return parts

    @property
    def documents_text(self) -> str:
        return f"{self.bound_words}{self.documents} document{'s' if self.documents != 1 else ''}"

    @property
    def hits_text(self) -> str:
        return f"{self.bound_words}{self.hits} HIT{'s' if self.hits != 1 else ''}"

    @property
    def cost_text(self) -> str:
        return f"{self.bound_words}${self.cost:.2f}"

    @property
    def summary(self) -> str:
        """The quote in one sentence, said the same way on every page, in the API and in the CLI."""
        text = f"{self.documents_text} in {self.hits_text}, {self.cost_text} if every assignment is done"
        if not self.exact:
            text += (" (an upper bound: a further classifier's precision sample is judged once where it overlaps "
                     "the pair's sample)")
        return text

    @property
    def fingerprint(self) -> str:
        """What the confirmation showed, to compare with a fresh quote when it is submitted."""
        regions = ",".join(f"{k}={v}" for k, v in sorted({**self.regions, **self.further}.items()))
        budget = "none" if self.budget is None else f"{self.budget:.2f}"
        strata = "".join(f";{k}={v}" for k, v in sorted(self.strata.items()))  # "" without a scorer: as before
        state = f";snapshot={self.snapshot}" if self.snapshot else ""  # "" for an imported corpus: as before
        return (f"half_width={self.half_width:g};complement={self.complement};{regions}{strata};hits={self.hits};"
                f"cost={self.cost:.2f};committed={self.committed:.2f};budget={budget}{state}")


def topic_launch_quote(*, topic: Topic, half_width: float, complement: int | None = None) -> LaunchQuote:
    """The documents per region, judgments, HITs and cost of launching (or topping up) at `half_width`.

    `complement` is the dependence check's total of documents of N: None (the default) is the plan's size
    (``complement.complement_default``: the check is part of the default plan), 0 none. With a scorer, N's
    documents are itemised per score stratum as ``samples_draw`` will draw them. Raises the sampling
    service's SamplingError when the pair cannot be planned or drawn. For a corpus in the team's engine the region
    sizes are the engine's counts of its current snapshot (``pair_sizes``; RegionCountsPending, code "counting",
    while they are counted in a task) and the quote carries that snapshot.
    """
    sizes: PairSizes = pair_sizes(topic=topic)
    if complement is None:
        complement = complement_default(topic=topic, half_width=half_width)
    targets: dict[str, int] = dict(planned_region_sizes(topic=topic, half_width=half_width))
    if complement:
        targets["N"] = complement
    by_score: list[StratumTarget] = []
    joint = topic_scored_plan(topic=topic, half_width=half_width) if complement else None
    if joint is not None:
        by_score = strata_targets(plan=joint, total=complement)
    regions = _pair_new_documents(topic=topic, targets={k: v for k, v in targets.items() if not (by_score and k == "N")},
                                  sizes=sizes.counts)
    if by_score:
        regions["N"] = sum(target.new for target in by_score)
    further: dict[str, int] = {}
    extra_n = targets.get("A12", 0)
    if extra_n:
        for link in (topic.extra_classifiers.select_related("classifier").defer("classifier__retrieved_bitmap")
                     .order_by("pk")):
            classifier = link.classifier
            already = SampledDocument.objects.filter(
                topic=topic, draw__purpose=SampleDraw.Purpose.PRECISION, draw__classifier=classifier,
                draw__stratum_key="").count()
            further[classifier.name] = max(0, min(extra_n, classifier.retrieved_count) - already)
    return LaunchQuote(
        half_width=half_width, complement=complement, regions=regions, further=further, hit_size=topic.hit_size,
        assignments_per_hit=Hit.ASSIGNMENTS_PER_HIT, per_assignment=crowd_cost_per_assignment(topic),
        committed=topic_committed_cost(topic=topic), budget=topic.budget,
        strata={t.stratum.key: t.new for t in by_score},
        strata_labels={t.stratum.key: stratum_words(t.stratum.key) for t in by_score},
        expected_half_width=joint.expected_half_width if joint is not None and complement >= joint.n_total else None,
        snapshot=sizes.snapshot,
        pair_names=(topic.pair.c1.name, topic.pair.c2.name) if topic.pair is not None else (None, None),
    )
