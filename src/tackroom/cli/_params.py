"""Checks shared by command options: a bad value is a usage error (exit 2), never accepted silently."""

from __future__ import annotations

import math

import typer


def seconds(value: float) -> float:
    """A positive, finite number of seconds (``nan``, ``inf``, 0 and negatives would disable or end a run)."""
    if not math.isfinite(value) or value <= 0:
        raise typer.BadParameter(f"must be a positive, finite number of seconds, not {value:g}")
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
        raise typer.BadParameter(str(exc)) from exc


def prompt(value: str | None) -> str | None:
    """A prompt with something in it."""
    if value is not None and not value.strip():
        raise typer.BadParameter("the prompt is empty")
    return value


def harness_version(value: str | None) -> str | None:
    """A harness version such as ``2.1.332`` (what ``--version`` selects an adapter's data by), or None."""
    if value is None:
        return None
    from tackroom.adapters.versions import release_key

    if release_key(value) is None or value != value.strip():
        raise typer.BadParameter(f"{value!r} is not a version such as 2.1.332")
    return value
