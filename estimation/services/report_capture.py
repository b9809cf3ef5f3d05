"""The report's capture–recapture ("dependence") and pooled-recall (seed 003) blocks, from gathered inputs.

Plain functions of `estimation.services.inputs.TopicInputs` (no database), each
returning the JSON-ready block and the diagnostics it raises, as dicts
``{"code", "severity", "message", "source"}``.  They replace
`_ReportBuilder._dependence` / `_venn3_counts` and `_ReportBuilder._pooled_recall`
of estimation/services/reports.py; the keys of those blocks are kept, fields are
added (docs/report.md):

* ``dependence_block``: per further classifier C, log-linear capture–recapture
  on the seven Venn regions of (C1, C2, C) — the point fit as before, plus
  ``interval`` (N̂, recalls and δ with intervals that include the sampling
  variance of the judged samples, ESTIMATION-NOTES §8) and ``regions`` (the
  samples behind each count).  A warning fires when the δ of C1 and C2 has an
  interval that excludes 1: evidence against the pair's independence
  assumption.
* ``pooled_recall_block``: seed 003 with the pair design's A12, B1, B2 samples
  used as a stratified sample of A1 and A2 (each region weighted by its
  inclusion probability, |region| / judged); refused, with a diagnostic, when
  a pool member's output is not reached by any judged sample.
"""
from __future__ import annotations

from typing import Any

from estimation.services.extrapolation import STATS_ERRORS
from estimation.services.inputs import ClassifierInputs, SampleInputs, TopicInputs
from estimation.services.report_common import diagnostic
from estimation.stats.capture_recapture import HISTORIES, RegionCount, capture_recapture_interval
from estimation.stats.design_based import label_error_from_votes
from estimation.stats.pooled_recall import CorpusSample, StratumSample, SystemSample, pooled_recall

# Draws of the capture–recapture bootstrap: each refits up to seven log-linear models, so the
# report caps them (500, as in the coverage tests of tests/estimation/stats/test_capture_recapture.py;
# ~15–35 ms per further classifier on the 2-core host).
CAPTURE_RECAPTURE_DRAWS = 500
# Bootstrap resamples for pooled recall (as reports.POOLED_RECALL_DRAWS).
POOLED_RECALL_DRAWS = 2_000
# (sample key, history when the document is in C, history when it is not)
_SPLIT = {"A12": ("111", "110"), "B1": ("101", "100"), "B2": ("011", "010")}


def _judged(sample: SampleInputs | None) -> bool:
    return sample is not None and sample.judged > 0


# --------------------------------------------------------------------------- capture–recapture


def dependence_regions(*, inputs: TopicInputs, classifier_id: int) -> dict[str, RegionCount]:
    """The judged sample behind each of the seven Venn regions of (C1, C2, C), keyed by capture history.

    A12, B1 and B2's samples are split by membership of C (each part is a
    simple random sample of its sub-region, of random size); "001" (C alone)
    comes from C's own precision sample, restricted to documents neither C1
    nor C2 retrieved.  Sizes from ``inputs.venn3``.
    """
    pair = inputs.pair
    if pair is None:
        raise ValueError("capture–recapture needs the classifier pair")
    c1, c2 = pair
    sizes = inputs.venn3.get(str(classifier_id)) or {}
    labels: dict[str, list[float]] = {h: [] for h in HISTORIES}
    for key, (inside, outside) in _SPLIT.items():
        sample = inputs.sample(key)
        if sample is None:
            continue
        for label, holders in zip(sample.labels, sample.retrieved_by):
            labels[inside if classifier_id in holders else outside].append(label)
    own = inputs.sample(f"R:{classifier_id}")
    if own is not None:
        for label, holders in zip(own.labels, own.retrieved_by):
            if c1.id not in holders and c2.id not in holders:
                labels["001"].append(label)
    regions = {}
    for history in HISTORIES:
        size = int(sizes.get(history, 0))
        judged = min(len(labels[history]), size)
        # Summed in document-id order (the samples' order) so the float is the same on every run.
        relevant = float(sum(labels[history][:judged]))
        regions[history] = RegionCount(size=size, judged=judged, relevant=relevant)
    return regions


def dependence_block(
    *, inputs: TopicInputs, confidence: float, draws: int, seed: int
) -> tuple[list[dict[str, Any]] | None, list[dict[str, str]]]:
    """Log-linear capture–recapture with each further classifier as the third (ESTIMATION-NOTES §1, §8).

    Returns (rows, diagnostics); rows is None without a pair or further
    classifiers.  Row keys as before — id, classifier, counts (|region|·p̂ per
    history, None where no document is judged), best, summary, models,
    refused — plus ``regions`` (size, judged, relevant per history) and
    ``interval`` (`capture_recapture_interval`: N̂, recalls, δ12/δ13/δ23 with
    intervals that include the sampling variance; the model re-selected per
    draw).  "best" and "summary" now describe the model chosen by the
    design-adjusted AIC and its intervals (before: plain AIC, ± the
    exact-count se, which covered the truth about 55% of the time).  Diagnostics: "capture_recapture" (info, the summary) per fitted
    classifier, and "capture_recapture_dependence" (warning) when δ1's
    interval excludes 1.
    """
    pair = inputs.pair
    if pair is None or not inputs.extras:
        return None, []
    diagnostics: list[dict[str, str]] = []
    rows = []
    # Majority labels err (issue 24): the counts are corrected with the workers' accuracy from their agreement on
    # every judged non-gold document (Dawid–Skene posteriors already allow for the errors).
    label_error = (None if inputs.soft_labels or not inputs.votes
                   else label_error_from_votes(votes=list(inputs.votes), draws=min(int(draws), CAPTURE_RECAPTURE_DRAWS),
                                               seed=seed))
    for info in inputs.extras:
        regions = dependence_regions(inputs=inputs, classifier_id=info.id)
        missing = [h for h, r in regions.items() if r.size > 0 and r.judged == 0]
        counts: dict[str, float | None] = {
            h: (None if h in missing else (r.size * r.relevant / r.judged if r.judged else 0.0))
            for h, r in regions.items()
        }
        row: dict[str, Any] = {
            "id": info.id, "classifier": info.name, "counts": counts, "best": None, "summary": None, "models": [],
            "refused": None, "interval": None,
            "regions": {h: {"size": r.size, "judged": r.judged, "relevant": r.relevant} for h, r in regions.items()},
        }
        if missing:
            row["refused"] = (f"No judged document yet in the region(s) {', '.join(missing)} of the diagram of "
                              f"C1, C2 and {info.name} (history \"x1x2x3\": 1 = found by C1, C2, {info.name}).")
            rows.append(row)
            continue
        try:
            result = capture_recapture_interval(regions=regions, selection="aic", confidence=confidence,
                                                draws=min(int(draws), CAPTURE_RECAPTURE_DRAWS), seed=seed,
                                                label_error=label_error)
        except STATS_ERRORS as exc:
            row["refused"] = str(exc)
            rows.append(row)
            continue
        interval = result.as_dict()
        interval.pop("point")  # its models are the row's "models"
        # "best" is the model the intervals and the summary describe (design-adjusted AIC); "models" keeps
        # every fit to the scaled counts with its plain AIC and its (too narrow) exact-count se.
        row.update(best=result.model, summary=result.summary,
                   models=[m.as_dict() for m in result.point.models], interval=interval)
        diagnostics.append(diagnostic("capture_recapture", "info", result.summary, "capture_recapture"))
        if result.dependence_evidence:
            diagnostics.append(_dependence_warning(info=info, pair=pair, result=result))
        rows.append(row)
    return rows, diagnostics


def _dependence_warning(*, info: ClassifierInputs, pair: tuple[ClassifierInputs, ClassifierInputs],
                        result: Any) -> dict[str, str]:
    c1, c2 = pair
    delta = result.delta12
    direction = ("find the same relevant documents more often than chance would" if delta.low > 1.0
                 else "find the same relevant documents less often than chance would")
    consequence = ("so the pair's recall figures, which assume they are independent (δ1 = 1), are too high"
                   if delta.low > 1.0 else "so the pair's recall figures, which assume they are independent "
                   "(δ1 = 1), are too low")
    return diagnostic(
        "capture_recapture_dependence", "warning",
        f"With {info.name} as a third classifier, {c1.name} and {c2.name} {direction}: their dependence ratio "
        f"δ1 is about {delta.point:.2f} ({result.confidence:.0%} interval {delta.low:.2f}–{delta.high:.2f}, "
        f"model {result.model}), {consequence}. Treat the recall as resting on that assumption, or judge a sample "
        "of the documents neither classifier retrieved (the dependence check).",
        "capture_recapture")


# --------------------------------------------------------------------------- pooled recall (seed 003)


def _uncovered(inputs: TopicInputs) -> tuple[list[str], list[ClassifierInputs]]:
    """Pool members whose output some judged sample does not reach (precise, from the region sizes), and the
    further classifiers without a sample of their own that the A12/B1/B2 (or A1/A2) samples do reach."""
    pair = inputs.pair
    assert pair is not None
    c1, c2 = pair
    sizes = inputs.region_sizes
    covered_region = {key: sizes.get(key, 0) == 0 or _judged(inputs.sample(key)) for key in _SPLIT}
    # A uniform sample of A1 (A2) — the paper's design — reaches all of A12 and B1 (B2).
    a1, a2 = _judged(inputs.sample("A1")), _judged(inputs.sample("A2"))
    reached = {"A12": covered_region["A12"] or a1 or a2, "B1": covered_region["B1"] or a1,
               "B2": covered_region["B2"] or a2}
    missing = []
    if not (reached["A12"] and reached["B1"]):
        missing.append(c1.name)
    if not (reached["A12"] and reached["B2"]):
        missing.append(c2.name)
    inside_union = []
    for info in inputs.extras:
        if _judged(inputs.sample(f"R:{info.id}")) or info.retrieved == 0:
            continue
        venn = inputs.venn3.get(str(info.id))
        parts = {"A12": "111", "B1": "101", "B2": "011"}
        if venn is None or venn.get("001", 1) > 0 or any(
            not reached[key] for key, history in parts.items() if venn.get(history, 0)
        ):
            missing.append(info.name)
        else:
            inside_union.append(info)
    return missing, inside_union


def pooled_recall_block(
    *, inputs: TopicInputs, confidence: float, draws: int, seed: int
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """Seed 003 recall of every classifier of the topic, from all its judged samples (ESTIMATION-NOTES §7).

    Needs at least three classifiers (the pair and a further one) and a judged
    uniform sample of the corpus (U, for the pool's recall).  Samples: the
    pair design's A12, B1, B2 as region samples (inside/outside C1, C2), the
    paper design's A1/A2 as C1's/C2's own, R:<id> as each further
    classifier's own.  Refused (None and a "pooled_recall_refused" warning)
    when a pool member's output is not reached by a judged sample: its
    documents would silently drop out of the pool (issue 11 item 6).
    The block keeps the keys of `PooledRecallResult.as_dict()` (systems with
    "id" and names, weights by sample name) and adds "samples".
    """
    uniform = inputs.sample("U")
    pair = inputs.pair
    if pair is None:
        return None, []
    systems_info = list(pair) + list(inputs.extras)
    if len(systems_info) < 3 or uniform is None or uniform.judged == 0:
        return None, []
    source = "pooled_recall"
    missing, inside_union = _uncovered(inputs)
    if missing:
        return None, [diagnostic(
            "pooled_recall_refused", "warning",
            f"Pooled recall (seed 003) is not shown: no judged sample reaches the documents retrieved by "
            f"{', '.join(missing)}. Without one, those documents would silently drop out of the pool and every "
            "classifier's recall would be overstated. Judge a precision sample of "
            f"{'it' if len(missing) == 1 else 'each'} first.", source)]
    name_of = {c.id: str(c.id) for c in systems_info}
    own = {pair[0].id: inputs.sample("A1"), pair[1].id: inputs.sample("A2")}
    own.update({c.id: inputs.sample(f"R:{c.id}") for c in inputs.extras})
    systems = []
    for info in systems_info:
        sample = own.get(info.id)
        systems.append(SystemSample(
            name=name_of[info.id], retrieved=info.retrieved or 0,  # None (an engine corpus) never gets here
            relevant=list(sample.labels) if sample else [],
            retrieved_by=[[name_of[c] for c in holders if c in name_of] for holders in sample.retrieved_by]
            if sample else [],
        ))
    c1, c2 = (name_of[c.id] for c in pair)
    layout = {"A12": ((c1, c2), ()), "B1": ((c1,), (c2,)), "B2": ((c2,), (c1,))}
    strata = []
    for key, (inside, outside) in layout.items():
        sample = inputs.sample(key)
        if not _judged(sample):
            continue
        assert sample is not None
        strata.append(StratumSample(
            name=key, size=sample.size, inside=inside, outside=outside, relevant=list(sample.labels),
            retrieved_by=[[name_of[c] for c in holders if c in name_of] for holders in sample.retrieved_by]))
    corpus = CorpusSample(relevant=list(uniform.labels), in_pool=[bool(holders) for holders in uniform.retrieved_by])
    # Majority labels err (issue 24 item 6): θ is corrected with the workers' accuracy from the votes of every
    # judged non-gold document. Dawid–Skene posteriors already allow for the errors.
    noisy = not inputs.soft_labels and len(uniform.votes) == uniform.judged
    try:
        result = pooled_recall(systems=systems, strata=strata, reached=[name_of[c.id] for c in inside_union],
                               corpus_sample=corpus, confidence=confidence,
                               corpus_votes=list(uniform.votes) if noisy else None,
                               error_votes=(list(inputs.votes) or None) if noisy else None,
                               draws=min(int(draws), POOLED_RECALL_DRAWS), seed=seed)
    except STATS_ERRORS as exc:
        return None, [diagnostic("pooled_recall_unavailable", "info",
                                  f"Pooled recall (seed 003) is not available: {exc}", source)]
    names = {str(info.id): info.name for info in systems_info}
    data = result.as_dict()
    for system in data["systems"]:
        system["id"] = int(system["name"])
        system["name"] = names[system["name"]]
    data["weights"] = {names.get(k, k): v for k, v in data["weights"].items()}
    data["samples"] = [
        {"sample": s.name, "kind": "region", "size": s.size, "judged": len(s.relevant)} for s in strata
    ] + [
        {"sample": names[s.name], "kind": "own output", "size": s.retrieved, "judged": len(s.relevant)}
        for s in systems if len(s.relevant)
    ]
    data["basis"] = _pooled_basis(data)
    diagnostics = []
    if result.pool_recall_refused:
        diagnostics.append(diagnostic("pooled_recall_true_withheld", "warning", result.pool_recall_refused, source))
    return data, diagnostics


def _pooled_basis(data: dict[str, Any]) -> str:
    """What the block's true recalls rest on, in words (shown under the figures on the page)."""
    documents = data.get("uniform_documents")
    error = data.get("label_error")
    words = ("Seed 003: true recall = the pool's recall, from the uniform sample of the corpus"
             + (f" ({documents:,} judged documents)" if documents else "")
             + ", × each classifier's share of the pool's relevant documents, from the judged samples.")
    if error:
        accuracy = error.get("worker_accuracy")
        words += (" The uniform sample's labels are corrected for the workers' errors (Rogan–Gladen"
                  + (f", workers' accuracy {accuracy:.2f} from their agreement" if accuracy is not None else "")
                  + f", a majority label wrong {100 * error['false_positive']:.1f}% of the time).")
    elif data.get("pool_recall") is not None:
        words += " The labels are taken as they are (no correction for the workers' errors)."
    return words
