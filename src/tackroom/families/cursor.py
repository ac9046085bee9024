"""The cursor family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Cursor(Family):
    name = "cursor"


FAMILY = _Cursor()
