"""Renderer engines by name: code that adapter data selects (``render = "..."``).

The generic engines live here (``concat``, ``dir``, ``mcp-json``); an engine
only one kind of harness needs lives in its family's package and comes in
through :meth:`~tackroom.families.base.Family.engines`, so a third-party family
registers engines the same way a built-in one does. Adapters name engines, not
families: a fork (kilo) reuses its parent's (opencode's) by name.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module

from tackroom.errors import FamilyError, ProfileError
from tackroom.profile.engines.base import Engine

_GENERIC = ("files", "settings")


@cache
def engines() -> dict[str, Engine]:
    """Every engine, generic and from every registered family, by name."""
    from tackroom.families import family_names, get_family

    found: dict[str, tuple[Engine, str]] = {}
    sources = [
        (f"tackroom.profile.engines.{m}", import_module(f"tackroom.profile.engines.{m}").ENGINES)
        for m in _GENERIC
    ]
    sources += [(f"family {name!r}", get_family(name).engines()) for name in family_names()]
    for source, listed in sources:
        for engine_ in listed:
            if not isinstance(engine_, Engine) or not engine_.name or not engine_.kinds:
                raise FamilyError(
                    f"{source} lists {engine_!r}, which is not a named Engine serving some kinds"
                )
            if engine_.name in found and found[engine_.name][0] is not engine_:
                raise FamilyError(
                    f"renderer {engine_.name!r} is defined twice: by {found[engine_.name][1]} and by {source}"
                )
            found[engine_.name] = (engine_, source)
    return {name: item[0] for name, item in sorted(found.items())}


def engine(name: str) -> Engine:
    """The engine ``name``; one the adapter names but no code implements is an error."""
    found = engines().get(name)
    if found is None:
        raise ProfileError(f"renderer {name!r} is not implemented (implemented: {', '.join(engines())})")
    return found
