"""Pure statistics for recall estimation and certification.

numpy/scipy only: this package must import without Django configured.
Every public function's docstring names the seed equation it implements.
"""
# --- part A: proportions, pair recall, planning, aggregation, pooled recall ---
# --- end part A ---
# --- part B: extrapolated precision, F1 posteriors, certification, confidence sequences ---
from .certification import (  # noqa: E402  seed 004 + QBCB
    CertificationImpossible,
    F1Interval,
    certification_passes,
    certification_test_size,
    certification_test_size_closed_form,
    certification_theta_star,
    f1_interval,
    qbcb_min_found,
    qbcb_min_relevant,
    qbcb_min_sample_size,
    qbcb_passes,
)
from .confidence_sequence import (  # noqa: E402  Waudby-Smith & Ramdas betting CS
    ConfidenceSequence,
    bernoulli_capital,
    bernoulli_confidence_sequence,
    pair_recall_lower_bound,
    uniform_recall_lower_bound,
)
from .extrapolated_precision import (  # noqa: E402  seed 001
    ExtrapolationRefused,
    extrapolated_precision,
    fit_beta,
    model_precision,
    model_probability,
    reference_curve,
    review_cost,
)
from .f1_posterior import average_f1_posterior, binary_f1_posterior, hdi  # noqa: E402  seed 002
# --- end part B ---
