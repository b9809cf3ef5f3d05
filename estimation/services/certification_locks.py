"""Locking a certification plan: freeze it, draw its fresh sample and open its HITs (seed 004; docs/certification.md).

Planning (``certification_plans``) sizes a draft from the pilot; this module is the paid, irreversible step
that follows it. The lock freezes the plan (the database refuses any later change: migrations 0002 and
0004) and its classifier, and draws the sample fresh — never a document the topic sampled or labelled
before, never a gold document — with the plan's own seed, as a stratum of its own
(``certification_stratum_key``), linked to the plan (``CertificationPlanDraw``). The HITs, the topic's start
and the SampleDrawn announcement are annotation's, as for every launch (``draws_launch``). The verdict:
``estimation.services.certification_verdicts``.
"""
from __future__ import annotations

import math
import secrets

from django.db import transaction
from django.utils import timezone
from pyroaring import BitMap

from annotation.models import Classifier, Region, SampledDocument, SampleDraw, Topic
from annotation.services.classifiers.classifier import classifier_freeze
from annotation.services.corpora.retrieved_sets import bitmap_from_ids
from annotation.services.sampling.draws import draw_seed_derive, draws_launch, region_bitmap, region_sample_draw
from annotation.services.sampling.strata import score_stratum_documents
from estimation.models import CertificationPlan, CertificationPlanDraw
from estimation.selectors import certification_attempt_family, certification_family_declaration
from estimation.services.certification_plans import (
    CertificationError,
    Status,
    _excluded_documents,
    certification_plan_refuse_while_sizing,
    certification_stratum_draw_key,
    certification_stratum_key,
)

# The per-region seeds of a lock: draw_seed_derive(seed, region index) folded with this shift.
# Part of the recorded derivation of every locked plan's draws: never change it.
LOCK_SEED_SHIFT = 30


def _refuse_beyond_declared_attempts(plan: CertificationPlan) -> None:
    """The attempt family is the classifier and the metric, whatever the target and the topic (notes §8
    "Retries"). Its first locked attempt declared how many attempts the family may make and at which family
    false-pass rate; a plan that declares otherwise, or an attempt past the declared count, is refused.

    Runs under the classifier's row lock (two topics' locks of one classifier are serialised)."""
    Classifier.objects.select_for_update().filter(pk=plan.classifier_id).first()
    family = certification_attempt_family(classifier_id=plan.classifier_id, metric=plan.metric,
                                          exclude_plan_id=plan.pk)
    declaration = certification_family_declaration(family=family)
    if declaration is None:
        return
    declared, family_alpha = declaration
    what = (f"the attempts at certifying {plan.classifier.name} on {plan.get_metric_display().lower()} — one "
            "family, whatever the target and the topic")
    made = "; ".join(f"plan {p.pk}: topic {p.topic.name!r}, target {p.target:g}, {p.get_status_display().lower()}"
                     for p in family)
    plural = "s" if declared != 1 else ""
    if len(family) >= declared:
        raise CertificationError(
            f"This would be attempt {len(family) + 1} of {what}, which declared {declared} attempt{plural} when "
            f"its first attempt was locked ({made}). Each further attempt raises the chance that one passes by luck "
            "above the declared false-pass rate, so it is refused. Nothing was drawn; the plan is still a draft.")
    own_alpha = plan.family_alpha if plan.family_alpha is not None else plan.alpha
    if plan.attempts != declared or not math.isclose(own_alpha, family_alpha):
        raise CertificationError(
            f"This plan declares {plan.attempts} attempt{'s' if plan.attempts != 1 else ''} at a false-pass rate of "
            f"{own_alpha:g}, but {what} declared {declared} attempt{plural} at {family_alpha:g} when its first "
            f"attempt was locked ({made}). Update the plan to the family's declaration (each attempt then tests "
            "at its Šidák share), then lock it. Nothing was drawn.")


# The score strata of N of a stratified plan are drawn with streams from this offset (the regions use 0–3).
STRATUM_STREAM_OFFSET = 100


def _stratum_draws(*, plan: CertificationPlan, topic: Topic, exclude: BitMap, key: str) -> list[SampleDraw]:
    """N of a plan sized by score strata (``pilot["n_plan"]``): one simple random sample per stratum, its
    population re-derived exactly from the stratum's key and the scorer the plan was made with."""
    scorer = topic.scorer
    recorded = plan.pilot.get("scorer") or {}
    if scorer is None or scorer.pk != recorded.get("id") or scorer.fingerprint != recorded.get("fingerprint"):
        raise CertificationError("The topic's scorer changed since the plan was made (the plan's strata of N are "
                                 "its score strata): update the plan first. Nothing was drawn.")
    neither = region_bitmap(topic=topic, region=Region.NEITHER)
    assert plan.seed is not None  # chosen by the lock before the draws
    draws = []
    for j, row in enumerate(plan.pilot["n_plan"]):
        if int(row["planned"]) <= 0:
            continue
        population = score_stratum_documents(scorer=scorer, documents=neither, key=row["key"])
        draws.append(region_sample_draw(
            topic=topic, region=Region.NEITHER, bitmap=population, k=int(row["planned"]),
            seed=draw_seed_derive(seed=plan.seed, stream=STRATUM_STREAM_OFFSET + j, shift=LOCK_SEED_SHIFT),
            purpose=SampleDraw.Purpose.CERTIFICATION,
            stratum_key=certification_stratum_draw_key(plan_key=key, position=j + 1), exclude=exclude))
    return draws


def certification_plan_lock(*, plan_id: int, user, seed: int | None = None,
                            publish: bool = True) -> CertificationPlan:
    """Lock a draft plan, choose its seed, draw the fresh certification sample and publish its HITs.

    One transaction: if the budget refuses the HITs, or a region's draw comes back short of the plan
    (its fresh documents ran out since planning), the plan stays a draft and nothing is drawn.
    The manager confirms the cost before this is called (the lock view's job). The HITs, the topic's start
    and the SampleDrawn announcement are annotation's, as for every launch (``draws_launch``).
    """
    with transaction.atomic():
        topic_id = CertificationPlan.objects.values_list("topic_id", flat=True).get(pk=plan_id)
        # Lock order: topic, then plan (the sampling services lock the topic first too).
        topic = Topic.objects.select_for_update().get(pk=topic_id)
        plan = CertificationPlan.objects.select_for_update().select_related("classifier").get(pk=plan_id)
        if plan.status != Status.DRAFT:
            raise CertificationError(f"Plan {plan.pk} is already {plan.get_status_display().lower()}.")
        certification_plan_refuse_while_sizing(plan_id=plan.pk)
        if not plan.pilot.get("feasible") or not plan.sample_size.get("total"):
            raise CertificationError("This plan has no feasible sample size: " + (plan.pilot.get("reason") or
                                     "re-plan it first."))
        if plan.pilot.get("classifier_fingerprint") != plan.classifier.fingerprint:
            raise CertificationError("The classifier changed since the plan was made: update the plan first.")
        _refuse_beyond_declared_attempts(plan)
        plan.seed = int(seed) if seed is not None else secrets.randbits(62)
        plan.status = Status.LOCKED
        plan.locked_at = timezone.now()
        plan.locked_by = user
        plan.save(update_fields=["seed", "status", "locked_at", "locked_by"])
        # The verdict certifies the retrieved set the plan was made for: it may not change from now on.
        classifier_freeze(classifier_id=plan.classifier_id,
                          reason=f"certification plan {plan.pk} (locked) certifies it as it is; "
                                 "create a new classifier to try another threshold")

        exclude = _excluded_documents(topic=topic)
        key = certification_stratum_key(plan_id=plan.pk)
        draws = []
        n_plan = plan.pilot.get("n_plan") or []
        for index, (region, k) in enumerate(sorted((r, n) for r, n in plan.sample_size.items() if r != "total")):
            if k <= 0:
                continue
            if region == Region.NEITHER and n_plan:
                draws.extend(_stratum_draws(plan=plan, topic=topic, exclude=exclude, key=key))
                continue
            draws.append(region_sample_draw(
                topic=topic, region=region, bitmap=region_bitmap(topic=topic, region=region), k=int(k),
                seed=draw_seed_derive(seed=plan.seed, stream=index, shift=LOCK_SEED_SHIFT),
                purpose=SampleDraw.Purpose.CERTIFICATION, stratum_key=key, exclude=exclude))
        short = [f"{d.region} gave {d.drawn} of {d.requested}" for d in draws if d.drawn != d.requested]
        if short:
            raise CertificationError(
                "The certification sample came back short of its plan (" + "; ".join(short) + "): other samples "
                "used those regions' fresh documents since the plan was made. Nothing was drawn and the plan is "
                "still a draft: recompute it from the current pilot, then lock it.")
        drawn_ids = BitMap()
        for draw in draws:
            drawn_ids |= bitmap_from_ids(SampledDocument.objects.filter(draw=draw).values_list("document_id",
                                                                                            flat=True))
        for region in plan.pilot.get("enumerated") or []:
            left = len(region_bitmap(topic=topic, region=region) - exclude - drawn_ids)
            if left:
                raise CertificationError(
                    f"Region {region} was planned to be judged whole, but {left} of its documents would be left "
                    "undrawn (its documents changed since the plan was made). Recompute the plan, then lock it.")
        CertificationPlanDraw.objects.bulk_create([CertificationPlanDraw(plan=plan, draw=draw) for draw in draws])
        if sum(d.drawn for d in draws) == 0:
            raise CertificationError("Every document of the sampled regions was used by the pilot: nothing is left "
                                     "to certify on.")
        draws_launch(topic=topic, draws=draws, publish=publish)
    return plan
