"""The bounds of what an analyst may ask for, in one place: the pages' forms and the API's serializers (and so
the CLI, which calls the API) read them from here, so a page and the API can never accept different values.

Each is ``(lowest, highest)``, both allowed.
"""
from __future__ import annotations

from decimal import Decimal

TARGET_RECALL = (0.01, 0.99)
CONFIDENCE = (0.51, 0.999)
HIT_SIZE = (1, 50)
# Money is never negative; the digits are those of the model's columns (reward 8, budget 10, 2 decimals).
MONEY_MIN = Decimal("0")
REWARD_DIGITS = 8
BUDGET_DIGITS = 10
# The planner takes half-widths inside (0, 0.5): ±0.5 would be no interval at all.
HALF_WIDTH = (0.01, 0.49)
# How far below the recall the dependence check's assumption-free lower bound may fall.
MARGIN = (0.02, 0.30)
COMPLEMENT_MAX = 1_000_000
# A topic set's uniform sample (documents in all).
TOPIC_SET_DOCUMENTS = (1, 1_000_000)
