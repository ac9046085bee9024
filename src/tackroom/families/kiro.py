"""The kiro family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Kiro(Family):
    name = "kiro"


FAMILY = _Kiro()
