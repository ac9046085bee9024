"""The codex family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Codex(Family):
    name = "codex"


FAMILY = _Codex()
