"""Families are code: one module per kind of harness, one registry.

A family knows what configuration cannot supply: how to parse its harness's
output stream, how to tell its model failures apart. Every adapter selects one
family by name. Built-in families register through the entry-point group
``tackroom.families`` exactly as a third-party package would; the registry reads
the names cheaply and imports a family's module only when it is used.

The renderer engines adapter data selects by name are registered here too
(:func:`engines`): the generic ones of ``tackroom.profile.engines`` and each
family's own.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tackroom._dists import entry_points
from tackroom.errors import FamilyError
from tackroom.families.base import Family

if TYPE_CHECKING:
    from tackroom.profile.engines.base import Engine

GROUP = "tackroom.families"

__all__ = ["GROUP", "Family", "engines", "family_names", "get_family"]


@cache
def _entry_points() -> dict[str, str]:
    return entry_points(GROUP)


def family_names() -> list[str]:
    """Every registered family name, sorted."""
    return sorted(_entry_points())


@cache
def get_family(name: str) -> Family:
    """The registered family ``name``, imported and checked against the interface."""
    family: Any
    target = _entry_points().get(name)
    if target is None:
        raise FamilyError(f"no family {name!r} is registered (registered: {', '.join(family_names())})")
    # One scan of the installed packages' metadata per process (_entry_points), not one per family.
    module, _, attribute = target.partition(":")
    try:
        family = import_module(module)
        for part in attribute.split(".") if attribute else ():
            family = getattr(family, part)
    except TypeError as exc:  # an abstract Family made at import: it lacks a parser
        raise FamilyError(f"family {name!r} ({target}) cannot be made: {exc}") from exc
    if not isinstance(family, Family):
        raise FamilyError(f"entry point {name!r} = {_entry_points()[name]} is not a tackroom Family")
    if family.name != name:
        raise FamilyError(f"entry point {name!r} loads a family named {family.name!r}")
    return family


GENERIC_ENGINES = ("files", "settings")
"""The modules of ``tackroom.profile.engines`` whose engines belong to no family."""
INDEX = Path(__file__).with_name("engines.json")
"""Where each engine of the generic modules and the built-in families is, by name
(``scripts/resolve-builtins`` writes it; ``tests/test_adapter_cache.py`` holds it to the registry)."""


@cache
def built_in_engines() -> dict[str, str]:
    """Engine name -> the module that lists it, from :data:`INDEX`: a render finds another family's
    engine (codex's hooks are ``claude-settings``) by importing that module, not every family."""
    import json

    try:
        data = json.loads(INDEX.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def engine_index() -> str:
    """The text of :data:`INDEX` for the registry as it is now (the built-in families' part)."""
    import json

    found = {
        each.name: f"tackroom.profile.engines.{module}"
        for module in GENERIC_ENGINES
        for each in import_module(f"tackroom.profile.engines.{module}").ENGINES
    }
    for name in family_names():
        family = get_family(name)
        if family.engines_module is not None and family.engines_module.startswith("tackroom.families."):
            found |= {each.name: family.engines_module for each in family.engines()}
    return json.dumps(dict(sorted(found.items())), indent=1) + "\n"


@cache
def engines() -> dict[str, Engine]:
    """Every renderer engine, generic and from every registered family, by name.

    The registry adapter validation is given: an adapter names engines, and
    a name no code implements, or an engine that does not write that kind or
    read that format, is an error at load.
    """
    from tackroom.profile.engines.base import Engine

    found: dict[str, tuple[Engine, str]] = {}
    sources = [
        (f"tackroom.profile.engines.{m}", import_module(f"tackroom.profile.engines.{m}").ENGINES)
        for m in GENERIC_ENGINES
    ]
    for name in family_names():
        try:
            sources.append((f"family {name!r}", get_family(name).engines()))
        except FamilyError:
            # A family that cannot be made contributes nothing; using it says why (get_family).
            continue
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
