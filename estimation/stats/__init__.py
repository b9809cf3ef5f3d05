"""Pure statistics for recall estimation and certification.

numpy/scipy only: this package must import without Django configured.
Every public function's docstring names the seed equation it implements.
"""
from .aggregation import (  # crowd labels: majority vote, Dawid–Skene, Fleiss' kappa
    DawidSkeneResult,
    MajorityVote,
    WorkerAgreement,
    dawid_skene,
    fleiss_kappa,
    label_counts,
    majority_vote,
    worker_agreement,
)
from .capture_recapture import CaptureRecaptureResult, ModelFit, capture_recapture  # Rcapture-style
from .certification import (  # seed 004 + QBCB
    CertificationImpossible,
    F1Interval,
    certification_passes,
    certification_test_size,
    certification_test_size_closed_form,
    certification_theta_star,
    f1_exact_lower_bound,
    f1_interval,
    qbcb_min_found,
    qbcb_min_relevant,
    qbcb_min_sample_size,
    qbcb_passes,
)
from .certification_sizing import (  # seed 004 Alg. 2 for QBCB recall and pair recall
    pair_recall_calibrated_size,
    pair_recall_verdict_power,
    qbcb_certification_size,
    qbcb_power,
)
from .confidence_sequence import (  # Waudby-Smith & Ramdas betting CS
    ConfidenceSequence,
    RunningConfidenceSequence,
    RunningPairRecallBound,
    RunningUniformF1Bound,
    RunningUniformRecallBound,
    bernoulli_capital,
    bernoulli_confidence_sequence,
    pair_recall_lower_bound,
    uniform_f1_lower_bound,
    uniform_recall_lower_bound,
)
from .design_based import (  # notes §8 with N; Rogan–Gladen label-error correction (notes §3)
    LabelError,
    label_error_from_accuracy,
    label_error_from_vote_patterns,
    label_error_from_votes,
)
from .extrapolated_precision import (  # seed 001
    ExtrapolationRefused,
    extrapolated_precision,
    fit_beta,
    model_precision,
    model_probability,
    reference_curve,
    review_cost,
)
from .f1_posterior import (  # seed 002
    average_f1_posterior,
    binary_f1_posterior,
    hdi,
    summarise_draws,
)
from .operating_characteristics import (  # the certification protocol by simulation (seed 004)
    OperatingCharacteristics,
    f1_population,
    majority_error_rate,
    pair_population,
    recall_population,
    simulate_certification,
)
from .pair_recall import (  # seed 000
    Diagnostic,
    Estimate,
    PaperDesignPairRecall,
    RegionSample,
    StratifiedPairRecall,
    chapman,
    estimated_relevant_total,
    lincoln_petersen,
    pair_recall_eq1,
    pair_recall_eq2,
    pair_recall_interval,
    paper_design_pair_recall,
    recall_from_total,
    stratified_pair_recall,
)
from .planning import (  # notes §2, seed 000 Fig. 1
    CertificationPlan,
    PairSamplePlan,
    neyman_allocation,
    pair_recall_certification_size,
    plan_pair_sample,
    precision_guess_from_pilot,
    uniform_sample_size,
)
from .pooled_recall import CorpusSample, PooledRecallResult, SystemSample, pooled_recall, product_se  # seed 003
from .proportions import (  # intervals and Beta posteriors
    BetaPosterior,
    ProportionInterval,
    clopper_pearson_interval,
    exact_coverage,
    finite_population_correction,
    jeffreys_interval,
    precision_posterior,
    proportion_interval,
    wilson_interval,
)
