"""``tackroom probe``: prove, against the real binary and the mock, which capabilities a harness has."""

from __future__ import annotations

import tempfile
from pathlib import Path

import typer

from tackroom.cli import _params
from tackroom.cli._output import console, escape, print_json


def probe_command(
    name: str = typer.Argument(..., help="Adapter name."),
    capability: list[str] = typer.Option([], "--capability", "-c", help="Only these (default: all six)."),
    timeout: float = typer.Option(120.0, "--timeout", callback=_params.seconds, help="Seconds per run."),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
) -> None:
    """Run capability probes: rules, skills, mcp, commands, subagents, hooks."""
    from tackroom.adapters.resolve import load_adapters
    from tackroom.probe.capabilities import CAPABILITIES, Probe, probe

    unknown = [c for c in capability if c not in CAPABILITIES]
    if unknown:
        raise typer.BadParameter(f"unknown {unknown}; capabilities: {', '.join(CAPABILITIES)}")
    adapter = load_adapters(project=Path.cwd())[name]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tackroom-probe-") as scratch:
        status = console(stderr=True)
        for cap in capability or CAPABILITIES:
            with status.status(f"probing {escape(name)} {escape(cap)}"):
                rows.append(probe(adapter, cap, Probe(Path(scratch), timeout_s=timeout)))
    if as_json:
        print_json([row.to_json() for row in rows])
    else:
        from rich.table import Table

        table = Table("capability", "status", "version", "checks", "detail")
        for row in rows:
            checks = ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in row.checks.items())
            cells = (row.capability, row.status, row.version or "", checks, row.detail)
            table.add_row(*map(escape, cells))
        console().print(table)
    if any(row.status == "failed" for row in rows):
        raise typer.Exit(1)
