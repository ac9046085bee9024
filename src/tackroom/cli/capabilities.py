"""``tackroom capabilities``: the matrix of each adapter's latest capability row, and the shared printers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tackroom.cli._output import console, escape, print_json

if TYPE_CHECKING:
    from rich.table import Table

    from tackroom.probe.matrix import Entry
    from tackroom.probe.rows import Row, Support

_STYLE = {True: "green", False: "bold red", "n/o": "yellow", None: "dim"}


def capabilities_command(
    as_json: bool = typer.Option(False, "--json", help="Print each adapter's entry as JSON."),
    as_markdown: bool = typer.Option(
        False, "--markdown", help="Print the Markdown of docs/capabilities.md from the stored rows."
    ),
) -> None:
    """Each adapter's latest capability row: harness version, installed version, age, and the matrix."""
    from tackroom.adapters.resolve import load_adapters
    from tackroom.probe.matrix import adapter_lacks, entries, markdown
    from tackroom.state import CapabilityRows, StateDB

    if as_json and as_markdown:
        raise typer.BadParameter("choose one of --json and --markdown")
    store = CapabilityRows(StateDB.default())
    if as_markdown:
        print(markdown(store.history(), adapter_lacks(load_adapters(project=Path.cwd()))), end="")
        return
    found = entries(load_adapters(project=Path.cwd()), store)
    if as_json:
        print_json([e.to_json() for e in found])
        return
    print_entries(found)


def print_entries(found: Sequence[Entry]) -> None:
    """A summary line per adapter, then the capability matrix of those with a row."""
    from rich.table import Table

    from tackroom.values import duration, show

    summary = Table(
        "adapter", "proven on", "installed", "age", "outcome", "yes/no/n-o/untested", "observability"
    )
    for e in found:
        counts = _counts(e.row) if e.row is not None else "-"
        outcome = e.row.outcome if e.row is not None else "never probed"
        stale = "[yellow]" if e.stale else ""
        summary.add_row(
            escape(e.adapter),
            stale + escape(show(e.version)) + ("[/]" if stale else ""),
            escape(show(e.installed)),
            escape(show(e.age_s, duration)),
            escape(outcome),
            counts,
            escape(e.observability.summary()) if e.observability is not None else "-",
        )
    out = console()
    out.print(summary)
    rows = [e.row for e in found if e.row is not None]
    if rows:
        out.print(matrix(rows))
    out.print(
        "yes: tested, it can; no: tested, it cannot; n/o: tested, nothing showed either way; -: untested"
    )


def matrix(rows: Sequence[Row]) -> Table:
    """Capabilities down, one column per row (adapter and version)."""
    from rich.table import Table

    from tackroom.probe.rows import CAPABILITIES

    table = Table("capability", *(escape(f"{r.adapter}\n{r.harness_version or '?'}") for r in rows))
    for capability in CAPABILITIES:
        cells = [_mark(r.supports.get(capability)) for r in rows]
        table.add_row(capability, *cells)
    return table


def print_row(row: Row) -> None:
    """One row: what was found per capability, with its note."""
    from rich.table import Table

    from tackroom.probe.rows import CAPABILITIES, OUTCOME_NOTE

    out = console()
    head = (
        f"[bold]{escape(row.adapter)}[/] {escape(row.harness_version or '?')}  outcome {escape(row.outcome)}"
    )
    out.print(head)
    if OUTCOME_NOTE in row.notes:
        out.print(f"  [yellow]{escape(row.notes[OUTCOME_NOTE])}[/]")
    table = Table("capability", "found", "note")
    for capability in CAPABILITIES:
        if capability in row.supports or capability in row.notes:
            value = row.supports.get(capability)
            table.add_row(capability, _mark(value), escape(row.notes.get(capability, "")))
    out.print(table)


def _mark(value: Support | None) -> str:
    from tackroom.probe.matrix import MARKS

    return f"[{_STYLE[value]}]{MARKS[value]}[/]"


def _counts(row: Row) -> str:
    from tackroom.probe.rows import CAPABILITIES

    values = [row.supports.get(c) for c in CAPABILITIES]
    yes, no = values.count(True), values.count(False)
    seen = sum(1 for v in values if v == "n/o")
    return f"{yes}/{no}/{seen}/{len(values) - yes - no - seen}"
