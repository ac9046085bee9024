"""Renderer engines by name: generic code that adapter data selects (``render = "..."``).

Each engine module lists the engines it defines in ``ENGINES``; this registry
collects them, so adding an engine is one module and one name here.
"""

from __future__ import annotations

from importlib import import_module

from tackroom.profile.engines.base import Engine

_MODULES = ("files", "settings", "codex", "gemini", "opencode", "copilot", "extension")


def _collect() -> dict[str, Engine]:
    found: dict[str, Engine] = {}
    for name in _MODULES:
        for engine_ in import_module(f"tackroom.profile.engines.{name}").ENGINES:
            if engine_.name in found:
                raise RuntimeError(f"renderer {engine_.name!r} is defined twice")
            found[engine_.name] = engine_
    return found


ENGINES: dict[str, Engine] = _collect()


def engine(name: str) -> Engine:
    """The engine ``name``; one the adapter names but no code implements is an error."""
    from tackroom.profile.render import ProfileError

    found = ENGINES.get(name)
    if found is None:
        raise ProfileError(
            f"renderer {name!r} is not implemented yet (implemented: {', '.join(sorted(ENGINES))})"
        )
    return found
