"""Coverage of Dawid–Skene recall intervals, simulated against the truth (issue 24 item 5); the set-up and
measured figures are in tests/estimation/stats/test_dawid_skene_intervals.py."""
from __future__ import annotations

from typing import Any

import numpy as np

from estimation.stats.aggregation import dawid_skene, dawid_skene_draws

A, N = 1_000, 20_000
TRUTH = A * 0.85 / (A * 0.85 + N * 0.02)
STUDIES = 100
DRAWS = 300


def simulate(rng: np.random.Generator, *, accuracy: float, judged_a: int = 200, judged_n: int = 400,
             workers: int = 40):
    relevant = np.concatenate([rng.random(judged_a) < 0.85, rng.random(judged_n) < 0.02])
    strata = np.r_[np.zeros(judged_a, int), np.ones(judged_n, int)]
    n = relevant.size
    items = np.repeat(np.arange(n), 3)
    who = np.argsort(rng.random((n, workers)), axis=1)[:, :3].ravel()
    skill = np.clip(rng.normal(accuracy, 0.05, workers), 0.55, 0.99)
    labels = np.where(rng.random(3 * n) < skill[who], relevant[items], ~relevant[items]).astype(int)
    return strata, items, who, labels


def recall_interval(true_labels: np.ndarray, strata: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    weights = rng.exponential(size=true_labels.shape)
    shares = [(weights * true_labels)[:, strata == g].sum(axis=1) / weights[:, strata == g].sum(axis=1) for g in (0, 1)]
    recall = A * shares[0] / (A * shares[0] + N * shares[1])
    low, high = np.quantile(recall, [0.025, 0.975])
    return float(low), float(high)


def coverage(accuracy: float, *, seed: int = 2024, studies: int = STUDIES) -> tuple[float, float]:
    """(EM plug-in coverage, Bayesian Dawid–Skene coverage) of the true recall."""
    rng = np.random.default_rng(seed)
    plug_in = bayes = 0
    for study in range(studies):
        strata, items, who, labels = simulate(rng, accuracy=accuracy)
        # The chain's own EM fit (fit.point) is the EM plug-in: one fit instead of two; ``rng``'s stream is as before.
        fit = dawid_skene_draws(items=items, workers=who, labels=labels, strata=strata, draws=DRAWS, burn_in=100,
                                seed=study)
        p = fit.point.posterior[:, 1]
        low, high = recall_interval((rng.random((DRAWS, p.size)) < p).astype(float), strata, rng)
        plug_in += low <= TRUTH <= high
        low, high = recall_interval(fit.labels.astype(float), strata, rng)
        bayes += low <= TRUTH <= high
    return plug_in / studies, bayes / studies


# --------------------------------------------------------------------------- the pair design (the report's path)

# A fixed corpus seen through a classifier pair: |A12|, |B1|, |B2| and their relevant counts T, with the relevant
# documents neither classifier retrieved T_U = T_B1·T_B2/T12 = 120, so the pair's estimand r1* = T12/(T12 + T_B2)
# is the corpus recall exactly (δ1 = 1): r1 = 480/840 = 0.571, r2 = 480/640 = 0.750.
PAIR_SIZES = {"A12": 600, "B1": 400, "B2": 900}
PAIR_RELEVANT = {"A12": 480, "B1": 160, "B2": 360}
PAIR_TRUTH = {"C1": 480 / 840, "C2": 480 / 640}
PAIR_JUDGED = 200  # per region: 600 judged documents × 3 votes, the report's timing case


def pair_study(rng: np.random.Generator, *, accuracy: float, workers: int = 20, judged: int = PAIR_JUDGED):
    """One study: a simple random sample of ``judged`` documents per region, three votes each from a pool of
    ``workers`` whose accuracies are N(``accuracy``, 0.05) clipped to [0.55, 0.99].

    Returns (strata, items, workers, labels): strata[i] is 0/1/2 for A12/B1/B2, the rest are one entry per vote.
    """
    truth = []
    for key in ("A12", "B1", "B2"):
        region = np.zeros(PAIR_SIZES[key], dtype=bool)
        region[:PAIR_RELEVANT[key]] = True
        truth.append(rng.choice(region, size=judged, replace=False))
    relevant = np.concatenate(truth)
    strata = np.repeat(np.arange(3), judged)
    n = relevant.size
    items = np.repeat(np.arange(n), 3)
    who = np.argsort(rng.random((n, workers)), axis=1)[:, :3].ravel()
    skill = np.clip(rng.normal(accuracy, 0.05, workers), 0.55, 0.99)
    labels = np.where(rng.random(3 * n) < skill[who], relevant[items], ~relevant[items]).astype(int)
    return strata, items, who, labels


PAIR_TRUE_TOTAL = 480 + 160 + 360 + 120  # n, the relevant documents of the corpus (T_U = 120 outside the pair)


def _covers(low: float | None, high: float | None, value: float) -> bool:
    """The interval [low, high] holds value; a missing lower end never covers, a missing upper end is +∞."""
    return low is not None and low <= value <= (np.inf if high is None else high)


def pair_coverage(accuracy: float, *, seed: int = 2026, studies: int = 100, judged: int = PAIR_JUDGED,
                  chain_draws: int = 200, burn_in: int = 100, mc_draws: int = 2_000,
                  ways: tuple[str, ...] = ("point", "draws", "votes")) -> dict[str, dict[str, float]]:
    """Coverage of the truth by ``stratified_pair_recall``'s 95% intervals, three ways on the same data:

    "point": label probabilities = the EM posteriors (the workers' accuracies taken as known; the Dawid–Skene
    report before issue 24 item 5); "draws": the Bayesian Dawid–Skene chain's label counts as
    ``judged_count_draws`` (the report now); "votes": the majority topics' report, one-coin probabilities of
    each document's votes at the accuracy estimated from vote agreement (``vote_label_probabilities``).
    Returns {way: {"C1", "C2": coverage of r1, r2; "n_hat": coverage of n; "width_C1": mean width;
    "inside": share of studies whose r1 and r2 point estimates lie inside their intervals}}.
    """
    from estimation.stats.aggregation import dawid_skene_group_draws
    from estimation.stats.pair_recall import (
        RegionSample,
        stratified_pair_recall,
        vote_label_probabilities,
        worker_accuracy_from_agreement,
    )

    rng = np.random.default_rng(seed)
    keys = ("A12", "B1", "B2")
    hits = {way: dict.fromkeys(("C1", "C2", "n_hat", "width_C1", "inside"), 0.0) for way in ways}
    for study in range(studies):
        strata, items, who, labels = pair_study(rng, accuracy=accuracy, judged=judged)
        fit = dawid_skene_draws(items=items, workers=who, labels=labels, strata=strata, draws=chain_draws,
                                burn_in=burn_in, seed=study)
        groups = {key: np.flatnonzero(strata == g) for g, key in enumerate(keys)}
        grouped = dawid_skene_group_draws(fit=fit, groups=groups)
        by_vote: tuple[float, ...] = ()
        if "votes" in ways:
            relevant_votes = np.bincount(items, weights=labels, minlength=strata.size).astype(int)
            votes = [(int(r), 3) for r in relevant_votes]
            agreement = worker_accuracy_from_agreement(votes=votes)
            by_vote = vote_label_probabilities(votes=votes, strata=[keys[g] for g in strata],
                                               accuracy=min(agreement or 1.0, 0.999)).probabilities
        regions = {key: RegionSample(size=PAIR_SIZES[key], judged=judged, relevant=0.0) for key in keys}
        options: dict[str, dict[str, Any]] = {
            "point": {"label_probabilities": {k: fit.point.posterior[g, 1] for k, g in groups.items()}},
            "draws": {"label_probabilities": grouped.probabilities, "judged_count_draws": grouped.counts},
            "votes": {"label_probabilities": {k: np.asarray(by_vote)[g] for k, g in groups.items()} if by_vote else {}},
        }
        for way in ways:
            result = stratified_pair_recall(a12=regions["A12"], b1=regions["B1"], b2=regions["B2"], draws=mc_draws,
                                            seed=study, **options[way])
            for name, estimate in (("C1", result.r1), ("C2", result.r2)):
                hits[way][name] += _covers(estimate.low, estimate.high, PAIR_TRUTH[name])
            hits[way]["n_hat"] += _covers(result.n_hat.low, result.n_hat.high, PAIR_TRUE_TOTAL)
            hits[way]["width_C1"] += float(result.r1.high or 1.0) - float(result.r1.low or 0.0)
            hits[way]["inside"] += all(e.point is not None and _covers(e.low, e.high, e.point)
                                       for e in (result.r1, result.r2))
    return {way: {k: v / studies for k, v in values.items()} for way, values in hits.items()}


def pair_topic_inputs(*, accuracy: float, judged: int = PAIR_JUDGED, seed: int = 1, with_judgments: bool = True,
                      draws: int = 10_000):
    """A Dawid–Skene topic's TopicInputs for the pure report (``topic_report_from_inputs``): the pair corpus above,
    one :func:`pair_study`, the EM posteriors as the stored labels; with ``with_judgments`` the judgments the report
    draws the chain from (``crowd_judgments``), without them the inputs of a report before issue 24 item 5."""
    from estimation.services.inputs import ClassifierInputs, CostInputs, CrowdJudgmentsInputs, SampleInputs, TopicInputs

    rng = np.random.default_rng(seed)
    strata, items, who, labels = pair_study(rng, accuracy=accuracy, judged=judged)
    posterior = dawid_skene(items=items, workers=who, labels=labels, strata=strata).posterior[:, 1]
    relevant_votes = np.bincount(items, weights=labels, minlength=strata.size).astype(int)
    keys = ("A12", "B1", "B2")
    holders = {"A12": (1, 2), "B1": (1,), "B2": (2,)}
    samples = {}
    for g, key in enumerate(keys):
        members = np.flatnonzero(strata == g)
        samples[key] = SampleInputs(
            key=key, region=key, classifier_id=None, size=PAIR_SIZES[key], sampled=judged,
            document_ids=tuple(int(i) + 1 for i in members), labels=tuple(float(posterior[i]) for i in members),
            retrieved_by=(holders[key],) * judged, votes=tuple((int(relevant_votes[i]), 3) for i in members))
    sizes = dict(PAIR_SIZES)
    region_sizes = {**sizes, "A1": sizes["A12"] + sizes["B1"], "A2": sizes["A12"] + sizes["B2"]}
    votes = tuple(v for s in samples.values() for v in s.votes)
    crowd = CrowdJudgmentsInputs(
        document_ids=tuple(range(1, strata.size + 1)), strata=tuple(keys[g] for g in strata),
        items=tuple(int(i) for i in items), workers=tuple(int(w) for w in who), answers=tuple(int(v) for v in labels))
    return TopicInputs(
        schema=3, topic_id=seed, topic_name="t", corpus_size=20_000, aggregator="dawid_skene", soft_labels=True,
        target_recall=0.8, confidence=0.95, crowd="local",
        c1=ClassifierInputs(1, "title filter", "f1", "c1", region_sizes["A1"]),
        c2=ClassifierInputs(2, "body filter", "f2", "c2", region_sizes["A2"]), extras=(),
        region_sizes=region_sizes, samples=samples, venn3={}, judgments=3 * len(votes), votes=votes,
        cost=CostInputs(0, "0", "0", False), certification={"state": "none"}, code_version="test",
        parameters={"draws": draws, "seed": seed}, vote_strata=tuple(k for k, s in samples.items() for _ in s.votes),
        crowd_judgments=crowd if with_judgments else None)
