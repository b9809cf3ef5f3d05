"""Score-stratified design-based recall (issue 23): coverage of the corpus truth by simulation, fixed seeds.

Each configuration: a pair corpus of 200,000 documents with 2,000 relevant (ρ = 1%), r1 = 0.6, r2 = 0.5 and
dependence δ1 (``design_based.dependent_pair_corpus``); a binormal scorer of the given AUC cuts every region
into strata (``stratified.scored_pair_strata``); the sample is the plan for ±0.05 at the strata's true
prevalences (``stratified_sample_plan``), drawn without replacement per stratum in 200 studies; the
interval is ``stratified_design_recall_arrays``'s.  Workers: perfect, or three at accuracy 0.85 (majority
labels; label error estimated from the vote patterns, Rogan–Gladen-corrected).
"""
from __future__ import annotations

import pytest

from estimation.stats.design_based import REGIONS
from estimation.stats.stratified import scored_pair_strata
from tests.simulations.stratified import AUCS, check_coverage
from tests.simulations.stratified import pair_corpus as _corpus


@pytest.mark.slow
@pytest.mark.parametrize("auc", AUCS)
def test_two_sided_interval_covers_the_corpus_recall_with_perfect_labels(auc):
    check_coverage(auc, None)


def test_one_region_checks_the_regions_are_complete():
    corpus = _corpus(1.0)
    strata = scored_pair_strata(sizes=corpus.sizes, relevant=corpus.relevant, auc=0.9, seed=0)
    assert {s.region for s in strata} == set(REGIONS)
    for h in REGIONS:
        assert sum(s.size for s in strata if s.region == h) == corpus.sizes[h]
        assert sum(s.relevant_true for s in strata if s.region == h) == corpus.relevant[h]
