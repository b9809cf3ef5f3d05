"""Command-line client of the Recall REST API (standard library only)."""

__version__ = "1.0.0"
