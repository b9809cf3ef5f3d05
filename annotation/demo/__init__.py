"""The demo: a generated news corpus with planted topics (corpus.py) and the set-up that loads it (setup.py)."""
