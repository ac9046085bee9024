"""``tackroom trust``: let a project's hooks, MCP servers and harness config be used (``direnv allow``)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tackroom.cli._output import console, print_json

if TYPE_CHECKING:
    from tackroom.trust import TrustState


def trust_command(
    path: Path = typer.Argument(
        Path(),
        help="The project: this directory, or the nearest one above it (up to the repository root) "
        "that has something to trust.",
    ),
    revoke: bool = typer.Option(False, "--revoke", help="Take the trust of PATH (or a parent) back."),
    list_: bool = typer.Option(False, "--list", help="List trusted directories and whether they changed."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Trust a project: its hooks and MCP servers, and the project config a harness would load, are used
    until any of it changes (then trust it again after a look)."""
    from tackroom import trust

    if revoke and list_:
        raise typer.BadParameter("choose one of --revoke and --list")
    if list_:
        _print_listing(trust.listing(), as_json)
        return
    if revoke:
        directory = trust.revoke(path)
        if as_json:
            print_json({"path": str(directory), "state": "untrusted"})
        else:
            console().print(f"revoked the trust of {directory}", markup=False)
        return
    record = trust.trust(path)
    state = trust.TrustState(record.path, "trusted", record)
    if as_json:
        print_json(state.to_json())
        return
    present = [rel for rel in record.covers if os.path.lexists(record.path / rel)]
    console().print(
        f"trusted {record.path}: {', '.join(present)} (sha256 {record.digest[:12]}); "
        "a change to any of it revokes the trust until you run `tackroom trust` again",
        markup=False,
    )


def _print_listing(states: list[TrustState], as_json: bool) -> None:
    if as_json:
        print_json([state.to_json() for state in states])
        return
    if not states:
        console().print("no trusted directories")
        return
    from rich.markup import escape
    from rich.table import Table

    colour = {"trusted": "green", "changed": "yellow", "missing": "dim"}
    table = Table("path", "state", "trusted at", "covers")
    for state in states:
        record = state.record
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(record.trusted_at)) if record else ""
        shown = "changed since" if state.state == "changed" else state.state
        present = [c for c in (record.covers if record else ()) if os.path.lexists(state.path / c)]
        table.add_row(
            escape(str(state.path)),
            f"[{colour.get(state.state, 'red')}]{shown}[/]",
            when,
            escape(", ".join(present)),
        )
    console().print(table)
