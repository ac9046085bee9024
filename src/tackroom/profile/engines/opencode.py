"""Engines for opencode-json (MCP) and opencode-plugin (hooks as a generated plugin): not implemented yet."""

from __future__ import annotations

from tackroom.profile.engines.base import Engine

ENGINES: list[Engine] = []
