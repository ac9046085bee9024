"""``tackroom detect``: which harnesses a repository is set up for; and the choice other commands share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tackroom.cli._output import console, escape, print_json

if TYPE_CHECKING:
    from tackroom.adapters.adapter import Adapter
    from tackroom.detect import Detection


def detect_command(
    path: Path = typer.Argument(
        Path(), exists=True, file_okay=False, help="A directory in the repository (default: here)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Which harnesses a repository is set up for, from the adapters' detect markers.

    The top scorer is the best match; a tie is reported (ambiguous_with), never guessed.

    A file under two names (CLAUDE.md linking to AGENTS.md) or two with the same bytes is one signal.
    """
    from tackroom.detect import detect

    found = detect(path)
    if as_json:
        print_json(found.to_json())
        return
    _show(found)


def _show(found: Detection) -> None:
    from rich.table import Table

    out = console()
    root = escape(found.root)
    if not found.matches:
        out.print(f"{root}: no harness's markers found")
    elif found.ambiguous_with:
        tied = ", ".join(escape(n) for n in (found.best, *found.ambiguous_with))
        out.print(
            f"{root}: [yellow]ambiguous[/]: {tied} (score {found.score} each); name one, or set "
            'harness = "NAME" in the repository\'s tackroom.toml'
        )
    else:
        out.print(f"{root}: [bold]{escape(found.best)}[/] (score {found.score})")
    if found.matches:
        table = Table("adapter", "score", "markers (counted)")
        for match in found.matches:
            markers = ", ".join(f"{m.path} {m.counted}" for m in match.markers)
            table.add_row(escape(match.adapter), str(match.score), escape(markers))
        out.print(table)
    for group in found.mirrors:
        out.print(f"one signal: {escape(' = '.join(group))} (the same file or the same bytes)")
    for skipped in found.skipped:
        out.print(f"[dim]skipped {escape(skipped.path)}: {escape(skipped.reason)}[/]")


def chosen_adapter(name: str | None, workdir: Path, how: str) -> Adapter:
    """The adapter a command uses: ``name``, else the project file's ``harness``, else detection.

    When the command did not get a name, it says on stderr which adapter it
    chose and why. No choice (nothing detected, or a tie) is a
    :class:`~tackroom.errors.DetectionError` listing the candidates and ``how`` to name one.
    """
    from tackroom.adapters.resolve import load_adapters
    from tackroom.detect import choose_harness
    from tackroom.project import load_project

    adapters = load_adapters(project=workdir)
    if name is not None:
        return adapters[name]
    choice = choose_harness(None, workdir, project=load_project(workdir), adapters=adapters, how=how)
    console(stderr=True).print(f"tackroom: using {choice.adapter}: {choice.reason}", markup=False)
    return adapters[choice.adapter]
