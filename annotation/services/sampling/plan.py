"""The sample plan a topic page and the API show: a thin wrapper over estimation.stats.planning."""
from __future__ import annotations

from dataclasses import asdict

from annotation.models import REGION_NAMES, ClassifierPair, Hit, Topic
from annotation.selectors import PAIR_REGIONS, topic_region_progress
from annotation.services.classifiers.pairs import pair_design_check
from annotation.services.corpora.backends.base import BackendError
from annotation.services.corpora.backends.external import RegionCountsPending
from annotation.services.crowd.crowds import crowd_cost_per_assignment
from annotation.services.sampling.complement import DEFAULT_COMPLEMENT_MARGIN, complement_plan
from annotation.services.sampling.draws import SamplingError, pair_sizes, region_precision_guesses, topic_scored_plan
from annotation.services.sampling.strata import strata_targets, stratum_words
from core.errors import ApplicationError
from estimation.stats.planning import plan_pair_sample


def topic_plan_describe(*, topic: Topic, half_width: float, margin: float = DEFAULT_COMPLEMENT_MARGIN) -> dict:
    """{"plan": {...} | None, "plan_error": str, "counts": {...}, "pair_check": ...} for the topic page and the API.

    `half_width` comes from PlanForm, inside the planner's (0, 0.5); `margin` is how far below the
    recall the dependence check's design-based bound may fall (PlanForm too).

    `snapshot` names the corpus state the counts describe: a corpus in the team's engine's snapshot token ("" for
    an imported corpus). When the engine's counts of the current snapshot are not there yet, the count is queued
    (a task) and the answer has no plan but `engine_counting` ({"snapshot", "changes"}): no request counts a corpus.
    """
    try:
        pair = topic.pair
    except ClassifierPair.DoesNotExist:
        return {"plan": None, "plan_error": "Choose the classifier pair first.", "counts": None}
    try:
        sizes = pair_sizes(topic=topic)
    except RegionCountsPending as exc:
        return {"plan": None, "plan_error": exc.message, "counts": None,
                "engine_counting": {"snapshot": exc.snapshot, "changes": exc.changes}}
    except BackendError as exc:  # a corpus in the team's engine whose files cannot be read now
        return {"plan": None, "plan_error": "No plan: " + exc.message, "counts": None}
    counts, snapshot = sizes.counts, sizes.snapshot
    if counts["A12"] == 0:
        return {"plan": None, "counts": counts, "snapshot": snapshot,
                "plan_error": "No plan: the two classifiers retrieve no document in common, so the pair says "
                              "nothing about recall. Choose classifiers that overlap."}
    refused = pair_design_check(c1=pair.c1, c2=pair.c2, counts=counts)
    if refused.refused:  # a topic from before the rule, or a classifier changed since
        return {"plan": None, "counts": counts, "snapshot": snapshot, "plan_error": "No plan: " + refused.errors[0]}
    # A judged document costs its share of a HIT for each of the HIT's assignments.
    per_document = float(crowd_cost_per_assignment(topic)) * Hit.ASSIGNMENTS_PER_HIT / max(1, topic.hit_size)
    guesses = region_precision_guesses(topic=topic)
    plan = plan_pair_sample(
        size_a12=counts["A12"], size_b1=counts["B1"], size_b2=counts["B2"],
        p12=guesses["A12"], p_b1=guesses["B1"], p_b2=guesses["B2"],
        half_width=half_width, confidence=topic.confidence, target="both",
        corpus_size=topic.corpus.document_count or None, cost_per_judgment=per_document,
    )
    data = asdict(plan)
    data["guesses"] = guesses
    data["snapshot"] = snapshot
    data["judgments_per_document"] = Hit.ASSIGNMENTS_PER_HIT
    progress = topic_region_progress(topic=topic, regions=(*PAIR_REGIONS, "N"))
    data["rows"] = [
        {"region": region, "name": REGION_NAMES[region], "size": counts[region], "judgments": plan.stratified.get(region, 0),
         "guess": guesses.get(region), **progress[region]}
        for region in PAIR_REGIONS
    ]
    # The pair's warnings at the planned sample (regions too small, few relevant expected).
    check = pair_design_check(c1=pair.c1, c2=pair.c2, counts=counts, precisions=guesses, judged=plan.stratified)
    try:
        dependence = asdict(complement_plan(topic=topic, judged=plan.stratified, margin=margin, sizes=counts,
                                            guesses=guesses))
    except ApplicationError as exc:
        dependence = {"judged": None, "feasible": False, "reason": exc.message, "size": counts["N"]}
    dependence["sampled_so_far"] = progress["N"]["sampled"]
    dependence["judged_so_far"] = progress["N"]["judged"]
    dependence["classifiers"] = [
        {"name": classifier.name, "recall": dependence.get("planned_recalls", {}).get(which),
         "bound": dependence.get("planned_lower_bounds", {}).get(which)}
        for which, classifier in (("r1", pair.c1), ("r2", pair.c2))
    ]
    dependence["strata"] = []
    try:
        joint = topic_scored_plan(topic=topic, half_width=half_width)
    except SamplingError as exc:  # e.g. score strata on a corpus in the team's engine: refused, with the reason
        return {"plan": None, "counts": counts, "snapshot": snapshot, "plan_error": "No plan: " + exc.message}
    if joint is not None and joint.plan.feasible:
        # N by the scorer's strata (annotation.services.sampling.strata): the joint plan sizes the check (the
        # default launch draws it: complement.complement_default) and each stratum's share, as drawn.
        dependence.update(judged=joint.n_total, feasible=True, expected_half_width=joint.expected_half_width,
                          scorer=topic.scorer.name if topic.scorer else None, prior_prevalence=joint.prior)
        dependence["strata"] = [
            {"key": t.stratum.key, "label": stratum_words(t.stratum.key), "size": t.stratum.size, "guess": t.guess,
             "total": t.total, "new": t.new, "sampled": t.already, "judged": t.judged,
             "cost": per_document * t.new}
            for t in strata_targets(plan=joint, total=joint.n_total)
        ]
        for row in data["rows"]:  # the pair regions get at least the joint plan's share (draws.planned_region_sizes)
            row["judgments"] = max(row["judgments"], joint.pair_planned.get(row["region"], 0))
        data["stratified_total"] = sum(row["judgments"] for row in data["rows"])
    elif joint is not None:
        dependence["strata_reason"] = ("The score strata cannot reach this half-width even judging all of N; the "
                                       "dependence check is sized as without a scorer.")
    if dependence.get("judged"):
        dependence["cost"] = per_document * dependence["judged"]
        dependence["total_with"] = data["stratified_total"] + dependence["judged"]
        dependence["cost_with"] = per_document * dependence["total_with"]
    return {"plan": data, "plan_error": "", "counts": counts, "snapshot": snapshot, "pair_check": check,
            "dependence": dependence}
