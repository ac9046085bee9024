"""The aider family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Aider(Family):
    name = "aider"


FAMILY = _Aider()
