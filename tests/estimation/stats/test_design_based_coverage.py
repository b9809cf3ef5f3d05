"""Coverage of the corpus recall by the design-based interval, with N sized by the conservative prior
(issue "The headline holds whatever the pair", part 2; ESTIMATION-NOTES §8, §9).

Synthetic corpora (``dependent_pair_corpus``): 400 relevant documents in 20,000, r1 = r2 = 0.5 (the
largest recall at which δ1 = 0.35 exists: 2r − δ1·r² ≤ 1), precisions 0.9 (A12) and 0.5 (B1, B2), at
δ1 ∈ {0.35, 0.8, 1.0, 1.25, 1.35}.  Each study draws simple random samples without replacement of 100
documents of A12, B1 and B2 (all of a smaller region) and the plan's m of N
(``complement_sample_size_prior`` over ``complement_prior_prevalences``, guesses = the regions' true
precisions), judges them, and computes ``design_based_recall_arrays`` (1,000 Monte Carlo draws each).

Measured (seeded, 400 studies per setting), two-sided 95% coverage of the corpus recall r1 = 0.5:
perfect workers 0.93–0.97 in every setting; three workers of accuracy 0.85 with majority vote 0.00 in
every setting — the majority's false positives (6.1% of irrelevant documents) swamp N's prevalence
(0.2–0.7%): the mean estimate is ≈ 0.13 for a truth of 0.5.  With the Rogan–Gladen correction
(``label_error``), the accuracy estimated from the simulated votes' agreement (not given): 0.965–0.978 in
every setting, at the price of width (median 0.37–0.50 against 0.16–0.18 with perfect workers).
"""
import math

import numpy as np
import pytest

from estimation.stats.design_based import (
    REGIONS,
    _planned_bound,
    complement_noise_floor,
    complement_prior_prevalences,
    complement_sample_size,
    complement_sample_size_prior,
    dependent_pair_corpus,
    design_based_recall,
    design_based_recall_arrays,
    label_error_from_vote_patterns,
    majority_false_positive_rate,
)

DELTAS = (0.35, 0.8, 1.0, 1.25, 1.35)
STUDIES = 400
DRAWS = 1_000
PAIR_JUDGED = 100
MARGIN = 0.10


def _corpus(delta1: float):
    return dependent_pair_corpus(relevant=400, recall1=0.5, recall2=0.5, delta1=delta1, corpus_size=20_000)


def _plan(corpus, which: str = "r1"):
    sizes = corpus.sizes
    shares = {h: corpus.relevant[h] / sizes[h] for h in ("A12", "B1", "B2")}
    judged = {h: min(PAIR_JUDGED, sizes[h]) for h in ("A12", "B1", "B2")}
    pair_relevant = sum(corpus.relevant[h] for h in ("A12", "B1", "B2"))
    args = {"size_a12": sizes["A12"], "precision_a12": shares["A12"], "judged_a12": judged["A12"],
            "size_b1": sizes["B1"], "precision_b1": shares["B1"], "judged_b1": judged["B1"],
            "size_b2": sizes["B2"], "precision_b2": shares["B2"], "judged_b2": judged["B2"],
            "size_u": sizes["U"], "which": which, "margin": MARGIN}
    prior = complement_sample_size_prior(
        prevalences=complement_prior_prevalences(pair_relevant=pair_relevant, size_u=sizes["U"]), **args)
    return prior, judged, args


def _studies(delta1: float, *, accuracy: float, seed: int, corrected: bool = False):
    """``STUDIES`` simulated studies.  Below accuracy 1 each judged document gets three votes, each right with
    probability ``accuracy``, and its majority label; with ``corrected`` the label error is estimated from those
    votes (their agreement, all four regions: ``label_error_from_vote_patterns``), never given the true accuracy."""
    corpus = _corpus(delta1)
    prior, judged, _ = _plan(corpus)
    assert prior.feasible
    judged = {**judged, "U": prior.judged_u}
    rng = np.random.default_rng(seed)
    found = {}
    unanimous, split = np.zeros(STUDIES), np.zeros(STUDIES)
    for h in REGIONS:
        size, relevant, n = corpus.sizes[h], corpus.relevant[h], judged[h]
        k = (np.full(STUDIES, relevant) if n >= size
             else rng.hypergeometric(relevant, size - relevant, n, size=STUDIES))
        if accuracy < 1.0:  # three workers, majority vote: wrong with the same probability either way
            right = rng.binomial(3, accuracy, size=(STUDIES, n))
            truly = np.arange(n)[None, :] < k[:, None]
            k = np.where(truly, right >= 2, right <= 1).sum(axis=1)
            agree = (right == 0) | (right == 3)
            unanimous += agree.sum(axis=1)
            split += (~agree).sum(axis=1)
        found[h] = k
    error = (label_error_from_vote_patterns(patterns={(3, 3): unanimous, (2, 3): split}, votes=3, draws=DRAWS,
                                            rng=rng) if corrected else None)
    result = design_based_recall_arrays(sizes=corpus.sizes, judged=judged, relevant=found, draws=DRAWS, rng=rng,
                                        label_error=error)
    covered = (result.low <= corpus.recall1) & (corpus.recall1 <= result.high)
    return corpus, judged, float(np.mean(covered)), result


@pytest.mark.parametrize("delta1", DELTAS)
def test_perfect_workers_cover_the_corpus_recall(delta1):
    corpus, judged, coverage, _ = _studies(delta1, accuracy=1.0, seed=11)
    assert corpus.recall1 == pytest.approx(0.5) and corpus.delta1 == pytest.approx(delta1, abs=0.01)
    assert coverage >= 0.93, f"δ1 = {delta1}: coverage {coverage:.3f} with N judged {judged['U']}"


@pytest.mark.parametrize("delta1", DELTAS)
def test_uncorrected_majority_of_three_085_workers_misses_the_corpus_recall(delta1):
    """The defect the correction removes: majority labels of three 0.85-accurate workers put ~6% false
    positives into N (prevalence 0.2–0.7%), so the plain design-based recall is ≈ 0.12 for a truth of 0.5
    and its interval covers the truth in none of the studies (measured 0.000 at every δ1)."""
    corpus, _, coverage, result = _studies(delta1, accuracy=0.85, seed=12)
    assert coverage <= 0.05, f"δ1 = {delta1}: coverage {coverage:.3f}"
    assert float(np.mean(result.point)) < corpus.recall1 - 0.3


@pytest.mark.parametrize("delta1", DELTAS)
def test_majority_of_three_085_workers_corrected_for_label_error_covers_the_corpus_recall(delta1):
    """Rogan–Gladen per draw with the accuracy estimated from the votes (design_based_recall_arrays's
    label_error).  Measured (seed 12, 400 studies): coverage 0.965–0.978 at every δ1, mean point 0.45–0.52;
    the honest price is width: median interval width 0.37 (δ1 = 0.35) to 0.50 (δ1 = 1.35), against 0.16–0.18
    with perfect workers, because N's label share (≈ 0.064 ± 0.008 at m ≈ 900–1,700) is mostly errors."""
    corpus, judged, coverage, result = _studies(delta1, accuracy=0.85, seed=12, corrected=True)
    assert coverage >= 0.93, f"δ1 = {delta1}: coverage {coverage:.3f} with N judged {judged['U']}"
    assert abs(float(np.mean(result.point)) - corpus.recall1) < 0.08


def test_the_plan_at_delta_035_reaches_the_margin_where_the_pair_derived_guess_did_not():
    corpus = _corpus(0.35)
    prior, judged, args = _plan(corpus)
    # The plan (889 of N) gives a typical conservative bound within the margin at the corpus's truth.
    sizes = {"A12": corpus.sizes["A12"], "B1": corpus.sizes["B1"], "B2": corpus.sizes["B2"], "U": corpus.sizes["U"]}
    shares = {h: corpus.relevant[h] / sizes[h] for h in REGIONS}
    bound = _planned_bound(sizes=sizes, precisions=shares, judged={**judged, "U": prior.judged_u}, which="r1",
                           confidence=0.95, draws=4_000, seed=0)
    assert corpus.recall1 - bound <= MARGIN + 0.005, (prior.judged_u, bound)  # bisection to 0.5% of m
    # The old guess (the pair's own precisions at δ1 = 1.25: T_N = 1.25·T1·T2/T12 − T1 − T2 + T12 = 1,063,
    # a prevalence of 0.055 and a planned recall of 0.14) planned 18 documents of 19,301 before this change
    # (64 with the margin now capped at half the planned recall); its plan misses the margin at the truth.
    t12, t1, t2 = (corpus.relevant["A12"], corpus.relevant["A12"] + corpus.relevant["B1"],
                   corpus.relevant["A12"] + corpus.relevant["B2"])
    old_guess = (1.25 * t1 * t2 / t12 - t1 - t2 + t12) / sizes["U"]
    old = complement_sample_size(prevalence_u=old_guess, **args)
    assert old.judged_u is not None and old.judged_u < prior.judged_u / 10
    old_bound = _planned_bound(sizes=sizes, precisions=shares, judged={**judged, "U": old.judged_u}, which="r1",
                               confidence=0.95, draws=4_000, seed=0)
    assert corpus.recall1 - old_bound > MARGIN
    # Simulated: the two-sided 95% interval's median half-width at the plan is within the margin too.
    _, _, _, result = _studies(0.35, accuracy=1.0, seed=13)
    assert float(np.median((result.high - result.low) / 2.0)) <= MARGIN


@pytest.mark.parametrize("m", [100, 1_000, 4_000])
@pytest.mark.parametrize("accuracy", [1.0, 0.85])
def test_zero_found_samples_give_a_bound_never_noise_limited(m, accuracy):
    size_n = 20_000
    floor = complement_noise_floor(judged=m, majority_relevant=0, worker_accuracy=accuracy, size=size_n)
    assert not floor.noise_limited and floor.found_none
    fn = majority_false_positive_rate(accuracy=accuracy)
    assert floor.relevant_upper_bound == pytest.approx(size_n * (1 - 0.05 ** (1 / m)) / (1 - fn))
    if accuracy == 1.0:  # the plain bound, about 3|N|/m
        assert floor.relevant_upper_bound == pytest.approx(3 * size_n / m, rel=0.02)
    # The design gives the same exact bound on T_U (on the unjudged documents) and says none was found.
    design = design_based_recall(a12=(111, 111, 100), b1=(200, 200, 100), b2=(200, 200, 100),
                                 u=(size_n, m, 0), draws=500, seed=0)
    assert design.t_u.upper_bound == pytest.approx((size_n - m) * (1 - 0.05 ** (1 / m)))
    assert "none_found_in_complement" in design.codes
    assert math.isfinite(design.r1.conservative_lower_bound)
