"""The sample plan shown on a topic page: a thin wrapper over estimation.stats.planning."""
from __future__ import annotations

from dataclasses import asdict

from annotation.models import Hit, Topic
from annotation.services.crowds import crowd_cost_per_assignment
from annotation.services.retrieved_sets import region_counts


def _guesses(topic: Topic) -> dict[str, float]:
    from annotation.services import sampling

    guesses = getattr(sampling, "precision_guesses", None) or getattr(sampling, "_precision_guesses")
    return guesses(topic=topic)


def _region_progress(topic: Topic) -> dict[str, dict[str, int]]:
    """Documents sampled and judged (three votes in) so far in each pair region."""
    from annotation.models import Label, SampledDocument, SampleDraw

    progress = {}
    for region in ("A12", "B1", "B2"):
        sampled = SampledDocument.objects.filter(topic=topic, region=region, draw__purpose=SampleDraw.Purpose.PAIR)
        judged = Label.objects.filter(topic=topic, majority__isnull=False,
                                      document_id__in=sampled.values("document_id")).count()
        progress[region] = {"sampled": sampled.count(), "judged": judged}
    return progress


def topic_plan_context(*, topic: Topic, half_width: float) -> dict:
    """{"plan": {...} | None, "plan_error": str, "counts": {...}} for the topic page."""
    from estimation.stats.planning import plan_pair_sample

    pair = getattr(topic, "pair", None)
    if pair is None:
        return {"plan": None, "plan_error": "Choose the classifier pair first.", "counts": None}
    counts = region_counts(c1=pair.c1, c2=pair.c2)
    # A judged document costs three assignments' share of a HIT.
    per_document = float(crowd_cost_per_assignment(topic)) * Hit.ASSIGNMENTS_PER_HIT / max(1, topic.hit_size)
    try:
        guesses = _guesses(topic)
        plan = plan_pair_sample(
            size_a12=counts["A12"], size_b1=counts["B1"], size_b2=counts["B2"],
            p12=guesses["A12"], p_b1=guesses["B1"], p_b2=guesses["B2"],
            half_width=half_width, confidence=topic.confidence, target="both",
            corpus_size=topic.corpus.document_count or None, cost_per_judgment=per_document,
        )
    except (ValueError, ImportError, AttributeError) as exc:
        return {"plan": None, "plan_error": f"No plan: {exc}", "counts": counts}
    data = asdict(plan)
    data["guesses"] = guesses
    progress = _region_progress(topic)
    data["rows"] = [
        {"region": region, "size": counts[region], "judgments": plan.stratified.get(region, 0),
         "guess": guesses.get(region), **progress.get(region, {"sampled": 0, "judged": 0})}
        for region in ("A12", "B1", "B2")
    ]
    return {"plan": data, "plan_error": "", "counts": counts}
