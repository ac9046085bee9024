"""The pi family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Pi(Family):
    name = "pi"


FAMILY = _Pi()
