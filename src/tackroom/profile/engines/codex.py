"""Engines for codex-toml (MCP servers in config.toml): not implemented yet."""

from __future__ import annotations

from tackroom.profile.engines.base import Engine

ENGINES: list[Engine] = []
