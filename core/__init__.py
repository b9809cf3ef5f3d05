"""Pieces every app shares: the application error base and its one mapping to a response."""
