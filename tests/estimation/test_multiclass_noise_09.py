"""Coverage of the router's true corpus F1 at worker accuracy 0.9 (the simulation of test_multiclass_noise.py)."""
from __future__ import annotations

import pytest

from tests.simulations.multiclass import check_coverage


@pytest.mark.slow
def test_latent_class_covers_the_true_corpus_f1_at_worker_accuracy_09():
    check_coverage(0.9)
