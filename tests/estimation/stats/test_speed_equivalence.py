"""The faster count draws keep the report's figures (issues 23, 24, 30).

``pair_recall._count_draws_array`` now skips the Beta draw where the Clopper–Pearson distribution is a point
mass, draws Binomial(|h| − n, p) as a rounded normal where its variance is at least 50 (exact below), and
``design_based._design_recall`` draws A12 and U once for both conservative bounds.  These tests hold the new
figures to a reference copy of the old implementation (kept below, verbatim but for names):

* points (plug-in figures) are identical;
* every Monte Carlo figure (interval ends, one-sided bounds, T_U's bound, δ1's interval) has the same mean
  over seeds within Monte Carlo error: |mean_new − mean_old| ≤ 4·√(s_new²/S + s_old²/S), S seeds each, s the
  seed-to-seed standard deviation of that figure.  At 4 standard errors a figure whose distribution did
  not move fails with probability ≈ 0.003 (t with ~2S − 2 degrees of freedom, a little more), and the seeds
  are fixed, so the test is deterministic; a shift of one run's Monte Carlo error (s) would be caught at
  S = 8 with probability ≈ 0.5 per figure, and there are 13 figures per scenario.
* the count draw's distribution itself matches the exact Beta-binomial (scipy.stats.betabinom) within the
  Kolmogorov distance of 200,000 draws.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from estimation.stats import design_based
from estimation.stats.design_based import design_based_recall
from estimation.stats.pair_recall import _CP_HIGH, _CP_LOW, _JEFFREYS, _NORMAL_REMAINDER, _count_draws_one
from estimation.stats.stratified import Stratum, stratified_design_recall


def _old_count_draws_array(*, size, judged, relevant, prior, rng, draws):
    """The count draws before the speed-up (commit 1e15ebb): always a Beta draw, exact binomials below the
    20·n remainder."""
    relevant = np.asarray(relevant, dtype=float)
    shape = relevant.shape + (draws,)
    if size == 0:
        return np.zeros(shape)
    if judged == 0:
        return np.full(shape, np.nan)
    a = (prior[0] + relevant)[..., None]
    b = (prior[1] + judged - relevant)[..., None]
    p = rng.beta(np.broadcast_to(np.maximum(a, 1e-12), shape), np.broadcast_to(np.maximum(b, 1e-12), shape))
    p = np.where(a <= 0, 0.0, np.where(b <= 0, 1.0, p))
    remainder = size - judged
    if remainder <= 0:
        return np.broadcast_to(relevant[..., None], shape).copy()
    if remainder >= _NORMAL_REMAINDER * judged:
        sd = np.sqrt(remainder * p * (1.0 - p))
        unjudged = np.clip(remainder * p + sd * rng.standard_normal(shape), 0.0, remainder)
    else:
        unjudged = rng.binomial(remainder, p)
    return relevant[..., None] + unjudged


@pytest.fixture
def old_implementation(monkeypatch):
    """design_based with the old count draws and no shared draws (every pass draws all four regions; the
    pushed pass's own four regions then replace the shared ones, as before)."""
    original_draw = design_based._draw

    def draw_all(**kwargs):
        kwargs.pop("regions", None)
        return original_draw(**kwargs)

    def use():
        monkeypatch.setattr(design_based, "_count_draws_array", _old_count_draws_array)
        monkeypatch.setattr(design_based, "_draw", draw_all)

    return use


def _bench_strata():
    """bench/bench_stratified_cost.py's timing case: 4 regions × 5 strata (k = 0 … n in A12's top strata)."""
    rng = np.random.default_rng(0)
    strata = []
    for h, size, p in (("A12", 5000, 0.9), ("B1", 3000, 0.5), ("B2", 20000, 0.1), ("U", 972000, 0.0007)):
        for j in range(5):
            n = 60 if h != "U" else 800
            strata.append(Stratum(h, size // 5, n, float(rng.binomial(n, min(1.0, p * (0.2 + 0.4 * j)))), f"score:{j}"))
    return strata


def _wide_strata():
    """Binomial variances on both sides of 50 in one region: large strata judged lightly."""
    return [Stratum("A12", 4000, 250, 230.0, "hi"), Stratum("A12", 2000, 150, 75.0, "mid"),
            Stratum("B1", 3000, 200, 100.0, "a"), Stratum("B1", 900, 60, 3.0, "b"),
            Stratum("B2", 6000, 400, 40.0, "a"), Stratum("B2", 2500, 125, 0.0, "b"),
            Stratum("U", 500_000, 2000, 1.0, "low"), Stratum("U", 40_000, 1500, 9.0, "high")]


FIGURES = ("r1.low", "r1.high", "r1.lower_bound", "r1.conservative_lower_bound",
           "r2.low", "r2.high", "r2.lower_bound", "r2.conservative_lower_bound",
           "t_u.low", "t_u.high", "t_u.upper_bound", "delta1.low", "delta1.high")
POINTS = ("r1.point", "r2.point", "r1.pair_estimand", "t_u.point", "delta1.point", "relevant_total.point")


def _get(result, name):
    part, field = name.split(".")
    return getattr(getattr(result, part), field)


def _compare(run, use_old, seeds=8):
    new = [run(seed) for seed in range(seeds)]
    use_old()
    old = [run(seed) for seed in range(seeds)]
    for name in POINTS:
        assert {_get(r, name) for r in new} == {_get(r, name) for r in old}, name
    for name in FIGURES:
        a = np.array([_get(r, name) for r in new], dtype=float)
        b = np.array([_get(r, name) for r in old], dtype=float)
        se = np.sqrt(a.var(ddof=1) / seeds + b.var(ddof=1) / seeds)
        assert abs(a.mean() - b.mean()) <= 4.0 * se + 1e-12 * max(1.0, abs(b.mean())), (
            name, a.mean(), b.mean(), se)


@pytest.mark.slow
@pytest.mark.parametrize("make", [_bench_strata, _wide_strata])
def test_stratified_report_figures_match_the_old_draws(make, old_implementation):
    strata = make()
    _compare(lambda seed: stratified_design_recall(strata=strata, draws=20_000, seed=seed), old_implementation)


@pytest.mark.slow
def test_design_based_report_figures_match_the_old_draws(old_implementation):
    regions = {"a12": (5000, 300, 270.0), "b1": (3000, 200, 100.0), "b2": (20000, 400, 40.0),
               "u": (972_000, 3000, 2.0)}
    _compare(lambda seed: design_based_recall(**regions, draws=20_000, seed=seed), old_implementation)


@pytest.mark.parametrize("size, judged, relevant", [
    (1000, 60, 58.0),    # p near 1: variance straddles 50
    (1000, 60, 30.0),    # variance ≈ 235: all rounded normal
    (600, 60, 2.0),      # small counts: exact binomial
    (4000, 60, 13.0),    # remainder ≥ 20·n: the old normal path
    (5000, 300, 30.0),   # variance ≈ 420 at p ≈ 0.1
])
@pytest.mark.parametrize("prior", [_JEFFREYS, _CP_LOW, _CP_HIGH])
def test_count_draws_follow_the_exact_beta_binomial(size, judged, relevant, prior):
    """relevant + Binomial(|h| − n, p), p ~ Beta(a + k, b + n − k) is k + BetaBinomial(|h| − n, a + k, b + n − k):
    the draws' Kolmogorov distance to it stays within what 200,000 exact draws would show (1.63/√n, the 99%
    point of the Kolmogorov distribution, plus the 0.0091 bound of the rounded normal on the binomial part
    where the remainder is below 20·n; the older normal path of larger remainders gets 0.01)."""
    draws = 200_000
    x = _count_draws_one(size=size, judged=judged, relevant=relevant, prior=prior,
                         rng=np.random.default_rng(7), draws=draws)
    m = size - judged
    a, b = prior[0] + relevant, prior[1] + judged - relevant
    unjudged = np.sort(x - relevant)
    grid = np.arange(m + 1)
    empirical = np.searchsorted(unjudged, grid + 0.5, side="left") / draws  # P(X ≤ j) for integer j
    if m >= _NORMAL_REMAINDER * judged:  # continuous draws: compare at the half-integers, as a rounding would
        empirical = np.searchsorted(unjudged, grid + 0.5, side="right") / draws
    exact = np.cumsum(stats.betabinom.pmf(grid, m, a, b))
    assert np.max(np.abs(empirical - exact)) <= 1.63 / np.sqrt(draws) + 0.0091 + 0.01 * (m >= _NORMAL_REMAINDER * judged)


def test_point_masses_draw_nothing():
    """Beta(0, ·) and Beta(·, 0) are point masses: the count is exactly k or |h|, and the stream is untouched."""
    rng = np.random.default_rng(3)
    low = _count_draws_one(size=800, judged=30, relevant=0.0, prior=_CP_LOW, rng=rng, draws=100)
    high = _count_draws_one(size=800, judged=30, relevant=30.0, prior=_CP_HIGH, rng=rng, draws=100)
    assert np.all(low == 0.0) and np.all(high == 800.0)
    assert rng.random() == np.random.default_rng(3).random()


# --------------------------------------------------------------------------- the topic set's latent-class report


def _old_sample_margins_mixture(rng, *, count, states, alpha, beta):
    """f1_posterior._sample_margins_mixture before the speed-up (commit 1e15ebb)."""
    size = states.shape[1]
    chosen = states[rng.integers(0, states.shape[0], size=count)]
    gammas = rng.standard_gamma((alpha + chosen).astype(np.float32), dtype=np.float32)
    row_totals = (gammas.reshape(-1, size) @ np.ones(size, dtype=np.float32)).reshape(count, size)
    shares = rng.standard_gamma((beta + chosen.sum(axis=-1)).astype(np.float32), dtype=np.float32)
    shares /= (shares @ np.ones(size, dtype=np.float32))[:, None]
    weights = shares / row_totals
    diagonal = np.diagonal(gammas, axis1=-2, axis2=-1) * weights
    cols = (gammas * weights[:, :, None]).sum(axis=1)
    return diagonal, shares, cols


def _old_class_summary(row, mass):
    import math

    from estimation.stats.f1_posterior import _hdi_sorted

    values = np.sort(row[np.isfinite(row)])
    if values.size < 2:
        return {"mean": math.nan, "median": math.nan, "sd": math.nan, "hdi": (math.nan, math.nan)}
    middle = values.size // 2
    median = values[middle] if values.size % 2 else 0.5 * (values[middle - 1] + values[middle])
    return {"mean": float(values.mean()), "median": float(median), "sd": float(values.std(ddof=1)),
            "hdi": _hdi_sorted(values, mass)}


def _noisy_topic_set(seed, classes=11, documents=1500):
    """M = 10 topics and "none" (90% of the sample), a router right 3 times in 4, three workers right at 0.85."""
    rng = np.random.default_rng(seed)
    true = rng.choice(classes, size=documents, p=np.r_[0.9, np.full(classes - 1, 0.1 / (classes - 1))])

    def noisy(accuracy):
        wrong = rng.integers(0, classes - 1, size=documents)
        wrong = np.where(wrong >= true, wrong + 1, wrong)
        return np.where(rng.random(documents) < accuracy, true, wrong)

    predicted = noisy(0.75)
    votes = np.zeros((documents, classes))
    for _ in range(3):
        votes[np.arange(documents), noisy(0.85)] += 1
    return votes, predicted


def _numbers(value, prefix=""):
    if hasattr(value, "__dataclass_fields__"):
        value = {k: getattr(value, k) for k in value.__dataclass_fields__}
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, f"{prefix}.{k}")
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            yield from _numbers(v, f"{prefix}[{k}]")
    elif isinstance(value, np.ndarray) and value.dtype.kind == "f":
        for k, v in enumerate(value.ravel()):
            yield f"{prefix}[{k}]", float(v)
    elif isinstance(value, (float, np.floating)):
        yield prefix, float(value)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_topic_set_report_matches_the_old_draws(seed, monkeypatch):
    """Same seed, same figures: the mixture's draws are the same Gamma draws (the shapes gathered per state
    instead of computed per draw), only the column sums' float32 summation order differs, so every figure of
    ``multiclass_posterior_latent`` (micro/macro and per-class medians, means, sds, HDIs; the fit's states)
    agrees to 1e-5 — float32 rounding, far below Monte Carlo error (≈ 1e-3 at 20,000 draws); the density
    histogram's heights within a few draws' weight."""
    from estimation.stats import f1_posterior
    from estimation.stats.multiclass import multiclass_posterior_latent

    votes, predicted = _noisy_topic_set(seed)
    new = multiclass_posterior_latent(votes=votes, predicted=predicted, classes=11, seed=seed)
    monkeypatch.setattr(f1_posterior, "_sample_margins_mixture", _old_sample_margins_mixture)
    monkeypatch.setattr(f1_posterior, "_class_summary", _old_class_summary)
    old = multiclass_posterior_latent(votes=votes, predicted=predicted, classes=11, seed=seed)
    a, b = dict(_numbers(new)), dict(_numbers(old))
    assert a.keys() == b.keys() and len(a) > 500
    for key in a:
        # A histogram height moves by one draw's weight, 1/(20,000 × bin width) ≈ 0.014, when a draw's last
        # float32 bit moves it across a bin edge; a few such draws are allowed.
        tolerance = 0.05 if ".density" in key else 1e-5
        assert a[key] == pytest.approx(b[key], abs=tolerance, nan_ok=True), key


def test_class_summary_sorts_float32_draws_exactly():
    """The float32 sort is taken only when it loses nothing: float32 draws give the float64 sort's summary bit
    for bit, and float64 draws keep the float64 sort."""
    from estimation.stats.f1_posterior import _class_summary

    rng = np.random.default_rng(5)
    narrow = rng.beta(3.0, 2.0, size=20_001).astype(np.float32).astype(float)
    narrow[::97] = np.nan
    wide = rng.beta(3.0, 2.0, size=20_000)
    for row in (narrow, wide):
        assert _class_summary(row, 0.95) == _old_class_summary(row, 0.95)


# --------------------------------------------------------------------------- the Gibbs fit: the same states


def _old_fit_constants():
    from estimation.stats import latent_class

    return latent_class.PHI_DIAGONAL, latent_class.PHI_OFF, latent_class.MULTINOMIAL_FROM, latent_class._TINY


def _old_latent_class_states(*, votes: np.ndarray, predicted: np.ndarray, classes: int, seed: int | None,
                              gold_true: np.ndarray | None = None, gold_predicted: np.ndarray | None = None,
                              alpha: float | None = None, beta: float | None = None, chains: int = 10,
                              burn_in: int = 30, kept: int = 30) -> np.ndarray:
    """latent_class.latent_class_fit before the speed-up (commit 22c48db), up to its kept states."""
    PHI_DIAGONAL, PHI_OFF, MULTINOMIAL_FROM, _TINY = _old_fit_constants()
    v = np.asarray(votes, dtype=float).reshape(-1, classes)
    r = np.asarray(predicted, dtype=int).ravel()
    if v.shape[0] != r.size:
        raise ValueError(f"votes and predicted differ in length ({v.shape[0]} vs {r.size})")
    if r.size and (r.min() < 0 or r.max() >= classes):
        raise ValueError(f"router classes must lie in 0..{classes - 1}")
    if np.any(v < 0):
        raise ValueError("votes must be non-negative")
    fixed = np.zeros((classes, classes))
    if gold_true is not None and gold_predicted is not None and len(gold_true):
        np.add.at(fixed, (np.asarray(gold_true, dtype=int), np.asarray(gold_predicted, dtype=int)), 1.0)
    alpha = 1.0 / classes**2 if alpha is None else float(alpha)
    beta = 1.0 / classes if beta is None else float(beta)
    phi_prior = np.full((classes, classes), PHI_OFF / (classes - 1))
    np.fill_diagonal(phi_prior, PHI_DIAGONAL)
    rng = np.random.default_rng(seed)

    # Distinct (router class, votes) patterns: the latent class probabilities are computed per pattern.
    key = np.concatenate([r[:, None].astype(float), v], axis=1)
    if r.size:
        patterns, inverse = np.unique(key, axis=0, return_inverse=True)
    else:
        patterns, inverse = np.zeros((0, classes + 1)), np.zeros(0, dtype=int)
    inverse = np.asarray(inverse).ravel()
    pattern_router = patterns[:, 0].astype(int)
    pattern_votes = patterns[:, 1:]
    pattern_votes_t = np.ascontiguousarray(pattern_votes.T)  # (K, G)
    pattern_router_onehot = np.eye(classes)[pattern_router]  # (G, K)
    n = r.size
    n_patterns = patterns.shape[0]

    # A pattern held by many documents gets its class counts from one multinomial draw per chain; the documents
    # of the other patterns each draw their class with one uniform against the cumulative probabilities (per
    # document that is cheaper than a multinomial call below about MULTINOMIAL_FROM documents).
    pattern_size = np.bincount(inverse, minlength=n_patterns) if n else np.zeros(0, dtype=int)
    shared = np.flatnonzero(pattern_size >= MULTINOMIAL_FROM)
    small_documents = inverse[pattern_size[inverse] < MULTINOMIAL_FROM] if n else np.zeros(0, dtype=int)
    flat_base = (np.arange(chains)[:, None] * classes * n_patterns + small_documents[None, :])  # (chains, docs)

    def allocation(probabilities: np.ndarray) -> np.ndarray:
        """Documents per chain, latent class and pattern A[c, j, g], drawn given P(class j | pattern g).

        The class axis is the middle one throughout: numpy reduces a short last axis slowly."""
        counts = np.zeros((chains, classes, n_patterns))
        if small_documents.size:
            cumulative = np.cumsum(probabilities, axis=1)[:, :, small_documents]  # (chains, K, docs)
            u = rng.random((chains, 1, small_documents.size)) * cumulative[:, -1:, :]
            chosen = np.minimum((u > cumulative).sum(axis=1), classes - 1)  # (chains, docs)
            flat = (flat_base + chosen * n_patterns).ravel()
            counts += np.bincount(flat, minlength=counts.size).reshape(counts.shape)
        if shared.size:
            drawn = rng.multinomial(np.broadcast_to(pattern_size[shared], (chains, shared.size)),
                                    probabilities[:, :, shared].transpose(0, 2, 1))
            counts[:, :, shared] = drawn.transpose(0, 2, 1)
        return counts

    # Start: each chain draws every document's class from its vote shares (plus a little of each class).
    start = (pattern_votes + 0.05) / (pattern_votes + 0.05).sum(axis=1, keepdims=True)
    allocated = allocation(np.broadcast_to(start.T, (chains, classes, n_patterns)))
    states, phis, mus = [], [], []
    for step in range(burn_in + kept):
        # Counts per chain: C[c, j, k] (true j, router k) and V[c, j, l] (votes l given true j).
        counts_by_pattern = allocated  # (chains, K, G)
        counts = counts_by_pattern @ pattern_router_onehot + fixed
        vote_totals = counts_by_pattern @ pattern_votes
        theta = rng.standard_gamma(alpha + counts)
        theta /= theta.sum(axis=-1, keepdims=True)
        mu = rng.standard_gamma(beta + counts.sum(axis=-1))
        mu /= mu.sum(axis=-1, keepdims=True)
        phi = rng.standard_gamma(phi_prior + vote_totals)
        phi /= phi.sum(axis=-1, keepdims=True)
        if step >= burn_in:
            states.append(counts)
            phis.append(phi)
            mus.append(mu)
        if not n:
            continue
        # log P(z = j | pattern) = log mu_j + log theta_{j, r} + sum_l v_l log phi_jl, per chain, class, pattern.
        # Gamma variates with shape 1/K^2 underflow to 0 now and then: floor them before the log.
        log_p = (np.log(np.maximum(mu, _TINY))[:, :, None] + np.log(np.maximum(theta, _TINY))[:, :, pattern_router]
                 + np.log(np.maximum(phi, _TINY)) @ pattern_votes_t)
        log_p -= log_p.max(axis=1, keepdims=True)
        p = np.exp(log_p)
        allocated = allocation(p / p.sum(axis=1, keepdims=True))

    return np.concatenate(states, axis=0)


@pytest.mark.parametrize("seed", [1, 2])
def test_gibbs_fit_keeps_the_same_states(seed):
    """The class-by-class running sums and maxima replace middle-axis reductions with the same arithmetic:
    the kept latent states are the old fit's, exactly (many small patterns and a few shared ones)."""
    from estimation.stats.latent_class import CHAINS, latent_class_fit

    votes, predicted = _noisy_topic_set(seed, documents=1000)
    classes = votes.shape[1]
    new = latent_class_fit(votes=votes, predicted=predicted, classes=classes, seed=seed,
                           alpha=1 / classes**2, beta=1 / classes)
    old = _old_latent_class_states(votes=votes, predicted=predicted, classes=classes, seed=seed,
                                   alpha=1 / classes**2, beta=1 / classes, chains=CHAINS)
    assert np.array_equal(new.states, old)
