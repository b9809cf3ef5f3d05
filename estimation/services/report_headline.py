"""The headline of each classifier row: the recall figure the report leads with, and what it rests on in words.

ESTIMATION-NOTES §8, §9: the pair's interval assumes the two classifiers are independent (δ1 = 1) and on
Reuters held the corpus recall in 8 of 24 cases; a headline must come from a design that covers the truth. So
each row of ``report["classifiers"]`` gets ``headline`` = {estimate, low, high, basis, judged, statement}:

* ``design`` — the design-based block (samples of A12, B1, B2 and N) has an interval for it, and either it is
  corrected for the crowd's judging errors (Rogan–Gladen at the workers' estimated accuracy, its
  ``label_error``) or those errors cannot account for much of N's relevant count (``_n_count_unreliable``);
* ``band`` — otherwise the widest interval over the declared δ1 band (0.8–1.25) of the sensitivity table;
* ``pair_model`` — only the pair's own interval exists (the paper's design, no sensitivity).

The figures come from ``estimation.stats.headline``; this module only picks the source and words it.
Nothing here reads the database. Schema: docs/report.md.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from estimation.services.inputs import TopicInputs
from estimation.services.report_common import DEPENDENCE_BAND, NEITHER, PAIR_KEYS
from estimation.stats import headline as headline_stats

DESIGN_STATEMENT = ("Measured on samples of every region, including documents neither classifier retrieved: holds "
                    "whatever the two classifiers' dependence.")
DESIGN_NOISE_STATEMENT = (
    "Measured on samples of every region, including documents neither classifier retrieved, so it does not rest "
    "on the classifiers' dependence; but judging errors alone could produce the relevant documents found among "
    "those neither classifier retrieved, so it is only as good as those judgments: check them with gold "
    "(known-answer) documents or expert reviewers.")
# The design-based figure leads only when the crowd's judging errors cannot account for much of what was found in
# N: a majority's false positives, about m·fp among m judged documents of N, inflate N's relevant count and pull
# recall down. Measured (tests/estimation/stats/test_design_based_coverage.py): with three 0.85-accurate workers
# (fp 0.061) and N 0.2–0.7% relevant, the design-based interval covered the true recall in 0 of 400 studies.
# Zero found cannot be inflated by false positives, so it always leads (its bound allows for missed documents).
# A design figure corrected for the label error (design_based_recall's label_error, Rogan–Gladen per draw with the
# accuracy's uncertainty) leads whatever N's count: the same test measured 0.965–0.978 coverage with it.
NOISE_SHARE_ALLOWED = 0.2
DESIGN_CORRECTED_STATEMENT = (
    "Measured on samples of every region, including documents neither classifier retrieved: holds whatever the two "
    "classifiers' dependence. Corrected for the workers' judging errors (accuracy {accuracy}, estimated from how "
    "often they agree)")
DESIGN_CORRECTED_NOISE_TAIL = (
    "; those errors could produce most of the relevant documents found among those neither classifier retrieved, "
    "which is why the range is wide: gold (known-answer) documents or expert reviewers would narrow it.")
UNRELIABLE_N_STATEMENT = (
    "The documents neither classifier retrieved were judged, but judging errors could account for about {expected} "
    "of the {found} found relevant there, which would pull a measured recall down; so this figure rests on the "
    "dependence band instead. ")
CONTRADICTED_STATEMENT = (
    "Withheld: the pair's model estimates fewer relevant documents than were already found, evidence that the two "
    "classifiers find the same documents more often than even the dependence band allows; judge a sample of "
    "documents neither classifier retrieved to measure recall without that assumption.")
PAIR_MODEL_STATEMENT = "If the two classifiers are independent — an assumption this report has not tested."
PAIR_MODEL_TESTED_STATEMENT = ("If the two classifiers are independent — an assumption the sample of documents "
                               "neither classifier retrieved does not support.")


def _interval_words(figure: headline_stats.HeadlineFigure) -> str:
    if figure.low is None or figure.high is None:
        return "has no interval yet"
    return f"lies between {figure.low:.3f} and {figure.high:.3f}"


def _band_statement(figure: headline_stats.HeadlineFigure, *, through_total: bool = False) -> str:
    low, high = DEPENDENCE_BAND
    measured = " (measured through the estimated number of relevant documents)" if through_total else ""
    return (f"If the classifiers' dependence ratio lies between {low:g} and {high:g} (not measured: judge documents "
            f"neither classifier retrieved to measure it), recall{measured} {_interval_words(figure)}.")


def _judged(inputs: TopicInputs, *keys: str) -> int:
    return sum(sample.judged for key in keys if (sample := inputs.sample(key)) is not None)


def _pair_design_judged(report: Mapping[str, Any], inputs: TopicInputs) -> int:
    """The judged documents behind the pair's own figures: A12, B1, B2 (stratified) or A1, A2, A12 (paper)."""
    return _judged(inputs, "A1", "A2", "A12") if report.get("design") == "paper" else _judged(inputs, *PAIR_KEYS)


def _sensitivity_points(sensitivity: Sequence[Mapping[str, Any]] | None,
                        attr: str) -> list[tuple[float, float | None, float | None, float | None]]:
    return [(float(p["delta1"]), p.get(attr), p.get(f"{attr}_low"), p.get(f"{attr}_high"))
            for p in sensitivity or [] if p.get("delta1") is not None]


def _as_json(figure: headline_stats.HeadlineFigure, statement: str) -> dict[str, Any]:
    return {"estimate": figure.estimate, "low": figure.low, "high": figure.high, "basis": figure.basis,
            "judged": figure.judged, "statement": statement}


def _pair_model(row: Mapping[str, Any], judged: int, design: Mapping[str, Any] | None) -> dict[str, Any]:
    recall = row.get("recall") or {}
    figure = headline_stats.headline_figure(estimate=recall.get("estimate"), low=recall.get("low"),
                                            high=recall.get("high"), basis="pair_model", judged=judged)
    rejected = bool(design and design.get("independence_rejected"))
    return _as_json(figure, PAIR_MODEL_TESTED_STATEMENT if rejected else PAIR_MODEL_STATEMENT)


def _corrected(design: Mapping[str, Any] | None) -> bool:
    return bool(((design or {}).get("label_error") or {}).get("corrected"))


def _corrected_statement(design: Mapping[str, Any]) -> str:
    accuracy = (design.get("label_error") or {}).get("worker_accuracy")
    words = DESIGN_CORRECTED_STATEMENT.format(accuracy="unknown" if accuracy is None else f"{float(accuracy):.2f}")
    return words + (DESIGN_CORRECTED_NOISE_TAIL if design.get("label_noise_limited") else ".")


def _n_count_unreliable(design: Mapping[str, Any] | None) -> str:
    """Why N's relevant count cannot lead the headline (the words to put first), or "" when it can.

    A design figure corrected for label error can lead (its interval allows for the errors).  Uncorrected, it
    cannot when the crowd's expected false positives exceed ``NOISE_SHARE_ALLOWED`` of N's count."""
    if _corrected(design):
        return ""
    floor = (design or {}).get("noise_floor") or {}
    found = float(floor.get("majority_relevant") or 0)
    expected = float(floor.get("expected_false_positives") or 0)
    if not floor or found == 0 or expected <= NOISE_SHARE_ALLOWED * found:
        return ""
    return UNRELIABLE_N_STATEMENT.format(expected=f"{min(expected, found):.0f}", found=f"{found:.0f}")


def _contradicted(report: Mapping[str, Any]) -> bool:
    """The pair's model estimates fewer relevant documents than were found (``estimated_relevant.contradicts_found``):
    every figure resting on it — the band's too, which only rescales it — is withheld."""
    return bool((report.get("estimated_relevant") or {}).get("contradicts_found"))


STRATIFIED_SENTENCE = (" The documents neither classifier retrieved were sampled in {count} strata by a scorer's "
                       "score, each weighed by its own size.")


def _stratified_sentence(design: Mapping[str, Any] | None) -> str:
    """Said after a design headline when N was drawn by score strata (design_based.strata), else ""."""
    block: Mapping[str, Any] = design or {}
    if not block.get("stratified"):
        return ""
    count = sum(1 for row in block.get("strata") or [] if row.get("region") == NEITHER)
    return STRATIFIED_SENTENCE.format(count=count)


def _pair_headline(*, row: Mapping[str, Any], key: str, report: Mapping[str, Any],
                   inputs: TopicInputs) -> dict[str, Any]:
    design = report.get("design_based")
    recall = (design or {}).get(key) or {}
    unreliable = _n_count_unreliable(design)
    if (not unreliable and recall.get("estimate") is not None and recall.get("low") is not None
            and recall.get("high") is not None):
        figure = headline_stats.headline_figure(estimate=recall["estimate"], low=recall["low"], high=recall["high"],
                                                basis="design", judged=_judged(inputs, *PAIR_KEYS, NEITHER))
        noisy = bool((design or {}).get("label_noise_limited"))
        strata = _stratified_sentence(design)
        if design is not None and _corrected(design):
            return _as_json(figure, _corrected_statement(design) + strata)
        return _as_json(figure, (DESIGN_NOISE_STATEMENT if noisy else DESIGN_STATEMENT) + strata)
    pair_judged = _judged(inputs, *PAIR_KEYS)
    if _contradicted(report):
        return _as_json(headline_stats.headline_figure(estimate=None, low=None, high=None, basis="band",
                                                       judged=pair_judged), CONTRADICTED_STATEMENT)
    band = headline_stats.band_figure(points=_sensitivity_points(report.get("sensitivity"),
                                                                 "r1" if key == "C1" else "r2"),
                                      judged=pair_judged, band=DEPENDENCE_BAND)
    if band.low is not None:
        return _as_json(band, unreliable + _band_statement(band))
    # The paper's design (no sensitivity table): the pair's own figure, from whichever samples it used.
    return _pair_model(row, _pair_design_judged(report, inputs), design)


def _extra_headline(*, row: Mapping[str, Any], report: Mapping[str, Any], inputs: TopicInputs) -> dict[str, Any]:
    """A further classifier: p_C·|A_C| over the number of relevant documents, from what the report has."""
    own = int((row.get("precision") or {}).get("judged") or 0)
    precision = row.get("precision") or {}
    # A number, or the words saying it was not counted (a further classifier of a corpus in the team's engine).
    retrieved = float(row["retrieved"]) if isinstance(row.get("retrieved"), int | float) else 0.0
    design = report.get("design_based") or {}
    total = design.get("relevant_total") or {}
    confidence = float((report.get("topic") or {}).get("confidence") or 0.95)

    def found(value: Any) -> float | None:
        return None if value is None else float(value) * retrieved

    unreliable = _n_count_unreliable(design)
    if (not unreliable and total.get("estimate") is not None and precision.get("estimate") is not None
            and retrieved > 0):
        figure = headline_stats.ratio_figure(
            found=found(precision.get("estimate")), found_low=found(precision.get("low")),
            found_high=found(precision.get("high")), total=total.get("estimate"), total_low=total.get("low"),
            total_high=total.get("high"), judged=own + _judged(inputs, *PAIR_KEYS, NEITHER), basis="design")
        if figure.low is not None:
            statement = (f"Its own precision sample over the number of relevant documents measured on samples of "
                         f"every region, including documents neither classifier of the pair retrieved: holds "
                         f"whatever the pair's dependence. The interval joins two intervals at {confidence:.0%} "
                         f"confidence, so it holds with at least {confidence ** 2:.0%} confidence.")
            statement += _stratified_sentence(design)
            if _corrected(design):
                statement += " The number of relevant documents is corrected for the workers' judging errors."
            elif design.get("label_noise_limited"):
                statement += (" Judging errors alone could produce the relevant documents found among those "
                              "neither classifier retrieved: check them with gold documents or expert reviewers.")
            return _as_json(figure, statement)
    recall = row.get("recall") or {}
    pair_judged = own + _judged(inputs, *PAIR_KEYS)
    if _contradicted(report):
        return _as_json(headline_stats.headline_figure(estimate=None, low=None, high=None, basis="band",
                                                       judged=pair_judged), CONTRADICTED_STATEMENT)
    if report.get("sensitivity"):
        band = headline_stats.band_from_pair_interval(estimate=recall.get("estimate"), low=recall.get("low"),
                                                      high=recall.get("high"), judged=pair_judged,
                                                      band=DEPENDENCE_BAND)
        if band.low is not None:
            return _as_json(band, unreliable + _band_statement(band, through_total=True))
    return _pair_model(row, own + _pair_design_judged(report, inputs), report.get("design_based"))


def classifier_headlines(*, report: Mapping[str, Any], inputs: TopicInputs) -> list[dict[str, Any]]:
    """One headline per row of ``report["classifiers"]``, in their order (docs/report.md, "headline")."""
    rows = []
    for row in report.get("classifiers") or []:
        key = {"c1": "C1", "c2": "C2"}.get(str(row.get("role", "")).lower())
        if key is not None:
            rows.append(_pair_headline(row=row, key=key, report=report, inputs=inputs))
        else:
            rows.append(_extra_headline(row=row, report=report, inputs=inputs))
    return rows
