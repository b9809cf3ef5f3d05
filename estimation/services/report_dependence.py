"""What the report's recall figures rest on: the dependence check (a judged sample of region N) and the
assumption of independence said in plain words.

``dependence_check_run`` computes ``estimation.stats.design_based`` from the topic's samples of A12, B1, B2
and N — with the same label-noise-aware relevant counts as the pair estimate — and tests whether N's count
can be told apart from judging errors (``design_based.complement_noise_floor``); a sample that found nothing
is never noise-limited but bounds what N may hold (notes §9), and the summary says so. ``design_based_block`` and
``assumptions_block`` turn the result into the report's JSON (docs/report.md). Nothing here reads the
database: every input comes from ``TopicInputs``.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from annotation.services.sampling.strata import stratum_words
from estimation.services.extrapolation import STATS_ERRORS
from estimation.services.inputs import SampleInputs, TopicInputs
from estimation.services.report_common import DEPENDENCE_BAND, NEITHER, diagnostic, num, region_sample
from estimation.stats import design_based, pair_recall, stratified

_NOISE_LIMITED_SUMMARY = (
    "The sample of documents neither classifier retrieved found no more relevant documents than judging errors "
    "alone would produce, so it cannot test the pair's assumption or measure recall without it: the recall "
    "figures above still rest on that assumption.")
_NOISE_LIMITED_CORRECTED_SUMMARY = (
    "The sample of documents neither classifier retrieved found about as many relevant documents as judging errors "
    "alone would produce, so it cannot test the pair's assumption. Its recall figures are corrected for those "
    "errors at the workers' estimated accuracy, which is why their range is wide; check those documents with gold "
    "(known-answer) documents or expert reviewers to narrow it.")
_CORRECTED_SENTENCE = (" These figures are corrected for the workers' judging errors, at their accuracy estimated "
                       "from how often they agree.")


@dataclass(frozen=True)
class DependenceCheck:
    """The design-based estimate with N (None without a judged N sample) and whether label noise limits it."""

    design: design_based.DesignBasedRecall | None = None
    noise_floor: design_based.ComplementNoiseFloor | None = None
    diagnostics: list[dict[str, str]] = field(default_factory=list)
    # The label error the design was corrected for (Rogan–Gladen, notes §3); None when it was not.
    label_error: design_based.LabelError | None = None
    # The strata the design was computed over when a sample was drawn by strata (N by score); empty otherwise.
    strata: tuple[stratified.Stratum, ...] = ()

    @property
    def stratified(self) -> bool:
        return bool(self.strata)

    @property
    def corrected(self) -> bool:
        return self.design is not None and self.label_error is not None

    @property
    def noise_limited(self) -> bool:
        return bool(self.noise_floor is not None and self.noise_floor.noise_limited)

    @property
    def tested(self) -> bool:
        """The sample tested the assumption: it was judged and its count is above what errors give."""
        return self.design is not None and not self.noise_limited


def _complement_noise_floor(*, inputs: TopicInputs, complement: SampleInputs,
                            stratified_sample: bool = False) -> design_based.ComplementNoiseFloor | None:
    """design_based.complement_noise_floor on N's majority votes, at the workers' estimated accuracy.

    When N was drawn by strata its documents are not equally likely, so the floor's bound on N's relevant count
    (a simple random sample's) is not computed (no size): the design's own bound is reported instead."""
    if len(complement.votes) != complement.judged or not complement.votes:
        return None
    accuracy = pair_recall.worker_accuracy_from_agreement(votes=inputs.votes)
    if accuracy is None:
        return None
    totals = {t for _, t in complement.votes}
    majority = sum(1 for r, t in complement.votes if 2 * r > t)
    size = None if stratified_sample else inputs.region_sizes.get(NEITHER)
    try:
        return design_based.complement_noise_floor(judged=complement.judged, majority_relevant=majority,
                                                   worker_accuracy=min(1.0, accuracy), votes=max(totals),
                                                   size=None if size is None else max(int(size), complement.judged))
    except STATS_ERRORS:
        return None


# Offset of the label-error draws' seed from the report's: a stream of their own, so the regions' draws keep theirs.
_LABEL_ERROR_SEED = 104_729


def _majority_votes(inputs: TopicInputs) -> dict[str, int] | None:
    """Majority-relevant documents per region of the design (votes 2r > t), or None when a judged document of
    A12, B1, B2 or N has no votes recorded (the labels then cannot be corrected as majority labels)."""
    out = {}
    for key in (*("A12", "B1", "B2"), NEITHER):
        sample = inputs.sample(key)
        if sample is None or sample.judged == 0:
            continue
        if len(sample.votes) != sample.judged:
            return None
        out[key] = sum(1 for r, t in sample.votes if 2 * r > t)
    return out


def _label_error(*, inputs: TopicInputs, draws: int,
                 seed: int) -> tuple[design_based.LabelError | None, dict[str, int] | None]:
    """The majority labels' error, from the workers' estimated accuracy (vote agreement, as the noise floor), for
    the Rogan–Gladen correction; with the majority counts it corrects.  (None, None) without votes on every judged
    document of the design, without an accuracy estimate, or with perfect agreement (nothing to correct)."""
    majority = _majority_votes(inputs)
    if majority is None or not inputs.votes:
        return None, None
    accuracy = pair_recall.worker_accuracy_from_agreement(votes=inputs.votes)
    if accuracy is None or accuracy >= 1.0:
        return None, None
    totals = [t for key in majority if (sample := inputs.sample(key)) is not None for _, t in sample.votes]
    error = design_based.label_error_from_votes(votes=list(inputs.votes), draws=draws, seed=seed + _LABEL_ERROR_SEED,
                                                majority_of=max(totals) if totals else None)
    if error is None or error.perfect:
        return None, None
    return error, majority


def dependence_check_run(*, inputs: TopicInputs, probabilities: Mapping[str, Sequence[float]] | None,
                         confidence: float, draws: int, seed: int) -> DependenceCheck:
    """Design-based recall with the complement sample N (notes §8): no independence assumption.

    Noise-corrected (notes §3) whenever the workers' accuracy can be estimated from their votes (``_label_error``):
    each region's majority-relevant count is corrected for the majority's false positives and negatives by
    Rogan–Gladen, per Monte Carlo draw, with the accuracy's own uncertainty (``design_based.design_based_recall``'s
    ``label_error``) — uncorrected, a 0.85-accurate crowd's false positives in N pull recall to ≈ 0.13 for a
    truth of 0.5 (tests/estimation/stats/test_design_based_coverage.py).  Otherwise ``probabilities``:
    P(relevant) per judged document by region key, as the pair estimate uses them (label noise); a region
    without them counts its labels.  N is a stratum of its own there: at its low prevalence a 2–1 majority is
    more often a worker error than a relevant document.
    """
    complement = inputs.sample(NEITHER)
    sizes = inputs.region_sizes
    if complement is None or complement.judged == 0 or NEITHER not in sizes:
        return DependenceCheck()
    soft = probabilities or {}
    label_error, majority = _label_error(inputs=inputs, draws=draws, seed=seed)

    def region(key: str) -> pair_recall.RegionSample:
        base = region_sample(inputs.sample(key), sizes[key])
        if majority is not None and key in majority and base.judged:
            return pair_recall.RegionSample(size=base.size, judged=base.judged, relevant=float(majority[key]))
        if key in soft and base.judged:
            return pair_recall.RegionSample(size=base.size, judged=base.judged, relevant=float(sum(soft[key])))
        return base

    strata = _design_strata(inputs=inputs, region=region, majority=majority, soft=soft)
    try:
        if strata:
            design = stratified.stratified_design_recall(strata=strata, confidence=confidence, draws=draws, seed=seed,
                                                         label_error=label_error)
        else:
            design = design_based.design_based_recall(
                a12=region("A12"), b1=region("B1"), b2=region("B2"), u=region(NEITHER),
                confidence=confidence, draws=draws, seed=seed, label_error=label_error)
    except STATS_ERRORS as exc:
        return DependenceCheck(diagnostics=[diagnostic("design_based_failed", "error",
                                                       f"The recall from the complement sample failed: {exc}")])
    floor = _complement_noise_floor(inputs=inputs, complement=complement, stratified_sample=bool(strata))
    limited = bool(floor is not None and floor.noise_limited)
    diagnostics = []
    for d in design.diagnostics:
        if d.code == "unjudged_region":
            continue  # the stratified estimate reports unjudged regions already
        if d.code == "independence_rejected" and limited:
            continue  # judging errors alone could make it: not evidence (the warning below says so)
        diagnostics.append(diagnostic(d.code, d.severity, d.message, "design_based_recall"))
    if floor is not None and limited:
        consequence = ("So this sample cannot tell documents the classifiers missed from judging errors: its test of "
                       "the pair's assumption is not evidence either way, and its recall figures are corrected for "
                       "those errors, which makes their intervals wide. " if label_error is not None else
                       "So this sample cannot tell documents the classifiers missed from judging errors: its recall "
                       "figures and its test of the pair's assumption are not evidence either way. ")
        diagnostics.append(diagnostic(
            "complement_label_noise", "warning",
            f"Of the {floor.judged} judged documents that neither classifier retrieved, {floor.majority_relevant} "
            f"were judged relevant by a majority; workers as accurate as these ({floor.worker_accuracy:.2f}) would "
            f"mark about {floor.expected_false_positives:.0f} irrelevant documents relevant by mistake alone. "
            + consequence + "Check these documents with gold (known-answer) documents or expert reviewers, or use "
            "more workers per document.",
            "design_based_recall"))
    return DependenceCheck(design=design, noise_floor=floor, diagnostics=diagnostics, label_error=label_error,
                           strata=tuple(strata))


# The design's region codes as the stats module names them: N (neither classifier) is its complement "U".
_STATS_REGION = {"A12": "A12", "B1": "B1", "B2": "B2", NEITHER: "U"}


def _design_strata(*, inputs: TopicInputs, region: Any, majority: Mapping[str, int] | None,
                   soft: Mapping[str, Sequence[float]]) -> list[stratified.Stratum]:
    """The strata of the design when a region was sampled by strata (N by a scorer's score); [] otherwise.

    A region drawn as one simple random sample is one stratum (key ""); a region drawn by strata is one per
    stratum key, each with its own size N_h and judged count n_h (its inclusion probability n_h/N_h).  Each
    stratum's relevant count is counted the way the unstratified design counts its region: majority votes
    when the labels are corrected for label error, the Dawid–Skene posteriors when soft, else the labels.
    """
    if not any(inputs.sample_strata(key) for key in _STATS_REGION):
        return []
    result = []
    for key, code in _STATS_REGION.items():
        sample = inputs.sample(key)
        parts = inputs.sample_strata(key)
        if sample is None or not parts:
            base = region(key)
            result.append(stratified.Stratum(region=code, size=int(base.size), judged=int(base.judged),
                                             relevant=float(base.relevant)))
            continue
        index = {d: i for i, d in enumerate(sample.document_ids)}
        for part in parts:
            positions = [index[d] for d in part.document_ids]
            if majority is not None and key in majority:
                relevant = float(sum(1 for i in positions if 2 * sample.votes[i][0] > sample.votes[i][1]))
            elif key in soft:
                relevant = float(sum(soft[key][i] for i in positions))
            else:
                relevant = float(sum(sample.labels[i] for i in positions))
            result.append(stratified.Stratum(region=code, size=part.size, judged=len(positions), relevant=relevant,
                                             key=part.key))
    return result


def strata_rows(*, check: DependenceCheck) -> list[dict[str, Any]]:
    """The report's strata table (design_based.strata): per region and stratum, documents, judged, relevant found."""
    names = {"U": NEITHER}
    rows = []
    for stratum in check.strata:
        rows.append({"region": names.get(stratum.region, stratum.region), "stratum": stratum.key or None,
                     "label": stratum_words(stratum.key), "size": stratum.size, "judged": stratum.judged,
                     "relevant": num(stratum.relevant)})
    return rows


def _design_summary(d: design_based.DesignBasedRecall, names: dict[str, str]) -> str:
    """One plain sentence on what the complement sample showed (no symbols; the technical name follows apart)."""
    figures = "; ".join(
        f"{names[key]} {r.point:.3f} (between {r.low:.3f} and {r.high:.3f})"
        for key, r in (("C1", d.r1), ("C2", d.r2)) if r.point is not None and r.low is not None and r.high is not None)
    measured = f" Recall measured without that assumption: {figures}." if figures else ""
    if d.delta1.low is None or d.delta1.high is None:
        return "The complement sample cannot test the pair's assumption yet: a region of the pair has no judgment." + measured
    if d.independence_rejected and d.delta1.low > 1.0:
        return ("The sample of documents neither classifier retrieved shows that the two classifiers tend to find the "
                "same relevant documents, so the pair's recall figures are too high." + measured)
    if d.independence_rejected:
        return ("The sample of documents neither classifier retrieved shows that the two classifiers tend to find "
                "different relevant documents, so the pair's recall figures are too low." + measured)
    return ("The sample of documents neither classifier retrieved is consistent with the pair's assumption that the "
            "classifiers find relevant documents independently." + measured)


def _zero_found_summary(*, d: design_based.DesignBasedRecall, check: DependenceCheck,
                        size: int | None) -> str | None:
    """Zero found in N is evidence (notes §9): "none of m … was relevant: at most X of N's documents are".

    The bound is the noise floor's (it allows for the crowd missing relevant documents, at the workers'
    accuracy); without one (no votes to estimate the accuracy from) the design's exact bound on T_U."""
    floor = check.noise_floor
    if floor is not None and floor.found_none and floor.relevant_upper_bound is not None and not check.stratified:
        judged, upper, confidence = floor.judged, floor.relevant_upper_bound, floor.confidence
    elif ((floor is None or check.stratified) and d.elusion.judged > 0 and d.elusion.found == 0
          and d.t_u.upper_bound is not None):
        judged, upper, confidence = d.elusion.judged, d.t_u.upper_bound, d.confidence
    else:
        return None
    of = f" of the {size:,}" if size else " of the"
    return (f"None of the {judged:,} judged documents neither classifier retrieved was relevant: at most "
            f"{math.ceil(upper - 1e-9):,}{of} documents neither classifier retrieved are relevant "
            f"({confidence:.0%} confidence).")


def _summary(*, d: design_based.DesignBasedRecall, check: DependenceCheck, names: dict[str, str],
             size: int | None) -> str:
    zero = _zero_found_summary(d=d, check=check, size=size)
    design = _design_summary(d, names)
    return design if zero is None else f"{zero} {design}"


def _complement_bound(*, d: design_based.DesignBasedRecall, check: DependenceCheck) -> dict[str, Any] | None:
    """N's prevalence and relevant-count upper bounds (the noise floor's when there is one, else the design's)."""
    floor = check.noise_floor
    # A sample of N drawn by strata: the floor's bounds (a simple random sample's) do not apply; the design's do.
    if floor is not None and floor.prevalence_upper_bound is not None and not check.stratified:
        return {"found_none": floor.found_none, "judged": floor.judged, "found": floor.majority_relevant,
                "elusion_upper_bound": num(floor.prevalence_upper_bound),
                "relevant_upper_bound": num(floor.relevant_upper_bound),
                "false_negative_rate": num(floor.false_negative_rate), "confidence": floor.confidence}
    if d.elusion.judged > 0:
        return {"found_none": d.elusion.found == 0, "judged": d.elusion.judged, "found": num(d.elusion.found),
                "elusion_upper_bound": num(d.elusion.upper_bound), "relevant_upper_bound": num(d.t_u.upper_bound),
                "false_negative_rate": None, "confidence": d.confidence}
    return None


def design_based_block(*, inputs: TopicInputs, check: DependenceCheck) -> dict[str, Any] | None:
    """The dependence check's figures (notes §8): recall that assumes nothing about dependence."""
    d = check.design
    if d is None:
        return None
    pair = inputs.pair
    names = {"C1": pair[0].name, "C2": pair[1].name} if pair is not None else {"C1": "C1", "C2": "C2"}

    def recall(r: design_based.DesignRecall) -> dict[str, Any]:
        return {"estimate": num(r.point), "low": num(r.low), "high": num(r.high),
                "lower_bound": num(r.lower_bound), "conservative_lower_bound": num(r.conservative_lower_bound),
                "pair_estimand": num(r.pair_estimand), "method": r.method}

    complement = inputs.sample(NEITHER)
    noise_limited = check.noise_limited
    # N drawn by score strata (the topic's scorer): "stratified" and the strata table; absent otherwise, so an
    # unstratified topic's block is what it was.
    strata = {"stratified": True, "strata": strata_rows(check=check)} if check.stratified else {}
    return {
        **strata,
        "C1": recall(d.r1), "C2": recall(d.r2),
        "delta1": {"estimate": num(d.delta1.point), "low": num(d.delta1.low), "high": num(d.delta1.high)},
        "independence_rejected": bool(d.independence_rejected) and not noise_limited,
        # Judging errors alone could produce N's relevant count: the block is shown but is not evidence.
        "label_noise_limited": noise_limited,
        "noise_floor": None if check.noise_floor is None else check.noise_floor.as_dict(),
        "elusion": {"estimate": num(d.elusion.point), "low": num(d.elusion.low), "high": num(d.elusion.high),
                    "upper_bound": num(d.elusion.upper_bound), "found": num(d.elusion.found),
                    "judged": d.elusion.judged},
        "relevant_in_complement": {"estimate": num(d.t_u.point), "low": num(d.t_u.low),
                                   "high": num(d.t_u.high), "upper_bound": num(d.t_u.upper_bound)},
        "relevant_total": {"estimate": num(d.relevant_total.point), "low": num(d.relevant_total.low),
                           "high": num(d.relevant_total.high)},
        "complement": {"size": inputs.region_sizes.get(NEITHER),
                       "judged": complement.judged if complement else 0,
                       "relevant": complement.relevant if complement else 0.0},
        # Zero found: a bound on what N may hold (notes §9), with what the design then measured.
        "complement_bound": _complement_bound(d=d, check=check),
        # The Rogan–Gladen correction for the majority labels' errors (notes §3), when it was applied.
        "label_error": _label_error_json(check),
        "summary": ((_NOISE_LIMITED_CORRECTED_SUMMARY if check.corrected else _NOISE_LIMITED_SUMMARY)
                    if noise_limited else
                    _summary(d=d, check=check, names=names, size=inputs.region_sizes.get(NEITHER))
                    + (_CORRECTED_SENTENCE if check.corrected else "")),
        "technical": ("Design-based estimate over the regions A12, B1, B2 and N = U ∖ (A1 ∪ A2) (notes §8); "
                      "δ1 = T12·N/(T1·T2); seed 000 Assumption 1 holds at δ1 = 1."
                      + (" Label-noise corrected: every region's majority-relevant share q is corrected by "
                         "Rogan–Gladen (1978), π = (q + sp − 1)/(se + sp − 1) truncated to [0, 1], per Monte Carlo "
                         "draw, with se = 1 − fn and sp = 1 − fp of a majority of one-coin workers whose accuracy is "
                         "drawn from its posterior (Bayesian bootstrap of the vote agreement; notes §3)."
                         if check.corrected else "")),
    }


def _label_error_json(check: DependenceCheck) -> dict[str, Any] | None:
    error = check.label_error
    if not check.corrected or error is None:
        return None
    accuracy = error.accuracy_point
    return {"corrected": True, "method": "rogan_gladen",
            "worker_accuracy": num(float(accuracy)) if isinstance(accuracy, float) else None,
            "false_positive_rate": num(float(error.fp_point)) if isinstance(error.fp_point, float) else None,
            "false_negative_rate": num(float(error.fn_point)) if isinstance(error.fn_point, float) else None}


def assumptions_block(*, inputs: TopicInputs, stratified: pair_recall.StratifiedPairRecall | None,
                      has_estimate: bool, check: DependenceCheck) -> dict[str, Any] | None:
    """What the pair's recall figures rest on, in plain words, and whether the data tested it."""
    pair = inputs.pair
    if pair is None or not has_estimate:
        return None
    c1, c2 = pair[0].name, pair[1].name
    low, high = DEPENDENCE_BAND
    band: dict[str, Any] = {"delta1_low": low, "delta1_high": high, "C1": None, "C2": None}
    if stratified is not None:
        points = [p for p in stratified.sensitivity if p.delta1 in (low, high)]
        for key, attr in (("C1", "r1"), ("C2", "r2")):
            values = [v for p in points if (v := getattr(p, attr)) is not None]
            if values:
                band[key] = [min(values), max(values)]
    statement = (f"These recall figures assume that {c1} and {c2} find relevant documents independently of each "
                 f"other: a relevant document found by one is no more and no less likely to be found by the other. "
                 f"If they tend to find the same documents, the figures are too high; if they find different ones, "
                 f"too low. Judging more documents of the same regions cannot tell which.")
    band_text = None
    if band["C1"] is not None and band["C2"] is not None:
        band_text = (f"If the two classifiers were somewhat dependent, within the range usually seen, the recall "
                     f"of {c1} would lie between {band['C1'][0]:.3f} and {band['C1'][1]:.3f}, and that of {c2} "
                     f"between {band['C2'][0]:.3f} and {band['C2'][1]:.3f}.")
    if check.tested:
        how = ("A sample of the documents neither classifier retrieved has been judged; it tests this assumption "
               "(see the dependence check).")
    elif check.design is not None:
        how = ("A sample of the documents neither classifier retrieved has been judged, but it found no more "
               "relevant documents than judging errors alone would produce, so it cannot test this assumption: "
               "check those documents with gold documents or expert reviewers.")
    elif inputs.sample(NEITHER) is not None:
        how = ("A sample of the documents neither classifier retrieved has been drawn; once it is judged it will "
               "test this assumption and give a recall that does not rest on it.")
    else:
        how = ("Judging a sample of the documents that neither classifier retrieved (a complement sample) would "
               "test this assumption and give a recall that does not rest on it.")
    return {
        "independence_assumed": True, "tested": check.tested,
        "rejected": bool(check.design.independence_rejected) if check.tested and check.design is not None else None,
        "statement": statement, "band": band, "band_text": band_text, "how_to_test": how,
        "technical": (f"Seed 000 Assumption 1: conditional independence of the pair on relevant documents "
                      f"(δ1 = 1); the band reads the estimates at δ1 from {low:g} to {high:g} (r = r*/δ1, "
                      f"capped at 1)."),
    }
