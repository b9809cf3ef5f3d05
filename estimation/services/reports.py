"""A topic's recall report: a JSON-ready dict computed by `estimation.stats` from gathered inputs.

`topic_report_build` gathers the inputs (estimation/services/inputs.py) and hands
them to `topic_report_from_inputs`, which reads nothing from the database: every
number in the report is a function of the inputs, the number of posterior draws
and the seed, so a stored snapshot can be reproduced exactly.  No formula lives
here — estimates, intervals, diagnostics and plans all come from estimation.stats;
this module only decides which counts go where.  Schema: docs/report.md.
"""
from __future__ import annotations

import logging
import math
import os
import subprocess
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from django.utils import timezone

from annotation.models import Hit, Topic
from annotation.services.corpora.engine_counts import NOT_COUNTED

# What the stats library raises on counts it cannot use; the report turns them into
# nulls with a reason instead of failing (a report must always render).
from estimation.services.extrapolation import STATS_ERRORS, precision_extrapolate
from estimation.services.inputs import ClassifierInputs, SampleInputs, TopicInputs, topic_inputs_gather
from estimation.services.report_capture import dependence_block, pooled_recall_block
from estimation.services.report_common import NEITHER, PAIR_KEYS, diagnostic, estimate_dict, num, region_sample
from estimation.services.report_dependence import (
    DependenceCheck,
    assumptions_block,
    dependence_check_run,
    design_based_block,
)
from estimation.services.report_headline import classifier_headlines
from estimation.services.report_judge import judge_block
from estimation.stats import aggregation, f1_posterior, pair_recall, planning, proportions

logger = logging.getLogger(__name__)

# 2 (issue 11): "judgments" and cost.per_judged_document count the estimation sample only (certification
# apart); new blocks design_based, assumptions, label_noise; worker_agreement gains the label-quality check.
# 3: each classifier row gains "headline" (the figure the page leads with: design-based, δ1 band or pair model;
# estimation/services/report_headline.py). No key removed or renamed.
REPORT_SCHEMA = 3
# Monte Carlo draws of a report: 10,000 keeps the recompute within its 200 ms at 1M documents with the
# issue-11 estimators (label noise, design-based, capture–recapture intervals). The Monte Carlo error of an
# interval end stays about 0.0005 (sd over 20 seeds of r1's ends with 500/350/350 judged in A12/B1/B2:
# 0.0004 and 0.0006 at 10,000 draws, 0.0004 and 0.0006 at 20,000), far inside any interval it ends.
# Certification verdicts keep their own 20,000 (certification_verdicts.VERDICT_DRAWS).
DEFAULT_DRAWS = 10_000
# One fixed seed: successive snapshots of a topic use common random numbers, so
# their Monte Carlo intervals move only when the judgments do.
DEFAULT_SEED = 20_141_024
POSTERIOR_BINS = 40
# The Bayesian Dawid–Skene chain of a report (issue 24 item 5): kept sweeps and burn-in.  200 imputations are
# enough for a mixture interval (Zhou & Reiter 2010 use 100 or more; each is reused 50 times by the 10,000
# Monte Carlo draws); the chain starts from the EM fit, so 100 sweeps of burn-in suffice.  Measured on 600
# judged documents × 3 votes: docs/aggregation.md ("Dawid–Skene intervals").
DS_CHAIN_DRAWS = 200
DS_CHAIN_BURN_IN = 100
_REGION_LABELS = {
    "A12": "A1 ∩ A2 (retrieved by both)",
    "B1": "A1 ∖ A2 (C1 only)",
    "B2": "A2 ∖ A1 (C2 only)",
    "A1": "A1 (paper design)",
    "A2": "A2 (paper design)",
    "U": "Uniform sample of the corpus",
    "N": "Neither classifier (complement sample, the dependence check)",
}
# The δ1 band of the assumptions block (seed 000 Assumption 1; the certification's declared band defaults to it).


# --------------------------------------------------------------------------- code version


@lru_cache(maxsize=1)
def code_version_get() -> str:
    """The code version recorded with every snapshot.

    APP_CODE_VERSION when set (deployments set it: no .git there); otherwise
    `git describe --always --dirty --tags` of the checkout, read once per
    process (a process runs the code it loaded); "unknown" when neither works.
    """
    value = os.environ.get("APP_CODE_VERSION", "").strip()
    if not value:
        try:
            result = subprocess.run(
                ["git", "describe", "--always", "--dirty", "--tags"],
                cwd=Path(__file__).resolve().parent.parent.parent,
                capture_output=True, text=True, timeout=5, check=True,
            )
            value = result.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            value = ""
    return (value or "unknown")[:64]


# --------------------------------------------------------------------------- building


def topic_report_build(*, topic: Topic, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The report of `topic` from its current labels (reads the database, writes nothing)."""
    inputs = topic_inputs_gather(topic=topic, parameters=report_parameters(draws=draws, seed=seed),
                                 code_version=code_version_get())
    return topic_report_from_inputs(inputs=inputs)


def report_parameters(*, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    return {"draws": int(draws), "seed": int(seed), "report_schema": REPORT_SCHEMA, "posterior_bins": POSTERIOR_BINS}


# Why a pair-model figure is withheld when the model contradicts what was found ("Every figure honest" #4).
CONTRADICTION_REASON = (
    "the pair's model estimates fewer relevant documents than were already found, evidence the two classifiers "
    "find the same documents more often than independence allows; judge a sample of documents neither classifier "
    "retrieved to measure recall without that assumption")


def topic_report_from_inputs(*, inputs: TopicInputs, generated_at: str | None = None) -> dict[str, Any]:
    """The report dict for gathered inputs; pure (no database), never raises on odd counts."""
    builder = _ReportBuilder(inputs)
    report = builder.build()
    report["generated_at"] = generated_at or timezone.now().isoformat()
    return report


def _pair_list(inputs: TopicInputs) -> list[ClassifierInputs]:
    """[c1, c2], or [] without a pair."""
    return list(inputs.pair) if inputs.pair is not None else []


class _ReportBuilder:
    """Holds the intermediate results while the report dict is assembled."""

    def __init__(self, inputs: TopicInputs):
        self.inputs = inputs
        self.draws = int(inputs.parameters.get("draws", DEFAULT_DRAWS))
        self.seed = int(inputs.parameters.get("seed", DEFAULT_SEED))
        self.confidence = inputs.confidence
        self.diagnostics: list[dict[str, str]] = []
        self.stratified: pair_recall.StratifiedPairRecall | None = None
        self.paper: pair_recall.PaperDesignPairRecall | None = None
        self.corpus_size: int | None = None
        self.dependence = DependenceCheck()
        self.label_noise: dict[str, Any] | None = None
        self._probabilities: dict[str, tuple[float, ...]] | None = None
        self._probabilities_done = False
        # Dawid–Skene topics: per sample key, the chain's draws of its judged relevant count (issue 24 item 5).
        self._count_draws: dict[str, np.ndarray] | None = None
        self._chain_probability: dict[int, float] = {}  # document id → the chain's mean P(relevant)

    # ----------------------------------------------------------------- top level

    def build(self) -> dict[str, Any]:
        inputs = self.inputs
        judged_documents = sum(s.judged for s in inputs.samples.values())
        if inputs.c1 is None:
            self.diagnostics.append(diagnostic(
                "no_pair", "error", "This topic has no classifier pair yet, so recall cannot be estimated."))
        if judged_documents == 0:
            self.diagnostics.append(diagnostic(
                "no_judgments", "info", "No judgments yet: no sampled document has its three judgments, so every estimate is empty."))
        if inputs.soft_labels:
            self.diagnostics.append(diagnostic(
                "soft_labels", "info",
                "Relevant counts are sums of Dawid–Skene posterior probabilities (soft labels), not majority votes."))
        # None when the recorded corpus size cannot be right: Eq. 2 and prevalences are then left out.
        self.corpus_size = self._corpus_size_for_eq2()
        if inputs.c1 is not None:
            self._run_stratified(self.corpus_size)
            self._run_paper(self.corpus_size)
            self.dependence = dependence_check_run(inputs=inputs, probabilities=self._label_probabilities(),
                                                   confidence=self.confidence, draws=self.draws, seed=self.seed)
            self.diagnostics.extend(self.dependence.diagnostics)

        primary = self._primary()
        classifiers = self._classifiers(primary)
        uniform_plan, cost_ratio = self._uniform_comparison(primary)
        pair = inputs.pair
        # Seed 003 pooled recall and log-linear capture–recapture (estimation/services/report_capture.py).
        uncounted = [c.name for c in inputs.extras if c.retrieved is None]
        pooled_diagnostics: list[dict[str, str]]
        dependence_diagnostics: list[dict[str, str]]
        if uncounted:  # a corpus in the team's engine: the further classifiers' overlaps with the pair are unknown
            pooled, dependence = None, None
            pooled_diagnostics, dependence_diagnostics = [diagnostic(
                "engine_not_counted", "info",
                f"The documents {', '.join(uncounted)} retrieved, and their overlap with the pair, are "
                f"{NOT_COUNTED}: pooled recall and capture–recapture with {'it' if len(uncounted) == 1 else 'them'} "
                "are not shown.")], []
        else:
            pooled, pooled_diagnostics = pooled_recall_block(inputs=inputs, confidence=self.confidence,
                                                             draws=self.draws, seed=self.seed)
            dependence, dependence_diagnostics = dependence_block(inputs=inputs, confidence=self.confidence,
                                                                  draws=self.draws, seed=self.seed)
        self.diagnostics.extend(pooled_diagnostics + dependence_diagnostics)
        report = {
            "schema": REPORT_SCHEMA,
            "topic": {
                "id": inputs.topic_id, "name": inputs.topic_name, "aggregator": inputs.aggregator,
                "target_recall": inputs.target_recall, "confidence": inputs.confidence, "crowd": inputs.crowd,
            },
            "parameters": {"draws": self.draws, "seed": self.seed, "confidence": self.confidence},
            "corpus_size": inputs.corpus_size,
            "pair": None if pair is None else {"c1": pair[0].name, "c2": pair[1].name},
            "classifiers": classifiers,
            "regions": self._regions(),
            "design": primary["design"],
            "recall_eq1": primary["eq1"],
            "recall_eq2": primary["eq2"],
            "recall_stratified": self._stratified_block(),
            "recall_paper_design": self._paper_block(),
            "estimated_relevant": self._estimated_relevant(primary),
            # The estimation sample's judgments; certification samples are counted apart (schema 2).
            "judgments": max(0, inputs.judgments - inputs.certification_judgments),
            "judgments_total": inputs.judgments,
            "certification_judgments": inputs.certification_judgments,
            "judged_documents": judged_documents,
            "adjudicated": inputs.adjudicated,  # documents whose label an analyst decided (issue 27)
            "cost": self._cost(judged_documents),
            "uniform_sampling_judgments": uniform_plan,
            "cost_ratio": cost_ratio,
            "sensitivity": self._sensitivity(),
            "pooled_recall": pooled,
            "dependence": dependence,
            "design_based": design_based_block(inputs=inputs, check=self.dependence),
            "assumptions": assumptions_block(inputs=inputs, stratified=self.stratified,
                                             has_estimate=self.stratified is not None or self.paper is not None,
                                             check=self.dependence),
            "posterior": self._posterior(),
            "worker_agreement": self._worker_agreement(),
            "label_noise": self.label_noise,
            "certification": inputs.certification,
            "code_version": inputs.code_version,
        }
        # The headline of each row reads the blocks above (design-based, sensitivity), so it comes last.
        for row, headline in zip(classifiers, classifier_headlines(report=report, inputs=inputs), strict=True):
            row["headline"] = headline
        report["diagnostics"] = self.diagnostics
        # The model judge's block (issue 28, estimation/services/report_judge.py): None without a finished run.
        report["model_judge"] = judge_block(inputs=inputs, answers=getattr(inputs, "model_judge", None))
        return report

    def _corpus_size_for_eq2(self) -> int | None:
        sizes = self.inputs.region_sizes
        if not sizes:
            return None
        union = sizes["A12"] + sizes["B1"] + sizes["B2"]
        if self.inputs.corpus_size < union or self.inputs.corpus_size <= 0:
            self.diagnostics.append(diagnostic(
                "corpus_size_unknown", "warning",
                f"The corpus size ({self.inputs.corpus_size:,}) is smaller than the documents the pair retrieves "
                f"({union:,}); Eq. 2 and the prevalence-based figures are left out."))
            return None
        return self.inputs.corpus_size

    # ----------------------------------------------------------------- estimators

    def _run_stratified(self, corpus_size: int | None) -> None:
        inputs = self.inputs
        keys = ("A12", "B1", "B2")
        if not any(sample.judged for sample in self._samples(*keys)):
            return
        others = {}
        for c in inputs.extras:
            sample = inputs.sample(f"R:{c.id}")
            if sample is not None and sample.judged and c.retrieved is not None:
                others[str(c.id)] = region_sample(sample, c.retrieved)
        label_probabilities = self._label_probabilities()
        probabilities = (None if label_probabilities is None
                         else {k: v for k, v in label_probabilities.items() if k in PAIR_KEYS})
        try:
            self.stratified = pair_recall.stratified_pair_recall(
                a12=region_sample(inputs.sample("A12"), inputs.region_sizes["A12"]),
                b1=region_sample(inputs.sample("B1"), inputs.region_sizes["B1"]),
                b2=region_sample(inputs.sample("B2"), inputs.region_sizes["B2"]),
                corpus_size=corpus_size, confidence=self.confidence, draws=self.draws, seed=self.seed,
                other_classifiers=others, return_draws=True, label_probabilities=probabilities,
                certain_relevant=self._certain_relevant(),
                judged_count_draws=(None if self._count_draws is None or probabilities is None
                                    else {k: v for k, v in self._count_draws.items() if k in probabilities}),
            )
        except STATS_ERRORS as exc:
            self.diagnostics.append(diagnostic("estimation_failed", "error", f"The stratified estimate failed: {exc}"))
            return
        self.diagnostics.extend(
            diagnostic(d.code, d.severity, d.message, "stratified_pair_recall") for d in self.stratified.diagnostics
        )
        if self.label_noise is not None:
            noise = self.stratified.label_noise
            self.label_noise["widened"] = noise is not None
            self.label_noise["regions"] = None if noise is None else noise.regions
            if noise is not None and self.label_noise["source"] == "dawid_skene_draws":
                self.diagnostics.append(diagnostic(
                    "label_noise_widened", "info",
                    "The workers did not always agree, so some labels may be wrong, and how accurate each worker "
                    "is can only be estimated from their answers. The recall intervals allow for both: they "
                    "average over many plausible accuracies of the workers, each with the labels it implies.",
                    "stratified_pair_recall"))
            elif noise is not None:
                self.diagnostics.append(diagnostic(
                    "label_noise_widened", "info",
                    "The workers did not always agree, so some labels may be wrong. The recall intervals allow for "
                    "that: each document counts as relevant with the probability its votes give it, not as certain.",
                    "stratified_pair_recall"))

    def _label_probabilities(self) -> dict[str, tuple[float, ...]] | None:
        """P(relevant) per judged document of A12, B1, B2 and N, for the label-noise widening (docs/estimation.md).

        Computed once per report (cached): the stratified estimate uses the pair regions, the design-based
        block all four.  N is a stratum of its own: at its low prevalence a 2–1 majority is more often a
        worker error than a relevant document (notes §3), so counting majorities there would overstate
        what the classifiers missed by the majority's false-positive rate times |N|.

        Dawid–Skene topics (issue 24 item 5): the Bayesian Dawid–Skene chain's mean posteriors, and its draws
        of each sample's judged relevant count (``_count_draws``, for ``judged_count_draws``) so the intervals
        carry the uncertainty of the workers' accuracies; the stored EM posteriors (the labels themselves)
        when the inputs hold no judgments to draw from.  Majority topics: the
        one-coin probability implied by each document's votes, with the worker accuracy estimated from
        how often two votes on one document agree (all estimation votes) and a prior per region.
        None when every label is certain (unanimous votes): the estimate is then the plain one.
        """
        if self._probabilities_done:
            return self._probabilities
        self._probabilities_done = True
        self._probabilities = self._label_probabilities_compute()
        return self._probabilities

    def _label_probabilities_compute(self) -> dict[str, tuple[float, ...]] | None:
        inputs = self.inputs
        samples = {k: s for k in (*PAIR_KEYS, NEITHER) if (s := inputs.sample(k)) is not None and s.judged}
        if not samples:
            return None
        if inputs.soft_labels:
            chain = self._dawid_skene_chain(samples)
            if chain is not None:
                return chain
            self.label_noise = {"source": "dawid_skene_posteriors", "worker_accuracy": None, "widened": False,
                                "regions": None, "accuracy_uncertainty": False}
            return {k: s.labels for k, s in samples.items()}
        accuracy = pair_recall.worker_accuracy_from_agreement(votes=inputs.votes)
        if accuracy is None or accuracy >= 1.0 or any(len(s.votes) != s.judged for s in samples.values()):
            return None
        votes = [v for s in samples.values() for v in s.votes]
        strata = [k for k, s in samples.items() for _ in s.votes]
        result = pair_recall.vote_label_probabilities(votes=votes, strata=strata, accuracy=accuracy)
        self.label_noise = {"source": "votes", "worker_accuracy": num(accuracy), "widened": False, "regions": None,
                            "prevalence_by_region": result.stratum_prevalence}
        out, start = {}, 0
        for key, sample in samples.items():
            out[key] = result.probabilities[start:start + sample.judged]
            start += sample.judged
        return out

    def _dawid_skene_chain(self, samples: dict[str, SampleInputs]) -> dict[str, tuple[float, ...]] | None:
        """Label probabilities from the Bayesian Dawid–Skene chain (``aggregation.dawid_skene_draws``) on the
        topic's judgments, with the same workers, strata and gold as the stored posteriors; sets
        ``_count_draws`` and ``label_noise``.  None without judgments to draw from.

        A judged document whose stored label is certain (a gold answer, an analyst's adjudication, or a
        document in no judgment) keeps it in every draw.  The chain's seed is a function of the report's seed,
        the topic and its number of judgments, so a report of the same labels is the same report.
        """
        crowd = self.inputs.crowd_judgments
        if crowd is None or not crowd.items:
            return None
        index = {d: i for i, d in enumerate(crowd.document_ids)}
        stratum_index = {k: i for i, k in enumerate(sorted(set(crowd.strata)))}
        seed = (self.seed + 1_000_003 * self.inputs.topic_id + len(crowd.items)) % 2**32
        try:
            fit = aggregation.dawid_skene_draws(
                items=np.asarray(crowd.items, dtype=np.int64), workers=np.asarray(crowd.workers, dtype=np.int64),
                labels=np.asarray(crowd.answers, dtype=np.int64), n_classes=2,
                strata=np.asarray([stratum_index[k] for k in crowd.strata], dtype=np.int64),
                gold_items=np.asarray(crowd.gold_items, dtype=np.int64) if crowd.gold_items else None,
                gold_labels=np.asarray(crowd.gold_answers, dtype=np.int64) if crowd.gold_items else None,
                draws=DS_CHAIN_DRAWS, burn_in=DS_CHAIN_BURN_IN, seed=seed)
        except STATS_ERRORS as exc:
            self.diagnostics.append(diagnostic("dawid_skene_draws_failed", "warning",
                                                f"The workers' accuracies could not be drawn ({exc}); the intervals "
                                                "take the fitted accuracies as known."))
            return None
        groups: dict[str, list[int]] = {}
        fixed: dict[str, tuple[list[int], float]] = {}
        for key, sample in samples.items():
            drawn = [index[d] for d, value in zip(sample.document_ids, sample.labels, strict=True)
                     if d in index and 0.0 < value < 1.0]
            groups[key] = drawn
            certain = [i for i, (d, value) in enumerate(zip(sample.document_ids, sample.labels, strict=True))
                       if not (d in index and 0.0 < value < 1.0)]
            fixed[key] = (certain, float(sum(sample.labels[i] for i in certain)))
        grouped = aggregation.dawid_skene_group_draws(fit=fit, groups=groups)
        out: dict[str, tuple[float, ...]] = {}
        self._count_draws = {}
        for key, sample in samples.items():
            certain, certain_sum = fixed[key]
            chain = iter(grouped.probabilities[key].tolist())
            keep = set(certain)
            out[key] = tuple(sample.labels[i] if i in keep else next(chain) for i in range(sample.judged))
            self._count_draws[key] = grouped.counts[key] + certain_sum
        self._chain_probability = {d: float(fit.posterior_mean[i, 1]) for d, i in index.items()}
        crowd_mean = fit.worker_accuracy.mean(axis=1)
        low, high = np.quantile(crowd_mean, [(1 - self.confidence) / 2, (1 + self.confidence) / 2])
        self.label_noise = {
            "source": "dawid_skene_draws", "widened": False, "regions": None, "accuracy_uncertainty": True,
            "worker_accuracy": num(float(crowd_mean.mean())),
            "worker_accuracy_interval": [num(float(low)), num(float(high))],
            "workers": int(fit.worker_accuracy.shape[1]), "draws": fit.draws, "burn_in": fit.burn_in,
            "method": ("Bayesian Dawid–Skene (Gibbs): each Monte Carlo draw of the recall uses one draw of the "
                       "workers' accuracies and the labels it implies; the interval is the mixture over the draws"),
        }
        return out

    def _certain_relevant(self) -> dict[str, float]:
        """Per pair region ("A12", "B1", "B2") and further classifier (its id): the judged documents whose relevant
        label is certain enough to count toward the floor of what was found (notes §8; "Every figure honest" #4).

        The rule: a document counts when P(relevant) ≥ ``pair_recall.CERTAIN_PROBABILITY`` (0.9), where P is
        * a gold answer (1 or 0: it is the truth; on Dawid–Skene topics its stored value is the answer);
        * on Dawid–Skene topics, the stored posterior;
        * on majority topics, the one-coin probability of the document's votes at the workers' accuracy
          estimated from vote agreement, with a prior per sample (``pair_recall.vote_label_probabilities``).
          A majority label therefore counts only when that accuracy makes a false positive unlikely: at
          accuracy 0.8 a 2–1 vote never counts below a stratum prevalence of 0.69, a 3–0 vote counts down to
          0.12; when the votes never disagree (accuracy 1, or unknown) every majority label counts.
          A gold answer counts whatever the one-coin probability of its (synthetic, unanimous) votes: at
          accuracy 0.8 in a 6%-relevant sample that probability is 0.80, below the threshold, and a known
          relevant document was left out of the floor (SampleInputs.gold).
        The stats scale each count to its region (|h|·certain/judged) as they scale the relevant count.
        Noisy positives (Reuters `gold`: n̂ 156 (144–187) against a truth of 135) no longer lift n̂.
        """
        inputs = self.inputs
        samples = {k: s for k in PAIR_KEYS if (s := inputs.sample(k)) is not None and s.judged}
        for c in inputs.extras:
            sample = inputs.sample(f"R:{c.id}")
            if sample is not None and sample.judged:
                samples[str(c.id)] = sample
        threshold = pair_recall.CERTAIN_PROBABILITY
        if not samples:
            return {}
        if inputs.soft_labels:
            self._label_probabilities()  # the chain's probabilities, when it ran, decide what is certain
            chain = self._chain_probability
            return {k: float(sum(1 for d, p in zip(s.document_ids, s.labels, strict=True)
                                 if (chain.get(d, p) if 0.0 < p < 1.0 else p) >= threshold))
                    for k, s in samples.items()}
        accuracy = pair_recall.worker_accuracy_from_agreement(votes=inputs.votes)
        if accuracy is None or accuracy >= 1.0 or any(len(s.votes) != s.judged for s in samples.values()):
            return {k: float(sum(1 for p in s.labels if p >= threshold)) for k, s in samples.items()}
        votes = [v for s in samples.values() for v in s.votes]
        strata = [k for k, s in samples.items() for _ in s.votes]
        probabilities = pair_recall.vote_label_probabilities(votes=votes, strata=strata,
                                                             accuracy=accuracy).probabilities
        out, start = {}, 0
        for key, sample in samples.items():
            chunk = probabilities[start:start + sample.judged]
            gold = sample.gold or (False,) * sample.judged
            out[key] = float(sum(1 for label, p, known in zip(sample.labels, chunk, gold, strict=True)
                                 if label >= 0.5 and (known or p >= threshold)))
            start += sample.judged
        return out

    def _run_paper(self, corpus_size: int | None) -> None:
        inputs = self.inputs
        if not (inputs.sample("A1") and inputs.sample("A2")):
            return
        sizes = inputs.region_sizes
        try:
            self.paper = pair_recall.paper_design_pair_recall(
                a1=region_sample(inputs.sample("A1"), sizes["A1"]),
                a2=region_sample(inputs.sample("A2"), sizes["A2"]),
                a12=region_sample(inputs.sample("A12"), sizes["A12"]),
                corpus_size=corpus_size, confidence=self.confidence, draws=self.draws, seed=self.seed,
            )
        except STATS_ERRORS as exc:
            self.diagnostics.append(diagnostic("estimation_failed", "error", f"The paper-design estimate failed: {exc}"))
            return
        self.diagnostics.extend(
            diagnostic(d.code, d.severity, d.message, "paper_design_pair_recall") for d in self.paper.diagnostics
        )

    def _primary(self) -> dict[str, Any]:
        """The estimates the classifier rows show: the stratified design when judged, else the paper's."""
        s, p = self.stratified, self.paper
        if s is not None and s.r1.point is not None:
            return {"design": "stratified", "p1": s.p1, "p2": s.p2, "r1": s.r1, "r2": s.r2, "n_hat": s.n_hat,
                    "chapman": s.n_hat_chapman,
                    "eq1": {"C1": estimate_dict(s.eq1_r1), "C2": estimate_dict(s.eq1_r2), "design": "stratified"},
                    "eq2": {"C1": estimate_dict(s.eq2_r1), "C2": estimate_dict(s.eq2_r2), "design": "stratified"},
                    "judged": {"c1": self._judged("A12", "B1"), "c2": self._judged("A12", "B2"),
                               "pair": self._judged("A12", "B1", "B2")}}
        if p is not None and p.eq1_r1.point is not None:
            return {"design": "paper", "p1": p.p1, "p2": p.p2, "r1": p.eq1_r1, "r2": p.eq1_r2, "n_hat": p.n_hat,
                    "chapman": None,
                    "eq1": {"C1": estimate_dict(p.eq1_r1), "C2": estimate_dict(p.eq1_r2), "design": "paper"},
                    "eq2": {"C1": estimate_dict(p.eq2_r1), "C2": estimate_dict(p.eq2_r2), "design": "paper"},
                    "judged": {"c1": self._judged("A1"), "c2": self._judged("A2"),
                               "pair": self._judged("A1", "A2", "A12")}}
        empty = {"C1": estimate_dict(None), "C2": estimate_dict(None), "design": None}
        return {"design": None, "p1": None, "p2": None, "r1": None, "r2": None, "n_hat": None, "chapman": None,
                "eq1": empty, "eq2": dict(empty), "judged": {"c1": 0, "c2": 0, "pair": 0}}

    def _samples(self, *keys: str) -> list[SampleInputs]:
        """The samples of ``keys`` that exist, in that order."""
        return [sample for sample in map(self.inputs.sample, keys) if sample is not None]

    def _judged(self, *keys: str) -> int:
        return sum(sample.judged for sample in self._samples(*keys))

    # ----------------------------------------------------------------- classifiers

    def _contradicted(self, primary: dict[str, Any]) -> bool:
        """The pair's model contradicts what was found: n̂'s interval lies below the certainly relevant documents
        already found (``contradicts_found``), evidence of δ1 > 1."""
        result = (self.stratified if primary["design"] == "stratified"
                  else self.paper if primary["design"] == "paper" else None)
        return bool(result is not None and result.contradicts_found)

    def _classifiers(self, primary: dict[str, Any]) -> list[dict[str, Any]]:
        rows = self._classifier_rows(primary)
        if self._contradicted(primary):
            # "Every figure honest" #4: no floored figure. Every recall read through the pair's model (C1, C2:
            # r* = δ1·r; a further classifier: p_C|A_C|/n̂), and what is computed from it (F1 through n̂, the
            # extrapolated precision), is withheld with the reason in words.
            for row in rows:
                if row["recall"].get("estimate") is None and row["recall"].get("method") is None:
                    continue  # nothing to withhold
                row["recall"] = {"estimate": None, "low": None, "high": None, "method": row["recall"].get("method"),
                                 "withheld_reason": CONTRADICTION_REASON}
                row["f1"] = {"estimate": None, "low": None, "high": None, "mean": None,
                             "method": "withheld: " + CONTRADICTION_REASON}
                row["extrapolated_precision"] = {"target_recall": self.inputs.target_recall, "estimate": None,
                                                 "refused": CONTRADICTION_REASON[:1].upper() + CONTRADICTION_REASON[1:]
                                                 + ".", "review_documents": None}
        return rows

    def _classifier_rows(self, primary: dict[str, Any]) -> list[dict[str, Any]]:
        inputs = self.inputs
        rows: list[dict[str, Any]] = []
        n_hat = num(primary["n_hat"].point) if primary["n_hat"] is not None else None
        for info, precision, recall, judged in (
            (inputs.c1, primary["p1"], primary["r1"], primary["judged"]["c1"]),
            (inputs.c2, primary["p2"], primary["r2"], primary["judged"]["c2"]),
        ):
            if info is None:
                continue
            rows.append(self._classifier_row(
                info=info, precision=estimate_dict(precision), recall=estimate_dict(recall), precision_judged=judged,
                n_hat=n_hat, f1_judged=primary["judged"]["pair"]))
        for info in inputs.extras:
            sample = inputs.sample(f"R:{info.id}")
            precision = {"estimate": None, "low": None, "high": None, "method": None}
            if sample is not None and sample.judged:
                interval = proportions.clopper_pearson_interval(
                    relevant=sample.relevant, judged=sample.judged, confidence=self.confidence)
                precision = {"estimate": interval.estimate, "low": interval.low, "high": interval.high,
                             "method": "clopper-pearson"}
            recall = estimate_dict(None)
            if self.stratified is not None and str(info.id) in self.stratified.other_recalls:
                recall = estimate_dict(self.stratified.other_recalls[str(info.id)])
            judged = sample.judged if sample is not None else 0
            rows.append(self._classifier_row(
                info=info, precision=precision, recall=recall, precision_judged=judged,
                n_hat=n_hat, f1_judged=judged + primary["judged"]["pair"]))
        return rows

    def _classifier_row(self, *, info, precision, recall, precision_judged, n_hat, f1_judged) -> dict[str, Any]:
        return {
            "id": info.id, "name": info.name, "fingerprint": info.fingerprint, "role": info.role,
            "retrieved": NOT_COUNTED if info.retrieved is None else info.retrieved,
            "precision": {**precision, "judged": precision_judged},
            "recall": recall,
            "f1": self._f1(info=info, precision=precision["estimate"], n_hat=n_hat, judged=f1_judged),
            "extrapolated_precision": self._extrapolated(precision=precision["estimate"], recall=recall["estimate"], n_hat=n_hat),
        }

    def _f1(self, *, info, precision: float | None, n_hat: float | None, judged: int) -> dict[str, Any]:
        """Seed 002 binary F1 posterior from estimated TP/FP/FN (an approximation, docs/report.md).

        TP = p·|A|, FP = (1−p)·|A|, FN = n̂ − TP are population estimates; they are
        rescaled to the number of judged documents behind them so the Dirichlet
        posterior is about as wide as that sample warrants.
        """
        empty = {"estimate": None, "low": None, "high": None, "mean": None, "method": None}
        if precision is None or n_hat is None or judged <= 0 or info.retrieved is None or info.retrieved <= 0:
            return empty
        tp = precision * info.retrieved
        fp = info.retrieved - tp
        fn = max(0.0, n_hat - tp)
        total = tp + fp + fn
        if total <= 0:
            return empty
        scale = judged / total
        try:
            summary = f1_posterior.binary_f1_posterior(
                tp=tp * scale, fp=fp * scale, fn=fn * scale, draws=self.draws, seed=self.seed, mass=self.confidence)
        except STATS_ERRORS as exc:
            return {**empty, "method": f"not available: {exc}"}
        return {"estimate": num(summary["score"]), "low": num(summary["hdi"][0]), "high": num(summary["hdi"][1]),
                "mean": num(summary["mean"]),
                "method": "seed 002 binary F1 posterior (HDI) on estimated TP/FP/FN rescaled to the judged documents; approximate"}

    def _extrapolated(self, *, precision: float | None, recall: float | None, n_hat: float | None) -> dict[str, Any]:
        target = self.inputs.target_recall
        result: dict[str, Any] = {"target_recall": target, "estimate": None, "refused": None, "review_documents": None}
        if precision is None or recall is None or n_hat is None or not self.corpus_size:
            result["refused"] = "Precision, recall and the number of relevant documents are needed first."
            return result
        # review_documents: seed 001 Eq. 2, n = ρ·N·R_T/P(R_T) at the extrapolated precision (N = |U|).
        return {"target_recall": target, **precision_extrapolate(
            precision=float(precision), recall=float(recall), prevalence=float(n_hat) / self.corpus_size,
            target_recall=float(target), population=self.corpus_size)}

    # ----------------------------------------------------------------- other blocks

    def _regions(self) -> list[dict[str, Any]]:
        inputs = self.inputs
        names: dict[int | None, str] = {c.id: c.name for c in _pair_list(inputs) + list(inputs.extras)}
        rows = []
        order = ["A12", "B1", "B2", "A1", "A2", NEITHER]
        for key in order:
            if key not in inputs.region_sizes:
                continue
            sample = inputs.sample(key)
            if key in ("A1", "A2", NEITHER) and sample is None:
                continue  # the paper's design (or the dependence check) was not used
            rows.append(self._region_row(key, _REGION_LABELS[key], inputs.region_sizes[key], sample, None))
        for key in sorted(k for k in inputs.samples if k.startswith("R:")):
            sample = inputs.samples[key]
            rows.append(self._region_row(key, f"Retrieved by {names.get(sample.classifier_id, sample.classifier_id)}",
                                         sample.size, sample, sample.classifier_id))
        if inputs.sample("U") is not None:
            rows.append(self._region_row("U", _REGION_LABELS["U"], inputs.corpus_size, inputs.sample("U"), None))
        return rows

    @staticmethod
    def _region_row(name, label, size, sample, classifier_id) -> dict[str, Any]:
        judged = sample.judged if sample else 0
        relevant = sample.relevant if sample else 0.0
        return {"name": name, "label": label, "classifier_id": classifier_id, "size": int(size),
                "sampled": sample.sampled if sample else 0, "judged": judged, "relevant": relevant,
                "precision": relevant / judged if judged else None}

    def _stratified_block(self) -> dict[str, Any] | None:
        s = self.stratified
        if s is None:
            return None
        return {
            "C1": estimate_dict(s.r1), "C2": estimate_dict(s.r2),
            "p1": estimate_dict(s.p1), "p2": estimate_dict(s.p2), "p12": estimate_dict(s.p12),
            "delta_method": {"C1": s.delta_r1.as_dict(), "C2": s.delta_r2.as_dict()},
        }

    def _paper_block(self) -> dict[str, Any] | None:
        p = self.paper
        if p is None:
            return None
        return {
            "eq1": {"C1": estimate_dict(p.eq1_r1), "C2": estimate_dict(p.eq1_r2)},
            "eq2": {"C1": estimate_dict(p.eq2_r1), "C2": estimate_dict(p.eq2_r2)},
            "p1": estimate_dict(p.p1), "p2": estimate_dict(p.p2), "p12": estimate_dict(p.p12), "n_hat": estimate_dict(p.n_hat),
        }

    def _estimated_relevant(self, primary) -> dict[str, Any]:
        block = estimate_dict(primary["n_hat"])
        block["chapman"] = num(primary["chapman"])
        block["prevalence"] = (block["estimate"] / self.corpus_size
                               if block["estimate"] is not None and self.corpus_size else None)
        # Totals respect what was found (issue 11): floored at the most relevant documents any classifier found.
        result: pair_recall.StratifiedPairRecall | pair_recall.PaperDesignPairRecall | None = (
            self.stratified if primary["design"] == "stratified" else self.paper if primary["design"] else None)
        block["floored"] = bool(result.bound_binding) if result is not None else False
        block["floored_share"] = num(result.bound_binding_share) if result is not None else None
        stratified = self.stratified if primary["design"] == "stratified" else None
        block["floor"] = num(stratified.n_hat_floor) if stratified is not None else None
        block["unconstrained"] = (estimate_dict(stratified.n_hat_unconstrained)
                                  if stratified is not None and stratified.n_hat_unconstrained is not None else None)
        # The floor counts certainly relevant documents only (_certain_relevant). When the pair's n̂ lies below
        # it with confidence the model is contradicted: its count is withheld, not floored ("at least `floor`").
        block["contradicts_found"] = self._contradicted(primary)
        block["withheld_reason"] = None
        if block["contradicts_found"]:
            block.update(estimate=None, low=None, high=None, prevalence=None, withheld_reason=CONTRADICTION_REASON)
        return block

    def _cost(self, judged_documents: int) -> dict[str, Any]:
        """Spent in all; per judged document of the estimation sample, certification's share left out."""
        cost = self.inputs.cost
        spent = Decimal(cost.spent)
        certification = Decimal(self.inputs.certification_spent)
        estimation = max(Decimal(0), spent - certification)
        return {
            "spent": float(spent), "rewards": float(Decimal(cost.rewards)), "currency": "USD",
            "assignments": cost.assignments, "includes_fees": cost.includes_fees,
            "estimation_spent": float(estimation), "certification_spent": float(certification),
            "per_judged_document": float(estimation / judged_documents) if judged_documents else None,
        }

    def _uniform_comparison(self, primary) -> tuple[dict[str, Any], float | None]:
        """Documents a uniform sample of the corpus needs for C1's interval half-width (planning.uniform_sample_size)."""
        plan = {"documents": None, "judgments": None, "recall": None, "half_width": None, "prevalence": None,
                "confidence": self.confidence}
        r1 = primary["r1"]
        n_hat = primary["n_hat"]
        if r1 is None or r1.point is None or r1.low is None or n_hat is None or n_hat.point is None:
            return plan, None
        if not self.corpus_size or not math.isfinite(n_hat.point):
            return plan, None
        half_width = (r1.high - r1.low) / 2.0
        prevalence = min(1.0, n_hat.point / self.corpus_size)
        plan.update({"recall": r1.point, "half_width": half_width, "prevalence": prevalence})
        try:
            documents = planning.uniform_sample_size(
                recall=min(1.0, r1.point), prevalence=prevalence, half_width=half_width,
                confidence=self.confidence, corpus_size=self.corpus_size)
        except STATS_ERRORS as exc:
            self.diagnostics.append(diagnostic("uniform_comparison_unavailable", "info",
                                                f"The uniform-sampling comparison is not available: {exc}"))
            return plan, None
        plan["documents"] = documents
        plan["judgments"] = documents * Hit.ASSIGNMENTS_PER_HIT  # one judgment per assignment (seed 000 Sec. 4.1)
        judged = primary["judged"]["pair"]
        return plan, (documents / judged if judged else None)

    def _sensitivity(self) -> list[dict[str, Any]] | None:
        if self.stratified is None:
            return None
        return [point.as_dict() for point in self.stratified.sensitivity]

    def _posterior(self) -> dict[str, Any] | None:
        """Histograms of the Jeffreys posterior draws of each recall, for plots."""
        s = self.stratified
        if s is None or s.r1_draws is None:
            return None
        edges = np.linspace(0.0, 1.0, POSTERIOR_BINS + 1)
        result = {"bins": POSTERIOR_BINS, "edges": [float(e) for e in edges]}
        for name, draws in (("C1", s.r1_draws), ("C2", s.r2_draws)):
            values = np.asarray(draws, dtype=float)
            values = values[np.isfinite(values)]
            counts, _ = np.histogram(np.clip(values, 0.0, 1.0), bins=edges)
            result[name] = {"counts": [int(c) for c in counts], "draws": int(values.size)}
        return result

    def _worker_agreement(self) -> dict[str, Any] | None:
        """Fleiss' κ, split votes overall and per stratum, and a plain warning when agreement is low.

        aggregation.label_quality decides (its thresholds are documented there and in
        docs/aggregation.md); κ keeps its original definition here (complete documents only).
        """
        inputs = self.inputs
        rows = [(r, t - r) for r, t in inputs.votes if t == Hit.ASSIGNMENTS_PER_HIT]
        if not rows:
            return None
        block: dict[str, Any]
        try:
            kappa = aggregation.fleiss_kappa(counts=np.asarray(rows, dtype=float))
        except STATS_ERRORS as exc:
            block = {"fleiss_kappa": None, "documents": len(rows), "note": str(exc)}
        else:
            block = {"fleiss_kappa": num(kappa), "documents": len(rows), "note": None}
        block.update({"split_share": None, "per_stratum": {}, "low_agreement": False, "reasons": [], "message": None,
                      "majority_error": None})
        complete = [(i, v) for i, v in enumerate(inputs.votes) if v[1] == Hit.ASSIGNMENTS_PER_HIT]
        strata = ([inputs.vote_strata[i] for i, _ in complete] if len(inputs.vote_strata) == len(inputs.votes)
                  else None)
        try:
            quality = aggregation.label_quality(votes=[v for _, v in complete], strata=strata,
                                                intervals_widened=bool(self.label_noise and self.label_noise["widened"]),
                                                undecided=inputs.undecided, unsure_votes=inputs.unsure_votes,
                                                unsure_documents=inputs.unsure_documents)
        except STATS_ERRORS as exc:
            block["note"] = block["note"] or str(exc)
            return block
        block.update({
            "split_share": num(quality.split_share),
            "per_stratum": {k: {"documents": s.documents, "fleiss_kappa": num(s.fleiss_kappa),
                                "split_share": num(s.split_share)} for k, s in quality.per_stratum.items()},
            "low_agreement": bool(quality.low_agreement), "reasons": list(quality.reasons),
            "message": quality.message, "majority_error": num(quality.majority_error),
            "undecided": quality.undecided, "unsure_votes": quality.unsure_votes, "disclosure": quality.disclosure,
        })
        if quality.low_agreement and quality.message:
            self.diagnostics.append(diagnostic("low_agreement", "warning", quality.message, "label_quality"))
        if quality.disclosure:  # "unsure" answers and undecided documents (docs/aggregation.md)
            self.diagnostics.append(diagnostic("undecided_labels", "info", quality.disclosure, "label_quality"))
        return block
