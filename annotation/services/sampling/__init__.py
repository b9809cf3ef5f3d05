"""Sampling: simple random draws per stratum into HITs; the dependence check's sizing."""
