"""``tackroom doctor``: check each adapter in use (or named), and say how to fix what is wrong."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tackroom.cli import _params
from tackroom.cli._output import console, escape, print_json

if TYPE_CHECKING:
    from tackroom.probe.doctor import Report

_MARK = {"ok": "[green]ok[/]  ", "warn": "[yellow]warn[/]", "fail": "[bold red]FAIL[/]"}


def doctor_command(
    names: list[str] = typer.Argument(
        None,
        metavar="[NAME]...",
        help="Adapters to check (default: the project's harness, else detection, else every installed one).",
    ),
    prove: bool = typer.Option(
        False, "--prove", help="Re-run the probes first, so the capability rows are fresh."
    ),
    timeout: float = typer.Option(
        120.0, "--timeout", callback=_params.seconds, help="Seconds per probe run."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the reports as JSON."),
) -> None:
    """Executable, version, drift, home and transcript roots, credentials, and the latest proof.

    Exits 0 only when every check passed (warnings allowed).
    """
    from tackroom.adapters.resolve import load_adapters
    from tackroom.errors import ProbeError
    from tackroom.probe.doctor import adapters_in_use, adoctor
    from tackroom.state import CapabilityRows, StateDB

    workdir = Path.cwd()
    adapters = load_adapters(project=workdir)
    if names:
        chosen = [adapters[n] for n in names]
    else:
        chosen, why = adapters_in_use(adapters, workdir, os.environ)
        if chosen:
            listed = ", ".join(a.name for a in chosen)
            console(stderr=True).print(f"tackroom: checking {escape(listed)}: {escape(why)}", highlight=False)
    if not chosen:
        raise ProbeError(
            "nothing to check: no tackroom.toml names a harness here and no harness is installed; "
            "name one (`tackroom doctor NAME`) or install one (`tackroom install NAME`)"
        )
    store = CapabilityRows(StateDB.default())
    reports = []
    status = console(stderr=True)
    for adapter in chosen:
        doing = "proving" if prove else "checking"
        with status.status(f"{doing} {escape(adapter.name)}"):
            reports.append(
                asyncio.run(adoctor(adapter, store, prove=prove, timeout_s=timeout, workdir=workdir))
            )
    if as_json:
        print_json([r.to_json() for r in reports])
    else:
        for report in reports:
            _print(report)
    if not all(r.ok for r in reports):
        raise typer.Exit(1)


def _print(report: Report) -> None:
    out = console()
    verdict = "[green]ok[/]" if report.ok else "[bold red]failed[/]"
    out.print(f"[bold]{escape(report.adapter)}[/]: {verdict}")
    for check in report.checks:
        out.print(f"  {_MARK[check.status]} {escape(check.name)}: {escape(check.message)}")
        if check.fix and check.status != "ok":
            out.print(f"        fix: {escape(check.fix)}")
