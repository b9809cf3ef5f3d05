"""False passes of the design-basis certification on score strata, simulated against the truth (issue 23 item 3);
the set-up and measured figures are in tests/estimation/stats/test_certification_sizing_false_pass.py."""
from __future__ import annotations

import math

import numpy as np

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
