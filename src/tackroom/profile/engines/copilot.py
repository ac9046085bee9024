"""Engines for copilot-hooks (hooks in Copilot's hook files): not implemented yet."""

from __future__ import annotations

from tackroom.profile.engines.base import Engine

ENGINES: list[Engine] = []
