"""The goose family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Goose(Family):
    name = "goose"


FAMILY = _Goose()
