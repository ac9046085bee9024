"""``tackroom runs``: list, show and prune run directories."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import typer

from tackroom.cli._output import console, escape, print_json

if TYPE_CHECKING:
    from tackroom.run.store import RunRecord

app = typer.Typer(
    help="The run directories under $XDG_DATA_HOME/tackroom/runs/: list, show, prune.",
    no_args_is_help=True,
)

JSON_OPT = typer.Option(False, "--json", help="Print JSON instead of a table.")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"([0-9]+(?:\.[0-9]+)?)([smhdw])")


def age(value: str | None) -> float | None:
    """``30m``, ``12h``, ``7d``, ``2w`` as seconds; a bare number is refused (minutes or days?)."""
    if value is None:
        return None
    match = _AGE.fullmatch(value.strip())
    if match is None:
        raise typer.BadParameter(
            f"{value!r} is not an age: a number and a unit, e.g. 30m, 12h, 7d, 2w", param_hint="--older-than"
        )
    return float(match[1]) * _UNITS[match[2]]


@app.command("list")
def list_(as_json: bool = JSON_OPT) -> None:
    """Every run, oldest first: id, adapter, status, exit code, duration, size."""
    from rich.table import Column, Table

    from tackroom.run.store import list_runs

    runs = list_runs()
    if as_json:
        print_json([run.to_json() for run in runs])
        return
    if not runs:
        from tackroom.run.store import runs_root

        console(stderr=True).print(f"no runs in {runs_root()}", markup=False)
        return
    table = Table("adapter", "status", "exit", "duration", "size", "finished")
    table.columns.insert(0, Column("id", no_wrap=True))  # an id is copied, never cut
    for run in runs:
        table.add_row(*map(escape, _row(run)))
    console().print(table)
    total = sum(run.size_bytes for run in runs)
    console(stderr=True).print(f"{len(runs)} run(s), {human_size(total)}", markup=False)


@app.command()
def show(
    run_id: str = typer.Argument(..., help="Run id (see `tackroom runs list`)."), as_json: bool = JSON_OPT
) -> None:
    """One run: its result and the size of each entry in its directory."""
    from tackroom.run.store import show_run

    run = show_run(run_id)
    if as_json:
        print_json(run.to_json())
        return
    out = console()
    result = run.result or {}
    out.print(
        f"[bold]{escape(run.id)}[/]  {escape(run.status)}  {human_size(run.size_bytes)}  {escape(run.path)}"
    )
    if run.problem:
        out.print(f"[yellow]{escape(run.problem)}[/]")
    for key in ("adapter", "harness_version", "exit_code", "duration_s", "error", "final_text"):
        if result.get(key) is not None:
            out.print(f"  {key}: {escape(result[key])}")
    for name, size in run.entries:
        out.print(f"  {human_size(size):>10}  {escape(name)}")


@app.command()
def prune(
    older_than: str | None = typer.Option(
        None, "--older-than", help="Only runs older than this (30m, 12h, 7d, 2w); default: all."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only list what would be deleted."),
    as_json: bool = JSON_OPT,
) -> None:
    """Delete finished run directories (never one in progress, never anything outside runs/)."""
    from tackroom.run.store import prune_runs

    removed, failed = prune_runs(age(older_than), dry_run=dry_run)
    if as_json:
        print_json({"removed": [run.to_json() for run in removed], "dry_run": dry_run, "failed": failed})
    else:
        out = console()
        verb = "would remove" if dry_run else "removed"
        for run in removed:
            out.print(f"{verb} {escape(run.id)} ({human_size(run.size_bytes)})")
        freed = human_size(sum(run.size_bytes for run in removed))
        out.print(f"{verb} {len(removed)} run(s), {freed}", markup=False)
    err = console(stderr=True)
    for message in failed:
        err.print(f"[red]could not remove[/] {escape(message)}")
    if failed:
        raise typer.Exit(1)


def _row(run: RunRecord) -> tuple[str, ...]:
    result = run.result or {}
    duration = result.get("duration_s")
    return (
        run.id,
        str(result.get("adapter") or ""),
        run.status,
        "" if result.get("exit_code") is None else str(result.get("exit_code")),
        f"{duration:.1f}s" if isinstance(duration, int | float) and not isinstance(duration, bool) else "",
        human_size(run.size_bytes),
        time.strftime("%m-%d %H:%M", time.localtime(run.modified)),
    )


def human_size(size: int) -> str:
    """``1.5 MiB``-style, for people (JSON keeps bytes)."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
