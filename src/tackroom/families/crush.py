"""The crush family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Crush(Family):
    name = "crush"


FAMILY = _Crush()
