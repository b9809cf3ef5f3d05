"""Small template helpers of the report pages: label lookups, plain region names, words for the statistics' symbols,
and the one-sentence headline per classifier (issue 12 item 8). Presentation only: no figure is computed here, the
headline compares the recall interval the page shows with the topic's target recall."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django import template
from django.utils.dateparse import parse_datetime

from annotation.models import region_name as annotation_region_name
from core.numbers import finite_or_none, percent_text

register = template.Library()


@register.filter
def get_item(mapping, key):
    """mapping[key], or None: lets a template look up a label by a computed key."""
    if isinstance(mapping, dict):
        return mapping.get(key)
    return None


def _pair_names(pair: Any) -> tuple[str | None, str | None]:
    if isinstance(pair, Mapping):
        return pair.get("c1"), pair.get("c2")
    if pair is not None and hasattr(pair, "c1") and hasattr(pair, "c2"):
        return str(pair.c1.name), str(pair.c2.name)
    return None, None


def region_name(code: Any, pair: Any = None) -> str:
    """The plain name of a region code ("A12" → "found by both"), with the classifier's name in place of
    "the first/second classifier" when the pair is given ("found only by Title keywords"). Unknown codes are
    returned as they are. One vocabulary: annotation.models.REGION_NAMES."""
    c1, c2 = _pair_names(pair)
    return annotation_region_name(code, c1, c2)


register.filter("region_name", region_name)


@register.filter
def region_row_name(row: Any, pair: Any = None) -> str:
    """A report region row's name: the plain name of a pair region; a further classifier's row keeps its label."""
    if not isinstance(row, Mapping):
        return ""
    code = str(row.get("name", ""))
    if code.startswith("R:"):
        return str(row.get("label") or region_name("R"))
    return region_name(code, pair)


def region_legend(pair: Any = None) -> str:
    """One line that says what each region name means."""
    c1, c2 = _pair_names(pair)
    first, second = c1 or "the first classifier", c2 or "the second classifier"
    return (f"Regions: “{region_name('A12', pair)}”: documents both {first} and {second} retrieved; "
            f"“{region_name('B1', pair)}”, “{region_name('B2', pair)}”: documents one of them retrieved and the other "
            f"did not; “{region_name('N', pair)}”: documents neither retrieved.")


register.simple_tag(region_legend, name="region_legend")


# The certification metrics' plain names (the codes stay in the JSON and the API).
METRIC_NAMES = {
    "pair_recall": "Recall (two classifiers)",
    "qbcb_recall": "Recall (uniform sample)",
    "f1": "F1 (uniform test set)",
}


@register.filter
def metric_name(code: Any) -> str:
    """A certification metric's plain name ("pair_recall" → "Recall (two classifiers)"); other text unchanged."""
    return METRIC_NAMES.get(str(code), str(code) if code is not None else "")


@register.filter
def percent(value: Any) -> str:
    """A share (prevalence, 0–1) as the one way the pages print it: a percentage with sensible digits — one decimal
    from 1% up ("20.9%", "1.2%"), two significant digits below ("0.89%", "0.048%"); "—" when unknown."""
    number = finite_or_none(value)
    if number is None:
        return "—"
    return percent_text(number)


@register.filter
def when(value: Any) -> Any:
    """An ISO 8601 time stored as text in a report or a summary ("2026-11-28T01:47:12.5+00:00") as a datetime, so
    the template formats it like every other date (``|when|date:"Y-m-d H:i"``). Datetimes pass through; text that
    is not a time is returned as it is."""
    if isinstance(value, str):
        try:
            parsed = parse_datetime(value)
        except ValueError:
            parsed = None
        return parsed if parsed is not None else value
    return value


# Statistics' codes and symbols that the stats library and older snapshots write into their sentences, and the
# words the page uses for them instead (the glossary keeps the symbols).
_REGION_CODE = re.compile(r"\b(?:pair )?[Rr]egion (A12|B1|B2|N)\b(?: \((?:[^()]|\([^()]*\))*\))?")
_BARE_REGION = re.compile(r"\b(A12|B1|B2)\b(?: \((?:retrieved by both|C1 only|C2 only)\))?")
_SEED_PAREN = re.compile(r"\s*\((?:see )?seeds? \d{3}[^)]*\)")
_SEED = re.compile(r"\b[Ss]eed \d{3}(?:,? (?:Assumption|Sec\.|Section|Appendix|Eq\.) ?[\w.]+)?(?:'s)?")
_WORDS = (
    (re.compile(r"\bEq\. ?1\b"), "the overlap estimate"),
    (re.compile(r"\bEq\. ?2\b"), "the rare-topic estimate"),
    (re.compile(r"δ1"), "dependence ratio"),
    (re.compile(r"n̂"), "estimated number of relevant documents"),
    (re.compile(r"\bQBCB\b"), "quantile-based confidence bound"),
    (re.compile(r"τ"), "target"),
    (re.compile(r"1 − α"), "the confidence"),
    (re.compile(r"1 − β"), "the power"),
    (re.compile(r"α"), "the false-pass rate"),
    (re.compile(r"\bthe paper's separate samples\b"), "the original method's samples"),
    (re.compile(r"\bthe paper's design\b"), "the original method"),
    # The complement's letter in the sampling and certification services' sentences.
    (re.compile(r"\bdocuments of N\b"), "documents found by neither"),
    (re.compile(r"\b(for|in) N\b(?!\s*=)"), "\\1 the region “found by neither”"),
    (re.compile(r"(?<![\w“])N (may|holds|has)\b"), "the region “found by neither” \\1"),
)
# A prevalence written as a share ("prevalence 0.00475278", "prevalence ≈ 0.21"): printed as the pages print it.
_PREVALENCE = re.compile(r"\b(prevalence(?: of| is)?(?: ≈| =)? )([01]?\.\d+)(?![\d%])")
# "Only 4.11367 of the 8 judged documents": an expected count, rounded.
_ONLY_FRACTION = re.compile(r"\bOnly (\d+\.\d{2,}) of\b")


@register.filter
def plain(text: Any, pair: Any = None) -> str:
    """A sentence from the statistics with region codes, C1/C2, equation numbers, δ1, n̂ and seed references put into
    words. The result is plain text: the template escapes it as any other."""
    if text is None:
        return ""
    value = str(text)
    c1, c2 = _pair_names(pair)
    value = re.sub(r"(dependence ratio of C1 and C2) δ1", r"\1", value)
    value = _REGION_CODE.sub(lambda m: f"the region “{region_name(m.group(1), pair)}”", value)
    value = _BARE_REGION.sub(lambda m: f"“{region_name(m.group(1), pair)}”", value)
    value = _PREVALENCE.sub(lambda m: f"{m.group(1)}{percent_text(float(m.group(2)))}", value)
    value = _ONLY_FRACTION.sub(lambda m: f"Only about {float(m.group(1)):.1f} of", value)
    value = re.sub(r"\bC1\b", c1 or "the first classifier", value)
    value = re.sub(r"\bC2\b", c2 or "the second classifier", value)
    value = _SEED_PAREN.sub("", value)
    value = _SEED.sub("the method's paper", value)
    for pattern, words in _WORDS:
        value = pattern.sub(words, value)
    # A sentence that now starts with one of those words starts with a capital.
    return re.sub(r"(^|[.!?:]\s+)the (overlap|rare-topic|region|method|dependence|estimated|target)",
                  lambda m: f"{m.group(1)}The {m.group(2)}", value)


# --------------------------------------------------------------------------- headline


_finite = finite_or_none


def _shown(value: float, *, against: float, digits: int = 3) -> str:
    """`value` with the page's 3 decimals, or more when 3 would print it equal to `against` while it is not: the
    headline never reads "0.800 — below the target 0.80"."""
    for places in range(digits, 7):
        text = f"{value:.{places}f}"
        if value == against or float(text) != against:
            return text
    return f"{value:.6f}"


# What a headline's figure rests on, in the page's words (report schema 3, "headline"."basis").
HEADLINE_BASIS_LABELS = {
    "design": "Measured, no assumption about the classifiers' dependence",
    "band": "Within a declared range of dependence",
    "pair_model": "If the two classifiers are independent",
}


def recall_headline(*, name: str, recall: Mapping[str, Any] | None, target: float, confidence: float | None,
                    withheld_reason: str = "", basis: str | None = None, statement: str = "",
                    withheld: bool = False) -> dict[str, str]:
    """{"state": "meets"|"below"|"straddles"|"no_interval"|"withheld", "text": one plain sentence} for one classifier.

    meets: the interval's lower end reaches the target; below: its upper end is under it; straddles: the target is
    inside the interval, so the sample cannot tell yet. The figures are those the page shows (recall clipped to
    [0, 1] as everywhere on the page). With ``basis`` (the report's headline: "design", "band", "pair_model") the
    result also carries "basis", "basis_label" (plain words) and "statement" (what the figure rests on).
    ``withheld``: the report withholds the figure on evidence (the row's ``recall.withheld_reason``, e.g. the pair's
    model contradicts what was found), so the line says "withheld", not "not shown yet"."""
    result = _recall_headline(name=name, recall=recall, target=target, confidence=confidence,
                              withheld_reason=withheld_reason, withheld=withheld)
    if basis is not None:
        result.update(basis=str(basis), basis_label=HEADLINE_BASIS_LABELS.get(str(basis), str(basis)),
                      statement=str(statement or ""))
    return result


def _recall_headline(*, name: str, recall: Mapping[str, Any] | None, target: float, confidence: float | None,
                     withheld_reason: str = "", withheld: bool = False) -> dict[str, str]:
    recall = recall or {}
    estimate, low, high = (_finite(recall.get(k)) for k in ("estimate", "low", "high"))
    target_text = f"{target:.2f}"
    if estimate is None:
        why = withheld_reason or "there are not enough judged documents to estimate it yet"
        if withheld and withheld_reason:
            return {"state": "withheld", "text": f"{name}: recall withheld — {why}."}
        return {"state": "withheld", "text": f"{name}: recall not shown yet — {why}."}
    estimate = min(1.0, max(0.0, estimate))
    if low is None or high is None:
        return {"state": "no_interval",
                "text": f"{name}: recall {_shown(estimate, against=target)} without an interval yet — cannot tell "
                        f"whether it reaches the target {target_text}."}
    low, high = min(1.0, max(0.0, low)), min(1.0, max(0.0, high))
    figure = (f"recall {_shown(estimate, against=target)} "
              f"({_shown(low, against=target)}–{_shown(high, against=target)})")
    level = f" at {confidence:.0%} confidence" if confidence else ""
    if low >= target:
        return {"state": "meets", "text": f"{name}: {figure} — meets the target {target_text}{level}."}
    if high < target:
        return {"state": "below", "text": f"{name}: {figure} — below the target {target_text}{level}."}
    return {"state": "straddles",
            "text": f"{name}: {figure} — cannot tell yet: the interval straddles the target {target_text}; "
                    f"judging more documents narrows it."}
