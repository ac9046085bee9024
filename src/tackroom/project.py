"""The project file: ``tackroom.toml`` at a repository root.

A project file may *select* an adapter and set option values and the profile;
it may never define or change an adapter (a cloned repository must not change
how a harness is launched). Defining ``[adapter.*]`` is rejected by the
resolver; this module checks the rest of the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tackroom.vocabulary import OPTION_KINDS

PROJECT_KEYS = ("harness", "options", "profile")


def check_project_data(data: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every problem of a project file's data, as (key path, message); ``adapter`` is checked elsewhere."""
    for key, value in data.items():
        if key == "adapter":
            continue
        if key not in PROJECT_KEYS:
            yield (key,), f"unknown key; a project file may set {', '.join(PROJECT_KEYS)}"
        elif key in ("harness", "profile") and not isinstance(value, str):
            yield (key,), "must be a string"
        elif key == "options":
            yield from _options(value)


def _options(value: Any) -> Iterator[tuple[tuple[str, ...], str]]:
    if not isinstance(value, dict):
        yield ("options",), "must be a table of option values"
        return
    for name in value:
        if name not in OPTION_KINDS:
            yield ("options", name), f"unknown option; options are {', '.join(OPTION_KINDS)}"
