"""``tackroom drift``: the newest release of each harness, probed beside the verified one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tackroom.cli import _params
from tackroom.cli._output import console, escape, print_json

if TYPE_CHECKING:
    from tackroom.probe.drift import Drift
    from tackroom.probe.rows import Support

_STYLE = {"regressed": "bold red", "unknown": "yellow", "changed": "cyan", "skipped": "dim"}


def drift_command(
    names: list[str] = typer.Argument(None, help="Adapter names (default: every installable, verified one)."),
    capability: list[str] = typer.Option(
        [], "--capability", "-c", help="Only this capability (repeat for more; default: all)."
    ),
    jobs: int = typer.Option(1, "--jobs", "-j", min=1, help="Harnesses checked at once."),
    timeout: float = typer.Option(
        120.0, "--timeout", callback=_params.seconds, help="Seconds per probe run."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print each adapter's drift as JSON."),
) -> None:
    """Probe the newest release of each harness beside its verified one and print what changed.

    Exits 1 when a capability proven on the verified release is not proven on the newest one.
    """
    from tackroom.adapters.resolve import load_adapters
    from tackroom.errors import ProbeError
    from tackroom.probe.drift import adrift
    from tackroom.probe.runner import check_capabilities
    from tackroom.state import CapabilityRows, StateDB

    try:
        wanted = check_capabilities(capability or None)
    except ProbeError as exc:
        raise typer.BadParameter(str(exc), param_hint="--capability") from exc
    adapters = load_adapters(project=Path.cwd())
    chosen = (
        [adapters[n] for n in names]
        if names
        else [a for a in adapters.values() if a.spec.install is not None and a.verified_with is not None]
    )
    err = console(stderr=True)

    def said(drift: Drift) -> None:
        err.print(f"{escape(drift.adapter)}: {escape(_headline(drift))}", highlight=False)

    store = CapabilityRows(StateDB.default())
    with err.status("asking the registries, installing and probing"):
        found = asyncio.run(
            adrift(chosen, store, jobs=jobs, capabilities=wanted, timeout_s=timeout, on_drift=said)
        )
    if as_json:
        print_json([d.to_json() for d in found])
    else:
        _print(found)
    if any(d.regressed for d in found):
        raise typer.Exit(1)


def _headline(drift: Drift) -> str:
    newest = drift.newest or "?"
    if drift.status == "current":
        return f"{drift.verified} is the newest release"
    if drift.status in ("unknown", "skipped"):
        return f"{drift.status}: {drift.note}"
    lost = [c.capability for c in drift.changes if c.lost]
    if drift.status == "regressed":
        what = f"lost {', '.join(lost)}" if lost else f"the probe no longer runs cleanly ({drift.note})"
        return f"{newest} regressed against {drift.verified}: {what}"
    return f"{newest} proves what {drift.verified} does" + (
        f" ({len(drift.changes)} other changes)" if drift.changes else ""
    )


def _print(found: list[Drift]) -> None:
    from rich.table import Table

    out = console()
    table = Table("adapter", "verified", "newest", "status", "what changed")
    for drift in found:
        style = _STYLE.get(drift.status)
        status = f"[{style}]{drift.status}[/]" if style else drift.status
        changes = ", ".join(f"{c.capability} {_cell(c.verified)}→{_cell(c.newest)}" for c in drift.changes)
        # The first line of a note: the table stays readable, --json keeps it whole.
        detail = changes or (drift.note or "").strip().split("\n", 1)[0]
        table.add_row(
            escape(drift.adapter),
            escape(drift.verified or "-"),
            escape(drift.newest or "?"),
            status,
            escape(detail),
        )
    out.print(table)


def _cell(value: Support | None) -> str:
    if value is None:
        return "untested"
    return "yes" if value is True else "no" if value is False else str(value)
