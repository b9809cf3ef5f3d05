"""The true class of a judged document as a latent variable (Dawid & Skene 1979, Bayesian), for seed 002's F1.

Dawid, A. P., Skene, A. M., "Maximum Likelihood Estimation of Observer Error-Rates Using the EM Algorithm",
Applied Statistics 28(1), 1979: each document i has an unknown true class z_i with shares p_j, and each
observer answers class l with probability pi_jl when the truth is j (their Sec. 2). Here the model is
Bayesian and joined to seed 002's (Zhang, Wang, Zhao, ICTIR 2015, Sec. 2.1) model of the router:

    (z_i, r_i) ~ Categorical(mu_j theta_jk)          seed 002: mu ~ Dir(beta), theta_j ~ Dir(alpha)
    each crowd vote of document i ~ Categorical(phi_{z_i, .})   Dawid–Skene confusion of the crowd
    phi_j ~ Dir(a_j), a_jj = PHI_DIAGONAL, a_jl = PHI_OFF / (K - 1)

r_i is the router's class (observed), the votes are observed, z_i is latent. The crowd's confusion phi is
*pooled* over workers (one matrix for the crowd, as Dawid & Skene's model with a single observer type):
with three judgments per document and many workers each judging few documents, one confusion per worker
is not identified. A document with a gold answer has its z_i fixed.

Gibbs sampling (vectorised over chains with numpy): given z the three Dirichlet posteriors are conjugate
(seed 002's for mu and theta, Dawid–Skene's for phi); given (mu, theta, phi) each z_i is drawn from
P(z_i = j) oc mu_j theta_{j r_i} prod_l phi_jl^{v_il}. Documents with the same (router class, votes)
pattern share that probability, so the class counts of a pattern are one multinomial draw per chain. The result is a
set of kept latent states: the confusion matrix C(z, r) of each state; the F1 posterior is then the
mixture over states of seed 002's exact Dirichlet posterior given C (``f1_posterior.
average_f1_posterior_mixture``), so the interval widens with the crowd's disagreement instead of shifting.

Identification. The classes are named by the prior (a_jj > a_jl: a worker is more often right than wrong).
When the crowd's agreement is too low the posterior of phi_jj approaches chance and the names can swap
(label switching); ``identified`` is then False with the reason in words: for a class the sample holds
(posterior mean count >= 1), P(phi_jj > every phi_jl, l != j) must be at least IDENTIFIED_PROBABILITY.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["IDENTIFIED_PROBABILITY", "LatentClassFit", "latent_class_fit"]

PHI_DIAGONAL = 2.0  # prior votes for "the crowd answers the true class" per class row
PHI_OFF = 1.0  # prior votes spread over the K - 1 wrong answers of a row
IDENTIFIED_PROBABILITY = 0.5
CHAINS = 10
BURN_IN = 30
KEPT = 30  # states kept per chain (CHAINS x KEPT states in all)
_TINY = 1e-300
MULTINOMIAL_FROM = 16


@dataclass(frozen=True)
class LatentClassFit:
    """Kept latent states of the joint Dawid–Skene / seed-002 model and what the crowd's confusion says."""

    states: np.ndarray  # (S, K, K): counts C[j, k] of (true class j, router class k) per kept state
    expected_true_counts: tuple[float, ...]  # posterior mean number of sample documents per true class
    accuracy: tuple[float, float, float]  # crowd accuracy sum_j mu_j phi_jj: median, 2.5% and 97.5% points
    class_accuracy: tuple[float, ...]  # posterior median of phi_jj per class
    separated: tuple[float, ...]  # P(phi_jj > max_l!=j phi_jl) per class
    identified: bool
    reason: str | None  # in words, when not identified
    documents: int
    chains: int
    kept: int


def latent_class_fit(*, votes: np.ndarray, predicted: np.ndarray, classes: int, seed: int | None,
                     gold_true: np.ndarray | None = None, gold_predicted: np.ndarray | None = None,
                     alpha: float | None = None, beta: float | None = None, chains: int = CHAINS, burn_in: int = BURN_IN,
                     kept: int = KEPT) -> LatentClassFit:
    """Gibbs sampler of the module docstring's model (Dawid & Skene 1979 with seed 002's router model).

    ``votes``: (n, K) sure votes per class of each crowd-judged document; ``predicted``: (n,) its router
    class. ``gold_true`` / ``gold_predicted``: documents whose class is known (fixed z). ``alpha``, ``beta``:
    seed 002's Dirichlet parameters of every theta cell and every class share (default 1/K^2 and 1/K).
    """
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
            # The cumulative probabilities class by class (a running sum, as np.cumsum adds them), each gathered
            # at the documents' patterns, and the class drawn as the number of them the uniform exceeds: the
            # same numbers and comparisons as on the whole (chains, K, docs) cube, without its middle-axis
            # reduce (numpy reduces a short middle axis slowly).
            running = probabilities[:, 0, :].copy()  # (chains, G)
            rows = [running[:, small_documents]]
            for j in range(1, classes):
                running += probabilities[:, j, :]
                rows.append(running[:, small_documents])
            u = rng.random((chains, small_documents.size)) * rows[-1]
            chosen = np.zeros((chains, small_documents.size), dtype=np.intp)
            for row in rows:
                chosen += u > row
            np.minimum(chosen, classes - 1, out=chosen)
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
        top = log_p[:, 0, :].copy()
        for j in range(1, classes):  # the max over classes, row by row (exact; no middle-axis reduce)
            np.maximum(top, log_p[:, j, :], out=top)
        log_p -= top[:, None, :]
        p = np.exp(log_p)
        allocated = allocation(p / p.sum(axis=1, keepdims=True))

    state_array = np.concatenate(states, axis=0)
    phi_array = np.concatenate(phis, axis=0)
    mu_array = np.concatenate(mus, axis=0)
    diagonal = np.diagonal(phi_array, axis1=1, axis2=2)
    off = phi_array.copy()
    idx = np.arange(classes)
    off[:, idx, idx] = -1.0
    separated = (diagonal > off.max(axis=-1)).mean(axis=0)
    accuracy = (mu_array * diagonal).sum(axis=-1)
    expected = state_array.sum(axis=-1).mean(axis=0)
    present = expected - fixed.sum(axis=1) >= 1.0  # classes the crowd-judged sample holds
    weak = [int(j) for j in np.flatnonzero(present & (separated < IDENTIFIED_PROBABILITY))]
    reason = None
    if n and weak:
        reason = ("the workers agree too little to tell the classes apart: for "
                  + ("class " if len(weak) == 1 else "classes ") + ", ".join(str(j) for j in weak)
                  + f" the crowd's answers are not clearly more often right than wrong "
                    f"(probability {min(separated[j] for j in weak):.2f}, at least {IDENTIFIED_PROBABILITY:.2f} needed)")
    acc_q = np.quantile(accuracy, [0.5, 0.025, 0.975])
    return LatentClassFit(
        states=state_array, expected_true_counts=tuple(float(x) for x in expected),
        accuracy=(float(acc_q[0]), float(acc_q[1]), float(acc_q[2])),
        class_accuracy=tuple(float(x) for x in np.median(diagonal, axis=0)),
        separated=tuple(float(x) for x in separated), identified=reason is None, reason=reason,
        documents=int(n), chains=chains, kept=kept)
