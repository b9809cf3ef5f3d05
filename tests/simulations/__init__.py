"""Simulation helpers shared by test modules (docs/architecture.md, Tests)."""
