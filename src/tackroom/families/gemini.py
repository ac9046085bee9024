"""The gemini family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Gemini(Family):
    name = "gemini"


FAMILY = _Gemini()
