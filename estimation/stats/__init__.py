"""Pure statistics for recall estimation and certification.

numpy/scipy only: this package must import without Django configured.
Every public function's docstring names the seed equation it implements.
"""
# --- part A: proportions, pair recall, planning, aggregation, pooled recall ---
# --- end part A ---
# --- part B: extrapolated precision, F1 posteriors, certification, confidence sequences ---
# --- end part B ---
