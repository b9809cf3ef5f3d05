"""Issue 24 item 5 at worker accuracy 0.8 (set-up and figures in test_dawid_skene_intervals.py)."""
from __future__ import annotations

import pytest

from tests.simulations.dawid_skene import coverage


@pytest.mark.slow
def test_bayesian_dawid_skene_intervals_cover_the_truth_at_accuracy_08():
    plug_in, bayes = coverage(0.8)
    assert bayes >= 0.9  # measured 0.93 (EM plug-in 0.85), seed 2024, 100 studies (0.94 before the two-class sweep)
