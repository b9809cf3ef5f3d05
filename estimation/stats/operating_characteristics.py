"""Operating characteristics of the certification protocol, by simulation.

Seed 004 (Bagdouri, Webber, Lewis, Oard, CIKM 2013) makes a certification
valid by fixing the test-set size before the test set is drawn and testing
once.  This module measures what that buys: it simulates the whole protocol
many times on a generated population whose true value is known —

1. a pilot sample is drawn and judged (the labels the topic already has);
2. the plan sizes a fresh certification sample from the pilot (seed 004
   Alg. 2 for F1, its pair-recall equivalent per region, or a QBCB size);
3. the fresh sample is drawn from the documents the pilot did not use;
4. every document is judged by three workers of a chosen accuracy and
   labelled by majority vote;
5. the verdict is computed once: pass iff the one-sided 1 − α lower bound
   reaches the target τ —

and reports how often it passes.  At a true value equal to τ that is the
false-pass rate (should be ≤ α); above τ it is the power.  With ``peek`` the
same samples are also judged by the naive protocol that looks after every
batch and passes as soon as the fixed-sample bound clears τ (the
sequential-testing bias of seed 004, Sec. 6); with ``monitor`` they are
judged by an anytime-valid confidence sequence, which may stop early and
keeps its guarantee.

Everything random is vectorised over runs (sample counts are drawn as
hypergeometric counts, label noise as binomial flips).  The statistics
themselves — the plan sizes, the lower bounds, QBCB's threshold — are the
functions of ``certification``, ``certification_sizing``, ``pair_recall`` and
``planning``; this module
only calls them, once per run and look (with a cache for repeated inputs).

Label noise.  A three-worker majority with per-worker accuracy a is wrong
with probability e = 1 − a³ − 3a²(1 − a), symmetrically for relevant and
non-relevant documents.  The *true value* every rate is judged against is
the metric under the true labels; with a < 1 the majority labels are biased
(relevant documents are lost, non-relevant ones gained) and the pass rate is
no longer the false-pass rate of the method.  Use accuracy 1 to measure α.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Generic, SupportsIndex, TypeVar

import numpy as np

from . import certification as cert
from . import confidence_sequence as cs
from . import planning
from .certification_sizing import (
    BOUND_DRAWS,
    pair_recall_calibrated_size,
    pair_recall_fixed_lower_bound,
    qbcb_certification_size,
)

__all__ = [
    "METRICS",
    "PairPopulation",
    "ConfusionPopulation",
    "OperatingCharacteristics",
    "pair_population",
    "f1_population",
    "recall_population",
    "majority_error_rate",
    "delta_method_pair_planner",
    "simulate_certification",
]

METRICS = ("pair_recall", "f1", "qbcb_recall")

_T = TypeVar("_T")

# Monte Carlo draws of stratified_pair_recall's bound inside the simulation (as when sizing;
# see certification_sizing.BOUND_DRAWS).
SIM_BOUND_DRAWS = BOUND_DRAWS
# A monitored plan's sample, as a multiple of the fixed-sample size (a ceiling: the
# confidence sequence is about twice as wide as a fixed-sample bound, so about four
# times the documents keep a similar power; a heuristic, measured with ``monitor``).
MONITORING_SIZE_FACTOR = 4
# Grid of the confidence sequences inside the simulation (service: 1,000).  A coarser
# grid only widens the sequence (bounds are rounded outward), so rates stay valid.
SIM_CS_GRID = 200
# Alg. 1 simulations per candidate size inside the simulation (service: 10,000).
SIM_PLAN_SIMULATIONS = 2_000


# =========================================================================== populations


@dataclass(frozen=True)
class PairPopulation:
    """A corpus seen through two classifiers C1, C2, by disjoint regions.

    ``*_size`` documents per region, ``*_relevant`` of them relevant.
    ``outside`` is U ∖ (A1 ∪ A2).  The certified quantity is the recall of
    C1, r1 = T12 / (T12 + T_B2) — equal to its recall over all relevant
    documents when C1 and C2 are conditionally independent on relevant
    documents (seed 000, Assumption 1), which the generator guarantees.
    """

    a12_size: int
    a12_relevant: int
    b1_size: int
    b1_relevant: int
    b2_size: int
    b2_relevant: int
    outside_size: int
    outside_relevant: int

    @property
    def true_recall(self) -> float:
        return self.a12_relevant / (self.a12_relevant + self.b2_relevant)

    @property
    def corpus_recall(self) -> float:
        total = self.a12_relevant + self.b1_relevant + self.b2_relevant + self.outside_relevant
        return (self.a12_relevant + self.b1_relevant) / total

    def as_dict(self) -> dict:
        return {**asdict(self), "true_recall": self.true_recall, "corpus_recall": self.corpus_recall}


def pair_population(*, true_recall: float, c2_relevant: int = 10_000, recall2: float = 0.6,
                    precision_a12: float = 0.9, precision_b1: float = 0.5, precision_b2: float = 0.3,
                    outside_size: int = 1_000_000) -> PairPopulation:
    """Population with C1's recall equal to ``true_recall`` (to 1/c2_relevant): seed 000 Assumption 1 holds.

    C2 retrieves ``c2_relevant`` relevant documents; C1 finds ``true_recall``
    of them (A12) and the same fraction of those C2 misses, so the pair is
    conditionally independent on relevant documents.  Non-relevant documents
    are added to each region so that its precision is the one given.

    Default: |A12| ≈ 6,700 at r1 = 0.6, |B2| ≈ 13,300, p12 = 0.9,
    p_B1 = 0.5, p_B2 = 0.3, C2's recall 0.6, one million other documents.
    """
    cert._check_level("true_recall", true_recall)
    a12_rel = int(round(true_recall * c2_relevant))
    b2_rel = c2_relevant - a12_rel
    relevant_total = c2_relevant / recall2
    b1_rel = int(round(relevant_total * true_recall * (1.0 - recall2)))
    outside_rel = int(round(relevant_total * (1.0 - true_recall) * (1.0 - recall2)))

    def size(relevant: int, precision: float) -> int:
        return max(relevant, int(round(relevant / precision)))

    return PairPopulation(
        a12_size=size(a12_rel, precision_a12), a12_relevant=a12_rel,
        b1_size=size(b1_rel, precision_b1), b1_relevant=b1_rel,
        b2_size=size(b2_rel, precision_b2), b2_relevant=b2_rel,
        outside_size=outside_size + outside_rel, outside_relevant=outside_rel,
    )


@dataclass(frozen=True)
class ConfusionPopulation:
    """A corpus seen through one classifier: its full confusion matrix (the cells of seed 004 Alg. 1)."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def size(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def true_f1(self) -> float:
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn)

    @property
    def true_recall(self) -> float:
        return self.tp / (self.tp + self.fn)

    @property
    def retrieved_fraction(self) -> float:
        return (self.tp + self.fp) / self.size

    def as_dict(self) -> dict:
        return {**asdict(self), "true_f1": self.true_f1, "true_recall": self.true_recall,
                "prevalence": (self.tp + self.fn) / self.size}


def f1_population(*, true_f1: float, relevant: int = 10_000, corpus_size: int = 200_000) -> ConfusionPopulation:
    """A classifier with precision = recall = ``true_f1`` (so F1 = true_f1, the metric of seed 004 Sec. 5.3's test) at 5% prevalence by default."""
    cert._check_level("true_f1", true_f1)
    tp = int(round(true_f1 * relevant))
    fn = relevant - tp
    fp = fn  # precision = recall
    return ConfusionPopulation(tp=tp, fp=fp, fn=fn, tn=corpus_size - tp - fp - fn)


def recall_population(*, true_recall: float, relevant: int = 10_000, precision: float = 0.5,
                      corpus_size: int = 200_000) -> ConfusionPopulation:
    """A classifier with recall ``true_recall`` and the given precision (QBCB's setting)."""
    cert._check_level("true_recall", true_recall)
    tp = int(round(true_recall * relevant))
    fp = int(round(tp * (1.0 - precision) / precision))
    return ConfusionPopulation(tp=tp, fp=fp, fn=relevant - tp, tn=corpus_size - relevant - fp)


def majority_error_rate(accuracy: float) -> float:
    """P(a majority of three independent workers, each right w.p. ``accuracy``, is wrong).

    1 − a³ − 3a²(1 − a); notes §3: a = 0.8 → 0.104, a = 0.9 → 0.028.
    """
    if not 0.5 <= accuracy <= 1.0:
        raise ValueError(f"worker accuracy must lie in [0.5, 1] (got {accuracy!r})")
    return 1.0 - accuracy**3 - 3.0 * accuracy**2 * (1.0 - accuracy)


# =========================================================================== protocol machinery

def _noisy(rng: np.random.Generator, relevant: np.ndarray, total: np.ndarray, error: float) -> np.ndarray:
    """Majority labels: how many of ``total`` judged documents are *labelled* relevant."""
    if error <= 0.0:
        return relevant.copy()
    return rng.binomial(relevant, 1.0 - error) + rng.binomial(total - relevant, error)


def _draw(rng: np.random.Generator, good: np.ndarray | int, bad: np.ndarray | int, n: np.ndarray) -> np.ndarray:
    """Relevant documents among n drawn without replacement (vectorised over runs)."""
    good = np.asarray(good, dtype=np.int64)
    bad = np.asarray(bad, dtype=np.int64)
    n = np.minimum(np.asarray(n, dtype=np.int64), good + bad)
    return rng.hypergeometric(np.broadcast_to(good, n.shape), np.broadcast_to(bad, n.shape), n)


def _uniform_cells(rng, remaining: dict[str, np.ndarray], n: np.ndarray) -> dict[str, np.ndarray]:
    """Split a uniform draw of n documents among the cells, removing them from ``remaining``."""
    left = sum(remaining.values())
    n = np.minimum(n, left)
    drawn = {}
    keys = list(remaining)
    for key in keys[:-1]:
        left = left - remaining[key]
        count = rng.hypergeometric(remaining[key], left, n)
        drawn[key] = count
        n = n - count
    drawn[keys[-1]] = n
    for key in keys:
        remaining[key] = remaining[key] - drawn[key]
    return drawn


class _Cache(Generic[_T]):
    """Memoises a scalar function of integer inputs (runs often repeat the same counts)."""

    def __init__(self, function: Callable[..., _T]):
        self.function = function
        self.values: dict[tuple, _T] = {}

    def __call__(self, *key: int) -> _T:
        if key not in self.values:
            self.values[key] = self.function(*key)
        return self.values[key]


# =========================================================================== the metrics

class _Metric:
    """How one metric is piloted, planned, sampled and decided in the simulation."""

    name: str
    strata: tuple[str, ...]
    target: float

    def pilot(self, rng, runs: int) -> dict[str, np.ndarray]:  # observed pilot inputs per run
        raise NotImplementedError

    def plan(self, pilot: dict[str, np.ndarray]) -> np.ndarray:  # sizes per run and stratum; 0 = impossible
        raise NotImplementedError

    def sample(self, rng, sizes: np.ndarray) -> dict[str, np.ndarray]:  # true counts of the next batch
        raise NotImplementedError

    def passes(self, observed: dict[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def truth(self) -> dict[str, np.ndarray]:  # the population itself, as a one-run "pilot"
        raise NotImplementedError

    def snapshot(self) -> object:  # the sampling state, for ``restore`` after the monitored protocol
        raise NotImplementedError

    def restore(self, state) -> None:
        raise NotImplementedError

    def sequence_parts(self, increment) -> dict[str, tuple[np.ndarray, np.ndarray]]:  # (ones, zeros) per sequence
        raise NotImplementedError

    def sequence_bound(self, state: dict, run: SupportsIndex, batches: dict[str, np.ndarray]) -> float:
        raise NotImplementedError


class _PairRecallMetric(_Metric):
    """C1's recall from the disjoint regions A12 and B2 (r1 = T12 / (T12 + T_B2))."""

    name = "pair_recall"
    strata = ("A12", "B2")

    def __init__(self, *, population: PairPopulation, target: float, alpha: float, power: float,
                 pilot_size: int, error: float, planner: Callable | None, seed_base: int):
        self.population, self.target, self.alpha, self.power = population, target, alpha, power
        self.pilot_size, self.error = pilot_size, error
        self.planner = planner or _default_pair_planner
        self.sizes = {"A12": population.a12_size, "B2": population.b2_size, "B1": population.b1_size}
        self.relevant = {"A12": population.a12_relevant, "B2": population.b2_relevant,
                         "B1": population.b1_relevant}
        self.seed_base = seed_base
        self._bound = _Cache(self._lower_bound)

    def pilot(self, rng, runs):
        observed = {}
        self.remaining_good, self.remaining_bad, self.region_size = {}, {}, {}
        for key in ("A12", "B1", "B2"):
            n = np.full(runs, min(self.pilot_size, self.sizes[key]), dtype=np.int64)
            true = _draw(rng, self.relevant[key], self.sizes[key] - self.relevant[key], n)
            observed[key] = (_noisy(rng, true, n, self.error), n)
            self.remaining_good[key] = self.relevant[key] - true
            self.remaining_bad[key] = self.sizes[key] - self.relevant[key] - (n - true)
            # The certification sample is drawn from the region minus the pilot's documents.
            self.region_size[key] = self.sizes[key] - n
        return observed

    def truth(self):
        return {key: (np.array([self.relevant[key]]), np.array([self.sizes[key]])) for key in ("A12", "B1", "B2")}

    def plan(self, pilot):
        runs = pilot["A12"][0].size
        sizes = np.zeros((runs, len(self.strata)), dtype=np.int64)
        # B1 plays no part in r1, so the plan depends on the A12 and B2 pilots only.  Distinct
        # pilots are planned in sorted order, each search starting from its neighbour's factor.
        keys = [tuple(int(v[i]) for name in ("A12", "B2") for v in pilot[name]) for i in range(runs)]
        plans: dict[tuple, dict | None] = {}
        hint = None
        for key in sorted(set(keys)):
            planned = self.planner(
                regions={"A12": (self.sizes["A12"], key[1], key[0]), "B2": (self.sizes["B2"], key[3], key[2]),
                         "B1": (self.sizes["B1"], 0, 0)},
                target=self.target, alpha=self.alpha, power=self.power, factor_hint=hint)
            plans[key] = planned
            if planned is not None and planned.get("factor"):
                hint = planned["factor"]
        for i, key in enumerate(keys):
            plan = plans[key]
            if plan is not None:
                sizes[i] = [plan.get(stratum, 0) for stratum in self.strata]
        return sizes

    def sample(self, rng, sizes):
        drawn = {}
        for j, key in enumerate(self.strata):
            n = np.minimum(sizes[:, j], self.remaining_good[key] + self.remaining_bad[key])
            true = _draw(rng, self.remaining_good[key], self.remaining_bad[key], n)
            self.remaining_good[key] = self.remaining_good[key] - true
            self.remaining_bad[key] = self.remaining_bad[key] - (n - true)
            drawn[key] = (_noisy(rng, true, n, self.error), n)
        return drawn

    def snapshot(self):
        return dict(self.remaining_good), dict(self.remaining_bad)

    def restore(self, state) -> None:
        self.remaining_good, self.remaining_bad = dict(state[0]), dict(state[1])

    def sequence_parts(self, increment):
        return {key: (increment[key][0], increment[key][1] - increment[key][0]) for key in self.strata}

    def sequence_bound(self, state: dict, run: SupportsIndex, batches: dict[str, np.ndarray]) -> float:
        # The run's running CSs (lower on p12, upper on p_B2), made at its first look.
        if "bound" not in state:
            if self.region_size["A12"][run] <= 0:  # no A12 document to judge: never passes
                return 0.0
            state["bound"] = cs.RunningPairRecallBound(
                overlap_size=int(self.region_size["A12"][run]), other_size=int(self.region_size["B2"][run]),
                alpha=self.alpha, grid_size=SIM_CS_GRID)
        bound = state["bound"]
        bound.extend(overlap_outcomes=batches["A12"], other_outcomes=batches["B2"])
        return float(bound.lower_bound) if bound.overlap.count else 0.0

    def _lower_bound(self, a12_size, a12_judged, a12_rel, b2_size, b2_judged, b2_rel) -> float:
        return pair_recall_fixed_lower_bound(a12=(a12_size, a12_judged, a12_rel), other=(b2_size, b2_judged, b2_rel),
                                             alpha=self.alpha, seed=self.seed_base)

    def passes(self, observed):
        rel12, n12 = observed["A12"]
        relb2, nb2 = observed["B2"]
        out = np.zeros(rel12.size, dtype=bool)
        for i in range(rel12.size):
            if n12[i] == 0 or nb2[i] == 0:
                continue
            out[i] = self._bound(int(self.region_size["A12"][i]), int(n12[i]), int(rel12[i]),
                                 int(self.region_size["B2"][i]), int(nb2[i]), int(relb2[i])) >= self.target
        return out


def _default_pair_planner(*, regions: dict, target: float, alpha: float, power: float,
                          factor_hint: float | None = None) -> dict | None:
    """Per-region sizes as the service plans them (:func:`pair_recall_calibrated_size`); None when impossible.

    ``regions`` maps A12, B1, B2 to (size, judged, relevant) of the pilot;
    precisions are the pilot's Jeffreys posterior means
    (``planning.precision_guess_from_pilot``), as in the service.
    """
    guess = {key: planning.precision_guess_from_pilot(relevant=regions[key][2], judged=regions[key][1])
             for key in ("A12", "B2")}
    try:
        plan = pair_recall_calibrated_size(size_a12=regions["A12"][0], size_other=regions["B2"][0],
                                           p12=guess["A12"], p_other=guess["B2"], target=target, alpha=alpha,
                                           power=power, factor_hint=factor_hint,
                                           pilot={"A12": regions["A12"][1:], "other": regions["B2"][1:]})
    except cert.CertificationImpossible:
        return None
    return {"A12": plan["A12"], "B2": plan["B2"], "factor": plan["factor"]}


def delta_method_pair_planner(*, regions: dict, target: float, alpha: float, power: float,
                              factor_hint: float | None = None) -> dict | None:
    """The delta-method sizes as they are (``planning.pair_recall_certification_size``, notes §2), for comparison."""
    guess = {key: planning.precision_guess_from_pilot(relevant=regions[key][2], judged=regions[key][1])
             for key in ("A12", "B2")}
    try:
        plan = planning.pair_recall_certification_size(
            size_a12=regions["A12"][0], size_other=regions["B2"][0], p12=guess["A12"], p_other=guess["B2"],
            tau=target, alpha=alpha, power=power, target="r1")
    except ValueError:
        return None
    return {key: int(n) for key, n in plan.judgments.items()}


class _UniformMetric(_Metric):
    """A uniform sample of the corpus split among the classifier's confusion cells."""

    strata = ("n",)
    cells = ("tp", "fp", "fn", "tn")
    running_bound: type  # the metric's running confidence-sequence bound (confidence_sequence.Running*Bound)
    _plan_one: Callable[..., int]  # the planned size for the pilot key ``_plan_key`` gives (0 = impossible)

    def __init__(self, *, population: ConfusionPopulation, target: float, alpha: float, power: float,
                 pilot_size: int, error: float, seed_base: int, plan_simulations: int):
        self.population, self.target, self.alpha, self.power = population, target, alpha, power
        self.pilot_size, self.error, self.seed_base = pilot_size, error, seed_base
        self.plan_simulations = plan_simulations

    def _observe(self, rng, true: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Majority labels: relevant documents may be labelled not relevant and vice versa."""
        if self.error <= 0.0:
            return dict(true)
        out = {}
        for relevant, other in (("tp", "fp"), ("fn", "tn")):
            kept = rng.binomial(true[relevant], 1.0 - self.error)
            gained = rng.binomial(true[other], self.error)
            out[relevant] = kept + gained
            out[other] = true[relevant] + true[other] - out[relevant]
        return out

    def pilot(self, rng, runs):
        self.remaining = {cell: np.full(runs, getattr(self.population, cell), dtype=np.int64) for cell in self.cells}
        true = _uniform_cells(rng, self.remaining, np.full(runs, self.pilot_size, dtype=np.int64))
        return self._observe(rng, true)

    def truth(self):
        return {cell: np.array([getattr(self.population, cell)]) for cell in self.cells}

    def plan(self, pilot):
        runs = pilot["tp"].size
        sizes = np.zeros((runs, 1), dtype=np.int64)
        cache = _Cache(self._plan_one)
        for i in range(runs):
            sizes[i, 0] = cache(*self._plan_key(*(int(pilot[cell][i]) for cell in self.cells)))
        return sizes

    def _plan_key(self, tp, fp, fn, tn) -> tuple[int, ...]:
        return tp, fp, fn, tn

    def sample(self, rng, sizes):
        return self._observe(rng, _uniform_cells(rng, self.remaining, sizes[:, 0].astype(np.int64)))

    def sequence_bound(self, state: dict, run: SupportsIndex, batches: dict[str, np.ndarray]) -> float:
        """The metric's anytime-valid bound after this look (one running sequence per run, in ``state``)."""
        if "bound" not in state:
            state["bound"] = self.running_bound(alpha=self.alpha, grid_size=SIM_CS_GRID)
        bound = state["bound"]
        (outcomes,) = batches.values()  # one sequence per uniform metric (see sequence_parts)
        bound.extend(outcomes)
        return float(bound.lower_bound) if bound.count else 0.0

    def snapshot(self):
        return dict(self.remaining)

    def restore(self, state) -> None:
        self.remaining = dict(state)


class _F1Metric(_UniformMetric):
    name = "f1"
    running_bound = cs.RunningUniformF1Bound

    def _plan_one(self, tp, fp, fn, tn) -> int:
        try:
            return cert.certification_test_size(
                tp=tp, fp=fp, fn=fn, tn=tn, target=self.target, alpha=self.alpha, power=self.power,
                seed=self.seed_base, simulations=self.plan_simulations,
                retrieved_fraction=self.population.retrieved_fraction)
        except cert.CertificationImpossible:
            return 0

    def sequence_parts(self, increment):
        # Among relevant-or-retrieved documents: 1 for an error (FP or FN), 0 for a TP.
        return {"errors": (increment["fp"] + increment["fn"], increment["tp"])}

    def passes(self, observed):
        tp, fp, fn, tn = (observed[c] for c in self.cells)
        cache = _Cache(lambda *c: cert.certification_passes(tp=c[0], fp=c[1], fn=c[2], tn=c[3],
                                                            target=self.target, alpha=self.alpha))
        judged = tp + fp + fn + tn
        return np.array([bool(judged[i]) and bool(cache(int(tp[i]), int(fp[i]), int(fn[i]), int(tn[i])))
                         for i in range(tp.size)], dtype=bool)


class _QbcbMetric(_UniformMetric):
    name = "qbcb_recall"
    running_bound = cs.RunningUniformRecallBound

    def _plan_key(self, tp, fp, fn, tn) -> tuple[int, ...]:
        return tp + fn, tp, tp + fp + fn + tn  # QBCB's pilot is (relevant, found, judged)

    def _plan_one(self, relevant, found, judged) -> int:
        try:
            return qbcb_certification_size(relevant=relevant, found=found, judged=judged,
                                           target_recall=self.target, confidence=1.0 - self.alpha,
                                           power=self.power, seed=self.seed_base)
        except cert.CertificationImpossible:
            return 0

    def sequence_parts(self, increment):
        # Among relevant documents: 1 if the classifier found it.
        return {"found": (increment["tp"], increment["fn"])}

    def passes(self, observed):
        tp, fn = observed["tp"], observed["fn"]
        cache = _Cache(lambda found, relevant: cert.qbcb_passes(
            relevant=relevant, found=found, target_recall=self.target, confidence=1.0 - self.alpha))
        return np.array([bool(cache(int(tp[i]), int(tp[i] + fn[i]))) for i in range(tp.size)], dtype=bool)


# =========================================================================== results


@dataclass(frozen=True)
class OperatingCharacteristics:
    """What :func:`simulate_certification` measured: false-pass rate and power of the seed 004 protocol, Sec. 6's peeking bias.  Rates carry Monte Carlo standard errors."""

    metric: str
    target: float
    true_value: float
    alpha: float
    power: float
    accuracy: float
    majority_error: float
    runs: int
    seed: int | None
    pilot_judged: float
    planned_rate: float
    pass_rate: float
    pass_rate_se: float
    pass_rate_given_planned: float | None
    mean_judged: float
    mean_judgments: float
    looks: int
    peek_pass_rate: float | None = None
    peek_pass_rate_se: float | None = None
    peek_mean_judged: float | None = None
    monitor_pass_rate: float | None = None
    monitor_pass_rate_se: float | None = None
    monitor_mean_judged: float | None = None
    fixed_size: dict | None = None
    plan_at_truth: bool = False
    population: dict = field(default_factory=dict)
    elapsed_seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def _se(rate: float, runs: int) -> float:
    return math.sqrt(max(rate * (1.0 - rate), 0.0) / runs) if runs else math.nan


def simulate_certification(*, metric: str, target: float, true_value: float, alpha: float = 0.05,
                           power: float = 0.9, runs: int = 1_000, seed: int | None = None,
                           accuracy: float = 1.0, peek: bool = False, looks: int = 10,
                           pilot_size: int | None = None, fixed_size: dict | int | None = None,
                           plan_at_truth: bool = False, monitor: bool = False,
                           population: PairPopulation | ConfusionPopulation | None = None,
                           pair_planner: Callable | None = None,
                           plan_simulations: int = SIM_PLAN_SIMULATIONS,
                           delta1_high: float = 1.0) -> OperatingCharacteristics:
    """Run the certification protocol ``runs`` times; return pass rates and judgments used.

    ``metric``: "pair_recall" (C1's recall from regions A12 and B2, verdict
    by ``stratified_pair_recall``'s one-sided lower bound), "f1" (uniform
    test set, seed 004 Alg. 2, verdict by ``certification.certification_passes``'s
    exact bound) or "qbcb_recall" (uniform
    sample, QBCB).  ``true_value`` is the metric's value under the true
    labels of the generated population (``pair_population``,
    ``f1_population``, ``recall_population`` unless ``population`` is given).

    ``pilot_size``: pilot documents per region (pair) or in total (uniform).
    ``fixed_size``: skip the plan and use this size (per region for pair
    recall) in every run — to measure α of the test alone.
    ``monitor``: also run the monitored protocol: a separate sample of
    ``MONITORING_SIZE_FACTOR`` × the planned size, drawn in ``looks`` batches,
    passing at the first look whose anytime-valid confidence sequence
    (``confidence_sequence``) clears the target (slower: sequences per run).
    ``plan_at_truth``: size the sample from the population itself instead of
    the pilot (the power analysis at the true effect, without pilot error).
    ``peek``: also run the naive protocol on the same samples: look after
    each of ``looks`` equal batches and pass at the first look whose
    fixed-sample bound clears the target.
    ``delta1_high`` (pair recall): the upper end of a declared dependence band
    (issue 11; notes §8).  The product decides at the least favourable δ1 of
    the band, min(1, bound/δ1_high) ≥ τ, i.e. bound ≥ τ·δ1_high, and sizes the
    plan for that: the simulation plans and tests at τ·δ1_high (1 = the rule
    that assumes independence; the product's default band ends at 1.25).  The
    populations here are independent, so a true recall of τ·δ1_high plays a pair
    at the band's edge (measures r1* = δ1·τ).
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS} (got {metric!r})")
    for name, value in (("target", target), ("true_value", true_value), ("alpha", alpha), ("power", power)):
        cert._check_level(name, value)
    if runs < 1 or looks < 1:
        raise ValueError("runs and looks must be at least 1")
    error = majority_error_rate(accuracy)
    started = time.perf_counter()
    root = np.random.SeedSequence(seed)
    pilot_seq, sample_seq, stat_seq = root.spawn(3)
    rng_pilot, rng_sample = np.random.default_rng(pilot_seq), np.random.default_rng(sample_seq)
    seed_base = int(stat_seq.generate_state(1)[0])

    if metric == "pair_recall":
        population = population or pair_population(true_recall=true_value)
        if not isinstance(population, PairPopulation):
            raise TypeError("metric 'pair_recall' needs a PairPopulation")
        if delta1_high < 1.0 or target * delta1_high >= 1.0:
            raise ValueError(f"delta1_high must be ≥ 1 with target × delta1_high < 1 (got {delta1_high!r})")
        model: _Metric = _PairRecallMetric(population=population, target=target * delta1_high, alpha=alpha,
                                           power=power,
                                           pilot_size=pilot_size or 100, error=error, planner=pair_planner,
                                           seed_base=seed_base)
    elif metric == "f1":
        population = population or f1_population(true_f1=true_value)
        if not isinstance(population, ConfusionPopulation):
            raise TypeError("metric 'f1' needs a ConfusionPopulation")
        model = _F1Metric(population=population, target=target, alpha=alpha, power=power,
                          pilot_size=pilot_size or 2000, error=error, seed_base=seed_base,
                          plan_simulations=plan_simulations)
    else:
        population = population or recall_population(true_recall=true_value)
        if not isinstance(population, ConfusionPopulation):
            raise TypeError("metric 'qbcb_recall' needs a ConfusionPopulation")
        model = _QbcbMetric(population=population, target=target, alpha=alpha, power=power,
                            pilot_size=pilot_size or 2000, error=error, seed_base=seed_base,
                            plan_simulations=plan_simulations)

    pilot = model.pilot(rng_pilot, runs)
    pilot_judged = float(sum(np.mean(v[1] if isinstance(v, tuple) else v) for v in pilot.values()))
    if fixed_size is not None:
        fixed = fixed_size if isinstance(fixed_size, dict) else {model.strata[0]: int(fixed_size)}
        sizes = np.tile(np.array([int(fixed.get(s, 0)) for s in model.strata], dtype=np.int64), (runs, 1))
    elif plan_at_truth:
        sizes = np.tile(model.plan(model.truth()), (runs, 1))
    else:
        sizes = model.plan(pilot)
    planned = sizes.sum(axis=1) > 0

    monitored = None
    if monitor:
        state = model.snapshot()
        monitored = _monitor(model, rng=np.random.default_rng(root.spawn(1)[0]), sizes=sizes, planned=planned,
                             looks=looks)
        model.restore(state)

    # Draw the certification sample in ``looks`` batches (the locked protocol
    # only ever sees their sum); cumulative boundaries are ceil(k/looks * size).
    batches = looks if peek else 1
    observed: dict | None = None
    peek_passed = np.zeros(runs, dtype=bool)
    peek_judged = np.zeros(runs, dtype=np.int64)
    done = np.zeros_like(sizes)
    for k in range(1, batches + 1):
        boundary = -(-sizes * k // batches)
        increment = model.sample(rng_sample, boundary - done)
        done = boundary
        observed = increment if observed is None else {
            key: (tuple(a + b for a, b in zip(observed[key], value)) if isinstance(value, tuple)
                  else observed[key] + value) for key, value in increment.items()}
        if peek:
            active = planned & ~peek_passed
            now = np.zeros(runs, dtype=bool)
            if active.any():
                now[active] = model.passes(_subset(observed, active))
            peek_judged = np.where(active, done.sum(axis=1), peek_judged)
            peek_passed |= now
    assert observed is not None  # looks >= 1: at least one batch was drawn
    passed = np.zeros(runs, dtype=bool)
    if planned.any():
        passed[planned] = model.passes(_subset(observed, planned))

    judged = np.where(planned, sizes.sum(axis=1), 0)
    pass_rate = float(passed.mean())
    given = float(passed[planned].mean()) if planned.any() else None
    result = OperatingCharacteristics(
        metric=metric, target=target, true_value=true_value, alpha=alpha, power=power, accuracy=accuracy,
        majority_error=error, runs=runs, seed=seed, pilot_judged=pilot_judged,
        planned_rate=float(planned.mean()), pass_rate=pass_rate, pass_rate_se=_se(pass_rate, runs),
        pass_rate_given_planned=given, mean_judged=float(judged.mean()),
        mean_judgments=float(3 * judged.mean()), looks=batches,
        peek_pass_rate=float(peek_passed.mean()) if peek else None,
        peek_pass_rate_se=_se(float(peek_passed.mean()), runs) if peek else None,
        peek_mean_judged=float(peek_judged.mean()) if peek else None,
        monitor_pass_rate=None if monitored is None else float(monitored[0].mean()),
        monitor_pass_rate_se=None if monitored is None else _se(float(monitored[0].mean()), runs),
        monitor_mean_judged=None if monitored is None else float(monitored[1].mean()),
        fixed_size=(fixed if fixed_size is not None else None), plan_at_truth=plan_at_truth,
        population=population.as_dict(),
        elapsed_seconds=time.perf_counter() - started,
    )
    return result


def _subset(observed: dict, mask: np.ndarray) -> dict:
    return {key: (tuple(a[mask] for a in value) if isinstance(value, tuple) else value[mask])
            for key, value in observed.items()}


def _monitor(model: _Metric, *, rng: np.random.Generator, sizes: np.ndarray, planned: np.ndarray,
             looks: int) -> tuple[np.ndarray, np.ndarray]:
    """The monitored protocol: pass at the first look whose confidence sequence clears the target.

    Within a batch the judged documents come in random order (a uniform sample is
    exchangeable), so each batch's labels are shuffled and appended to the run's
    sequences.  Each run keeps running confidence sequences (``state``, fed one
    batch per look: work per look in proportion to the batch, not to all judged so
    far); the bound after each look equals the one computed from the whole
    sequence.  Returns (passed, documents judged) per run.
    """
    runs = sizes.shape[0]
    big = MONITORING_SIZE_FACTOR * sizes
    passed = np.zeros(runs, dtype=bool)
    judged = np.zeros(runs, dtype=np.int64)
    states: list[dict] = [{} for _ in range(runs)]
    done = np.zeros_like(big)
    for k in range(1, looks + 1):
        boundary = -(-big * k // looks)
        parts = model.sequence_parts(model.sample(rng, boundary - done))
        done = boundary
        for i in np.flatnonzero(planned & ~passed):
            batches = {}
            for name, (ones, zeros) in parts.items():
                batch = np.concatenate([np.ones(int(ones[i])), np.zeros(int(zeros[i]))])
                rng.shuffle(batch)
                batches[name] = batch
            judged[i] = done[i].sum()
            if model.sequence_bound(states[i], i, batches) >= model.target:
                passed[i] = True
    return passed, judged
