"""``tackroom usage``: token usage and cost from every harness's own session logs."""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typer

from tackroom.cli._output import console, dumps_report_json, escape, printable

app = typer.Typer(
    help="Token usage and cost from every harness's session logs: by day, month, session or model.",
    no_args_is_help=True,
)

HARNESS = typer.Option(None, "--harness", "-H", help="Only this adapter's logs (e.g. claude-code).")
SINCE = typer.Option(None, "--since", "-s", help="From this day on (YYYY-MM-DD or YYYYMMDD).")
UNTIL = typer.Option(None, "--until", "-u", help="Up to this day, inclusive (YYYY-MM-DD or YYYYMMDD).")
TIMEZONE = typer.Option(None, "--timezone", "-z", help="IANA zone the days are counted in (default: local).")
NO_COST = typer.Option(False, "--no-cost", help="Leave cost out (no price lookup).")
JOBS = typer.Option(None, "--jobs", "-j", min=1, help="Processes reading logs (default: one per core).")
JSON_OPT = typer.Option(False, "--json", help="Print JSON instead of a table.")

_DAY = re.compile(r"^(\d{4})-?(\d{2})-?(\d{2})$")


def day(value: str | None, flag: str) -> str | None:
    """``YYYY-MM-DD`` from either form, or a usage error naming the flag."""
    if value is None:
        return None
    match = _DAY.fullmatch(value.strip())
    if match is None:
        raise typer.BadParameter(f"{value!r} is not a day: give YYYY-MM-DD or YYYYMMDD", param_hint=flag)
    text = "-".join(match.groups())
    try:
        dt.date.fromisoformat(text)
    except ValueError:  # the shape of a day, not one of the calendar's (2026-13-45, 2026-02-30)
        raise typer.BadParameter(f"{value!r} is no day of the calendar", param_hint=flag) from None
    return text


@contextmanager
def scanning(quiet: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr while logs are read (only on a terminal, only for a long read)."""
    err = console(stderr=True)
    if quiet or not err.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    with Progress(
        "reading session logs",
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as bar:
        task = bar.add_task("read", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _report(
    group: str,
    harness: str | None,
    since: str | None,
    until: str | None,
    timezone: str | None,
    no_cost: bool,
    jobs: int | None,
    as_json: bool,
) -> None:
    from tackroom.trace.api import usage

    with scanning(as_json) as progress:
        report = usage(
            group,  # type: ignore[arg-type]
            harness=harness,
            since=day(since, "--since"),
            until=day(until, "--until"),
            timezone=timezone,
            cost=not no_cost,
            jobs=jobs,
            progress=progress,
        )
    if as_json:
        sys.stdout.write(dumps_report_json(report) + "\n")
        return
    show(report)


def show(report: dict[str, Any]) -> None:
    """A report as a Rich table: one line per row, its models under it, and the totals."""
    from rich.table import Table

    group = report["group"]
    first = {"daily": "day", "monthly": "month", "session": "session", "model": "model"}[group]
    title = f"usage by {first}" + (f" ({report['harness']})" if report["harness"] else "")
    table = Table(
        first, "models", "input", "output", "cache read", "cache write", "total", "cost (USD)", title=title
    )
    for row in report["rows"]:
        models = "\n".join(m["model"] for m in row["models"]) if group != "model" else ""
        table.add_row(*map(escape, [row["key"], models, *_figures(row)]))
    said_skipped(report.get("skipped", []))
    if not report["rows"]:
        console(stderr=True).print("no usage found in the session logs tackroom can read", markup=False)
        return
    totals = report["totals"]
    table.add_section()
    table.add_row("total", "", *map(escape, _figures(totals)), style="bold")
    console().print(table)


def said_skipped(skipped: list[dict[str, str]], shown: int = 5) -> None:
    """On stderr: the logs a scan found and could not read, the first ``shown`` of them by name."""
    if not skipped:
        return
    err = console(stderr=True)
    err.print(f"{len(skipped)} file(s) under the log roots were not read:", markup=False)
    for entry in skipped[:shown]:
        err.print(f"  {_one_line(entry['path'])}: {_one_line(entry['why'])}", markup=False)
    if len(skipped) > shown:
        err.print(f"  ... and {len(skipped) - shown} more (see --json)", markup=False)


def _one_line(text: str) -> str:
    return printable(text).replace("\n", "\\n")


def _figures(row: dict[str, Any]) -> list[str]:
    cost = row.get("cost_usd")
    return [
        *(_count(row[name]) for name in ("input", "output", "cache_read", "cache_write", "total")),
        "unknown" if cost is None else f"{float(cost):,.4f}",
    ]


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value).replace("_", " ")


def _command(group: str, doc: str) -> Callable[..., None]:
    def command(
        harness: str | None = HARNESS,
        since: str | None = SINCE,
        until: str | None = UNTIL,
        timezone: str | None = TIMEZONE,
        no_cost: bool = NO_COST,
        jobs: int | None = JOBS,
        as_json: bool = JSON_OPT,
    ) -> None:
        _report(group, harness, since, until, timezone, no_cost, jobs, as_json)

    command.__doc__ = doc
    return command


app.command("daily")(_command("daily", "Usage per day, with each day's models."))
app.command("monthly")(_command("monthly", "Usage per month, with each month's models."))
app.command("session")(
    _command("session", "Usage per session (subagents' sessions apart, linked to their parent).")
)
app.command("model")(_command("model", "Usage per model."))
