"""Coverage of the score-stratified design-based recall with three workers at accuracy 0.85 (issue 23).

The set-up is test_stratified_coverage.py's; the label error is estimated from each study's vote patterns
(``design_based.label_error_from_vote_patterns``) and corrected by Rogan–Gladen, linear per stratum and
truncated once per region.  Split from the perfect-label module to keep each module's runtime sane.
"""
from __future__ import annotations

import pytest

from tests.simulations.stratified import AUCS, check_coverage


@pytest.mark.slow
@pytest.mark.parametrize("auc", AUCS)
def test_two_sided_interval_covers_the_corpus_recall_with_three_workers_at_0_85(auc):
    check_coverage(auc, 0.85)
