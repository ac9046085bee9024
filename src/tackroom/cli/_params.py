"""Checks shared by command options: a bad value is a usage error (exit 2), never accepted silently.

Typer is imported only to say a value is bad, so the quick paths (:mod:`tackroom.cli.quick`) can
run the same checks without it (and leave a bad value to the full command, which says why).
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # not typing's: the quick paths should not load it
if TYPE_CHECKING:
    import typer


def _bad(message: str) -> typer.BadParameter:
    import typer

    return typer.BadParameter(message)


def seconds(value: float) -> float:
    """A positive, finite number of seconds (``nan``, ``inf``, 0 and negatives would disable or end a run)."""
    if not math.isfinite(value) or value <= 0:
        raise _bad(f"must be a positive, finite number of seconds, not {value:g}")
    return value


def base_url(value: str | None) -> str | None:
    """An ``http(s)://host[:port][/path]`` URL, or None when not given."""
    if value is None:
        return None
    from tackroom.errors import RunError
    from tackroom.run.spec import check_base_url

    try:
        return check_base_url(value)
    except RunError as exc:
        raise _bad(str(exc)) from exc


def prompt(value: str | None) -> str | None:
    """A prompt with something in it."""
    if value is not None and not value.strip():
        raise _bad("the prompt is empty")
    return value


def harness_version(value: str | None) -> str | None:
    """A harness version such as ``2.1.332`` (what ``--version`` selects an adapter's data by), or None."""
    if value is None:
        return None
    from tackroom.adapters.versions import release_key

    if release_key(value) is None or value != value.strip():
        raise _bad(f"{value!r} is not a version such as 2.1.332")
    return value
