"""Hostile inputs for every parser of outside input: fuzzing settings shared by tests/hostile/.

Hypothesis runs each fuzz test ``TACKROOM_FUZZ_EXAMPLES`` times (default 1000;
CI uses the default). A failure is shrunk to its smallest case and printed with
the ``@reproduce_failure`` blob that replays it.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "hostile",
    max_examples=int(os.environ.get("TACKROOM_FUZZ_EXAMPLES", "1000")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=False,
)
settings.load_profile("hostile")
