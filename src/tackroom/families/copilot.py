"""The copilot family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Copilot(Family):
    name = "copilot"


FAMILY = _Copilot()
