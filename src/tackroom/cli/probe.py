"""``tackroom probe``: prove, against the real binary and the mock, what a harness does; store the row."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from tackroom.cli import _params
from tackroom.cli._output import console, escape, print_json

if TYPE_CHECKING:
    from rich.console import Console

    from tackroom.adapters.adapter import Adapter
    from tackroom.harnesses import Located
    from tackroom.probe.rows import Row


def probe_command(
    name: str | None = typer.Argument(None, help="Adapter name (or --all)."),
    probe_all: bool = typer.Option(False, "--all", help="Probe every adapter whose harness is installed."),
    capability: list[str] = typer.Option(
        [], "--capability", "-c", help="Only this capability (repeat for more; default: all)."
    ),
    jobs: int = typer.Option(
        2, "--jobs", "-j", min=1, help="With --all: probes of different harnesses at once."
    ),
    timeout: float = typer.Option(
        120.0, "--timeout", callback=_params.seconds, help="Seconds per probe run."
    ),
    version: str | None = typer.Option(
        None, "--version", help="Probe this installed release (installed first if need be), or 'latest'."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the row (with --all: the rows) as JSON."),
    sandbox: str = typer.Option("none", "--sandbox", help="Run each probe run in this sandbox (bwrap)."),
    network: str = typer.Option("host", "--network", help="'host' (default) or 'none' (with --sandbox)."),
) -> None:
    """Probe capabilities against the real harness and store the row (see `tackroom capabilities`).

    Exits 1 when a probe's outcome is not ok, or it found false a capability the adapter declares.
    """
    from tackroom.adapters.resolve import load_adapters
    from tackroom.errors import ProbeError
    from tackroom.probe.runner import aprobe, aprobe_all, check_capabilities
    from tackroom.state import CapabilityRows, StateDB

    if (name is None) == (not probe_all):
        raise typer.BadParameter("name one adapter, or pass --all (not both)")
    if version is not None and probe_all:
        raise typer.BadParameter("--version applies to one named adapter, not --all")
    if network not in ("host", "none"):
        raise typer.BadParameter("must be 'host' or 'none'", param_hint="--network")
    from tackroom.run.sandbox import sandbox_names

    if sandbox not in sandbox_names():
        raise typer.BadParameter(f"no sandbox {sandbox!r}; sandboxes: {', '.join(sandbox_names())}")
    where: dict[str, Any] = {"sandbox": sandbox, "network": network}
    try:
        wanted = check_capabilities(capability or None)
    except ProbeError as exc:
        raise typer.BadParameter(str(exc), param_hint="--capability") from exc
    adapters = load_adapters(project=Path.cwd())
    store = CapabilityRows(StateDB.default())
    status = console(stderr=True)
    if name is not None:
        adapter = adapters[name]
        located = _release(adapter, version, status) if version is not None else None
        with status.status(f"probing {escape(name)}"):
            probing = aprobe(
                adapter, executable=located, capabilities=wanted, store=store, timeout_s=timeout, **where
            )
            rows = [asyncio.run(probing)]
        chosen = [adapter]
    else:
        chosen = list(adapters.values())

        def done(row: Row) -> None:
            note = (
                f" ({row.notes['outcome']})"
                if "outcome" in row.notes and row.outcome != "not_installed"
                else ""
            )
            status.print(f"{escape(row.adapter)}: {escape(row.outcome)}{escape(note)}")

        rows = asyncio.run(
            aprobe_all(
                chosen, jobs=jobs, on_row=done, capabilities=wanted, store=store, timeout_s=timeout, **where
            )
        )
    _print(rows, as_json, single=name is not None)
    if any(_failed(a, r, counted=name is not None) for a, r in zip(chosen, rows, strict=True)):
        raise typer.Exit(1)


def _release(adapter: Adapter, version: str, status: Console) -> Located:
    """The install of ``version`` (``latest``: the registry's newest), installed first when missing."""
    import os

    from tackroom.paths import check_name
    from tackroom.probe.drift import ensure_installed, resolve_version

    with status.status(f"asking the registry for {escape(adapter.name)}'s newest release"):
        wanted = check_name(resolve_version(adapter, version, os.environ), "version")
    with status.status(f"installing {escape(adapter.name)} {escape(wanted)}") as shown:
        return ensure_installed(
            adapter, wanted, os.environ, progress=lambda line: shown.update(escape(line[:100]))
        )


def _print(rows: list[Row], as_json: bool, *, single: bool) -> None:
    from tackroom.cli.capabilities import matrix, print_row

    if as_json:
        print_json(rows[0].to_json() if single else [r.to_json() for r in rows])
    elif single:
        print_row(rows[0])
    else:
        probed = [r for r in rows if r.outcome != "not_installed"]
        if probed:
            console().print(matrix(probed))
        missing = [r.adapter for r in rows if r.outcome == "not_installed"]
        if missing:
            console(stderr=True).print(f"not installed: {escape(', '.join(missing))}")


def _failed(adapter: Adapter, row: Row, *, counted: bool) -> bool:
    """A failure for the exit code: a bad outcome, or a declared capability found false.

    With --all, a harness that is not installed is listed, not counted.
    """
    from tackroom.probe.doctor import declared_capabilities

    if row.outcome == "not_installed":
        return counted
    if row.outcome != "ok":
        return True
    return any(row.supports.get(c) is False for c in declared_capabilities(adapter))
