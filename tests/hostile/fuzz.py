"""Hostile inputs for every parser of outside input: the fuzzing settings tests/hostile/ shares.

Decorate a fuzz test with ``@FUZZ`` (``from hostile.fuzz import FUZZ``):
Hypothesis runs it ``TACKROOM_FUZZ_EXAMPLES`` times (default 1000, what CI
runs). A failure is shrunk to its smallest case and printed with the
``@reproduce_failure`` blob that replays it. The settings are not loaded
globally, so the property tests elsewhere keep their own budgets.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZ = settings(
    max_examples=int(os.environ.get("TACKROOM_FUZZ_EXAMPLES", "1000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
