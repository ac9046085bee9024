"""The qwen family."""

from __future__ import annotations

from tackroom.families.base import Family


class _Qwen(Family):
    name = "qwen"


FAMILY = _Qwen()
