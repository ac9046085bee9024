"""The antigravity family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Antigravity(Family):
    name = "antigravity"


FAMILY = _Antigravity()
