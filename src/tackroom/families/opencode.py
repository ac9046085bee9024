"""The opencode family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Opencode(Family):
    name = "opencode"


FAMILY = _Opencode()
