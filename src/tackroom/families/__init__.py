"""Families are code: one module per kind of harness, one registry.

A family knows what configuration cannot supply: how to parse its harness's
output stream, how to tell its model failures apart. Every adapter selects one
family by name. Built-in families register through the entry-point group
``tackroom.families`` exactly as a third-party package would; the registry reads
the names cheaply and imports a family's module only when it is used.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from typing import Any

from tackroom._dists import entry_points
from tackroom.errors import FamilyError
from tackroom.families.base import Family

GROUP = "tackroom.families"

__all__ = ["GROUP", "Family", "family_names", "get_family"]


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
    family = import_module(module)
    for part in attribute.split(".") if attribute else ():
        family = getattr(family, part)
    if not isinstance(family, Family):
        raise FamilyError(f"entry point {name!r} = {_entry_points()[name]} is not a tackroom Family")
    if family.name != name:
        raise FamilyError(f"entry point {name!r} loads a family named {family.name!r}")
    return family
