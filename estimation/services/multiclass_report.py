"""The report of a topic set (Topic.kind "multiclass"): every router against the judged uniform sample (seed 002).

Inputs (``MulticlassInputs``, frozen, stored with the snapshot; its checksum decides a new version):

* The sample is the topic's uniform sample of the corpus: SampleDraw purpose "uniform", region "U"
  (certification and gold-check draws are never read). A uniform sample makes the confusion matrix an
  unbiased picture of the corpus, which seed 002's model assumes (class shares mu estimated from it).
* A sampled document's true class is its label's ``majority_class`` (three workers, the class with
  strictly more sure votes than every other). A complete label with no such class (a tie, or only
  "unsure" votes) is *undecided*: counted and shown, in no matrix (never read as "none of these").
  A label still short of its third vote is *pending*. A document an analyst made gold keeps its
  sample place with its known class (``gold_class``).
* Dawid–Skene topics (aggregator "dawid_skene"): when a label has a stored ``class_posterior`` the
  document adds its class probabilities to its predicted column (expected counts,
  ``confusion_matrix_expected``) instead of one vote for the argmax: the argmax would throw away the
  posterior's doubt. A document without a stored posterior falls back to its majority class.
* Each non-archived router's class for every judged document: its RouterPrediction row, 0 ("none of
  these") when it has none.

The report (``report["kind"] == "multiclass"``) holds, per router, the confusion matrix, per-class
precision and recall with 95% HDIs, and micro-/macro-F1 posteriors (score, mean, sd, HDI, P(> 0.8)
plus quantiles for any other reference, a density), all by ``estimation.stats.multiclass``; the sample
and its undecided documents; worker agreement (Fleiss' kappa over the M + 1 classes); the assumptions
in words. F1 averages are over the M topics; "none of these" is modelled but not averaged
(docs/report.md).
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

import numpy as np

from annotation.models import Hit, Judgment, Label, Router, RouterPrediction, SampledDocument, SampleDraw, Topic
from core.errors import ApplicationError
from estimation.services.inputs import CostInputs, _cost, _fee_per_assignment
from estimation.stats.aggregation import fleiss_kappa
from estimation.stats.multiclass import (
    AverageF1,
    MulticlassPosterior,
    SampleSizePlan,
    confusion_matrix,
    confusion_matrix_expected,
    multiclass_posterior,
    multiclass_posterior_latent,
    multiclass_sample_size,
    plug_in_f1,
    probability_above,
)

MULTICLASS_INPUTS_SCHEMA = 2  # 2: the crowd's votes of every judged document (undecided too) for the latent model
MULTICLASS_REPORT_SCHEMA = 2  # 2: latent true classes, medians as points, a headline in words, withheld F1
MULTICLASS_DRAWS = 20_000
DEFAULT_REFERENCE = 0.8  # seed 002, Table 1
NONE_NAME = "None of these"
# alpha_jk = beta_j = 1/K (estimation.stats.multiclass.prior_value); seed 002's uniform prior is shown beside it.
DEFAULT_PRIOR = "perks"


@dataclass(frozen=True)
class RouterInputs:
    id: int
    name: str
    kind: str
    fingerprint: str
    predicted_counts: tuple[int, ...]  # corpus documents per predicted class 0..M
    predicted: tuple[int, ...]  # per judged document (MulticlassInputs.document_ids), 0 for none
    crowd_predicted: tuple[int, ...] = ()  # per crowd-judged document (MulticlassInputs.crowd_ids)


@dataclass(frozen=True)
class MulticlassInputs:
    schema: int
    topic_id: int
    topic_name: str
    corpus_size: int
    aggregator: str
    soft_labels: bool
    class_names: tuple[str, ...]  # index 0 "None of these", then the topics 1..M
    sampled: int  # distinct documents of the uniform sample
    document_ids: tuple[int, ...]  # judged (decided or gold) documents, ascending
    labels: tuple[int, ...]  # per judged document: its class (majority, or gold); the argmax for soft labels
    probabilities: tuple[tuple[float, ...], ...]  # soft labels only: P(class 0..M) per judged document
    gold: int  # judged documents whose class is a gold answer
    undecided: int  # complete labels with no majority class
    pending: int  # sampled documents whose label is not complete yet
    votes: tuple[tuple[int, ...], ...]  # sure votes per class 0..M, per judged non-gold document
    unsure_votes: int
    routers: tuple[RouterInputs, ...]
    judgments: int
    cost: CostInputs
    code_version: str
    parameters: dict[str, Any] = field(default_factory=dict)
    # The latent-class model's data: every non-gold sampled document with a complete label and at least one
    # sure vote (decided or not), its sure votes per class; the gold documents (their class is known).
    crowd_ids: tuple[int, ...] = ()
    crowd_votes: tuple[tuple[int, ...], ...] = ()
    gold_ids: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["kind"] = "multiclass"
        data["class_names"] = list(self.class_names)
        data["document_ids"] = list(self.document_ids)
        data["labels"] = list(self.labels)
        data["probabilities"] = [list(p) for p in self.probabilities]
        data["votes"] = [list(v) for v in self.votes]
        data["crowd_ids"] = list(self.crowd_ids)
        data["crowd_votes"] = [list(v) for v in self.crowd_votes]
        data["gold_ids"] = list(self.gold_ids)
        data["routers"] = [{**{f.name: getattr(r, f.name) for f in fields(r)},
                            "predicted_counts": list(r.predicted_counts), "predicted": list(r.predicted),
                            "crowd_predicted": list(r.crowd_predicted)}
                           for r in self.routers]
        data["cost"] = {f.name: getattr(self.cost, f.name) for f in fields(self.cost)}
        data["parameters"] = dict(self.parameters)
        return data

    def checksum(self) -> str:
        canonical = json.dumps(self.as_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(canonical.encode()).hexdigest()


def multiclass_parameters(*, draws: int = MULTICLASS_DRAWS, seed: int, reference: float = DEFAULT_REFERENCE,
                          prior: str = DEFAULT_PRIOR) -> dict:
    return {"draws": int(draws), "seed": int(seed), "reference": float(reference), "prior": prior,
            "report_schema": MULTICLASS_REPORT_SCHEMA}


def _class_posterior(value: Any, size: int) -> tuple[float, ...] | None:
    """A stored Dawid–Skene class posterior as probabilities 0..M, None when missing or malformed."""
    if not isinstance(value, list) or len(value) != size:
        return None
    try:
        probs = np.asarray([float(x) for x in value], dtype=float)
    except (TypeError, ValueError):
        return None
    if not np.all(np.isfinite(probs)) or np.any(probs < 0) or probs.sum() <= 0:
        return None
    probs = probs / probs.sum()
    return tuple(round(float(p), 9) for p in probs)


def _votes(value: Any, size: int) -> tuple[int, ...]:
    if not isinstance(value, list):
        return (0,) * size
    counts = [int(x) if isinstance(x, (int, float)) else 0 for x in value[:size]]
    return tuple(counts + [0] * (size - len(counts)))


def multiclass_inputs_gather(*, topic: Topic, parameters: dict[str, Any] | None = None,
                             code_version: str = "") -> MulticlassInputs:
    """Everything a topic set's report is computed from, in a handful of queries (module docstring)."""
    classes = list(topic.classes.order_by("position").values_list("position", "name"))
    size = (max((p for p, _ in classes), default=0)) + 1
    names = [NONE_NAME] + [f"Class {i}" for i in range(1, size)]
    for position, name in classes:
        names[position] = name
    soft = topic.aggregator == Topic.Aggregator.DAWID_SKENE

    sample = SampledDocument.objects.filter(topic=topic, draw__purpose=SampleDraw.Purpose.UNIFORM, region="U")
    drawn = set(sample.values_list("document_id", flat=True))
    rows = Label.objects.filter(topic=topic, document_id__in=sample.values("document_id")).values_list(
        "document_id", "majority_class", "class_posterior", "gold_class", "class_votes", "votes_total",
        "votes_unsure")
    judged: dict[int, tuple[int, tuple[float, ...] | None]] = {}
    votes: dict[int, tuple[int, ...]] = {}
    crowd: dict[int, tuple[int, ...]] = {}
    gold_ids: set[int] = set()
    gold = undecided = unsure_votes = 0
    for document_id, majority, posterior, gold_class, class_votes, votes_total, votes_unsure in rows:
        if document_id not in drawn:
            continue
        unsure_votes += int(votes_unsure or 0)
        if gold_class is not None and 0 <= gold_class < size:
            gold += 1
            gold_ids.add(document_id)
            one_hot = tuple(1.0 if i == gold_class else 0.0 for i in range(size))
            judged[document_id] = (int(gold_class), one_hot)
            continue
        sure = _votes(class_votes, size)
        if sum(sure) > 0 and (majority is not None or votes_total >= Hit.ASSIGNMENTS_PER_HIT):
            crowd[document_id] = sure
        probs = _class_posterior(posterior, size) if soft else None
        if majority is None and probs is None:
            if votes_total >= Hit.ASSIGNMENTS_PER_HIT:
                undecided += 1
            continue
        if majority is not None and not 0 <= majority < size:
            continue  # a class removed from the topic set: not a position of this report
        if probs is None:
            assert majority is not None
            label = int(majority)
            probs = tuple(1.0 if i == label else 0.0 for i in range(size))
        else:
            label = int(np.argmax(probs))
        judged[document_id] = (label, probs)
        votes[document_id] = sure
    document_ids = tuple(sorted(judged))
    index = {d: i for i, d in enumerate(document_ids)}
    crowd_ids = tuple(sorted(crowd))
    crowd_index = {d: i for i, d in enumerate(crowd_ids)}

    routers = list(Router.objects.filter(topic=topic, archived_at__isnull=True).order_by("name", "pk"))
    predicted: dict[int, list[int]] = {r.pk: [0] * len(document_ids) for r in routers}
    crowd_predicted: dict[int, list[int]] = {r.pk: [0] * len(crowd_ids) for r in routers}
    if routers and (document_ids or crowd_ids):
        prediction_rows = RouterPrediction.objects.filter(
            router__in=routers, document_id__in=sample.values("document_id")).values_list(
            "router_id", "document_id", "predicted")
        for router_id, document_id, value in prediction_rows:
            if not 0 <= value < size:
                continue
            i = index.get(document_id)
            if i is not None:
                predicted[router_id][i] = int(value)
            j = crowd_index.get(document_id)
            if j is not None:
                crowd_predicted[router_id][j] = int(value)
    router_inputs = tuple(
        RouterInputs(id=r.pk, name=r.name, kind=r.kind, fingerprint=r.fingerprint,
                     predicted_counts=tuple(int(x) for x in (r.predicted_counts or [])),
                     predicted=tuple(predicted[r.pk]), crowd_predicted=tuple(crowd_predicted[r.pk]))
        for r in routers)
    labelled = {d for d in drawn if d in judged}
    pending = len(drawn) - len(labelled) - undecided
    fee = _fee_per_assignment(topic=topic)
    return MulticlassInputs(
        schema=MULTICLASS_INPUTS_SCHEMA, topic_id=topic.pk, topic_name=topic.name,
        corpus_size=int(topic.corpus.document_count), aggregator=topic.aggregator, soft_labels=soft,
        class_names=tuple(names), sampled=len(drawn), document_ids=document_ids,
        labels=tuple(judged[d][0] for d in document_ids),
        probabilities=tuple(judged[d][1] or () for d in document_ids) if soft else (),
        gold=gold, undecided=undecided, pending=max(0, pending),
        votes=tuple(votes[d] for d in document_ids if d in votes), unsure_votes=unsure_votes,
        routers=router_inputs, judgments=Judgment.objects.filter(topic=topic).count(),
        cost=_cost(topic=topic, fee=fee), code_version=code_version, parameters=dict(parameters or {}),
        crowd_ids=crowd_ids, crowd_votes=tuple(crowd[d] for d in crowd_ids), gold_ids=tuple(sorted(gold_ids)),
    )


# --------------------------------------------------------------------------- the report (pure)


def _num(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _average_dict(average: AverageF1) -> dict[str, Any]:
    # "point": the median of the draws, the figure the page shows; it lies inside every 95% interval of them.
    return {"score": _num(average.score), "point": _num(average.median), "mean": _num(average.mean),
            "sd": _num(average.sd),
            "mc_error": _num(average.mc_error), "hdi": [_num(average.hdi.low), _num(average.hdi.high)],
            "reference": average.reference, "above": _num(average.above), "below": _num(1.0 - average.above),
            "draws": average.draws, "quantiles": list(average.quantiles),
            "density": {"edges": list(average.density_edges), "heights": list(average.density)}}


def _posterior_dict(posterior: MulticlassPosterior, names: tuple[str, ...],
                    observed: np.ndarray | None = None) -> dict[str, Any]:
    """The posterior as stored. ``observed``: the matrix against the majority labels, whose plug-in values
    fill "precision"/"recall"/"f1"/"true_count"... (descriptive); the "*_point" values are the medians of the
    draws and the only points the page shows beside the intervals."""
    classes = list(posterior.per_class)
    plug: dict[int, dict[str, Any]] = {}
    if observed is not None:
        rows, cols, diag = observed.sum(axis=1), observed.sum(axis=0), np.diag(observed)
        for c in classes:
            i = c.position
            plug[i] = {"true_count": float(rows[i]), "predicted_count": float(cols[i]), "correct": float(diag[i]),
                       "precision": _num(diag[i] / cols[i]) if cols[i] > 0 else None,
                       "recall": _num(diag[i] / rows[i]) if rows[i] > 0 else None,
                       "f1": _num(2 * diag[i] / (rows[i] + cols[i])) if rows[i] + cols[i] > 0 else None}
    averages = {"micro": _average_dict(posterior.micro), "macro": _average_dict(posterior.macro)}
    if observed is not None:
        # The descriptive score against the majority labels; the figure shown is "point" (the median).
        for average, value in zip(("micro", "macro"), plug_in_f1(observed), strict=True):
            averages[average]["score"] = _num(value)
    return {
        "latent": posterior.latent is not None,
        "positions": list(posterior.positions), "averaged": list(posterior.averaged), "prior": posterior.prior,
        "none_modelled": posterior.none_modelled,
        **averages,
        "per_class": [
            {"position": c.position, "name": names[c.position], "true_count": c.true_count,
             "predicted_count": c.predicted_count, "correct": c.correct,
             "precision": _num(c.precision), "precision_mean": _num(c.precision_mean),
             "precision_hdi": [_num(c.precision_hdi.low), _num(c.precision_hdi.high)],
             "recall": _num(c.recall), "recall_mean": _num(c.recall_mean),
             "recall_hdi": [_num(c.recall_hdi.low), _num(c.recall_hdi.high)],
             "f1": _num(c.f1), "f1_mean": _num(c.f1_mean), "f1_hdi": [_num(c.f1_hdi.low), _num(c.f1_hdi.high)],
             "precision_point": _num(c.precision_median), "recall_point": _num(c.recall_median),
             "f1_point": _num(c.f1_median), "expected_true_count": c.true_count,
             **plug.get(c.position, {})}
            for c in classes
        ],
    }


def _agreement(inputs: MulticlassInputs) -> dict[str, Any]:
    """Fleiss' kappa over the M + 1 classes, on the judged documents with three sure votes."""
    full = [v for v in inputs.votes if sum(v) == Hit.ASSIGNMENTS_PER_HIT]
    result: dict[str, Any] = {"fleiss_kappa": None, "documents": len(full), "left_out": len(inputs.votes) - len(full),
                              "classes": len(inputs.class_names)}
    if full:
        try:
            result["fleiss_kappa"] = _num(fleiss_kappa(counts=np.asarray(full, dtype=float)))
        except ValueError as exc:
            result["problem"] = str(exc)
    return result


def _assumptions(inputs: MulticlassInputs, agreement: dict[str, Any], latent: bool) -> list[str]:
    labels = ("each document's class is the Dawid–Skene posterior of the three workers' answers, counted as "
              "expected counts (a document adds its class probabilities)" if inputs.soft_labels else
              "each document's class is the majority of three workers (the class more of them chose than any "
              "other); a document whose workers all disagree, or answered only \"unsure\", is undecided and in no figure")
    kappa = agreement.get("fleiss_kappa")
    kappa_text = (f"workers agree with Fleiss' kappa {kappa:.2f} over the {agreement['classes']} classes "
                  f"({agreement['documents']} documents with three sure answers)" if kappa is not None else
                  "worker agreement cannot be measured yet")
    truth = ("The true class of a document: " + labels + "." if not latent else
             "The true class of a document is not taken from the workers' majority: it is treated as unknown and "
        "estimated together with how often the crowd confuses each class with each other (one error pattern for "
        "the whole crowd), so crowd mistakes widen the intervals instead of counting as the router's errors. "
        "Documents whose workers all disagree are used too. The table of counts shows the majority labels; "
        "the figures come from the estimated true classes.")
    return [
        "The sample is a uniform random sample of the corpus, so its confusion matrix stands for the corpus's.",
        truth,
        "Agreement: " + kappa_text + ". When almost every document is \"" + NONE_NAME + "\", this figure is low "
        "even for good workers; the report judges the crowd by its estimated accuracy instead.",
        "Micro- and macro-F1 average over the topics only; \"None of these\" is an outcome, not a topic: a topic "
        "document the router sends to none is a miss of that topic, a none document sent to a topic is a false "
        "alarm of that topic.",
        "Each figure is the middle value (median) of the plausible values, with the range that holds 95% of them.",
    ]


LATENT_TECHNICAL = ("Model: Zhang, Wang & Zhao (ICTIR 2015; seed 002) Dirichlet-multinomial posterior of the "
                    "router's confusion matrix, with each judged document's true class latent and the crowd's "
                    "confusion matrix pooled over workers (Dawid & Skene 1979), Dirichlet priors 1/K per class "
                    "share, 1/K^2 per router cell, 2 (right) and 1/(K-1) (each wrong answer) per crowd row; "
                    "Gibbs sampling, 10 chains x 30 kept states after 30 burn-in, then exact draws given each "
                    "state. Intervals: 95% highest-density intervals; points: medians of the draws.")


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def multiclass_headline(*, average: dict[str, Any], name: str, reference: float) -> str:
    """One sentence: the figure, its range, and whether the router meets the reference (in words)."""
    point, (low, high) = average.get("point", average.get("score")), average["hdi"]
    if low is not None and low >= reference:
        verdict = f"the router meets the reference {reference:.2f}"
    elif high is not None and high < reference:
        verdict = f"the router misses the reference {reference:.2f}"
    else:
        above = average.get("above")
        verdict = (f"too close to tell whether the router meets the reference {reference:.2f}"
                   + (f" (chance it does: {above:.0%})" if above is not None else ""))
    return f"{name} {_fmt(point)} ({_fmt(low)}–{_fmt(high)}); {verdict}"


def multiclass_report_from_inputs(*, inputs: MulticlassInputs, generated_at: str | None = None) -> dict[str, Any]:
    """The report dict of a topic set from its gathered inputs; pure (no database)."""
    size = len(inputs.class_names)
    draws = int(inputs.parameters.get("draws", MULTICLASS_DRAWS))
    seed = int(inputs.parameters.get("seed", 2015))
    reference = float(inputs.parameters.get("reference", DEFAULT_REFERENCE))
    prior = str(inputs.parameters.get("prior", DEFAULT_PRIOR))
    diagnostics: list[dict[str, str]] = []
    true_counts = [0.0] * size
    if inputs.soft_labels and inputs.probabilities:
        true_counts = [float(x) for x in np.asarray(inputs.probabilities, dtype=float).sum(axis=0)]
    else:
        for label in inputs.labels:
            true_counts[label] += 1
    agreement = _agreement(inputs)
    routers = []
    if size < 3:
        diagnostics.append({"code": "too_few_classes", "severity": "error",
                            "message": "A topic set needs at least two topics before it can be measured."})
    if not inputs.document_ids:
        diagnostics.append({"code": "no_judgments", "severity": "info",
                            "message": "No document of the uniform sample has a decided label yet."})
    if not inputs.routers:
        diagnostics.append({"code": "no_router", "severity": "info",
                            "message": "The topic set has no router to measure yet."})
    if inputs.undecided:
        diagnostics.append({"code": "undecided", "severity": "warning",
                            "message": f"{inputs.undecided} sampled document(s) have no majority class (a tie or "
                                       f"only \"unsure\" answers) and are in no figure."})
    crowd_votes = np.asarray(inputs.crowd_votes, dtype=float).reshape(-1, size) if size else np.zeros((0, 0))
    # The latent-class model when the crowd disagrees on some document; when every crowd-judged document's
    # sure votes fall on one class the labels are taken as they are (seed 002's model on them: Table 1
    # reproduces through the product).
    latent = (size >= 3 and len(inputs.crowd_ids) > 0
              and bool(np.any(crowd_votes.max(axis=1) < crowd_votes.sum(axis=1))))
    gold_index = [i for i, d in enumerate(inputs.document_ids) if d in set(inputs.gold_ids)]
    gold_true = [inputs.labels[i] for i in gold_index]
    for router in inputs.routers:
        if inputs.soft_labels:
            matrix = confusion_matrix_expected(probabilities=inputs.probabilities, predicted=router.predicted,
                                               classes=size) if inputs.document_ids else np.zeros((size, size))
        else:
            matrix = confusion_matrix(true=inputs.labels, predicted=router.predicted, classes=size)
        entry: dict[str, Any] = {
            "id": router.id, "name": router.name, "kind": router.kind, "fingerprint": router.fingerprint,
            "predicted_counts": list(router.predicted_counts),
            "confusion": [[_num(x) for x in row] for row in matrix], "posterior": None, "seed_prior": None,
        }
        entry["model"] = "latent" if latent else "labels"
        entry["withheld"] = None
        entry["headline"] = None
        if latent:
            try:
                posterior = multiclass_posterior_latent(
                    votes=crowd_votes, predicted=router.crowd_predicted or (0,) * len(inputs.crowd_ids),
                    classes=size, gold_true=gold_true, gold_predicted=[router.predicted[i] for i in gold_index],
                    draws=draws, seed=seed, reference=reference)
            except ValueError as exc:
                diagnostics.append({"code": "estimation_failed", "severity": "error",
                                    "message": f"{router.name}: {exc}"})
            else:
                fit = posterior.latent
                assert fit is not None
                entry["crowd"] = {"accuracy": list(fit.accuracy), "class_accuracy": list(fit.class_accuracy),
                                  "separated": list(fit.separated), "documents": fit.documents,
                                  "expected_true_counts": list(fit.expected_true_counts)}
                if not fit.identified:
                    entry["withheld"] = (f"No F1 is shown: {fit.reason}. Improve the instructions or the workers, "
                                         f"or add gold documents, then judge more.")
                    diagnostics.append({"code": "agreement_too_low", "severity": "warning",
                                        "message": f"{router.name}: {entry['withheld']}"})
                else:
                    entry["posterior"] = _posterior_dict(posterior, inputs.class_names, matrix)
                    entry["headline"] = {average: multiclass_headline(
                        average=entry["posterior"][average], name=f"{average}-F1", reference=reference)
                        for average in ("macro", "micro")}
            routers.append(entry)
            continue
        if size >= 3 and inputs.document_ids:
            try:
                posterior = multiclass_posterior(confusion=matrix, draws=draws, seed=seed, reference=reference,
                                                 prior=prior)
                # The same figures under seed 002's own prior (alpha = beta = 1): how much the prior matters.
                # A comparison line: a quarter of the draws (Monte Carlo error still far below the 3 decimals shown).
                seed_prior = multiclass_posterior(confusion=matrix, draws=max(2_000, draws // 4), seed=seed,
                                                  reference=reference, prior="uniform", per_class=False)
            except ValueError as exc:
                diagnostics.append({"code": "estimation_failed", "severity": "error",
                                    "message": f"{router.name}: {exc}"})
            else:
                entry["posterior"] = _posterior_dict(posterior, inputs.class_names)
                entry["headline"] = {average: multiclass_headline(
                    average=entry["posterior"][average], name=f"{average}-F1", reference=reference)
                    for average in ("macro", "micro")}
                entry["seed_prior"] = {
                    "prior": seed_prior.prior,
                    **{average: {key: value for key, value in _average_dict(getattr(seed_prior, average)).items()
                                 if key not in ("quantiles", "density")} for average in ("micro", "macro")}}
        routers.append(entry)
    return {
        "kind": "multiclass",
        "schema": MULTICLASS_REPORT_SCHEMA,
        "generated_at": generated_at or datetime.now(UTC).isoformat(),
        "topic": {"id": inputs.topic_id, "name": inputs.topic_name, "aggregator": inputs.aggregator},
        "classes": [{"position": i, "name": name} for i, name in enumerate(inputs.class_names)],
        "sample": {"corpus_size": inputs.corpus_size, "sampled": inputs.sampled,
                   "judged": len(inputs.document_ids), "undecided": inputs.undecided, "pending": inputs.pending,
                   "gold": inputs.gold, "unsure_votes": inputs.unsure_votes, "soft_labels": inputs.soft_labels,
                   "true_counts": true_counts},
        "judged_documents": len(inputs.document_ids),
        "judgments": inputs.judgments,
        "agreement": agreement,
        "assumptions": _assumptions(inputs, agreement, latent),
        "routers": routers,
        "cost": {f.name: getattr(inputs.cost, f.name) for f in fields(inputs.cost)},
        "parameters": {"draws": draws, "seed": seed, "reference": reference, "mass": 0.95, "prior": prior,
                       "labels": "latent" if latent else "majority"},
        "technical": LATENT_TECHNICAL if latent else None,
        "diagnostics": diagnostics,
    }


# --------------------------------------------------------------------------- reads of a stored report


class MulticlassReportError(ApplicationError):
    """A question about a stored topic-set report that cannot be answered (shown above the form that asked it)."""


def multiclass_router_entry(*, report: dict[str, Any], router_id: int) -> dict[str, Any] | None:
    for entry in report.get("routers") or []:
        if isinstance(entry, dict) and entry.get("id") == router_id:
            return entry
    return None


def multiclass_probability_above(*, report: dict[str, Any], reference: float) -> dict[int, dict[str, float | None]]:
    """Per router id, P(micro-F1 > reference) and P(macro-F1 > reference), read from the stored quantiles."""
    result: dict[int, dict[str, float | None]] = {}
    for entry in report.get("routers") or []:
        posterior = entry.get("posterior") if isinstance(entry, dict) else None
        row: dict[str, float | None] = {"micro": None, "macro": None}
        if posterior:
            for average in ("micro", "macro"):
                quantiles = (posterior.get(average) or {}).get("quantiles") or []
                if len(quantiles) >= 2:
                    row[average] = probability_above(quantiles=quantiles, reference=reference)
        result[int(entry.get("id", 0))] = row
    return result


def multiclass_sample_size_plan(*, report: dict[str, Any], router_id: int, width: float,
                                average: str = "macro") -> SampleSizePlan:
    """The uniform-sample size whose 95% HDI of the router's micro/macro-F1 is expected to be ``width`` wide.

    From the stored confusion matrix (``estimation.stats.multiclass.multiclass_sample_size``): n counts decided
    labels; the page also shows it inflated by the share of undecided labels so far.
    """
    entry = multiclass_router_entry(report=report, router_id=router_id)
    if entry is None or not entry.get("posterior"):
        raise MulticlassReportError("This router has no estimate yet: judge some documents of the sample first.")
    matrix = np.asarray([[x or 0.0 for x in row] for row in entry["confusion"]], dtype=float)
    try:
        return multiclass_sample_size(confusion=matrix, width=width, average=average)
    except ValueError as exc:
        raise MulticlassReportError(str(exc)) from exc
