"""Issue 23 item 3: false passes of the design basis on score strata with a noisy crowd (three workers at
accuracy 0.85, majority labels, label error measured from the votes and corrected) — the set-up of
test_certification_sizing_false_pass.py; measured 0.000 / 0.028 / 0.027 at δ1 = 0.35 / 1 / 1.35."""
from __future__ import annotations

import pytest

from tests.simulations.certification import DELTAS, LIMIT, false_pass_rate


@pytest.mark.slow
@pytest.mark.parametrize("delta1", DELTAS)
def test_the_stratified_bound_exceeds_the_true_recall_rarely_with_085_workers_corrected(delta1):
    rate, total = false_pass_rate(delta1, accuracy=0.85, seed=400 + int(delta1 * 100))
    assert rate <= LIMIT, (delta1, rate, total)
