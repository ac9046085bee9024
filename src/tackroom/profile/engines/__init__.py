"""Renderer engines by name: generic code that adapter data selects (``render = "..."``)."""

from __future__ import annotations

from tackroom.profile.engines.base import Engine
from tackroom.profile.engines.files import Concat, Dir
from tackroom.profile.engines.settings import ClaudeSettings, McpJson

ENGINES: dict[str, Engine] = {e.name: e for e in (Concat(), Dir(), McpJson(), ClaudeSettings())}


def engine(name: str) -> Engine:
    """The engine ``name``; one the adapter names but no code implements is an error."""
    from tackroom.profile.render import ProfileError

    found = ENGINES.get(name)
    if found is None:
        raise ProfileError(
            f"renderer {name!r} is not implemented yet (implemented: {', '.join(sorted(ENGINES))})"
        )
    return found
