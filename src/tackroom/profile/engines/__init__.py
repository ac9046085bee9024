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

from functools import cache
from importlib import import_module

from tackroom.errors import FamilyError, ProfileError
from tackroom.families import GENERIC_ENGINES, built_in_engines, get_family
from tackroom.families import engines as engines
from tackroom.profile.engines.base import Engine


def engine(name: str, family: str | None = None) -> Engine:
    """The engine ``name``; one the adapter names but no code implements is an error.

    ``family``: the adapter's, where its engines usually are. The generic engines and that family's
    are looked at first, then where the built-in families' index says it is, so one render does not
    import every family to find one.
    """
    if family is not None:
        near = _near(family).get(name)
        if near is not None:
            return near
    listed = built_in_engines().get(name)
    if listed is not None:
        for each in import_module(listed).ENGINES:
            if isinstance(each, Engine) and each.name == name:
                return each
    found = engines().get(name)
    if found is None:
        raise ProfileError(f"renderer {name!r} is not implemented (implemented: {', '.join(engines())})")
    return found


@cache
def _near(family: str) -> dict[str, Engine]:
    """The generic engines and ``family``'s own, by name; none when they clash or the family cannot be
    made (the whole registry, looked at then, says why)."""
    found: dict[str, Engine] = {}
    for module in GENERIC_ENGINES:
        for each in import_module(f"tackroom.profile.engines.{module}").ENGINES:
            found[each.name] = each
    try:
        own = get_family(family).engines()
    except FamilyError:
        return {}
    for each in own:
        if not isinstance(each, Engine) or found.setdefault(each.name, each) is not each:
            return {}
    return found
