"""The bounds of a certification plan's inputs, in one place: the page's forms and the API's serializers read
them from here. Each is ``(lowest, highest)``, both allowed."""
from __future__ import annotations

TARGET = (0.01, 0.99)
ALPHA = (0.001, 0.2)
POWER = (0.51, 0.99)
DELTA1_LOW = (0.01, 1.0)
DELTA1_HIGH = (1.0, 3.0)
ATTEMPTS = (1, 100)
