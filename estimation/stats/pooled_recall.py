"""Recall of several systems on one topic from precision samples (seed 003).

Seed 003 (Chaganty, "Efficiently estimating recall", 2019; Chaganty,
Paranjape, Liang, Manning, EMNLP 2017):

    TrueRecall(S_i) = TrueRecall(pool) × PooledRecall(S_i)

* PooledRecall(S_i), the share of the pool's relevant documents that S_i
  retrieved, comes from the systems' precision samples through the
  importance-reweighted estimator

      ν̂_i = Σ_j w_ij Σ_{x ∈ sample_j, relevant} I[x ∈ S_i]/q_i(x)
            ───────────────────────────────────────────────
            Σ_j w_ij Σ_{x ∈ sample_j, relevant} 1/q_i(x),     q_i(x) = Σ_j w_ij p_j(x),

  with p_j(x) = 1/|S_j| for x ∈ S_j (a uniform sample of S_j's output).
  Sampling each system separately over-represents documents many systems
  share; dividing by q_i(x) undoes that, so a system with unusual output is
  not penalised.  (Each sample's sum is divided by its size n_j, so w_ij is a
  weight per system rather than per document.)
* TrueRecall(pool), θ, comes from a uniform sample of the corpus: the share
  of its relevant documents that lie in the pool.

Stratified samples.  A system need not have a uniform sample of its own:
the pair design samples the regions A12 = A1 ∩ A2, B1 = A1∖A2 and
B2 = A2∖A1 instead (ESTIMATION-NOTES §2).  Each such region sample is one
more sample in the sum above, uniform on its region h (p_h(x) = 1/|h| for
x ∈ h), so q(x) = Σ_s w_s·I[x ∈ set_s]/|set_s| over every sample s (system
or region) and the estimator stays unbiased; with the balance heuristic
(w_s ∝ n_s) a document's weight 1/q(x) is, up to a constant, one over its
expected number of draws — |region|/judged for a region sample: the A12,
B1, B2 samples act as a stratified sample of A1 = A12 ∪ B1 and of
A2 = A12 ∪ B2.  A system with no sample of its own that no region sample
reaches is refused (:class:`PoolNotSampled`): its unsampled documents would
get q(x) = 0, i.e. be silently left out of the pool (issue 11 item 6: with
only a third classifier sampled, C1's "true recall" came out 0.880
[0.757, 0.950] against 0.506).

Intervals (ESTIMATION-NOTES §7, fixing two defects of the authors' code):
the interval at confidence c is the (1−c)/2 … (1+c)/2 percentile range of
the product's draws (a 90% interval is the 5th–95th percentile, not the
10th–90th); and the standard error of the product of independent estimates
is √(θ²σ²_ν + ν²σ²_θ + σ²_ν σ²_θ), squares included.  ν is drawn by a
bootstrap stratified by system sample, θ from its Jeffreys posterior.

Label error (issue 24 item 6).  θ rests on the uniform sample's relevant
documents, which at low prevalence are few: with majority-of-three labels
from 0.9-accurate workers 2.8% of the irrelevant documents are labelled
relevant (ESTIMATION-NOTES §3), nearly all outside the pool, so on 300
uniform documents the false positives outnumber the relevant ones and θ
collapses (Reuters seed 003: "true recall" 0.138 (0.042–0.301) against
0.622).  Given ``corpus_votes`` (each uniform document's relevant and sure
votes) θ is corrected: the workers' one-coin accuracy and the majority's
error rates fp = fn come from how often two votes on one document agree
(``design_based.label_error_from_votes``, Bayesian bootstrap draws), and
the labelled-relevant shares q_in, q_out of the pool's and the rest's
uniform documents become the true shares by Rogan & Gladen (1978),
π = (q − fp)/(1 − fp − fn), per draw (q from its Jeffreys posterior), so
θ = n_in·π_in / (n_in·π_in + n_out·π_out).  θ and every true recall are
then withheld (``pool_recall_refused`` says why, in words) when the
corrected count of relevant uniform documents is below
:data:`MIN_UNIFORM_RELEVANT`: too few to carry a share.  Soft labels
(Dawid–Skene posteriors) already allow for the workers' errors and are not
corrected again.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .design_based import LabelError, label_error_from_votes
from .proportions import jsonable

DEFAULT_DRAWS = 4_000
# The fewest relevant documents (after the label-error correction) a uniform sample of noisy labels must hold
# for θ, the pool's recall, to be shown (with labels taken as right the Jeffreys interval stays honest): below it the share rests on a handful of documents and, with noisy labels,
# on how many of them are worker errors (issue 24 item 6). 10 relevant documents give a Jeffreys interval
# of about ±0.25 on a share near 0.6 even with perfect labels.
MIN_UNIFORM_RELEVANT = 10


# =========================================================================== inputs


@dataclass(frozen=True)
class SystemSample:
    """One system's output on a topic and a uniform sample of it with relevance labels.

    name: the system's name.  retrieved: |S_j|, the size of its output.
    relevant[k]: label of the k-th sampled document (1/0, or a probability).
    retrieved_by[k]: names of all systems whose output contains that document
    (the system's own name is implied).  The sample is uniform from S_j,
    with replacement or with a sampling fraction small enough to ignore.
    """

    name: str
    retrieved: int
    relevant: Sequence[float]
    retrieved_by: Sequence[Collection[str]]


@dataclass(frozen=True)
class StratumSample:
    """A uniform sample of one region of the pool: the documents every system of ``inside`` retrieved
    and no system of ``outside`` did (e.g. B1 = inside ("C1",), outside ("C2",)).

    name: the region's name (distinct from the systems').  size: |region|.
    relevant[k], retrieved_by[k]: as for :class:`SystemSample`; every sampled
    document must lie in the region.
    """

    name: str
    size: int
    inside: Collection[str]
    outside: Collection[str]
    relevant: Sequence[float]
    retrieved_by: Sequence[Collection[str]]


class PoolNotSampled(ValueError):
    """A pool member has no sample of its own and no region sample reaches its output."""


@dataclass(frozen=True)
class CorpusSample:
    """A uniform sample of the corpus: relevance labels and whether each document is in the pool."""

    relevant: Sequence[float]
    in_pool: Sequence[bool]


def _as_system(value: SystemSample | Mapping) -> SystemSample:
    if isinstance(value, SystemSample):
        return value
    if isinstance(value, Mapping):
        missing = {"name", "retrieved", "relevant", "retrieved_by"} - set(value)
        if missing:
            raise ValueError(f"system sample is missing keys {sorted(missing)}")
        return SystemSample(name=str(value["name"]), retrieved=value["retrieved"], relevant=value["relevant"],
                            retrieved_by=value["retrieved_by"])
    raise ValueError(f"expected SystemSample or mapping, got {value!r}")


def _as_stratum(value: StratumSample | Mapping) -> StratumSample:
    if isinstance(value, StratumSample):
        return value
    if isinstance(value, Mapping):
        missing = {"name", "size", "inside", "relevant", "retrieved_by"} - set(value)
        if missing:
            raise ValueError(f"stratum sample is missing keys {sorted(missing)}")
        return StratumSample(name=str(value["name"]), size=value["size"], inside=value["inside"],
                             outside=value.get("outside", ()), relevant=value["relevant"],
                             retrieved_by=value["retrieved_by"])
    raise ValueError(f"expected StratumSample or mapping, got {value!r}")


def _as_corpus(value: CorpusSample | Mapping) -> CorpusSample:
    if isinstance(value, CorpusSample):
        return value
    if isinstance(value, Mapping) and {"relevant", "in_pool"} <= set(value):
        return CorpusSample(relevant=value["relevant"], in_pool=value["in_pool"])
    raise ValueError(f"expected CorpusSample or mapping with relevant and in_pool, got {value!r}")


def _labels(values, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat list of labels")
    if ((array < 0) | (array > 1) | ~np.isfinite(array)).any():
        raise ValueError(f"{name}: labels must be in [0, 1]")
    return array


@dataclass(frozen=True)
class _Prepared:
    names: list[str]  # the systems
    retrieved: np.ndarray  # |S_j|
    sources: list[str]  # the samples: one per system (its own output), then one per stratum sample
    source_sizes: np.ndarray  # |set_s|
    inside: np.ndarray  # (sources × m) bool: set_s = documents held by all of inside[s] ...
    outside: np.ndarray  # ... and by none of outside[s]
    relevant: list[np.ndarray]  # per sample
    members: list[np.ndarray]  # per sample: (n_s × m) bool, which systems hold each document


def _membership(label: str, labels: np.ndarray, retrieved_by, index: Mapping[str, int]) -> np.ndarray:
    if len(retrieved_by) != labels.size:
        raise ValueError(f"{label}: relevant and retrieved_by must have the same length")
    member = np.zeros((labels.size, len(index)), dtype=bool)
    for row, holders in enumerate(retrieved_by):
        unknown = set(holders) - set(index)
        if unknown:
            raise ValueError(f"{label}: retrieved_by names unknown systems {sorted(unknown)}")
        member[row, [index[h] for h in holders]] = True
    return member


def _prepare(systems: Sequence[SystemSample | Mapping],
             strata: Sequence[StratumSample | Mapping] = ()) -> _Prepared:
    parsed = [_as_system(s) for s in systems]
    if not parsed:
        raise ValueError("give at least one system")
    names = [s.name for s in parsed]
    if len(set(names)) != len(names):
        raise ValueError(f"system names must be unique, got {names}")
    index = {name: k for k, name in enumerate(names)}
    m = len(names)
    sources, sizes, inside, outside, relevant, members = [], [], [], [], [], []
    for s in parsed:
        if int(s.retrieved) != s.retrieved or s.retrieved < 0:
            raise ValueError(f"system {s.name}: retrieved must be a whole number ≥ 0, got {s.retrieved!r}")
        labels = _labels(s.relevant, f"system {s.name}")
        if labels.size and s.retrieved == 0:
            raise ValueError(f"system {s.name}: has sampled documents but retrieved = 0")
        member = _membership(f"system {s.name}", labels, s.retrieved_by, index)
        member[:, index[s.name]] = True
        own = np.zeros(m, dtype=bool)
        own[index[s.name]] = True
        sources.append(s.name)
        sizes.append(float(s.retrieved))
        inside.append(own)
        outside.append(np.zeros(m, dtype=bool))
        relevant.append(labels)
        members.append(member)
    for raw in strata:
        t = _as_stratum(raw)
        if t.name in sources:
            raise ValueError(f"stratum {t.name}: its name is already used by a system or another stratum")
        if int(t.size) != t.size or t.size < 0:
            raise ValueError(f"stratum {t.name}: size must be a whole number ≥ 0, got {t.size!r}")
        unknown = (set(t.inside) | set(t.outside)) - set(index)
        if unknown or not t.inside:
            raise ValueError(f"stratum {t.name}: inside must name at least one system; unknown {sorted(unknown)}")
        into = np.zeros(m, dtype=bool)
        into[[index[n] for n in t.inside]] = True
        out = np.zeros(m, dtype=bool)
        out[[index[n] for n in t.outside]] = True
        if (into & out).any():
            raise ValueError(f"stratum {t.name}: a system cannot be both inside and outside")
        labels = _labels(t.relevant, f"stratum {t.name}")
        if labels.size and t.size == 0:
            raise ValueError(f"stratum {t.name}: has sampled documents but size = 0")
        member = _membership(f"stratum {t.name}", labels, t.retrieved_by, index)
        if labels.size and not (member[:, into].all() and not member[:, out].any()):
            raise ValueError(f"stratum {t.name}: a sampled document lies outside the region "
                             f"(inside {sorted(t.inside)}, outside {sorted(t.outside)})")
        sources.append(t.name)
        sizes.append(float(t.size))
        inside.append(into)
        outside.append(out)
        relevant.append(labels)
        members.append(member)
    return _Prepared(names=names, retrieved=np.array([s.retrieved for s in parsed], dtype=float), sources=sources,
                     source_sizes=np.array(sizes), inside=np.array(inside).reshape(len(sources), m),
                     outside=np.array(outside).reshape(len(sources), m), relevant=relevant, members=members)


def _unsampled(data: _Prepared) -> list[str]:
    """Systems with no sample of their own that no sampled region requires to hold a document."""
    sampled = np.array([r.size > 0 for r in data.relevant])
    reached = (data.inside & sampled[:, None]).any(axis=0)
    return [name for name, ok, size in zip(data.names, reached, data.retrieved) if not ok and size > 0]


def _weights(weights: str | Mapping[str, float], data: _Prepared) -> np.ndarray:
    """w_s per sample (system or stratum); normalised to sum to 1 over the samples that hold documents."""
    sizes = np.array([r.size for r in data.relevant], dtype=float)
    if weights == "samples":
        # The "balance heuristic": treat all samples as one mixture sample.
        w = sizes.copy()
    elif weights == "uniform":
        w = (sizes > 0).astype(float)
    elif isinstance(weights, Mapping):
        w = np.array([float(weights.get(name, 0.0)) for name in data.sources])
        if (w < 0).any():
            raise ValueError("weights must be ≥ 0")
        w[sizes == 0] = 0.0
    else:
        raise ValueError(f"weights must be 'samples', 'uniform' or a mapping sample name → weight, got {weights!r}")
    if w.sum() <= 0:
        raise ValueError("no system has both a sample and a positive weight")
    return w / w.sum()


# =========================================================================== results


@dataclass(frozen=True)
class SystemRecall:
    """Estimates for one system.  None means not available."""

    name: str
    retrieved: int
    sampled: int
    precision: float | None
    pooled_recall: float | None
    pooled_recall_low: float | None
    pooled_recall_high: float | None
    pooled_recall_se: float | None
    naive_pooled_recall: float | None  # unweighted, biased — shown for comparison only
    true_recall: float | None
    true_recall_low: float | None
    true_recall_high: float | None
    true_recall_se: float | None  # √(θ²σ²_ν + ν²σ²_θ + σ²_νσ²_θ)


@dataclass(frozen=True)
class PooledRecallResult:
    """Result of :func:`pooled_recall`.  ``as_dict()`` is JSON-serialisable."""

    confidence: float
    draws: int
    seed: int | None
    weights: dict
    pool_recall: float | None  # θ, from the corpus sample
    pool_recall_low: float | None
    pool_recall_high: float | None
    pool_relevant_total: float | None  # estimated relevant documents in the pool
    systems: tuple[SystemRecall, ...]
    # Label error of the uniform sample's labels (None: labels taken as they are): the workers' one-coin
    # accuracy, the majority's error rate fp = fn, and the source; θ is corrected by Rogan–Gladen.
    label_error: dict | None = None
    uniform_documents: int | None = None  # judged documents of the uniform corpus sample
    uniform_labelled_relevant: float | None = None  # labelled relevant among them
    uniform_relevant_estimate: float | None = None  # after the label-error correction
    pool_recall_refused: str | None = None  # why θ and the true recalls are withheld, in words

    def as_dict(self) -> dict:
        return jsonable(self)

    def system(self, name: str) -> SystemRecall:
        for s in self.systems:
            if s.name == name:
                return s
        raise KeyError(name)


# =========================================================================== estimator


def _contributions(data: _Prepared, w: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per sampled document: (w_s/n_s)·rel/q(x) (denominator) and that times I[x ∈ S_i] (numerators)."""
    denominators, numerators = [], []
    inverse_size = np.where(data.source_sizes > 0, 1.0 / np.maximum(data.source_sizes, 1.0), 0.0)
    for j, (rel, member) in enumerate(zip(data.relevant, data.members)):
        if rel.size == 0:
            denominators.append(np.zeros(0))
            numerators.append(np.zeros((0, len(data.names))))
            continue
        # q(x) = Σ_s w_s p_s(x), p_s(x) = 1/|set_s| if x ∈ set_s (x holds every inside system, no outside one).
        in_set = (member[:, None, :] | ~data.inside[None, :, :]).all(axis=2) & \
            ~(member[:, None, :] & data.outside[None, :, :]).any(axis=2)
        q = in_set.astype(float) @ (w * inverse_size)
        contribution = w[j] / rel.size * rel / q
        denominators.append(contribution)
        numerators.append(contribution[:, None] * member)
    return denominators, numerators


def pooled_recall(
    *,
    systems: Sequence[SystemSample | Mapping],
    strata: Sequence[StratumSample | Mapping] = (),
    reached: Collection[str] = (),
    corpus_sample: CorpusSample | Mapping | None = None,
    corpus_votes: Sequence[tuple[int, int]] | None = None,
    error_votes: Sequence[tuple[int, int]] | None = None,
    weights: str | Mapping[str, float] = "samples",
    confidence: float = 0.95,
    draws: int = DEFAULT_DRAWS,
    seed: int | None = None,
) -> PooledRecallResult:
    """Seed 003: true recall = recall of the pool × importance-reweighted pooled recall.

    systems: one :class:`SystemSample` (or mapping with the same keys) per
    system — its output size, the labels of a uniform sample of its output and,
    for each sampled document, which systems retrieved it.
    corpus_sample: a uniform sample of the corpus with labels and pool
    membership, for θ = recall of the pool.  Without it only pooled recall
    is estimated.  A system may come with an empty sample when ``strata``
    reach its output.
    strata: uniform samples of regions of the pool (:class:`StratumSample`),
    e.g. the pair design's A12, B1, B2: each is one more sample in the
    importance-weighted sum (module docstring).
    corpus_votes: (relevant votes, sure votes) per document of ``corpus_sample``,
    parallel to it: θ is then corrected for the majority labels' error
    (module docstring, Rogan–Gladen) and withheld below
    :data:`MIN_UNIFORM_RELEVANT` corrected relevant documents.  Leave it out
    for soft labels or labels without votes.  error_votes: the votes the
    workers' accuracy is estimated from (default ``corpus_votes``; e.g. every
    judged non-gold document of the topic, for a tighter estimate).
    weights: w_s per sample ("samples" ∝ sample sizes — the balance
    heuristic, default; "uniform"; or a mapping sample name → weight).

    Raises :class:`PoolNotSampled` when a system with retrieved documents has
    no sample of its own and no stratum with it among ``inside`` has a
    judged document: the estimate would silently leave its output out.  (A
    stratum that requires it does not prove its whole output is covered —
    the caller checks the regions' sizes.)  reached: systems without a
    sample whose output the caller knows the strata cover (e.g. a classifier
    that retrieves nothing outside A1 ∪ A2 when A12, B1, B2 are sampled).

    Intervals are percentile intervals at ``confidence`` of ``draws``
    bootstrap × posterior draws; the SE of the product uses
    θ²σ²_ν + ν²σ²_θ + σ²_νσ²_θ (ESTIMATION-NOTES §7).

    Example (seed 003's Fig. 3 situation): A and B share most output, C is
    different; sampling each system separately over-weights A ∪ B, and the
    naive pooled recall of C comes out low — ``naive_pooled_recall`` shows
    that, ``pooled_recall`` corrects it.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if int(draws) != draws or draws < 100:
        raise ValueError(f"draws must be an integer ≥ 100, got {draws!r}")
    data = _prepare(systems, strata)
    unsampled = [name for name in _unsampled(data) if name not in set(reached)]
    if unsampled:
        raise PoolNotSampled(
            f"no sample reaches the output of {', '.join(unsampled)}: judge a sample of its retrieved documents "
            "(or of the regions it is split into); without one its documents would be left out of the pool")
    w = _weights(weights, data)
    rng = np.random.default_rng(seed)
    alpha = 1.0 - confidence
    m = len(data.names)

    denominators, numerators = _contributions(data, w)
    denominator = sum(d.sum() for d in denominators)
    numerator = sum(n.sum(axis=0) for n in numerators)
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = numerator / denominator if denominator > 0 else np.full(m, np.nan)

    nu_draws = _bootstrap_nu(denominators, numerators, rng=rng, draws=int(draws), m=m)
    nu_low, nu_high = _percentiles(nu_draws, alpha)
    nu_se = _column_sd(nu_draws)

    theta = theta_low = theta_high = math.nan
    theta_draws = None
    noise: dict = {"label_error": None, "uniform_documents": None, "uniform_labelled_relevant": None,
                   "uniform_relevant_estimate": None, "pool_recall_refused": None}
    if corpus_sample is not None:
        corpus = _as_corpus(corpus_sample)
        rel = _labels(corpus.relevant, "corpus_sample.relevant")
        in_pool = np.asarray(corpus.in_pool, dtype=bool)
        if in_pool.shape != rel.shape:
            raise ValueError("corpus_sample: relevant and in_pool must have the same length")
        error = None
        if corpus_votes is not None:
            if len(corpus_votes) != rel.size:
                raise ValueError("corpus_votes must be parallel to corpus_sample (one (relevant, sure) per document)")
            source = list(corpus_votes) if error_votes is None else list(error_votes)
            error = label_error_from_votes(votes=source, draws=int(draws), seed=_child_seed(seed),
                                           majority_of=max((t for _, t in corpus_votes), default=None))
            if error is not None and error.perfect:
                error = None
        theta, theta_draws, noise = _pool_recall(rel=rel, in_pool=in_pool, error=error, rng=rng,
                                                 draws=int(draws))
        if theta_draws is not None:
            theta_low, theta_high = (float(v) for v in np.quantile(theta_draws, [alpha / 2, 1 - alpha / 2]))

    naive = _naive_pooled_recall(data)
    results = []
    for i, name in enumerate(data.names):
        rel = data.relevant[i]
        true = true_low = true_high = true_se = math.nan
        if theta_draws is not None and math.isfinite(nu[i]):
            product = theta_draws * nu_draws[:, i]
            true = theta * nu[i]
            if np.isfinite(product).all():
                true_low, true_high = (float(v) for v in np.quantile(product, [alpha / 2, 1 - alpha / 2]))
            true_se = product_se(mean_a=theta, se_a=float(theta_draws.std()), mean_b=float(nu[i]), se_b=nu_se[i])
        results.append(SystemRecall(
            name=name, retrieved=int(data.retrieved[i]), sampled=int(rel.size),
            precision=_none(rel.mean()) if rel.size else None,
            pooled_recall=_none(nu[i]), pooled_recall_low=_none(nu_low[i]), pooled_recall_high=_none(nu_high[i]),
            pooled_recall_se=_none(nu_se[i]), naive_pooled_recall=_none(naive[i]),
            true_recall=_none(true), true_recall_low=_none(true_low), true_recall_high=_none(true_high),
            true_recall_se=_none(true_se),
        ))
    return PooledRecallResult(
        confidence=confidence, draws=int(draws), seed=seed,
        weights={name: float(x) for name, x in zip(data.sources, w)},
        pool_recall=_none(theta), pool_recall_low=_none(theta_low), pool_recall_high=_none(theta_high),
        pool_relevant_total=_none(denominator) if denominator > 0 else None,
        systems=tuple(results), **noise,
    )


def _child_seed(seed: int | None) -> int | None:
    """The label error's own seed, so that giving votes leaves the bootstrap's random stream as it was."""
    return None if seed is None else int(np.random.SeedSequence([int(seed), 1]).generate_state(1)[0])


def _pool_recall(*, rel: np.ndarray, in_pool: np.ndarray, error: LabelError | None, rng: np.random.Generator,
                 draws: int) -> tuple[float, np.ndarray | None, dict]:
    """θ, the pool's share of the corpus's relevant documents, from the uniform sample: point, draws (None when
    not available or withheld) and the label-error fields of :class:`PooledRecallResult`.

    Without ``error``: found/total and its Jeffreys posterior, as seed 003.  With it: the Rogan–Gladen
    corrected shares of the pool's and the rest's uniform documents, per draw (module docstring).
    """
    n_in, n_out = int(in_pool.sum()), int((~in_pool).sum())
    k_in, k_out = float(rel[in_pool].sum()), float(rel[~in_pool].sum())
    fields: dict = {"label_error": None, "uniform_documents": int(rel.size),
                    "uniform_labelled_relevant": k_in + k_out, "uniform_relevant_estimate": k_in + k_out,
                    "pool_recall_refused": None}
    if error is None:
        total = k_in + k_out
        if total <= 0:
            return math.nan, None, fields
        # Labels taken as right: the Jeffreys interval is honest (wide) on a few documents, so no refusal.
        return k_in / total, rng.beta(k_in + 0.5, k_out + 0.5, size=draws), fields
    fp_point, fn_point = float(np.mean(error.fp_point)), float(np.mean(error.fn_point))
    fields["label_error"] = {
        "worker_accuracy": _none(np.mean(error.accuracy_point)) if error.accuracy_point is not None else None,
        "false_positive": fp_point, "false_negative": fn_point, "source": error.source,
        "correction": "Rogan–Gladen (1978) on the uniform sample's in-pool and out-of-pool shares",
    }

    def corrected(q, fp, fn):
        den = 1.0 - fp - fn
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.clip(np.where(den > 0, (q - fp) / np.where(den > 0, den, 1.0), q), 0.0, 1.0)

    pi_in = float(corrected(k_in / n_in, fp_point, fn_point)) if n_in else 0.0
    pi_out = float(corrected(k_out / n_out, fp_point, fn_point)) if n_out else 0.0
    found, rest = n_in * pi_in, n_out * pi_out
    fields["uniform_relevant_estimate"] = found + rest
    if found + rest < MIN_UNIFORM_RELEVANT:
        fields["pool_recall_refused"] = _too_few_message(documents=rel.size, labelled=k_in + k_out,
                                                         estimate=found + rest, error=fields["label_error"])
        return math.nan, None, fields
    fp, fn = np.asarray(error.false_positive, dtype=float), np.asarray(error.false_negative, dtype=float)
    q_in = rng.beta(k_in + 0.5, n_in - k_in + 0.5, size=draws) if n_in else np.zeros(draws)
    q_out = rng.beta(k_out + 0.5, n_out - k_out + 0.5, size=draws) if n_out else np.zeros(draws)
    d_in, d_out = n_in * corrected(q_in, fp, fn), n_out * corrected(q_out, fp, fn)
    total = d_in + d_out
    with np.errstate(divide="ignore", invalid="ignore"):
        theta_draws = np.where(total > 0, d_in / np.where(total > 0, total, 1.0), 1.0)
    return found / (found + rest), theta_draws, fields


def _too_few_message(*, documents: int, labelled: float, estimate: float, error: dict | None) -> str:
    words = (f"The uniform sample of {documents:,} documents holds {labelled:.0f} labelled relevant")
    if error is not None:
        accuracy = error.get("worker_accuracy")
        at = f" at the workers' accuracy of {accuracy:.2f}" if accuracy is not None else ""
        words += (f"; about {max(0.0, labelled - estimate):.0f} of them are expected to be worker errors{at} "
                  f"(a majority label is wrong {100 * error['false_positive']:.1f}% of the time), which leaves "
                  f"about {estimate:.0f} relevant")
    return (words + f". The pool's recall, and so every classifier's true recall by seed 003, needs at least "
            f"{MIN_UNIFORM_RELEVANT} relevant documents in that sample, so it is not shown: judge a larger "
            "uniform sample of the corpus.")


def product_se(*, mean_a: float, se_a: float, mean_b: float, se_b: float) -> float:
    """Standard error of the product of two independent estimates (Goodman 1960).

    Var(AB) = a²σ_B² + b²σ_A² + σ_A²σ_B² — ESTIMATION-NOTES §7 (the authors'
    code omitted the squares).
    """
    for value, name in ((se_a, "se_a"), (se_b, "se_b")):
        if value < 0:
            raise ValueError(f"{name} must be ≥ 0, got {value!r}")
    return math.sqrt(mean_a**2 * se_b**2 + mean_b**2 * se_a**2 + se_a**2 * se_b**2)


def _bootstrap_nu(denominators, numerators, *, rng, draws: int, m: int) -> np.ndarray:
    """Bootstrap draws of ν̂ (draws × m), resampling within each sample (system or stratum).

    Documents with the same contributions (same label and membership: with 0/1
    labels a sample has at most 2·2^m kinds) are interchangeable, so each
    resample is drawn as a multinomial over the kinds, weighted by how many
    documents each has — the same distribution as resampling documents, at a
    fraction of the cost.
    """
    den = np.zeros(draws)
    num = np.zeros((draws, m))
    for d, n in zip(denominators, numerators):
        if d.size == 0:
            continue
        kinds, inverse = np.unique(np.column_stack([d, n]), axis=0, return_inverse=True)
        shares = np.bincount(inverse.ravel(), minlength=kinds.shape[0]) / d.size
        # How often each kind of document appears in each bootstrap resample.
        counts = rng.multinomial(d.size, shares, size=draws).astype(float)
        den += counts @ kinds[:, 0]
        num += counts @ kinds[:, 1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den[:, None] > 0, num / np.where(den[:, None] > 0, den[:, None], 1.0), np.nan)


def _percentiles(draws: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    low = np.full(draws.shape[1], np.nan)
    high = np.full(draws.shape[1], np.nan)
    for i in range(draws.shape[1]):
        column = draws[:, i]
        if np.isfinite(column).all():
            low[i], high[i] = np.quantile(column, [alpha / 2, 1 - alpha / 2])
    return low, high


def _column_sd(draws: np.ndarray) -> np.ndarray:
    return np.array([draws[:, i].std() if np.isfinite(draws[:, i]).all() else np.nan for i in range(draws.shape[1])])


def _naive_pooled_recall(data: _Prepared) -> np.ndarray:
    """Unweighted pooled recall: share of all sampled relevant documents that S_i holds (biased)."""
    rel = np.concatenate(list(data.relevant)) if data.relevant else np.zeros(0)
    member = np.concatenate(data.members) if data.members else np.zeros((0, len(data.names)))
    total = rel.sum()
    if total <= 0:
        return np.full(len(data.names), np.nan)
    return (rel[:, None] * member).sum(axis=0) / total


def _none(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
