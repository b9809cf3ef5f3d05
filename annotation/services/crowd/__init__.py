"""The crowd: HITs, assignments, judgments, labels, workers, gold, crowd platforms (built-in, MTurk)."""
