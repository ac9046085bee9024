"""Engines for gemini-settings (MCP servers and hooks in settings.json): not implemented yet."""

from __future__ import annotations

from tackroom.profile.engines.base import Engine

ENGINES: list[Engine] = []
