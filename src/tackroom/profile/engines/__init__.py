"""Renderer engines by name: code that adapter data selects (``render = "..."``).

The generic engines live here (``concat``, ``dir``, ``mcp-json``); an engine
only one kind of harness needs lives in its family's package and comes in
through :meth:`~tackroom.families.base.Family.engines`, so a third-party family
registers engines the same way a built-in one does. Adapters name engines, not
families: a fork (kilo) reuses its parent's (opencode's) by name. The registry
of them all is :func:`tackroom.families.engines`, beside the families': adapter
validation is given it, and never imports this package.
"""

from __future__ import annotations

from tackroom.errors import ProfileError
from tackroom.families import engines as engines
from tackroom.profile.engines.base import Engine


def engine(name: str) -> Engine:
    """The engine ``name``; one the adapter names but no code implements is an error."""
    found = engines().get(name)
    if found is None:
        raise ProfileError(f"renderer {name!r} is not implemented (implemented: {', '.join(engines())})")
    return found
