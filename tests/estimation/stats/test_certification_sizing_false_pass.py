"""Issue 23 item 3: false passes of the design basis on score strata, by simulation of the truth.

A certification on the design basis passes when the conservative one-sided 95% bound of
``stratified.stratified_design_recall`` reaches the target; it passes falsely when that bound exceeds the true
recall.  Corpus: 200,000 documents, 2,000 relevant, r1 = 0.6, r2 = 0.5, dependence δ1
(``design_based.dependent_pair_corpus``); the product's design — A12, B1, B2 one stratum each, U cut by a
binormal scorer of AUC 0.9 into 5 geometric score strata (``stratified.scored_pair_strata``) — judged as the
certification plan sizes it (``certification_sizing.stratified_certification_size`` at the true shares, target
truth − 0.08); 1,000 studies per configuration, each its own hypergeometric sample of every stratum.
Workers: perfect here; three at accuracy 0.85 (majority labels; the label error estimated from each study's
vote patterns and corrected, as the verdict does) in test_certification_sizing_false_pass_noisy.py.  Pass: at
most α + 3 s.e. = 0.05 + 0.021 of the studies.  Measured (2026-11-27, seeds as below): perfect 0.000 / 0.010 /
0.016, workers at 0.85 corrected 0.000 / 0.028 / 0.027 at δ1 = 0.35 / 1 / 1.35.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from estimation.stats.certification_sizing import stratified_certification_size
from estimation.stats.design_based import dependent_pair_corpus, label_error_from_vote_patterns
from estimation.stats.stratified import Stratum, StratumGuess, scored_pair_strata, stratified_design_recall_arrays

STUDIES = 1_000
DRAWS = 500
ALPHA = 0.05
LIMIT = ALPHA + 3.0 * math.sqrt(ALPHA * (1 - ALPHA) / STUDIES)
DELTAS = (0.35, 1.0, 1.35)


def product_strata(delta1: float, auc: float = 0.9, seed: int = 0):
    """(strata as ScoredStratum: the pair's regions whole, U by score; true r1)."""
    c = dependent_pair_corpus(relevant=2_000, recall1=0.6, recall2=0.5, delta1=delta1, corpus_size=200_000)
    cut = scored_pair_strata(sizes=c.sizes, relevant=c.relevant, auc=auc, seed=seed)
    whole = scored_pair_strata(sizes=c.sizes, relevant=c.relevant, auc=None)
    return [s for s in whole if s.region != "U"] + [s for s in cut if s.region == "U"], c.recall1


def false_pass_rate(delta1: float, *, accuracy: float | None, seed: int) -> tuple[float, int]:
    strata, truth = product_strata(delta1, seed=seed)
    guesses = [StratumGuess(s.region, s.size, s.relevant_true / s.size if s.size else 0.0, s.key) for s in strata]
    judged = stratified_certification_size(strata=guesses, target=truth - 0.08, seed=seed).judged
    rng = np.random.default_rng(seed)
    votes = 3
    pmf = (np.array([math.comb(votes, j) * accuracy ** j * (1 - accuracy) ** (votes - j) for j in range(votes + 1)])
           if accuracy is not None else None)
    patterns = np.zeros((STUDIES, votes + 1))
    design = []
    for s, n in zip(strata, judged, strict=True):
        k = (rng.hypergeometric(s.relevant_true, s.size - s.relevant_true, n, size=STUDIES)
             if s.relevant_true and n else np.zeros(STUDIES, dtype=np.int64))
        if pmf is not None and n:
            pattern = rng.multinomial(k, pmf) + rng.multinomial(n - k, pmf)[:, ::-1]
            patterns += pattern
            k = pattern[:, 2:].sum(axis=1)
        design.append(Stratum(s.region, s.size, int(n), k.astype(float), s.key))
    error = (label_error_from_vote_patterns(patterns={(r, votes): patterns[:, r] for r in range(votes + 1)},
                                            votes=votes, draws=DRAWS, rng=rng) if pmf is not None else None)
    bounds = stratified_design_recall_arrays(strata=design, which="r1", confidence=1.0 - ALPHA, draws=DRAWS, rng=rng,
                                             label_error=error).conservative_lower_bound
    return float(np.mean(bounds > truth)), int(sum(judged))


@pytest.mark.slow
@pytest.mark.parametrize("delta1", DELTAS)
def test_the_stratified_bound_exceeds_the_true_recall_rarely_with_perfect_workers(delta1):
    rate, total = false_pass_rate(delta1, accuracy=None, seed=300 + int(delta1 * 100))
    assert rate <= LIMIT, (delta1, rate, total)
