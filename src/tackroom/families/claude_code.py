"""The claude-code family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Claude_code(Family):
    name = "claude-code"


FAMILY = _Claude_code()
